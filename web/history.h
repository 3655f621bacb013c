/*
 * In-memory history for the web API, in two tiers for every metric:
 *  - tier 0, every sample: one ring of CAPACITY values per metric over a
 *    shared ring of sample times (web.history / agent.interval, one hour
 *    by default);
 *  - tier 1, one-minute aggregates (min, mean, max and the count of
 *    samples) per metric over a shared ring of minute start times
 *    (web.minute_history, a day by default), as Netdata's tiers do.
 * Rings are created as metrics appear and freed once a metric has been
 * absent from both tiers. Values are kept as 32-bit floats (about 7
 * significant digits, enough for every sensor). Not thread-safe: the
 * caller locks. Pure: no I/O, no clock.
 *
 * Times: the history keeps the samples' spacing from their mono_ms, and
 * tells every time (points, minutes, windows) on the newest sample's wall
 * clock: after a step of the wall clock, older points move with it (each
 * is told as the newest sample's time less its true age), so the points
 * stay in order, a window of N seconds is the last N seconds that really
 * passed, and a chart neither folds back nor shows the step as a gap.
 *
 * Memory bound (history_bytes()): C x 8 B + B x 8 B + R x (C x 4 B +
 * B x (12 B + W) + HISTORY_RING_BYTES), with C samples, B buckets, R =
 * HISTORY_MAX_METRICS and W = 1 count byte when a minute holds at most 255
 * samples (interval >= 236 ms), else 2. A metric whose values are whole
 * steps of 1, 0.1, 0.01 or 0.001 in a range of 65,534 steps takes C x 2 B
 * in tier 0 instead (the values read back are the same floats). Defaults
 * (1 h at 1 Hz, 24 h of minutes): at most 33,277 B per metric, 26,077 B at
 * 2 bytes a sample: about 3.5 MiB for an Orin's 139 metrics.
 *
 * Memory held: a ring's block starts with room for 64 samples and 4
 * buckets, and every block doubles as the history's first lap reaches its
 * end (slots are written in order until the first wrap), up to the whole
 * tiers: on the AGX Orin fixture, 105 KiB for 205 metrics a minute after
 * start, 1.9 MiB for 238 (tegrastats too) with the hour full, the bound a
 * day on. Allocated whole, each block's five parts were touched at once:
 * most of it resident from the first sample (3.7 MiB, issue 34).
 */
#ifndef TEGRAWATCH_HISTORY_H
#define TEGRAWATCH_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "core/sample.h"

/* as many as a sample can hold: every metric of a sample gets history */
#define HISTORY_MAX_METRICS METRIC_SET_MAX
#define HISTORY_MAX_CAPACITY (1u << 22) /* samples; a week at 7 Hz */
#define HISTORY_BUCKET_MS 60000         /* tier 1: one minute */
#define HISTORY_MAX_BUCKETS (1u << 16)  /* 45 days of minutes */
#define HISTORY_RING_BYTES 144          /* a ring's name and bookkeeping */

struct history;

struct history_point {
	int64_t time_ms;
	double value; /* the stored float, as the shortest decimal that gives it back */
};

/* One minute of one metric (tier 1). */
struct history_bucket {
	int64_t time_ms; /* the minute's start */
	double min;
	double mean;
	double max;
	uint32_t count; /* samples that had the metric */
};

struct history_stats {
	size_t count;
	double min;
	double mean;
	double max;
	double p95; /* nearest rank: the ceil(0.95 x count)-th smallest value; NAN from buckets */
};

/**
 * Creates a history of CAPACITY samples (1..HISTORY_MAX_CAPACITY; larger
 * is clamped) and BUCKETS one-minute buckets (0: no tier 1; at most
 * HISTORY_MAX_BUCKETS) for samples every INTERVAL_MS (sets the width of
 * the bucket counts). Cannot fail (aborts on OOM).
 */
struct history *history_create(size_t capacity, size_t buckets, int64_t interval_ms);
void history_destroy(struct history *h);

/**
 * The buckets that cover SPAN_MS of minutes with a sample every
 * INTERVAL_MS, the minute being filled included (0 when SPAN_MS <= 0). A
 * minute without a sample takes no bucket: at intervals over a minute,
 * one bucket a sample.
 */
size_t history_buckets_for(int64_t span_ms, int64_t interval_ms);

/** The most bytes history_create(CAPACITY, BUCKETS, INTERVAL_MS) holds with METRICS metrics. */
uint64_t history_bytes(uint64_t capacity, uint64_t buckets, int64_t interval_ms, uint64_t metrics);

/** Records S: its time and every metric, in both tiers. */
void history_add(struct history *h, const struct sample *s);

/**
 * Copies the tier 0 points of metric NAME taken less than WINDOW_MS before
 * the newest sample (WINDOW_MS <= 0: every point kept), oldest first, leaving out samples where the metric was absent. *OUT is malloc'd
 * (NULL when *COUNT is 0). Returns 0, or -ENOENT when NAME has no ring.
 */
int history_window(const struct history *h, const char *name, int64_t window_ms, struct history_point **out,
		   size_t *count);

/**
 * As history_window() for the tier 1 buckets of NAME that overlap the
 * window (the minute being filled included, as far as it got), leaving
 * out minutes without the metric. Returns 0, or -ENOENT when NAME has no
 * ring or there is no tier 1.
 */
int history_window_minutes(const struct history *h, const char *name, int64_t window_ms, struct history_bucket **out,
			   size_t *count);

/** Statistics of N points (count 0: every figure NAN). */
void history_stats(const struct history_point *points, size_t n, struct history_stats *out);

/** Statistics of the samples behind N buckets: their count, min, max and weighted mean; p95 is NAN. */
void history_bucket_stats(const struct history_bucket *buckets, size_t n, struct history_stats *out);

/** Rounds F to the shortest decimal (as a double) that reads back as F. */
double history_float_value(float f);

size_t history_capacity(const struct history *h);
size_t history_bucket_count(const struct history *h);
/** What the rings in use and the shared times hold now: their blocks as grown so far, narrow tier 0 at 2 B a slot. */
uint64_t history_held_bytes(const struct history *h);
/** Rings whose tier 0 is narrow (2 bytes a value) now. */
size_t history_narrow_count(const struct history *h);
/** Rings in use now. */
size_t history_metric_count(const struct history *h);
/** The most rings this history keeps at once. */
size_t history_max_metrics(const struct history *h);
/** Metrics that got no ring because every ring was taken. */
uint64_t history_dropped(const struct history *h);

#endif
