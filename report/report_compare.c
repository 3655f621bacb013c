/* Two reports side by side: B minus A for every metric both have, throttle time, energy, and a verdict in words. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sample_json.h"
#include "core/xalloc.h"
#include "report_out.h"

static double
energy_of(const struct report *r, const char *rail)
{
	for (size_t i = 0; i < r->all.rails; i++) {
		if (strcmp(r->all.energy[i].rail, rail) == 0) {
			return r->all.energy[i].joules;
		}
	}
	return NAN;
}

/* A's work I over its whole run and B's of the same name: their J per unit. */
static bool
work_pair(const struct report *a, const struct report *b, size_t i, double *ja, double *jb)
{
	double above;
	const struct report_work_sum *wb = report_work_run(b, a->work[i].name);
	return !a->work[i].scope[0] && wb && report_work_figures(a, &a->work[i], ja, &above) &&
	       report_work_figures(b, wb, jb, &above);
}

static void
side_json(struct json *j, const struct report *r, const char *name)
{
	char ts[RFC3339_LEN + 8];
	json_object_begin(j);
	json_key(j, "source");
	json_string(j, name);
	json_key(j, "samples");
	json_uint(j, r->all.samples);
	rfc3339_utc(r->all.first_ms, ts, sizeof(ts));
	json_key(j, "start");
	json_string(j, ts);
	rfc3339_utc(r->all.last_ms, ts, sizeof(ts));
	json_key(j, "end");
	json_string(j, ts);
	json_key(j, "duration_s");
	json_number(j, round(r->all.seconds * 1000) / 1000);
	json_key(j, "throttle_s");
	json_number(j, round(r->all.throttle_seconds * 1000) / 1000);
	json_key(j, "recommendations");
	json_array_begin(j);
	for (size_t i = 0; i < r->rec_count; i++) {
		json_string(j, r->recs[i].id);
	}
	json_array_end(j);
	json_object_end(j);
}

static void
stat_json(struct json *j, const struct stat_metric *m)
{
	json_object_begin(j);
	json_key(j, "mean");
	json_number(j, m->mean);
	json_key(j, "p95");
	json_number(j, m->p95);
	json_key(j, "max");
	json_number(j, m->max);
	json_object_end(j);
}

/* KEY_A, KEY_B and KEY_DELTA: A's value, B's and B - A, each rounded to 1/SCALE. */
static void
ab_json(struct json *j, const char *key_a, const char *key_b, const char *key_delta, double va, double vb, double scale)
{
	json_key(j, key_a);
	json_number(j, round(va * scale) / scale);
	json_key(j, key_b);
	json_number(j, round(vb * scale) / scale);
	json_key(j, key_delta);
	json_number(j, round((vb - va) * scale) / scale);
}

void
report_compare_json(const struct report *a, const struct report *b, const char *name_a, const char *name_b,
		    struct json *j)
{
	json_object_begin(j);
	json_key(j, "a");
	side_json(j, a, name_a);
	json_key(j, "b");
	side_json(j, b, name_b);
	json_key(j, "metrics");
	json_object_begin(j);
	size_t *order = xcalloc(a->all.stats.count, sizeof(*order));
	stats_sorted(&a->all.stats, order);
	for (size_t i = 0; i < a->all.stats.count; i++) {
		const struct stat_metric *ma = &a->all.stats.items[order[i]];
		const struct stat_metric *mb = stats_find(&b->all.stats, ma->name);
		if (!mb) {
			continue;
		}
		json_key(j, ma->name);
		json_object_begin(j);
		json_key(j, "a");
		stat_json(j, ma);
		json_key(j, "b");
		stat_json(j, mb);
		json_key(j, "delta_mean");
		json_number(j, mb->mean - ma->mean);
		json_key(j, "delta_p95");
		json_number(j, mb->p95 - ma->p95);
		json_key(j, "delta_max");
		json_number(j, mb->max - ma->max);
		json_object_end(j);
	}
	free(order);
	json_object_end(j);
	json_key(j, "throttle");
	json_object_begin(j);
	ab_json(j, "a_seconds", "b_seconds", "delta_seconds", a->all.throttle_seconds, b->all.throttle_seconds, 1e3);
	json_object_end(j);
	json_key(j, "energy_j");
	json_object_begin(j);
	for (size_t i = 0; i < a->all.rails; i++) {
		const char *rail = a->all.energy[i].rail;
		double ea = a->all.energy[i].joules, eb = energy_of(b, rail);
		if (isnan(eb)) {
			continue;
		}
		json_key(j, rail);
		json_object_begin(j);
		ab_json(j, "a", "b", "delta", ea, eb, 1e3);
		json_object_end(j);
	}
	json_object_end(j);
	char verdict[1024];
	report_compare_verdict(a, b, verdict, sizeof(verdict));
	json_key(j, "work");
	json_object_begin(j);
	for (size_t i = 0; i < a->work_count; i++) {
		double ja, jb;
		if (!work_pair(a, b, i, &ja, &jb)) {
			continue;
		}
		json_key(j, a->work[i].name);
		json_object_begin(j);
		ab_json(j, "a_j_per_unit", "b_j_per_unit", "delta_j_per_unit", ja, jb, 1e6);
		json_object_end(j);
	}
	json_object_end(j);
	json_key(j, "verdict");
	json_string(j, verdict);
	json_object_end(j);
}

