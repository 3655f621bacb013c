/*
 * Recommendations: each one grounded in what the recording shows (its
 * evidence goes with it) and in docs/throttling.md. No evidence, no advice.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "report.h"

#define HEADROOM_C 5.0   /* a zone this close to its passive trip is worth a word */
#define MIN_SECONDS 10.0 /* shorter conditions are noise, not a pattern */
#define CPU_BOUND_FRACTION 0.10

static void add_rec(struct report *r, const char *id, struct json *evidence, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
add_rec(struct report *r, const char *id, struct json *evidence, const char *fmt, ...)
{
	r->recs = xrealloc(r->recs, r->rec_count + 1, sizeof(*r->recs));
	struct report_recommendation *rec = &r->recs[r->rec_count++];
	snprintf(rec->id, sizeof(rec->id), "%s", id);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rec->text, sizeof(rec->text), fmt, ap);
	va_end(ap);
	rec->evidence = xstrdup(evidence->out.buf ? evidence->out.buf : "{}");
}

/* A temperature sensor with a trip point: how close it came. */
struct zone {
	char name[METRIC_NAME_MAX];
	double max_c, trip_c, margin_c;
};

/* The zones with a passive (else hot) trip, smallest margin first; returns how many. */
static size_t
zones_by_margin(const struct stats *st, struct zone *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < st->count && n < max; i++) {
		const char *name = st->items[i].name;
		size_t len = strlen(name);
		if (strncmp(name, "temp.", 5) != 0 || len < 8 || strcmp(name + len - 2, "_c") != 0) {
			continue;
		}
		char sensor[METRIC_NAME_MAX], trip[METRIC_NAME_MAX + 16];
		snprintf(sensor, sizeof(sensor), "%.*s", (int)(len - 7), name + 5);
		snprintf(trip, sizeof(trip), "trip.%s.passive_c", sensor);
		const struct stat_metric *t = stats_find(st, trip);
		if (!t) {
			snprintf(trip, sizeof(trip), "trip.%s.hot_c", sensor);
			t = stats_find(st, trip);
		}
		if (!t) {
			continue;
		}
		struct zone z = {.max_c = st->items[i].max, .trip_c = t->min};
		snprintf(z.name, sizeof(z.name), "%s", sensor);
		z.margin_c = z.trip_c - z.max_c;
		size_t k = n++;
		while (k > 0 && out[k - 1].margin_c > z.margin_c) {
			out[k] = out[k - 1];
			k--;
		}
		out[k] = z;
	}
	return n;
}

static void
zones_json(struct json *j, const struct zone *z, size_t n)
{
	json_key(j, "zones");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		json_key(j, "sensor");
		json_string(j, z[i].name);
		json_key(j, "max_c");
		json_number(j, z[i].max_c);
		json_key(j, "trip_c");
		json_number(j, z[i].trip_c);
		json_key(j, "margin_c");
		json_number(j, round(z[i].margin_c * 1000) / 1000);
		json_object_end(j);
	}
	json_array_end(j);
}

static void
advise_thermal(struct report *r, struct json *j, const struct zone *z, size_t nz)
{
	const struct report_span *a = &r->all;
	double sec = a->reason_seconds[THROTTLE_THERMAL];
	double frac = a->seconds > 0 ? sec / a->seconds : 0;
	const char *why = "";
	for (size_t i = 0; i < r->episode_count && !why[0]; i++) {
		why = r->episodes[i].why[THROTTLE_THERMAL];
	}
	json_object_begin(j);
	json_key(j, "thermal_seconds");
	json_number(j, sec);
	json_key(j, "fraction");
	json_number(j, round(frac * 10000) / 10000);
	json_key(j, "episodes");
	json_uint(j, r->episode_count + r->episodes_dropped);
	json_key(j, "why");
	json_string(j, why);
	zones_json(j, z, nz);
	json_object_end(j);
	char zone_text[256] = "";
	if (nz > 0) {
		int n = snprintf(zone_text, sizeof(zone_text), " %s peaked at %.1f C against its trip of %.1f C%s",
				 z[0].name, z[0].max_c, z[0].trip_c, nz > 1 ? "" : ".");
		if (nz > 1 && n > 0 && (size_t)n < sizeof(zone_text)) {
			snprintf(zone_text + n, sizeof(zone_text) - (size_t)n, "; %s came within %.1f C of its trip.",
				 z[1].name, z[1].margin_c);
		}
	} else if (why[0]) {
		snprintf(zone_text, sizeof(zone_text), " %s.", why);
	}
	add_rec(r, "thermal-throttling", j,
		"Thermal throttling for %.0f s (%.1f %% of the run).%s Improve the cooling (heatsink contact, a fan "
		"profile that spins up sooner), choose a lower power mode, or lighten the load.",
		sec, frac * 100, zone_text);
}

