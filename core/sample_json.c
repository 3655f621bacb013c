/* JSON shapes of samples and throttle states. */
#include "sample_json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "metrics_text.h"

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

static void
top_list_to_json(struct json *j, const struct top_process *list, int count)
{
	json_array_begin(j);
	for (int i = 0; i < count; i++) {
		json_object_begin(j);
		json_key(j, "pid");
		json_int(j, list[i].pid);
		json_key(j, "comm");
		json_string(j, list[i].comm);
		json_key(j, "cpu_pct");
		json_number(j, list[i].cpu_pct);
		json_key(j, "rss_bytes");
		json_number(j, list[i].rss_bytes);
		json_object_end(j);
	}
	json_array_end(j);
}

void
top_processes_to_json(struct json *j, const struct top_processes *tp)
{
	json_object_begin(j);
	json_key(j, "cpu_window_s");
	json_number(j, tp->cpu_window_s);
	json_key(j, "by_cpu");
	top_list_to_json(j, tp->by_cpu, tp->cpu_count);
	json_key(j, "by_memory");
	top_list_to_json(j, tp->by_memory, tp->memory_count);
	json_object_end(j);
}

void
oom_victims_to_json(struct json *j, const struct oom_victims *v)
{
	json_object_begin(j);
	json_key(j, "processes");
	json_array_begin(j);
	for (int i = 0; i < v->count; i++) {
		json_object_begin(j);
		json_key(j, "pid");
		json_int(j, v->list[i].pid);
		json_key(j, "comm");
		json_string(j, v->list[i].comm);
		json_object_end(j);
	}
	json_array_end(j);
	json_key(j, "more");
	json_int(j, v->more);
	json_object_end(j);
}

