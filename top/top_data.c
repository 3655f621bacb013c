/* What one screen of `top` shows, and reading it from the agent's /api/v1/snapshot. See top.h. */
#include "top.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_read.h"
#include "core/sample_json.h"
#include "core/xalloc.h"

struct top_data *
top_data_create(void)
{
	struct top_data *d = xcalloc(1, sizeof(*d));
	d->sample = xcalloc(1, sizeof(*d->sample));
	sample_clear(d->sample);
	return d;
}

void
top_data_destroy(struct top_data *d)
{
	if (d) {
		sample_clear(d->sample);
		free(d->sample);
		free(d);
	}
}

static void
alert_member(struct json_reader *r, const char *key, void *data)
{
	struct top_alert *a = data;
	struct {
		const char *key;
		char *field;
		size_t size;
	} strings[] = {
		{"rule", a->rule, sizeof(a->rule)},          {"metric", a->metric, sizeof(a->metric)},
		{"status", a->status, sizeof(a->status)},    {"severity", a->severity, sizeof(a->severity)},
		{"summary", a->summary, sizeof(a->summary)}, {"starts_at", a->since, sizeof(a->since)},
	};
	char next = json_peek(r);
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		if (strcmp(key, strings[i].key) == 0 && next == '"') {
			json_read_string(r, strings[i].field, strings[i].size, NULL);
			return;
		}
	}
	if (strcmp(key, "at") == 0 && next == '"' && !a->since[0]) {
		json_read_string(r, a->since, sizeof(a->since), NULL);
	} else if (strcmp(key, "value") == 0 && next != '"') {
		a->value = json_read_number(r);
	} else if (strcmp(key, "threshold") == 0 && next != '"') {
		a->threshold = json_read_number(r);
	} else {
		json_skip_value(r);
	}
}

struct snapshot_state {
	struct top_data *d; /* alerts written straight in; the sample into SCRATCH */
	struct sample *scratch;
	struct board_identity id;
	char ts[24];
	bool have_time;
};

static void
alert_element(struct json_reader *r, size_t index, void *data)
{
	struct top_data *d = data;
	(void)index;
	if (json_peek(r) != '{') {
		json_skip_value(r);
		return;
	}
	if (d->alert_count == TOP_ALERTS_MAX) {
		d->alerts_omitted++;
		json_skip_value(r);
		return;
	}
	struct top_alert *a = &d->alerts[d->alert_count++];
	memset(a, 0, sizeof(*a));
	a->value = a->threshold = NAN;
	json_each_member(r, alert_member, a);
}

static void
snapshot_member(struct json_reader *r, const char *key, void *data)
{
	struct snapshot_state *st = data;
	char next = json_peek(r);
	if (strcmp(key, "board") == 0 && next == '{') {
		board_identity_from_json(r, &st->id);
	} else if (strcmp(key, "ts") == 0 && next == '"') {
		json_read_string(r, st->ts, sizeof(st->ts), NULL);
	} else if (strcmp(key, "alerts") == 0 && next == '[') {
		json_each_element(r, alert_element, st->d);
	} else if (!sample_member_from_json(r, key, st->scratch, &st->have_time)) {
		json_skip_value(r);
	}
}

int
top_data_from_snapshot(struct top_data *d, const char *body)
{
	struct top_alert saved[TOP_ALERTS_MAX];
	int saved_count = d->alert_count, saved_omitted = d->alerts_omitted;
	memcpy(saved, d->alerts, sizeof(saved));
	struct snapshot_state st = {.d = d, .scratch = xcalloc(1, sizeof(struct sample))};
	sample_clear(st.scratch);
	d->alert_count = d->alerts_omitted = 0;

	struct json_reader r;
	json_reader_init(&r, body);
	bool ok = json_each_member(&r, snapshot_member, &st) && !r.failed;
	if (ok) {
		ok = json_peek(&r) == '\0';
	}
	if (!ok) {
		memcpy(d->alerts, saved, sizeof(saved));
		d->alert_count = saved_count;
		d->alerts_omitted = saved_omitted;
		sample_clear(st.scratch);
		free(st.scratch);
		return -EINVAL;
	}
	sample_clear(d->sample);
	free(d->sample);
	d->sample = st.scratch;
	d->id = st.id;
	d->have_sample = st.have_time; /* "time_ms": null before the agent's first sample */
	memcpy(d->ts, st.ts, sizeof(d->ts));
	d->alerts_known = true;
	return 0;
}
