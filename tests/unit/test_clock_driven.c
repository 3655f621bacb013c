/*
 * The driven clock (core/clock_driven.h): the product's clock moves only when
 * the test advances it, and waits in other threads wake when it does. The
 * last test drives a real component, the NVML worker thread, through it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/clock.h"
#include "core/clock_driven.h"
#include "core/pipeline.h"
#include "nvml/nvml.h"

#define T0_MONO 5000
#define T0_WALL 1700000000000LL

/* Real time, for the test's own bounded waits on other threads. */
static int64_t
real_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits (real time, at most 5 s) until COND(ARG) holds. */
static bool
eventually(bool (*cond)(void *arg), void *arg)
{
	int64_t end = real_ms() + 5000;
	while (!cond(arg)) {
		if (real_ms() > end) {
			return false;
		}
		struct timespec ts = {.tv_nsec = 1000000};
		nanosleep(&ts, NULL);
	}
	return true;
}

/*
 * MS of real time, for what must NOT happen within it: a waiter that stays
 * parked, a clock that stays still. Bounded and short; never used to wait
 * for something to happen (eventually() does that).
 */
static void
hold_real_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

static bool
waiters_are(void *arg)
{
	return clock_driven_waiters() == *(int *)arg;
}

static int
setup(void **state)
{
	(void)state;
	clock_driven_start(T0_MONO, T0_WALL);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	clock_driven_stop();
	return 0;
}

static void
test_reads_move_only_when_advanced(void **state)
{
	(void)state;
	assert_int_equal(monotonic_ms(), T0_MONO);
	assert_int_equal(clock_wall_ms(), T0_WALL);
	int64_t boot = clock_boot_ms();
	clock_driven_advance(1500);
	assert_int_equal(monotonic_ms(), T0_MONO + 1500);
	assert_int_equal(clock_wall_ms(), T0_WALL + 1500);
	assert_int_equal(clock_boot_ms(), boot + 1500);
}

static void
test_wall_step_seen_by_the_watch(void **state)
{
	(void)state;
	struct clock_watch w = {0};
	assert_int_equal(clock_watch_step(&w, clock_wall_ms(), monotonic_ms()), 0);
	clock_driven_advance(1000);
	assert_int_equal(clock_watch_step(&w, clock_wall_ms(), monotonic_ms()), 0);
	clock_driven_set_wall(clock_wall_ms() - 3600 * 1000); /* NTP steps back an hour */
	assert_int_equal(monotonic_ms(), T0_MONO + 1000);
	assert_int_equal(clock_watch_step(&w, clock_wall_ms(), monotonic_ms()), -3600 * 1000);
}

static void
test_auto_advance_sleeps(void **state)
{
	(void)state;
	clock_driven_auto_advance(true);
	int64_t r0 = real_ms();
	clock_sleep_ms(60 * 1000);
	assert_int_equal(monotonic_ms(), T0_MONO + 60 * 1000);
	assert_true(real_ms() - r0 < 1000);
}

struct waiting {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int64_t until;
	int ret;
	bool done;
	bool sleep; /* clock_sleep_ms rather than clock_cond_wait */
};

static void *
waiting_main(void *arg)
{
	struct waiting *w = arg;
	int ret;
	if (w->sleep) {
		clock_sleep_ms(w->until - monotonic_ms());
		ret = -ETIMEDOUT;
	} else {
		pthread_mutex_lock(&w->mu);
		while ((ret = clock_cond_wait(&w->cv, &w->mu, w->until)) == 0) {
		}
		pthread_mutex_unlock(&w->mu);
	}
	pthread_mutex_lock(&w->mu);
	w->ret = ret;
	w->done = true;
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static bool
is_done(void *arg)
{
	struct waiting *w = arg;
	pthread_mutex_lock(&w->mu);
	bool done = w->done;
	pthread_mutex_unlock(&w->mu);
	return done;
}

/* A thread waits 1 s of the clock: it is still waiting 999 ms on, and ends at 1000. */
static void
wakes_on_advance(bool sleep)
{
	struct waiting w = {.until = monotonic_ms() + 1000, .sleep = sleep};
	pthread_mutex_init(&w.mu, NULL);
	clock_cond_init(&w.cv);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, waiting_main, &w), 0);
	int one = 1;
	assert_true(eventually(waiters_are, &one));
	clock_driven_advance(999);
	hold_real_ms(30); /* several 5 ms slices of the driven clock: long enough for a wrong wake to show */
	assert_false(is_done(&w));
	int64_t r0 = real_ms();
	clock_driven_advance(1);
	assert_true(eventually(is_done, &w));
	assert_true(real_ms() - r0 < 1000); /* woken, not a real second later */
	assert_int_equal(w.ret, -ETIMEDOUT);
	pthread_join(t, NULL);
	pthread_cond_destroy(&w.cv);
	pthread_mutex_destroy(&w.mu);
}

static void
test_timed_wait_wakes_on_advance(void **state)
{
	(void)state;
	wakes_on_advance(false);
}