/* The "power_mode", "metrics", "throttle" (and "processes", "oom_killed") members, into an object the caller opened. */
static void
sample_body_to_json(struct json *j, const struct sample *s)
{
	power_mode_to_json(j, s);
	json_key(j, "metrics");
	struct metrics_members mm;
	if (metrics_text_get(s->text, &s->metrics, &mm)) {
		/* formatted once for every writer of this sample */
		json_object_begin(j);
		json_members(j, mm.text, mm.count ? metrics_members_len(&mm, 0, mm.count - 1) : 0);
		json_object_end(j);
	} else {
		metrics_to_json(j, &s->metrics);
	}
	json_key(j, "throttle");
	throttle_to_json(j, &s->throttle);
	if (s->processes.cpu_count > 0 || s->processes.memory_count > 0) {
		json_key(j, "processes");
		top_processes_to_json(j, &s->processes);
	}
	if (s->oom_killed.count > 0 || s->oom_killed.more > 0) {
		json_key(j, "oom_killed");
		oom_victims_to_json(j, &s->oom_killed);
	}
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

/* ---- reading it back (core/json_read.h): recordings, the API as `top` reads it ---- */

static void
metric_member(struct json_reader *r, const char *key, void *data)
{
	struct metric_set *set = data;
	double v = json_read_number(r);
	if (!isnan(v)) {
		metric_set_put(set, key, v);
	}
}

static void
reason_member(struct json_reader *r, const char *key, void *data)
{
	struct throttle_state *t = data;
	for (int k = 0; k < THROTTLE_REASON_COUNT; k++) {
		if (strcmp(key, throttle_reason_name((enum throttle_reason)k)) == 0) {
			t->reason[k] = true;
			json_read_string(r, t->why[k], sizeof(t->why[k]), NULL);
			return;
		}
	}
	json_skip_value(r);
}

static void
throttle_member(struct json_reader *r, const char *key, void *data)
{
	struct throttle_state *t = data;
	json_skip_ws(r);
	if (strcmp(key, "active") == 0 && (*r->p == 't' || *r->p == 'f')) {
		t->active = *r->p == 't';
		json_skip_value(r);
	} else if (strcmp(key, "reasons") == 0 && *r->p == '{') {
		json_each_member(r, reason_member, t);
	} else if (strcmp(key, "context") == 0 && *r->p == '"') {
		json_read_string(r, t->context, sizeof(t->context), NULL);
	} else {
		json_skip_value(r);
	}
}

static void
top_member(struct json_reader *r, const char *key, void *data)
{
	struct top_process *p = data;
	if (strcmp(key, "comm") == 0 && json_peek(r) == '"') {
		json_read_string(r, p->comm, sizeof(p->comm), NULL);
	} else if (strcmp(key, "pid") == 0 || strcmp(key, "cpu_pct") == 0 || strcmp(key, "rss_bytes") == 0) {
		int64_t pid = 0;
		if (key[0] == 'p') {
			p->pid = json_read_int64(r, &pid) && pid >= 0 && pid <= INT32_MAX ? (int32_t)pid : 0;
		} else if (key[0] == 'c') {
			p->cpu_pct = json_read_number(r);
		} else {
			p->rss_bytes = json_read_number(r);
		}
	} else {
		json_skip_value(r);
	}
}

/* one list of the top processes: where it goes and how many it holds */
struct top_list {
	struct top_process *items;
	int *count;
};

static void
top_element(struct json_reader *r, size_t index, void *data)
{
	struct top_list *l = data;
	if (index >= TOP_PROCESSES_MAX || json_peek(r) != '{') {
		json_skip_value(r);
		return;
	}
	struct top_process *p = &l->items[*l->count];
	*p = (struct top_process){.cpu_pct = NAN, .rss_bytes = NAN};
	json_each_member(r, top_member, p);
	(*l->count)++;
}

static void
top_processes_member(struct json_reader *r, const char *key, void *data)
{
	struct top_processes *tp = data;
	bool cpu = strcmp(key, "by_cpu") == 0;
	if ((cpu || strcmp(key, "by_memory") == 0) && json_peek(r) == '[') {
		struct top_list l = {cpu ? tp->by_cpu : tp->by_memory, cpu ? &tp->cpu_count : &tp->memory_count};
		*l.count = 0;
		json_each_element(r, top_element, &l);
	} else if (strcmp(key, "cpu_window_s") == 0) {
		double v = json_read_number(r);
		tp->cpu_window_s = isfinite(v) && v >= 0 ? v : 0;
	} else {
		json_skip_value(r);
	}
}

void
top_processes_from_json(struct json_reader *r, struct top_processes *tp)
{
	tp->cpu_count = tp->memory_count = 0;
	tp->cpu_window_s = 0;
	if (json_peek(r) != '{') {
		json_skip_value(r);
		return;
	}
	json_each_member(r, top_processes_member, tp);
}

static void
victim_member(struct json_reader *r, const char *key, void *data)
{
	struct oom_victim *v = data;
	int64_t pid = 0;
	if (strcmp(key, "comm") == 0 && json_peek(r) == '"') {
		json_read_string(r, v->comm, sizeof(v->comm), NULL);
	} else if (strcmp(key, "pid") == 0) {
		v->pid = json_read_int64(r, &pid) && pid >= 0 && pid <= INT32_MAX ? (int32_t)pid : 0;
	} else {
		json_skip_value(r);
	}
}

static void
victim_element(struct json_reader *r, size_t index, void *data)
{
	(void)index;
	struct oom_victims *v = data;
	if (json_peek(r) != '{' || v->count == OOM_VICTIMS_MAX) {
		v->more += json_peek(r) == '{';
		json_skip_value(r);
		return;
	}
	struct oom_victim *p = &v->list[v->count++];
	*p = (struct oom_victim){0};
	json_each_member(r, victim_member, p);
}

static void
victims_member(struct json_reader *r, const char *key, void *data)
{
	struct oom_victims *v = data;
	int64_t more = 0;
	if (strcmp(key, "processes") == 0 && json_peek(r) == '[') {
		json_each_element(r, victim_element, v);
	} else if (strcmp(key, "more") == 0) {
		bool ok = json_read_int64(r, &more);
		v->more += ok && more > 0 && more < INT32_MAX - OOM_VICTIMS_MAX ? (int)more : 0;
	} else {
		json_skip_value(r);
	}
}

void
oom_victims_from_json(struct json_reader *r, struct oom_victims *v)
{
	v->count = v->more = 0;
	if (json_peek(r) != '{') {
		json_skip_value(r);
		return;
	}
	json_each_member(r, victims_member, v);
}

bool
sample_member_from_json(struct json_reader *r, const char *key, struct sample *s, bool *have_time)
{
	char next = json_peek(r);
	if (strcmp(key, "time_ms") == 0) {
		/* beyond int64 is no time (the fuzzer found 1.7e23) */
		s->time_ms = 0;
		*have_time = json_read_int64(r, &s->time_ms);
	} else if (strcmp(key, "clock_step_ms") == 0) {
		s->clock_step_ms = 0;
		json_read_int64(r, &s->clock_step_ms);
	} else if (strcmp(key, "power_mode") == 0 && next == '"') {
		json_read_string(r, s->power_mode, sizeof(s->power_mode), NULL);
	} else if (strcmp(key, "metrics") == 0 && next == '{') {
		json_each_member(r, metric_member, &s->metrics);
	} else if (strcmp(key, "throttle") == 0 && next == '{') {
		memset(&s->throttle, 0, sizeof(s->throttle));
		json_each_member(r, throttle_member, &s->throttle);
	} else if (strcmp(key, "processes") == 0) {
		top_processes_from_json(r, &s->processes);
	} else if (strcmp(key, "oom_killed") == 0) {
		oom_victims_from_json(r, &s->oom_killed);
	} else {
		return false;
	}
	return true;
}
