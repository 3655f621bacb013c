/*
 * The one clock helper: milliseconds on a given clock. CLOCK_MONOTONIC
 * for intervals and deadlines, CLOCK_REALTIME for sample stamps,
 * CLOCK_BOOTTIME where suspend must count.
 */
#ifndef TEGRAWATCH_CLOCK_H
#define TEGRAWATCH_CLOCK_H

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

#endif
