/*
 * Headroom and time to throttle for every thermal zone with a passive (else
 * hot) trip: finds the zones in the sample, keeps one thermal_fit each,
 * restarts them all when the board's input power steps (a new load is a
 * new curve), and puts headroom.ZONE_c, steady_temp.ZONE_c,
 * throttle_eta.ZONE_s and throttle_eta_error.ZONE_s.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "predict_priv.h"

#define RESCAN_MS 30000 /* zones appear with the slow group; look again this often */
#define POWER_SHORT_MS 3000.0
#define POWER_LONG_MS 60000.0
#define STEP_RATIO 0.10 /* a load step: the short average 10 % (and 0.75 W) off the long one ... */
#define STEP_MIN_MW 750.0
#define STEP_HOLD_MS 5000 /* ... for 5 s */

static bool
ends_with(const char *s, size_t len, const char *suffix, size_t n)
{
	return len > n && memcmp(s + len - n, suffix, n) == 0;
}

/* Adds the zone whose trip metric is NAME (trip.ZONE.KIND_c) unless known; a passive trip replaces a hot one. */
static void
note_zone(struct forecast *fc, const char *name, size_t len, bool passive)
{
	size_t kind_len = passive ? strlen(".passive_c") : strlen(".hot_c");
	size_t zlen = len - strlen("trip.") - kind_len;
	if (zlen == 0 || zlen > ZONE_NAME_MAX - 1) {
		return;
	}
	const char *zone = name + strlen("trip.");
	for (int i = 0; i < fc->zone_count; i++) {
		struct zone *z = &fc->zones[i];
		if (strlen(z->name) == zlen && memcmp(z->name, zone, zlen) == 0) {
			if (passive && !z->passive) {
				snprintf(z->trip_metric, sizeof(z->trip_metric), "%.*s", (int)len, name);
				z->passive = true;
			}
			z->seen = true;
			return;
		}
	}
	if (fc->zone_count == FORECAST_ZONES_MAX) {
		return;
	}
	struct zone *z = &fc->zones[fc->zone_count++];
	memset(z, 0, sizeof(*z));
	memcpy(z->name, zone, zlen);
	z->passive = passive;
	z->seen = true;
	snprintf(z->trip_metric, sizeof(z->trip_metric), "%.*s", (int)len, name);
	int n = (int)zlen;
	snprintf(z->temp_metric, sizeof(z->temp_metric), "temp.%.*s_c", n, zone);
	snprintf(z->headroom_metric, sizeof(z->headroom_metric), "headroom.%.*s_c", n, zone);
	snprintf(z->steady_metric, sizeof(z->steady_metric), "steady_temp.%.*s_c", n, zone);
	snprintf(z->eta_metric, sizeof(z->eta_metric), "throttle_eta.%.*s_s", n, zone);
	snprintf(z->error_metric, sizeof(z->error_metric), "throttle_eta_error.%.*s_s", n, zone);
}

static void
scan_zones(struct forecast *fc, const struct metric_set *ms, int64_t now_ms)
{
	for (int i = 0; i < fc->zone_count; i++) {
		fc->zones[i].seen = false;
	}
	for (size_t i = 0; i < ms->count; i++) {
		const struct metric *m = &ms->items[i];
		if (m->len < 12 || memcmp(m->name, "trip.", 5) != 0) {
			continue;
		}
		if (ends_with(m->name, m->len, ".passive_c", 10)) {
			note_zone(fc, m->name, m->len, true);
		} else if (ends_with(m->name, m->len, ".hot_c", 6)) {
			note_zone(fc, m->name, m->len, false);
		}
	}
	/* zones gone from the board (a fixture tree changed) are dropped */
	int kept = 0;
	for (int i = 0; i < fc->zone_count; i++) {
		if (fc->zones[i].seen) {
			fc->zones[kept++] = fc->zones[i];
		}
	}
	fc->zone_count = kept;
	fc->scanned_count = ms->count;
	fc->scanned_ms = now_ms;
	fc->scanned = true;
}

/*
 * True when the board's load changed: its input power, smoothed over ~3 s,
 * stayed 10 % (and 0.75 W) off its ~1 min average for 5 s. A spike of a
 * few seconds is not a new load, and a slow drift (leakage growing with
 * the temperature) moves both averages together.
 */
static bool
load_stepped(struct forecast *fc, const struct metric_set *ms, int64_t now_ms)
{
	double mw;
	if (!sample_input_power(ms, &mw, NULL) || mw < 0) {
		return false;
	}
	if (!fc->have_power || now_ms <= fc->power_ms) {
		fc->power_short = fc->power_long = mw;
		fc->power_ms = now_ms;
		fc->have_power = true;
		fc->off_since_ms = -1;
		return false;
	}
	double dt = (double)(now_ms - fc->power_ms);
	fc->power_short += (mw - fc->power_short) * dt / (dt + POWER_SHORT_MS);
	fc->power_long += (mw - fc->power_long) * dt / (dt + POWER_LONG_MS);
	fc->power_ms = now_ms;
	double limit = fc->power_long * STEP_RATIO > STEP_MIN_MW ? fc->power_long * STEP_RATIO : STEP_MIN_MW;
	if (fabs(fc->power_short - fc->power_long) <= limit) {
		fc->off_since_ms = -1;
		return false;
	}
	if (fc->off_since_ms < 0) {
		fc->off_since_ms = now_ms;
	}
	if (now_ms - fc->off_since_ms < STEP_HOLD_MS) {
		return false;
	}
	fc->power_short = fc->power_long = mw; /* the new level starts from here */
	fc->off_since_ms = -1;
	fc->steps++;
	return true;
}

void
forecast_process(struct forecast *fc, struct sample *s)
{
	const int64_t now = s->mono_ms;
	if (!fc->scanned || s->metrics.count != fc->scanned_count || now - fc->scanned_ms >= RESCAN_MS ||
	    now < fc->scanned_ms) {
		scan_zones(fc, &s->metrics, now);
	}
	bool step = load_stepped(fc, &s->metrics, now);
	for (int i = 0; i < fc->zone_count; i++) {
		struct zone *z = &fc->zones[i];
		double t, trip;
		if (!metric_set_get(&s->metrics, z->temp_metric, &t) ||
		    !metric_set_get(&s->metrics, z->trip_metric, &trip)) {
			continue;
		}
		if (step) {
			thermal_fit_restart(&z->fit, now, FIT_SKIP_MS);
		}
		thermal_fit_add(&z->fit, now, t);
		/* rounded as a reading is (millidegrees), and the forecast to what it can tell */
		metric_set_put(&s->metrics, z->headroom_metric, round((trip - t) * 1000) / 1000);
		struct fit_forecast f;
		thermal_fit_forecast(&z->fit, trip, &f);
		if (f.have_steady) {
			metric_set_put(&s->metrics, z->steady_metric, round(f.steady_c * 100) / 100);
		}
		if (f.have_eta) {
			metric_set_put(&s->metrics, z->eta_metric, round(f.eta_s * 10) / 10);
			metric_set_put(&s->metrics, z->error_metric, round(f.eta_error_s * 10) / 10);
		}
	}
}