static void
test_sleep_wakes_on_advance(void **state)
{
	(void)state;
	wakes_on_advance(true);
}

/* The NVML worker (nvml/nvml_source.c) on the fake libnvidia-ml.so.1 that tests/nvml builds. */
struct fake_nvml {
	unsigned long (*calls)(const char *field, unsigned gpu);
	unsigned long want;
};

static bool
polled(void *arg)
{
	struct fake_nvml *f = arg;
	return f->calls("temp_gpu_c", 0) >= f->want;
}

/*
 * A run (tegrawatch-driven's `run`): the starting thread's poll-like wait
 * lasts PACE real ms, its fds served; then the clock jumps to the wait's end;
 * at the run's end it stands still. Other threads' waits do not move it.
 */
static void
test_run_jumps_the_loops_waits(void **state)
{
	(void)state;
	clock_driven_run(2500, 0);
	assert_int_equal(clock_poll_ms(1000), 0); /* pace 0: at once */
	assert_int_equal(monotonic_ms(), T0_MONO + 1000);
	clock_sleep_ms(1000); /* a sleep of the loop's thread: a jump */
	assert_int_equal(monotonic_ms(), T0_MONO + 2000);
	assert_int_equal(clock_poll_ms(1000), 0); /* no further than the end */
	assert_int_equal(monotonic_ms(), T0_MONO + 2500);
	assert_false(clock_driven_run_wait(0)); /* done once the loop waits again */
	assert_true(clock_poll_ms(1000) <= 5);  /* ... still: the driven slice */
	assert_true(clock_driven_run_wait(0));
	assert_int_equal(monotonic_ms(), T0_MONO + 2500);

	clock_driven_run(-1, 40);
	int64_t r = clock_poll_ms(1000); /* PACE real ms for the fds, the clock still */
	assert_true(r > 0 && r <= 40);
	assert_int_equal(monotonic_ms(), T0_MONO + 2500);
	hold_real_ms(45); /* the subject: the 40 ms of real pace pass before the clock may jump */
	assert_int_equal(clock_poll_ms(1000), 0); /* the same wait, its pace over: the jump */
	assert_int_equal(monotonic_ms(), T0_MONO + 3500);
	clock_driven_pause();
	assert_true(clock_poll_ms(1000) <= 5);
	assert_int_equal(monotonic_ms(), T0_MONO + 3500);
}

/* `real`: the clock runs with the real one from where it stands; sleeps end without an advance. */
static void
test_follow_real(void **state)
{
	(void)state;
	clock_driven_follow_real();
	int64_t t0 = monotonic_ms(), r0 = real_ms();
	assert_true(t0 >= T0_MONO && t0 < T0_MONO + 50);
	clock_sleep_ms(30);
	int64_t moved = monotonic_ms() - t0;
	assert_true(moved >= 30);
	assert_true(moved <= real_ms() - r0 + 1);
	assert_int_equal(clock_poll_ms(700), 700); /* a real wait: the caller's poll blocks it all */
}

static void
test_nvml_worker_polls_on_the_driven_clock(void **state)
{
	(void)state;
	char exe[PATH_MAX], lib[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	snprintf(lib, sizeof(lib), "%s/nvml/libnvidia-ml.so.1", dirname(exe));
	if (access(lib, R_OK) != 0) {
		skip();
	}
	setenv("FAKE_NVML_DATA", FIXTURES_DIR "/nvml/h200.fake", 1);
	struct nvml_options o = {.library = lib, .interval_ms = 1000};
	struct source *src;
	char why[256];
	assert_int_equal(nvml_source_create(&o, &src, why, sizeof(why)), 0);
	void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD); /* the handle nvml_lib.c opened */
	assert_non_null(h);
	struct fake_nvml f = {.want = 1};
	*(void **)&f.calls = dlsym(h, "fake_nvml_calls");
	assert_non_null(f.calls);

	/* the first poll at once, then the worker parks until the next second of the clock */
	int one = 1;
	assert_true(eventually(waiters_are, &one));
	assert_int_equal(f.calls("temp_gpu_c", 0), 1);
	clock_driven_advance(999);
	hold_real_ms(30); /* several slices: a poll 1 ms early would show */
	assert_true(eventually(waiters_are, &one));
	assert_int_equal(f.calls("temp_gpu_c", 0), 1);
	clock_driven_advance(1);
	f.want = 2;
	assert_true(eventually(polled, &f));
	assert_true(eventually(waiters_are, &one));
	assert_int_equal(f.calls("temp_gpu_c", 0), 2);

	src->ops->destroy(src); /* the stop wakes the worker: no advance needed */
	dlclose(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reads_move_only_when_advanced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wall_step_seen_by_the_watch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auto_advance_sleeps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timed_wait_wakes_on_advance, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sleep_wakes_on_advance, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_jumps_the_loops_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_follow_real, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvml_worker_polls_on_the_driven_clock, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
