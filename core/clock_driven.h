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

/**
 * Lets the waits of the thread that called clock_driven_start() (the agent's
 * loop) move the clock: each of its poll-like waits (clock_poll_ms) lasts
 * PACE_MS of real time (its fds are served meanwhile), then the clock jumps
 * to the wait's end, as do its sleeps at once. So ticks come on schedule,
 * with no lateness, as fast as PACE_MS allows (0: flat out). The clock stops
 * FOR_MS later (negative: never); clock_driven_run_wait() says when.
 */
void clock_driven_run(int64_t for_ms, int64_t pace_ms);

/** Waits at most REAL_MS of real time for the end of clock_driven_run(): true once it has come and the loop is back in its wait. */
bool clock_driven_run_wait(int64_t real_ms);

/** Stops a run: the clock moves only when advanced again. */
void clock_driven_pause(void);

/** From now on the clock runs with the real monotonic clock, from where it stands (a clean stop's flushes). */
void clock_driven_follow_real(void);

/** How many threads wait on the clock now (sleeps and timed waits): a test advances once they are parked. */
int clock_driven_waiters(void);

#endif
