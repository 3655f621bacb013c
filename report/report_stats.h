/*
 * Per-metric statistics over a run: count, mean, standard deviation, min,
 * max and exact percentiles. Pure code, no I/O.
 *
 * Memory: a fixed ~120 bytes per metric name, plus 4 bytes (one float) per
 * value for the percentiles, and nothing per value for a metric that never
 * changed (a trip point, a total): its values are stored only from the
 * first change on. The percentiles are selected at the end (a three-way
 * quickselect, O(n) per metric).
 */
#ifndef TEGRAWATCH_REPORT_STATS_H
#define TEGRAWATCH_REPORT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/metrics.h"

struct stat_metric {
	char name[METRIC_NAME_MAX];
	uint32_t hash;
	uint64_t count;
	double mean, m2; /* Welford: m2 is the sum of squared differences from the mean */
	double min, max;
	int64_t max_at_ms; /* the first sample where the maximum was reached */
	double first;      /* the value while it has not changed */
	float *values;     /* NULL while every value equals FIRST */
	size_t cap;
	/* set by stats_finish() */
	double std, p50, p95, p99;
};

struct stats {
	struct stat_metric *items;
	size_t count, cap;
	uint32_t *index; /* open addressing: item index + 1, 0 = empty */
	size_t index_cap;
};

void stats_init(struct stats *st);
void stats_free(struct stats *st);

/** Adds VALUE (skipped when not finite) to the metric NAME, seen at AT_MS. */
void stats_add(struct stats *st, const char *name, double value, int64_t at_ms);

/** Computes std and the percentiles of every metric (reorders the stored values). */
void stats_finish(struct stats *st);

/** The metric called NAME, or NULL. */
const struct stat_metric *stats_find(const struct stats *st, const char *name);

/**
 * The P-th percentile (0..1) of the N values in V, by linear interpolation
 * between the closest ranks (numpy's default): reorders V. N > 0.
 */
double stats_percentile(float *v, size_t n, double p);

/** Fills ORDER (st->count entries) with the item indices sorted by name. */
void stats_sorted(const struct stats *st, size_t *order);

#endif
