/* The report as JSON: the one shape documented in docs/report.md (tests rely on its names). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sample_json.h"
#include "core/xalloc.h"
#include "criteria.h"
#include "report.h"

static void
time_member(struct json *j, const char *key, int64_t ms)
{
	char ts[RFC3339_LEN + 8];
	rfc3339_utc(ms, ts, sizeof(ts));
	json_key(j, key);
	json_string(j, ts);
}

/* Seconds from a sum of milliseconds: whole milliseconds, no binary noise. */
static double
secs(double s)
{
	return round(s * 1000) / 1000;
}

static void
metrics_json(struct json *j, const struct stats *st)
{
	size_t *order = xcalloc(st->count, sizeof(*order));
	stats_sorted(st, order);
	json_object_begin(j);
	for (size_t i = 0; i < st->count; i++) {
		const struct stat_metric *m = &st->items[order[i]];
		json_key(j, m->name);
		json_object_begin(j);
		json_key(j, "count");
		json_uint(j, m->count);
		json_key(j, "mean");
		json_number(j, m->mean);
		json_key(j, "std");
		json_number(j, m->std);
		json_key(j, "min");
		json_number(j, m->min);
		json_key(j, "max");
		json_number(j, m->max);
		json_key(j, "p50");
		json_number(j, m->p50);
		json_key(j, "p95");
		json_number(j, m->p95);
		json_key(j, "p99");
		json_number(j, m->p99);
		json_object_end(j);
	}
	json_object_end(j);
	free(order);
}

static void
energy_json(struct json *j, const struct report_span *sp)
{
	json_object_begin(j);
	for (size_t i = 0; i < sp->rails; i++) {
		json_key(j, sp->energy[i].rail);
		json_number(j, round(sp->energy[i].joules * 1000) / 1000);
	}
	json_object_end(j);
}

static void
reason_seconds_json(struct json *j, const struct report_span *sp)
{
	json_object_begin(j);
	for (int k = 0; k < THROTTLE_REASON_COUNT; k++) {
		if (sp->reason_seconds[k] > 0) {
			json_key(j, throttle_reason_name((enum throttle_reason)k));
			json_number(j, secs(sp->reason_seconds[k]));
		}
	}
	json_object_end(j);
}

