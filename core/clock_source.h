/*
 * Private to core/clock*.c: what a clock is. clock.c holds the real one and
 * the process-wide pointer; clock_driven.c (test builds only) replaces it.
 * Nothing else includes this file (tests/integration/hygiene.sh checks).
 */
#ifndef TEGRAWATCH_CLOCK_SOURCE_H
#define TEGRAWATCH_CLOCK_SOURCE_H

#include <pthread.h>
#include <stdint.h>

struct clock_source {
	int64_t (*mono_ms)(void);
	int64_t (*mono_us)(void);
	int64_t (*wall_ms)(void);
	int64_t (*wall_us)(void);
	int64_t (*boot_ms)(void);
	void (*sleep_ms)(int64_t ms);
	int (*cond_wait)(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t until_ms);
	int64_t (*poll_ms)(int64_t ms);
};

extern const struct clock_source clock_real;

/* Switched only while no other thread runs (a test's set-up and tear-down). */
extern const struct clock_source *clock_current;

/* Real CLOCK_MONOTONIC ms, for the driven clock's own bounded waits. */
int64_t clock_real_mono_ms(void);

#endif