static void
advise_power(struct report *r, struct json *j)
{
	const struct report_span *a = &r->all;
	const struct report_signals *g = &r->sig;
	double oc = a->reason_seconds[THROTTLE_OVERCURRENT], alarm = a->reason_seconds[THROTTLE_RAIL_ALARM];
	double events = 0;
	json_reset(j);
	json_object_begin(j);
	json_key(j, "overcurrent_seconds");
	json_number(j, oc);
	json_key(j, "rail_alarm_seconds");
	json_number(j, alarm);
	json_key(j, "counters");
	json_object_begin(j);
	for (size_t i = 0; i < a->stats.count; i++) {
		const struct stat_metric *m = &a->stats.items[i];
		size_t len = strlen(m->name);
		if (strncmp(m->name, "oc.", 3) == 0 && len > 7 && strcmp(m->name + len - 7, ".events") == 0 &&
		    m->max > m->min) {
			json_key(j, m->name);
			json_number(j, m->max - m->min);
			events += m->max - m->min;
		}
	}
	json_object_end(j);
	json_object_end(j);
	if (oc > 0 || alarm > 0 || events > 0) {
		add_rec(r, "power-supply", j,
			"Over-current or under-voltage during the run: %.0f counted events, %.0f s throttled for "
			"over-current and %.0f s with a rail alarm. Check the power supply (its rating for this power "
			"mode) and the cable and connector.",
			events, oc, alarm);
	}
	if (g->gpu_ceiling_s >= MIN_SECONDS || g->cpu_ceiling_s >= MIN_SECONDS) {
		json_reset(j);
		json_object_begin(j);
		json_key(j, "gpu_seconds");
		json_number(j, g->gpu_ceiling_s);
		json_key(j, "gpu_ceiling_mhz");
		json_number(j, g->gpu_ceiling_s > 0 ? g->gpu_ceiling_mhz : NAN);
		json_key(j, "gpu_hw_max_mhz");
		json_number(j, g->gpu_ceiling_s > 0 ? g->gpu_hw_max_mhz : NAN);
		json_key(j, "cpu_seconds");
		json_number(j, g->cpu_ceiling_s);
		json_key(j, "cpu_ceiling_mhz");
		json_number(j, g->cpu_ceiling_s > 0 ? g->cpu_ceiling_mhz : NAN);
		json_key(j, "cpu_hw_max_mhz");
		json_number(j, g->cpu_ceiling_s > 0 ? g->cpu_hw_max_mhz : NAN);
		json_object_end(j);
		bool gpu = g->gpu_ceiling_s >= g->cpu_ceiling_s;
		add_rec(r, "power-mode-ceiling", j,
			"The power mode's ceiling held the %s at %.0f of %.0f MHz under full load for %.0f s. A higher "
			"power mode (nvpmodel) raises it, if the power supply can deliver the extra watts.",
			gpu ? "GPU" : "CPU", gpu ? g->gpu_ceiling_mhz : g->cpu_ceiling_mhz,
			gpu ? g->gpu_hw_max_mhz : g->cpu_hw_max_mhz, gpu ? g->gpu_ceiling_s : g->cpu_ceiling_s);
	}
}

static void
advise_load(struct report *r, struct json *j)
{
	const struct report_signals *g = &r->sig;
	double run = r->all.seconds;
	if (g->swap_growth_s >= MIN_SECONDS) {
		json_reset(j);
		json_object_begin(j);
		json_key(j, "seconds");
		json_number(j, g->swap_growth_s);
		json_key(j, "swap_start_mb");
		json_number(j, g->swap_start_mb);
		json_key(j, "swap_max_under_load_mb");
		json_number(j, g->swap_max_loaded_mb);
		json_key(j, "ram_max_pct_under_load");
		json_number(j, round(g->ram_max_pct_loaded * 10) / 10);
		json_object_end(j);
		add_rec(r, "memory-pressure", j,
			"Swap grew from %.0f to %.0f MB under load (RAM up to %.0f %%) for %.0f s: memory pressure. A "
			"smaller model or batch, or less running beside it, avoids the stalls swapping causes.",
			g->swap_start_mb, g->swap_max_loaded_mb, g->ram_max_pct_loaded, g->swap_growth_s);
	}
	if (g->cpu_bound_s >= MIN_SECONDS * 3 && run > 0 && g->cpu_bound_s / run >= CPU_BOUND_FRACTION) {
		json_reset(j);
		json_object_begin(j);
		json_key(j, "seconds");
		json_number(j, g->cpu_bound_s);
		json_key(j, "fraction");
		json_number(j, round(g->cpu_bound_s / run * 10000) / 10000);
		json_object_end(j);
		add_rec(r, "cpu-bound", j,
			"For %.0f s (%.0f %% of the run) the CPU was at 90 %% or more while the GPU was at 20 %% or "
			"less: the workload is CPU-bound. Move pre- and post-processing to the GPU or the other "
			"engines, or spread it over more threads.",
			g->cpu_bound_s, g->cpu_bound_s / run * 100);
	}
}

void
report_advise(struct report *r)
{
	struct json j;
	json_init(&j);
	struct zone zones[32];
	size_t nz = zones_by_margin(&r->all.stats, zones, sizeof(zones) / sizeof(zones[0]));
	const struct report_span *a = &r->all;
	if (a->reason_seconds[THROTTLE_THERMAL] > 0) {
		advise_thermal(r, &j, zones, nz);
	} else if (nz > 0 && zones[0].margin_c < HEADROOM_C) {
		json_object_begin(&j);
		zones_json(&j, zones, nz);
		json_object_end(&j);
		add_rec(r, "thermal-headroom", &j,
			"No thermal throttling, but %s peaked at %.1f C, %.1f C under its trip of %.1f C: a longer or "
			"warmer run would throttle. Improve the cooling before relying on this margin.",
			zones[0].name, zones[0].max_c, zones[0].margin_c, zones[0].trip_c);
	}
	advise_power(r, &j);
	double cap = a->reason_seconds[THROTTLE_FREQ_CAP];
	if (cap >= MIN_SECONDS) {
		json_reset(&j);
		json_object_begin(&j);
		json_key(&j, "freq_cap_seconds");
		json_number(&j, cap);
		json_object_end(&j);
		add_rec(r, "clock-cap", &j,
			"For %.0f s a clock stayed below its ceiling under full load with no thermal or electrical "
			"cause in the data. Record on the board itself (tegrawatch run --record) so the trip points, "
			"cooling devices and over-current counters can name the cause.",
			cap);
	}
	advise_load(r, &j);
	json_free(&j);
}
