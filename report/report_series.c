/* Downsampled chart series: equal-count buckets that merge pairwise when full. */
#include "report_series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "core/xalloc.h"

struct cell {
	double sum;
	float max;
	uint32_t n;
};

struct report_series {
	char names[SERIES_MAX][METRIC_NAME_MAX];
	size_t count;
	int64_t t[SERIES_BUCKETS_MAX]; /* mono_ms of each bucket's first sample */
	int64_t wall_offset_ms;        /* time_ms - mono_ms of the last sample: the chart's times */
	struct cell *cells;            /* [bucket][series] */
	size_t buckets;                /* in use */
	uint64_t per_bucket, in_last;  /* samples per bucket, samples in the last one */
	/*
	 * Sources put the same names in the same order sample after sample:
	 * what the name at each position was and where it went saves a
	 * search per metric (the name's hash and length tell a change).
	 */
	struct {
		uint32_t hash;
		uint16_t len;
		int16_t k; /* series index, -1 not charted */
		bool valid;
	} cache[METRIC_SET_MAX];
};

struct report_series *
series_create(void)
{
	struct report_series *rs = xcalloc(1, sizeof(*rs));
	rs->cells = xcalloc((size_t)SERIES_BUCKETS_MAX * SERIES_MAX, sizeof(*rs->cells));
	rs->per_bucket = 1;
	return rs;
}

void
series_destroy(struct report_series *rs)
{
	if (rs) {
		free(rs->cells);
		free(rs);
	}
}

/* What the page charts: temperatures, clocks and their ceilings, loads, rails, throttling. */
static bool
charted(const char *name)
{
	if (strncmp(name, "temp.", 5) == 0 && text_has_suffix(name, "_c")) {
		return true;
	}
	if (strncmp(name, "power.", 6) == 0) {
		const char *dot = strchr(name + 6, '.');
		return dot && strcmp(dot, ".mw") == 0;
	}
	if (strncmp(name, "cpu.", 4) == 0) {
		return text_has_suffix(name, ".freq_mhz") && !text_has_suffix(name, "min_freq_mhz") &&
		       !text_has_suffix(name, "hw_max_freq_mhz");
	}
	static const char *const exact[] = {
		"gpu.freq_mhz", "gpu.max_freq_mhz", "gpu.hw_max_freq_mhz", "gpu.load_pct",
		"cpu.load_pct", "emc.freq_mhz",     "throttle.active",
	};
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
		if (strcmp(name, exact[i]) == 0) {
			return true;
		}
	}
	return false;
}

static int
series_index(struct report_series *rs, const char *name)
{
	for (size_t i = 0; i < rs->count; i++) {
		if (strcmp(rs->names[i], name) == 0) {
			return (int)i;
		}
	}
	if (rs->count == SERIES_MAX || !charted(name)) {
		return -1;
	}
	snprintf(rs->names[rs->count], sizeof(rs->names[0]), "%s", name);
	return (int)rs->count++;
}

static void
merge_pairs(struct report_series *rs)
{
	size_t out = 0;
	for (size_t b = 0; b < rs->buckets; b += 2, out++) {
		struct cell *dst = &rs->cells[out * SERIES_MAX];
		const struct cell *a = &rs->cells[b * SERIES_MAX];
		rs->t[out] = rs->t[b];
		for (size_t k = 0; k < SERIES_MAX; k++) {
			struct cell c = a[k];
			if (b + 1 < rs->buckets) {
				const struct cell *n = &rs->cells[(b + 1) * SERIES_MAX + k];
				c.sum += n->sum;
				c.max = c.n == 0 || (n->n > 0 && n->max > c.max) ? n->max : c.max;
				c.n += n->n;
			}
			dst[k] = c;
		}
	}
	rs->buckets = out;
	memset(&rs->cells[out * SERIES_MAX], 0, (SERIES_BUCKETS_MAX - out) * SERIES_MAX * sizeof(struct cell));
	rs->per_bucket *= 2;
	/* the last bucket is full when it merged two full ones: a new one starts with the next sample */
	rs->in_last = rs->per_bucket;
}

void
series_add(struct report_series *rs, const struct sample *s)
{
	if (rs->buckets == 0 || rs->in_last >= rs->per_bucket) {
		if (rs->buckets == SERIES_BUCKETS_MAX) {
			merge_pairs(rs);
		}
		rs->t[rs->buckets++] = s->mono_ms;
		rs->in_last = 0;
	}
	rs->in_last++;
	rs->wall_offset_ms = s->time_ms - s->mono_ms;
	struct cell *row = &rs->cells[(rs->buckets - 1) * SERIES_MAX];
	for (size_t i = 0; i < s->metrics.count; i++) {
		const struct metric *m = &s->metrics.items[i];
		if (!isfinite(m->value)) {
			continue;
		}
		int k;
		if (rs->cache[i].valid && rs->cache[i].hash == m->hash && rs->cache[i].len == m->len) {
			k = rs->cache[i].k;
		} else {
			k = series_index(rs, m->name);
			rs->cache[i].hash = m->hash;
			rs->cache[i].len = m->len;
			rs->cache[i].k = (int16_t)k;
			rs->cache[i].valid = true;
		}
		if (k < 0) {
			continue;
		}
		struct cell *c = &row[k];
		c->max = c->n == 0 || (float)m->value > c->max ? (float)m->value : c->max;
		c->sum += m->value;
		c->n++;
	}
}

void
series_to_json(const struct report_series *rs, struct json *j)
{
	json_object_begin(j);
	json_key(j, "samples_per_point");
	json_uint(j, rs->per_bucket);
	json_key(j, "t");
	json_array_begin(j);
	for (size_t b = 0; b < rs->buckets; b++) {
		json_int(j, rs->t[b] + rs->wall_offset_ms);
	}
	json_array_end(j);
	json_key(j, "keys");
	json_object_begin(j);
	for (size_t k = 0; k < rs->count; k++) {
		bool peak = strcmp(rs->names[k], "throttle.active") == 0;
		json_key(j, rs->names[k]);
		json_array_begin(j);
		for (size_t b = 0; b < rs->buckets; b++) {
			const struct cell *c = &rs->cells[b * SERIES_MAX + k];
			if (c->n == 0) {
				json_null(j);
			} else {
				/* two decimals are plenty on a chart and keep the page small */
				double v = peak ? c->max : c->sum / c->n;
				json_number(j, round(v * 100) / 100);
			}
		}
		json_array_end(j);
	}
	json_object_end(j);
	json_object_end(j);
}
