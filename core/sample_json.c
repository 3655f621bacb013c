/* JSON shapes of samples and throttle states. */
#include "sample_json.h"

#include <stdio.h>
#include <time.h>

void
rfc3339_utc(int64_t time_ms, char *buf, size_t size)
{
	/* floor, so a time before 1970 still rounds down to its second */
	time_t t = (time_t)(time_ms >= 0 ? time_ms / 1000 : -((-time_ms + 999) / 1000));
	struct tm tm;
	if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		snprintf(buf, size, "1970-01-01T00:00:00Z");
	}
}

void
metrics_to_json(struct json *j, const struct metric_set *set)
{
	json_object_begin(j);
	for (size_t i = 0; i < set->count; i++) {
		json_key(j, set->items[i].name);
		json_number(j, set->items[i].value);
	}
	json_object_end(j);
}

void
throttle_causes_to_json(struct json *j, const struct throttle_cause *causes, int count)
{
	json_array_begin(j);
	for (int i = 0; i < count; i++) {
		const struct throttle_cause *c = &causes[i];
		json_object_begin(j);
		json_key(j, "reason");
		json_string(j, throttle_reason_name(c->reason));
		json_key(j, "kind");
		json_string(j, c->kind);
		json_key(j, "source");
		json_string(j, c->source);
		json_key(j, "value");
		json_number(j, c->value);
		json_key(j, "limit");
		json_number(j, c->limit);
		json_object_end(j);
	}
	json_array_end(j);
}

void
throttle_to_json(struct json *j, const struct throttle_state *t)
{
	json_object_begin(j);
	json_key(j, "active");
	json_bool(j, t->active);
	json_key(j, "reasons");
	json_object_begin(j);
	for (int r = 0; r < THROTTLE_REASON_COUNT; r++) {
		if (!t->reason[r]) {
			continue;
		}
		json_key(j, throttle_reason_name((enum throttle_reason)r));
		json_string(j, t->why[r]);
	}
	json_object_end(j);
	json_key(j, "context");
	json_string(j, t->context);
	json_key(j, "causes");
	throttle_causes_to_json(j, t->causes, t->cause_count);
	json_object_end(j);
}

/* The "power_mode", "metrics" and "throttle" members, into an object the caller opened: every sample shape. */
static void
sample_body_to_json(struct json *j, const struct sample *s)
{
	power_mode_to_json(j, s);
	json_key(j, "metrics");
	metrics_to_json(j, &s->metrics);
	json_key(j, "throttle");
	throttle_to_json(j, &s->throttle);
}

void
clock_step_to_json(struct json *j, const struct sample *s)
{
	if (s->clock_step_ms != 0) {
		json_key(j, "clock_step_ms");
		json_int(j, s->clock_step_ms);
	}
}

void
sample_to_json(struct json *j, const struct sample *s)
{
	char ts[32];
	rfc3339_utc(s->time_ms, ts, sizeof(ts));
	json_object_begin(j);
	json_key(j, "seq");
	json_uint(j, s->seq);
	json_key(j, "ts");
	json_string(j, ts);
	json_key(j, "time_ms");
	json_int(j, s->time_ms);
	clock_step_to_json(j, s);
	sample_body_to_json(j, s);
	json_object_end(j);
}

void
power_mode_to_json(struct json *j, const struct sample *s)
{
	json_key(j, "power_mode");
	if (s->power_mode[0]) {
		json_string(j, s->power_mode);
	} else {
		json_null(j);
	}
}
