/*
 * The one clock: every read of the time and every wait of the product goes
 * through here. CLOCK_MONOTONIC for intervals and deadlines, CLOCK_REALTIME
 * for sample stamps, CLOCK_BOOTTIME where suspend must count. Durations never
 * come from the wall clock: NTP, an operator or a board without an RTC
 * battery steps it by hours; clock_watch tells when it did.
 *
 * The shipped binary reads the real clocks. A test build can drive them
 * instead (clock_driven.h, linked only into tests): time then moves only when
 * the test advances it, and the waits below wake when it does.
 */
#ifndef TEGRAWATCH_CLOCK_H
#define TEGRAWATCH_CLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/** Milliseconds on the monotonic clock (intervals, deadlines, back-offs). */
int64_t monotonic_ms(void);

/** Microseconds on the monotonic clock, for round-trip times shorter than a millisecond (host probes). */
int64_t monotonic_us(void);

/** Milliseconds since the epoch on the wall clock (stamps only, never durations). */
int64_t clock_wall_ms(void);

/** Microseconds since the epoch on the wall clock: only to compare with a kernel's receive stamp (SO_TIMESTAMPNS). */
int64_t clock_wall_us(void);

/** Milliseconds since boot, suspend included. */
int64_t clock_boot_ms(void);

/** Sleeps MS milliseconds of the clock (EINTR resumes the sleep). */
void clock_sleep_ms(int64_t ms);

/** Initializes CV for clock_cond_wait() (it waits on the monotonic clock). */
void clock_cond_init(pthread_cond_t *cv);

/**
 * Waits on CV (MU held, as pthread_cond_timedwait) until it is signalled or
 * the monotonic clock reaches UNTIL_MS. 0 when woken (perhaps spuriously:
 * callers test their condition again), -ETIMEDOUT when the time has come.
 */
int clock_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t until_ms);

/**
 * The real milliseconds to block in a poll-like wait (poll(), curl_multi_poll())
 * that stands for MS milliseconds of the clock: MS itself on the real clock, a
 * short slice on a driven one, whose time may jump while the wait blocks.
 */
int64_t clock_poll_ms(int64_t ms);

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