static void
throttle_json(struct json *j, const struct report *r)
{
	json_object_begin(j);
	json_key(j, "seconds");
	json_number(j, secs(r->all.throttle_seconds));
	json_key(j, "fraction");
	json_number(j, r->all.seconds > 0 ? r->all.throttle_seconds / r->all.seconds : 0);
	json_key(j, "reasons");
	reason_seconds_json(j, &r->all);
	json_key(j, "episodes_dropped");
	json_uint(j, r->episodes_dropped);
	json_key(j, "episodes");
	json_array_begin(j);
	for (size_t i = 0; i < r->episode_count; i++) {
		const struct report_episode *e = &r->episodes[i];
		json_object_begin(j);
		time_member(j, "start", e->start_ms);
		time_member(j, "end", e->end_ms);
		json_key(j, "start_ms");
		json_int(j, e->start_ms);
		json_key(j, "end_ms");
		json_int(j, e->end_ms);
		json_key(j, "seconds");
		json_number(j, (double)(e->end_ms - e->start_ms) / 1000.0);
		json_key(j, "samples");
		json_uint(j, e->samples);
		json_key(j, "predicted_s");
		if (e->predicted_s >= 0) {
			json_number(j, e->predicted_s);
		} else {
			json_null(j);
		}
		json_key(j, "reasons");
		json_array_begin(j);
		for (int k = 0; k < THROTTLE_REASON_COUNT; k++) {
			if (e->reason[k]) {
				json_string(j, throttle_reason_name((enum throttle_reason)k));
			}
		}
		json_array_end(j);
		json_key(j, "why");
		json_object_begin(j);
		for (int k = 0; k < THROTTLE_REASON_COUNT; k++) {
			if (e->reason[k]) {
				json_key(j, throttle_reason_name((enum throttle_reason)k));
				json_string(j, e->why[k]);
			}
		}
		json_object_end(j);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

/* Opens SENSOR's peak: its maximum, when, and the trips object. */
static void
peak_begin(struct json *j, const char *sensor, const struct stat_metric *m)
{
	json_key(j, sensor);
	json_object_begin(j);
	json_key(j, "max_c");
	json_number(j, m->max);
	time_member(j, "at", m->max_at_ms);
	json_key(j, "trips");
	json_object_begin(j);
}

/* Each temperature's maximum against the trip points of the same sensor. */
static void
peaks_json(struct json *j, const struct stats *st)
{
	static const char *const trips[] = {"passive", "hot", "critical", "active"};
	size_t *order = xcalloc(st->count, sizeof(*order));
	stats_sorted(st, order);
	json_object_begin(j);
	for (size_t i = 0; i < st->count; i++) {
		const struct stat_metric *m = &st->items[order[i]];
		size_t len = strlen(m->name);
		if (strncmp(m->name, "temp.", 5) != 0 || len < 8 || strcmp(m->name + len - 2, "_c") != 0) {
			continue;
		}
		char sensor[METRIC_NAME_MAX];
		snprintf(sensor, sizeof(sensor), "%.*s", (int)(len - 7), m->name + 5);
		peak_begin(j, sensor, m);
		double first_trip = NAN;
		for (size_t t = 0; t < sizeof(trips) / sizeof(trips[0]); t++) {
			char name[METRIC_NAME_MAX + 32];
			snprintf(name, sizeof(name), "trip.%s.%s_c", sensor, trips[t]);
			const struct stat_metric *tm = stats_find(st, name);
			if (tm) {
				json_key(j, trips[t]);
				json_number(j, tm->min);
				if (isnan(first_trip) && t < 3) {
					first_trip = tm->min;
				}
			}
		}
		json_object_end(j);
		/* to the lowest throttling trip: passive, else hot, else critical */
		json_key(j, "margin_c");
		json_number(j, isnan(first_trip) ? NAN : round((first_trip - m->max) * 1000) / 1000);
		json_object_end(j);
	}
	/* NVML GPUs as "gpuN": their own thresholds, slowdown and shutdown (the margin: to the slowdown) */
	for (size_t i = 0; i < st->count; i++) {
		const struct stat_metric *m = &st->items[order[i]];
		unsigned n;
		int at = 0;
		if (sscanf(m->name, "gpu.%u.temp_c%n", &n, &at) != 1 || m->name[at] != '\0') {
			continue;
		}
		char sensor[16], name[METRIC_NAME_MAX];
		snprintf(sensor, sizeof(sensor), "gpu%u", n);
		peak_begin(j, sensor, m);
		snprintf(name, sizeof(name), "gpu.%u.temp_slowdown_c", n);
		const struct stat_metric *slow = stats_find(st, name);
		if (slow) {
			json_key(j, "slowdown");
			json_number(j, slow->min);
		}
		snprintf(name, sizeof(name), "gpu.%u.temp_shutdown_c", n);
		const struct stat_metric *shut = stats_find(st, name);
		if (shut) {
			json_key(j, "shutdown");
			json_number(j, shut->min);
		}
		json_object_end(j);
		json_key(j, "margin_c");
		json_number(j, slow ? round((slow->min - m->max) * 1000) / 1000 : NAN);
		json_object_end(j);
	}
	json_object_end(j);
	free(order);
}

static void
alerts_json(struct json *j, const struct report *r)
{
	json_array_begin(j);
	for (size_t i = 0; i < r->alert_count; i++) {
		const struct report_alert *a = &r->alerts[i];
		json_object_begin(j);
		time_member(j, "at", a->at_ms);
		json_key(j, "at_ms");
		json_int(j, a->at_ms);
		json_key(j, "rule");
		json_string(j, a->rule);
		json_key(j, "metric");
		json_string(j, a->metric);
		json_key(j, "transition");
		json_string(j, alert_transition_name(a->transition));
		json_key(j, "severity");
		json_string(j, severity_name(a->severity));
		json_key(j, "value");
		json_number(j, a->value);
		json_key(j, "threshold");
		json_number(j, a->threshold);
		json_key(j, "summary");
		json_string(j, a->summary);
		if (a->processes.cpu_count > 0 || a->processes.memory_count > 0) {
			json_key(j, "processes");
			top_processes_to_json(j, &a->processes);
		}
		json_object_end(j);
	}
	json_array_end(j);
}

static void
phases_json(struct json *j, const struct report *r)
{
	json_array_begin(j);
	for (size_t i = 0; i < r->phase_count; i++) {
		const struct report_phase_def *d = &r->phase_defs[i];
		const struct report_span *sp = &r->phases[i];
		json_object_begin(j);
		json_key(j, "name");
		json_string(j, d->name);
		time_member(j, "start", d->start_ms);
		time_member(j, "end", d->end_ms);
		json_key(j, "samples");
		json_uint(j, sp->samples);
		json_key(j, "seconds");
		json_number(j, secs(sp->seconds));
		json_key(j, "throttle");
		json_object_begin(j);
		json_key(j, "seconds");
		json_number(j, secs(sp->throttle_seconds));
		json_key(j, "fraction");
		json_number(j, sp->seconds > 0 ? sp->throttle_seconds / sp->seconds : 0);
		json_key(j, "reasons");
		reason_seconds_json(j, sp);
		json_object_end(j);
		json_key(j, "energy_j");
		energy_json(j, sp);
		json_key(j, "metrics");
		metrics_json(j, &sp->stats);
		json_object_end(j);
	}
	json_array_end(j);
}

void
report_to_json(const struct report *r, struct json *j)
{
	const struct report_span *a = &r->all;
	json_object_begin(j);
	json_key(j, "samples");
	json_uint(j, a->samples);
	time_member(j, "start", a->first_ms);
	time_member(j, "end", a->last_ms);
	json_key(j, "start_ms");
	json_int(j, a->first_ms);
	json_key(j, "end_ms");
	json_int(j, a->last_ms);
	json_key(j, "duration_s");
	json_number(j, secs(a->seconds));
	json_key(j, "interval_s");
	json_number(j, round(report_interval_s(r) * 1e6) / 1e6);
	json_key(j, "gaps");
	json_uint(j, r->gaps);
	json_key(j, "board");
	if (r->board_known) {
		json_object_begin(j);
		board_identity_to_json(j, &r->board, true);
		json_object_end(j);
	} else {
		json_null(j);
	}
	json_key(j, "power_modes");
	json_object_begin(j);
	for (size_t i = 0; i < r->mode_count; i++) {
		json_key(j, r->modes[i].name);
		json_number(j, secs(r->modes[i].seconds));
	}
	json_object_end(j);
	json_key(j, "throttle");
	throttle_json(j, r);
	json_key(j, "energy_j");
	energy_json(j, a);
	json_key(j, "peaks");
	peaks_json(j, &a->stats);
	json_key(j, "cooling");
	report_cooling_json(r, j);
	json_key(j, "work");
	report_work_json(r, j);
	if (report_host_seen(r)) { /* only where the host was recorded: other reports stay as they were */
		json_key(j, "host");
		report_host_json(r, j);
	}
	if (r->criteria) {
		json_key(j, "criteria");
		criteria_json(r->criteria, r->criteria_results, j);
	}
	json_key(j, "alerts");
	alerts_json(j, r);
	json_key(j, "alerts_dropped");
	json_uint(j, r->alerts_dropped);
	json_key(j, "phases");
	phases_json(j, r);
	json_key(j, "recommendations");
	json_array_begin(j);
	for (size_t i = 0; i < r->rec_count; i++) {
		json_object_begin(j);
		json_key(j, "id");
		json_string(j, r->recs[i].id);
		json_key(j, "text");
		json_string(j, r->recs[i].text);
		json_key(j, "evidence");
		/* a finished JSON object, as the value of the key just written */
		json_raw(j, r->recs[i].evidence, strlen(r->recs[i].evidence));
		j->after_key = false;
		json_object_end(j);
	}
	json_array_end(j);
	json_key(j, "metrics");
	metrics_json(j, &a->stats);
	json_object_end(j);
}
