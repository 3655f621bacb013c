/* Webhook bodies: Alertmanager's API, Alertmanager's webhook (version 4) and the tegrawatch event. No I/O. */
#include "webhook_format.h"

#include "core/sample_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/xalloc.h"

/* What Alertmanager writes for "not set" (a firing alert's endsAt in its webhook). */
#define ZERO_TIME "0001-01-01T00:00:00Z"
#define ANNOTATIONS_MAX 7

struct kv {
	const char *key;
	const char *value;
};

/* One alert as Alertmanager sees it: sorted labels, annotations, and the text they point into. */
struct am_alert {
	const struct alert_event *ev;
	struct kv *labels;
	size_t nlabels;
	struct kv ann[ANNOTATIONS_MAX];
	size_t nann;
	char value[40];
	char threshold[40];
	char top_cpu[256], top_memory[256]; /* what ran as it fired (core/alert.h) */
};

bool
webhook_event_wanted(const struct alert_event *ev)
{
	return ev->transition != TRANSITION_PENDING && ev->transition != TRANSITION_CANCELLED;
}

bool
webhook_event_firing(const struct alert_event *ev)
{
	return webhook_event_wanted(ev) && ev->transition != TRANSITION_RESOLVED;
}

/* As json_number() writes it, but as text: annotations are strings. */
static void
number_text(double v, char *buf, size_t size)
{
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, size, "%.0f", v);
	} else {
		snprintf(buf, size, "%.15g", v);
	}
}

static int
kv_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kv *)a)->key, ((const struct kv *)b)->key);
}

static void
add_label(struct am_alert *a, const char *key, const char *value)
{
	for (size_t i = 0; i < a->nlabels; i++) {
		if (strcmp(a->labels[i].key, key) == 0) {
			return; /* the first writer wins: the built-in labels come first */
		}
	}
	a->labels[a->nlabels++] = (struct kv){key, value ? value : ""};
}

static void
alert_fill(struct am_alert *a, const struct agent_info *board, const struct alert_event *ev)
{
	a->ev = ev;
	a->labels = xcalloc(5 + ev->label_count, sizeof(*a->labels));
	a->nlabels = 0;
	add_label(a, "alertname", ev->rule_name);
	add_label(a, "severity", severity_name(ev->severity));
	add_label(a, "instance", board->board_name);
	add_label(a, "board", board->board_name);
	add_label(a, "metric", ev->metric);
	for (size_t i = 0; i < ev->label_count; i++) {
		add_label(a, ev->labels[i].key, ev->labels[i].value);
	}
	qsort(a->labels, a->nlabels, sizeof(*a->labels), kv_cmp);

	/* annotations in key order too */
	a->nann = 0;
	if (ev->description[0]) {
		a->ann[a->nann++] = (struct kv){"description", ev->description};
	}
	a->ann[a->nann++] = (struct kv){"summary", ev->summary};
	if (isfinite(ev->threshold)) {
		number_text(ev->threshold, a->threshold, sizeof(a->threshold));
		a->ann[a->nann++] = (struct kv){"threshold", a->threshold};
	}
	if (ev->throttle[0]) {
		a->ann[a->nann++] = (struct kv){"throttle", ev->throttle};
	}
	top_processes_text(&ev->processes, false, a->top_cpu, sizeof(a->top_cpu));
	if (a->top_cpu[0]) {
		a->ann[a->nann++] = (struct kv){"top_cpu", a->top_cpu};
	}
	top_processes_text(&ev->processes, true, a->top_memory, sizeof(a->top_memory));
	if (a->top_memory[0]) {
		a->ann[a->nann++] = (struct kv){"top_memory", a->top_memory};
	}
	if (isfinite(ev->value)) {
		number_text(ev->value, a->value, sizeof(a->value));
		a->ann[a->nann++] = (struct kv){"value", a->value};
	}
}

static void
write_kvs(struct json *j, const struct kv *kvs, size_t n)
{
	json_object_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_key(j, kvs[i].key);
		json_string(j, kvs[i].value);
	}
	json_object_end(j);
}

static void
write_time(struct json *j, const char *key, int64_t ms)
{
	char ts[RFC3339_LEN + 8];
	rfc3339_utc(ms, ts, sizeof(ts));
	json_key(j, key);
	json_string(j, ts);
}

static int64_t
starts_at(const struct alert_event *ev)
{
	return ev->starts_at_ms > 0 ? ev->starts_at_ms : ev->at_ms;
}

static int64_t
ends_at(const struct alert_event *ev)
{
	return ev->ends_at_ms > 0 ? ev->ends_at_ms : ev->at_ms;
}

static const char *
generator_url(const struct agent_info *board)
{
	return board->generator_url ? board->generator_url : "";
}

