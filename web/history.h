/*
 * In-memory history for the web API: one ring of values per metric over a
 * shared ring of sample times. Rings are created as metrics appear and
 * freed once a metric has been absent for a whole ring. Values are kept
 * as 32-bit floats (about 7 significant digits, enough for every sensor).
 * Not thread-safe: the caller locks. Pure: no I/O, no clock.
 *
 * Memory bound: CAPACITY x 8 bytes of times plus at most MAX_METRICS rings
 * of CAPACITY x 4 bytes, where MAX_METRICS = min(512, 16 MiB / (CAPACITY x
 * 4 B)). At the default (one hour at 1 Hz, 3600 samples) that is 28 KiB +
 * 512 x 14 KiB = 7.1 MiB at most; a board with 140 metrics uses 2 MiB once
 * the hour is full. Ring memory is touched only as samples arrive.
 */
#ifndef TEGRAWATCH_HISTORY_H
#define TEGRAWATCH_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "agent/core/sample.h"

#define HISTORY_MAX_METRICS 512
#define HISTORY_MAX_BYTES (16u * 1024 * 1024)
#define HISTORY_MAX_CAPACITY (1u << 22) /* samples; a week at 7 Hz */

struct history;

struct history_point {
	int64_t time_ms;
	double value; /* the stored float, as the shortest decimal that gives it back */
};

struct history_stats {
	size_t count;
	double min;
	double mean;
	double max;
	double p95; /* nearest rank: the ceil(0.95 x count)-th smallest value */
};

/**
 * Creates a history of CAPACITY samples (1..HISTORY_MAX_CAPACITY; larger
 * is clamped). Cannot fail (aborts on OOM).
 */
struct history *history_create(size_t capacity);
void history_destroy(struct history *h);

/** Records S: its time and every metric. */
void history_add(struct history *h, const struct sample *s);

/**
 * Copies the points of metric NAME whose time is after the newest sample's
 * time minus WINDOW_MS (WINDOW_MS <= 0: every point kept), oldest first,
 * leaving out samples where the metric was absent. *OUT is malloc'd (NULL
 * when *COUNT is 0). Returns 0, or -ENOENT when NAME has no ring.
 */
int history_window(const struct history *h, const char *name, int64_t window_ms, struct history_point **out,
		   size_t *count);

/** Statistics of N points (count 0: every figure NAN). */
void history_stats(const struct history_point *points, size_t n, struct history_stats *out);

/** Rounds F to the shortest decimal (as a double) that reads back as F. */
double history_float_value(float f);

size_t history_capacity(const struct history *h);
/** Rings in use now. */
size_t history_metric_count(const struct history *h);
/** The most rings this history keeps at once. */
size_t history_max_metrics(const struct history *h);
/** Metrics that got no ring because every ring was taken. */
uint64_t history_dropped(const struct history *h);

#endif
