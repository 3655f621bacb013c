/*
 * Time to full of a file system from its recent trend: a least-squares line
 * through the used bytes of the last WINDOW of scans, as node_exporter users
 * write predict_linear(node_filesystem_avail_bytes[30m], ...), built in.
 * Pure: no I/O, no clock; the caller gives each scan's time.
 */
#ifndef TEGRAWATCH_HOST_FILL_TREND_H
#define TEGRAWATCH_HOST_FILL_TREND_H

#include <stddef.h>
#include <stdint.h>

#define FILL_TREND_POINTS 64            /* kept over the window: a scan every window / 63 at most, and the newest */
#define FILL_TREND_MIN_POINTS 5         /* fewer: no line to trust */
#define FILL_TREND_HORIZON_S 31536000.0 /* a year: a slower trend is no filling that matters */

struct fill_trend {
	int64_t window_ms;
	size_t count;
	int64_t t_ms[FILL_TREND_POINTS]; /* oldest first */
	double used[FILL_TREND_POINTS];  /* bytes */
};

/** Empties T; its points will cover WINDOW_MS (> 0). */
void fill_trend_init(struct fill_trend *t, int64_t window_ms);

/**
 * Adds a scan at NOW_MS (monotonic, never before the last) with USED_BYTES
 * in use. Points older than the window go; a point closer than window / 63
 * to the one before the newest replaces the newest, so the newest scan is
 * always in and the rest stay spread over the window.
 */
void fill_trend_add(struct fill_trend *t, int64_t now_ms, double used_bytes);

/**
 * Seconds until AVAIL_BYTES (what unprivileged users may still take) are
 * gone at the trend's rate, rounded up to whole seconds: 0 only when
 * AVAIL_BYTES is 0 (full now). Returns 0 and *ETA_S; -EAGAIN with fewer
 * than FILL_TREND_MIN_POINTS points or points spanning less than a sixth of
 * the window; -ENODATA when it is not filling: a slope of 0 or less, a slope
 * within twice its standard error (noise, not a trend), or a time to full
 * beyond FILL_TREND_HORIZON_S.
 */
int fill_trend_eta_s(const struct fill_trend *t, double avail_bytes, double *eta_s);

#endif
