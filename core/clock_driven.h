/*
 * The driven clock, for tests only (built into libclock_driven, which only
 * the unit tests link; the binary cannot switch its clock). Like tokio's
 * time::pause()/advance(): once started, the product's clock (clock.h) moves
 * only when the test advances it, and every wait on it (clock_sleep_ms,
 * clock_cond_wait, clock_poll_ms slices) wakes when it does, in any thread.
 */
#ifndef TEGRAWATCH_CLOCK_DRIVEN_H
#define TEGRAWATCH_CLOCK_DRIVEN_H

#include <stdbool.h>
#include <stdint.h>

/**
 * Makes the driven clock the process's, at MONO_MS on the monotonic clock and
 * WALL_MS on the wall clock (the boot clock runs with the monotonic one). Call
 * with no other thread running, as clock_driven_stop().
 */
void clock_driven_start(int64_t mono_ms, int64_t wall_ms);

/** Gives the process the real clocks back. */
void clock_driven_stop(void);

/** Moves both clocks MS forward and wakes every wait on them. */
void clock_driven_advance(int64_t ms);

/** Steps the wall clock alone to WALL_MS (NTP, an operator): the monotonic one does not move. */
void clock_driven_set_wall(int64_t wall_ms);

/**
 * With ON, a clock_sleep_ms() advances the clock by itself instead of
 * waiting for the test (single-threaded code that sleeps: tokio's
 * auto-advance). Off at start.
 */
void clock_driven_auto_advance(bool on);

/** How many threads wait on the clock now (sleeps and timed waits): a test advances once they are parked. */
int clock_driven_waiters(void);

#endif