/* The sensor the verdict speaks of: the junction (tj) when both have it, else A's hottest one. */
static const struct stat_metric *
hottest(const struct report *a, const struct report *b, const struct stat_metric **other)
{
	const struct stat_metric *best = stats_find(&a->all.stats, "temp.tj_c");
	if (!best || !stats_find(&b->all.stats, "temp.tj_c")) {
		best = NULL;
		for (size_t i = 0; i < a->all.stats.count; i++) {
			const struct stat_metric *m = &a->all.stats.items[i];
			size_t len = strlen(m->name);
			if (strncmp(m->name, "temp.", 5) == 0 && len > 7 && strcmp(m->name + len - 2, "_c") == 0 &&
			    stats_find(&b->all.stats, m->name) && (!best || m->max > best->max)) {
				best = m;
			}
		}
	}
	*other = best ? stats_find(&b->all.stats, best->name) : NULL;
	return best;
}

static size_t append(char *buf, size_t size, size_t n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static size_t
append(char *buf, size_t size, size_t n, const char *fmt, ...)
{
	if (n >= size) {
		return n;
	}
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
	return k > 0 ? n + (size_t)k : n;
}

void
report_compare_verdict(const struct report *a, const struct report *b, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	const struct stat_metric *tb, *ta = hottest(a, b, &tb);
	if (ta && tb) {
		const char *where = strcmp(ta->name, "temp.tj_c") == 0 ? "the junction" : ta->name;
		double d = tb->max - ta->max;
		if (fabs(d) < 0.5) {
			n = append(buf, size, n, "B and A peaked within 0.5 C of each other at %s (%.1f C)", where,
				   tb->max);
		} else {
			n = append(buf, size, n, "B ran %.1f C %s at %s (peak %.1f C against %.1f C)", fabs(d),
				   d < 0 ? "cooler" : "hotter", where, tb->max, ta->max);
		}
	} else {
		n = append(buf, size, n, "No temperature in common");
	}
	double sa = a->all.throttle_seconds, sb = b->all.throttle_seconds;
	if (sb == 0 && sa == 0) {
		n = append(buf, size, n, "; neither throttled.");
	} else if (sb == 0) {
		n = append(buf, size, n, " and did not throttle; A throttled %.0f s.", sa);
	} else if (sa == 0) {
		n = append(buf, size, n, " and throttled %.0f s; A did not throttle.", sb);
	} else {
		n = append(buf, size, n, "; B throttled %.0f s, A %.0f s.", sb, sa);
	}
	if (a->all.rails > 0) {
		const char *rail = a->all.energy[0].rail;
		double ea = a->all.energy[0].joules, eb = energy_of(b, rail);
		if (!isnan(eb) && ea > 0) {
			double pct = (eb - ea) / ea * 100;
			n = append(buf, size, n, " B used %.1f %% %s energy on %s (%.1f kJ against %.1f kJ", fabs(pct),
				   pct < 0 ? "less" : "more", rail, eb / 1000, ea / 1000);
			if (a->all.seconds > 0 && b->all.seconds > 0) {
				n = append(buf, size, n, ", %.2f W against %.2f W on average", eb / b->all.seconds,
					   ea / a->all.seconds);
			}
			n = append(buf, size, n, ").");
		}
	}
	for (size_t i = 0; i < a->work_count; i++) {
		double ja, jb;
		if (work_pair(a, b, i, &ja, &jb) && ja > 0) {
			n = append(buf, size, n, " B spent %.1f %% %s energy per %s (%.4f J against %.4f J).",
				   fabs(jb - ja) / ja * 100, jb < ja ? "less" : "more", a->work[i].name, jb, ja);
		}
	}
}