void
webhook_format_alertmanager_api(struct json *j, const struct agent_info *board, const struct alert_event *const *evs,
				size_t n)
{
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		struct am_alert a;
		alert_fill(&a, board, evs[i]);
		json_object_begin(j);
		json_key(j, "labels");
		write_kvs(j, a.labels, a.nlabels);
		json_key(j, "annotations");
		write_kvs(j, a.ann, a.nann);
		write_time(j, "startsAt", starts_at(evs[i]));
		if (!webhook_event_firing(evs[i])) {
			/* a firing alert has no endsAt: Alertmanager then keeps it for its resolve_timeout */
			write_time(j, "endsAt", ends_at(evs[i]));
		}
		json_key(j, "generatorURL");
		json_string(j, generator_url(board));
		json_object_end(j);
		free(a.labels);
	}
	json_array_end(j);
}

/* The pairs of A's list that every other alert has with the same value. */
static size_t
common_kvs(const struct am_alert *alerts, size_t n, bool annotations, struct kv *out)
{
	const struct kv *first = annotations ? alerts[0].ann : alerts[0].labels;
	size_t nfirst = annotations ? alerts[0].nann : alerts[0].nlabels, count = 0;
	for (size_t k = 0; k < nfirst; k++) {
		bool everywhere = true;
		for (size_t i = 1; i < n && everywhere; i++) {
			const struct kv *list = annotations ? alerts[i].ann : alerts[i].labels;
			size_t len = annotations ? alerts[i].nann : alerts[i].nlabels;
			bool found = false;
			for (size_t m = 0; m < len && !found; m++) {
				found = strcmp(list[m].key, first[k].key) == 0 &&
					strcmp(list[m].value, first[k].value) == 0;
			}
			everywhere = found;
		}
		if (everywhere) {
			out[count++] = first[k];
		}
	}
	return count;
}

/* {}:{instance="NAME"}: Alertmanager's "<route>:<group labels>", the group being the board */
static void
write_group_key(struct json *j, const char *board)
{
	size_t len = strlen(board);
	char *key = xmalloc(2 * len + 32);
	size_t at = (size_t)snprintf(key, 32, "{}:{instance=\"");
	for (const char *p = board; *p; p++) {
		if (*p == '"' || *p == '\\') {
			key[at++] = '\\';
		}
		key[at++] = *p;
	}
	memcpy(key + at, "\"}", 3);
	json_string(j, key);
	free(key);
}

void
webhook_format_alertmanager(struct json *j, const struct agent_info *board, const char *receiver,
			    const struct alert_event *const *evs, size_t n)
{
	struct am_alert *alerts = xcalloc(n, sizeof(*alerts));
	bool any_firing = false;
	size_t max_labels = 0;
	for (size_t i = 0; i < n; i++) {
		alert_fill(&alerts[i], board, evs[i]);
		any_firing = any_firing || webhook_event_firing(evs[i]);
		max_labels = alerts[i].nlabels > max_labels ? alerts[i].nlabels : max_labels;
	}
	json_object_begin(j);
	json_key(j, "version");
	json_string(j, "4");
	json_key(j, "groupKey");
	write_group_key(j, board->board_name);
	json_key(j, "truncatedAlerts");
	json_int(j, 0);
	json_key(j, "status");
	json_string(j, any_firing ? "firing" : "resolved");
	json_key(j, "receiver");
	json_string(j, receiver);
	json_key(j, "groupLabels");
	json_object_begin(j);
	json_key(j, "instance");
	json_string(j, board->board_name);
	json_object_end(j);
	struct kv *common = xcalloc(max_labels + ANNOTATIONS_MAX, sizeof(*common));
	json_key(j, "commonLabels");
	write_kvs(j, common, n ? common_kvs(alerts, n, false, common) : 0);
	json_key(j, "commonAnnotations");
	write_kvs(j, common, n ? common_kvs(alerts, n, true, common) : 0);
	free(common);
	json_key(j, "externalURL");
	json_string(j, generator_url(board));
	json_key(j, "alerts");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		bool firing = webhook_event_firing(evs[i]);
		json_object_begin(j);
		json_key(j, "status");
		json_string(j, firing ? "firing" : "resolved");
		json_key(j, "labels");
		write_kvs(j, alerts[i].labels, alerts[i].nlabels);
		json_key(j, "annotations");
		write_kvs(j, alerts[i].ann, alerts[i].nann);
		write_time(j, "startsAt", starts_at(evs[i]));
		if (firing) {
			json_key(j, "endsAt");
			json_string(j, ZERO_TIME);
		} else {
			write_time(j, "endsAt", ends_at(evs[i]));
		}
		json_key(j, "generatorURL");
		json_string(j, generator_url(board));
		json_key(j, "fingerprint");
		json_string(j, evs[i]->fingerprint);
		json_object_end(j);
		free(alerts[i].labels);
	}
	json_array_end(j);
	json_object_end(j);
	free(alerts);
}
