/*
 * The one clock helper: milliseconds on a given clock. CLOCK_MONOTONIC
 * for intervals and deadlines, CLOCK_REALTIME for sample stamps,
 * CLOCK_BOOTTIME where suspend must count. Durations never come from
 * CLOCK_REALTIME: NTP, an operator or a board without an RTC battery steps
 * it by hours; clock_watch tells when it did.
 */
#ifndef TEGRAWATCH_CLOCK_H
#define TEGRAWATCH_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

static inline int64_t
clock_ms(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t
monotonic_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

/* The smallest change of wall - monotonic taken for a step (plus 0.5 ms a second: NTP slews at most 500 ppm). */
#define CLOCK_STEP_MIN_MS 1000

/* Watches the wall clock against the monotonic one, sample after sample. Zeroed = nothing seen yet. */
struct clock_watch {
	bool have;
	int64_t offset_ms; /* wall - monotonic at the last sample */
	int64_t mono_ms;   /* the last sample's monotonic time */
};

/**
 * The step of the wall clock (ms, positive forward) between the last
 * stamps given and WALL_MS, MONO_MS (taken together), or 0 when it only
 * ran (or slewed) with the monotonic clock. Remembers them. Pure.
 */
int64_t clock_watch_step(struct clock_watch *w, int64_t wall_ms, int64_t mono_ms);

#endif
