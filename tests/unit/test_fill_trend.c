/*
 * host/fill_trend.c: time to full from the recent trend, on synthetic series
 * of scans (filling, steady, shrinking, noisy), each against the answer
 * worked out by hand.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "host/fill_trend.h"

#define MIN_MS 60000LL
#define WINDOW_MS (30 * MIN_MS)
#define GIB 1073741824.0
#define MIB 1048576.0

/* a disk of SIZE bytes; SCANS scans every STEP_MS from the monotonic time 1000 s, used = USED0 + RATE x t (+ NOISE) */
struct series {
	double size, used0, rate_per_s;
	const double *noise; /* NULL, or one value a scan, repeated */
	size_t noise_len;
};

static double
used_at(const struct series *s, size_t i, int64_t step_ms)
{
	double v = s->used0 + s->rate_per_s * (double)i * (double)step_ms / 1000.0;
	return s->noise ? v + s->noise[i % s->noise_len] : v;
}

/* the time to full after SCANS scans (its return value; *ETA set only when 0) */
static int
eta_after(const struct series *s, size_t scans, int64_t step_ms, double *eta)
{
	struct fill_trend t;
	fill_trend_init(&t, WINDOW_MS);
	double used = 0;
	for (size_t i = 0; i < scans; i++) {
		used = used_at(s, i, step_ms);
		fill_trend_add(&t, 1000000 + (int64_t)i * step_ms, used);
	}
	return fill_trend_eta_s(&t, s->size - used, eta);
}

static void
test_filling(void **state)
{
	(void)state;
	/* 16 GiB eMMC with 10 GiB used, container layers and logs adding 1 MiB a second: 6 GiB left, 6144 s */
	struct series s = {16 * GIB, 10 * GIB, MIB, NULL, 0};
	double eta = -1;
	/* 31 min of scans every 10 s: the window holds the last 30 min */
	assert_int_equal(eta_after(&s, 187, 10000, &eta), 0);
	double left = 16 * GIB - used_at(&s, 186, 10000);
	assert_true(fabs(eta - ceil(left / MIB)) <= 1);
	assert_true(eta > 0);
	/* whole seconds, and at least 1 while a byte is left */
	struct fill_trend t;
	fill_trend_init(&t, WINDOW_MS);
	for (int64_t i = 0; i < 6; i++) {
		fill_trend_add(&t, i * MIN_MS, (double)i * 60 * MIB);
	}
	assert_int_equal(fill_trend_eta_s(&t, 1, &eta), 0);
	assert_true(eta == 1);
	assert_int_equal(fill_trend_eta_s(&t, 90 * MIB, &eta), 0);
	assert_true(eta == 90);
}

static void
test_too_few_points(void **state)
{
	(void)state;
	struct series s = {16 * GIB, 10 * GIB, MIB, NULL, 0};
	double eta = -1;
	/* four scans: too few */
	assert_int_equal(eta_after(&s, 4, 60000, &eta), -EAGAIN);
	/* nine scans 30 s apart: enough points, but 4 min is not a sixth of the 30 min window */
	assert_int_equal(eta_after(&s, 9, 30000, &eta), -EAGAIN);
	/* eleven over 5 min: a sixth of it */
	assert_int_equal(eta_after(&s, 11, 30000, &eta), 0);
	assert_true(eta > 0);
	/* scans a second apart are kept as two points (the first, and the newest in place of the rest) */
	assert_int_equal(eta_after(&s, 20, 1000, &eta), -EAGAIN);
	/* nothing at all */
	struct fill_trend t;
	fill_trend_init(&t, WINDOW_MS);
	assert_int_equal(fill_trend_eta_s(&t, GIB, &eta), -EAGAIN);
}

static void
test_steady_and_shrinking(void **state)
{
	(void)state;
	double eta = 42;
	struct series steady = {16 * GIB, 10 * GIB, 0, NULL, 0};
	assert_int_equal(eta_after(&steady, 187, 10000, &eta), -ENODATA);
	struct series shrinking = {16 * GIB, 10 * GIB, -MIB, NULL, 0};
	assert_int_equal(eta_after(&shrinking, 187, 10000, &eta), -ENODATA);
	assert_true(eta == 42); /* untouched when absent */
	/* filling so slowly that it would take more than a year: not filling in any sense that matters */
	struct series crawl = {512 * GIB, 10 * GIB, 1000, NULL, 0};
	assert_int_equal(eta_after(&crawl, 187, 10000, &eta), -ENODATA);
}

static void
test_full_now(void **state)
{
	(void)state;
	/* no space left: 0, whatever the trend (the only way to 0) */
	struct series full = {16 * GIB, 16 * GIB, 0, NULL, 0};
	double eta = -1;
	assert_int_equal(eta_after(&full, 2, 10000, &eta), 0);
	assert_true(eta == 0);
	struct fill_trend t;
	fill_trend_init(&t, WINDOW_MS);
	assert_int_equal(fill_trend_eta_s(&t, 0, &eta), 0);
	assert_true(eta == 0);
}

/* +/- 50 MiB of jitter (files written and deleted), a deterministic pattern that sums to 0 */
static const double jitter[] = {50 * MIB, -30 * MIB, 10 * MIB, -50 * MIB, 40 * MIB, -20 * MIB, 0, 0};

static void
test_noisy(void **state)
{
	(void)state;
	double eta = -1;
	/* flat under the jitter: a fitted slope, but within its noise: absent */
	struct series flat = {16 * GIB, 10 * GIB, 0, jitter, sizeof(jitter) / sizeof(jitter[0])};
	assert_int_equal(eta_after(&flat, 187, 10000, &eta), -ENODATA);
	/* filling at 1 MiB/s under the same jitter: the trend shows through, within 5 % of the noiseless answer */
	struct series filling = {16 * GIB, 10 * GIB, MIB, jitter, sizeof(jitter) / sizeof(jitter[0])};
	assert_int_equal(eta_after(&filling, 187, 10000, &eta), 0);
	double left = 16 * GIB - used_at(&filling, 186, 10000);
	double truth = left / MIB;
	assert_true(fabs(eta - truth) / truth < 0.05);
	/* a slow rise buried in the jitter (100 KiB/s against +/- 50 MiB a scan) over only 5 min: not a trend yet */
	struct series buried = {16 * GIB, 10 * GIB, 100 * 1024, jitter, sizeof(jitter) / sizeof(jitter[0])};
	assert_int_equal(eta_after(&buried, 31, 10000, &eta), -ENODATA);
}

static void
test_window_and_spacing(void **state)
{
	(void)state;
	struct fill_trend t;
	fill_trend_init(&t, WINDOW_MS);
	/* a scan a second for an hour: at most FILL_TREND_POINTS kept, all within the window, the newest last */
	for (int64_t i = 0; i <= 3600; i++) {
		fill_trend_add(&t, i * 1000, (double)i);
		assert_true(t.count <= FILL_TREND_POINTS);
	}
	assert_true(t.count >= FILL_TREND_POINTS - 2);
	assert_true(t.t_ms[0] >= 3600 * 1000 - WINDOW_MS);
	assert_true(t.t_ms[t.count - 1] == 3600 * 1000);
	assert_true(t.used[t.count - 1] == 3600);
	for (size_t i = 1; i < t.count; i++) {
		assert_true(t.t_ms[i] > t.t_ms[i - 1]);
	}
	/* a 1 byte/s trend through them: 1000 bytes left is 1000 s */
	double eta = -1;
	assert_int_equal(fill_trend_eta_s(&t, 1000, &eta), 0);
	assert_true(fabs(eta - 1000) <= 1);
	/* a value that is no number is not a point */
	size_t n = t.count;
	fill_trend_add(&t, 3601 * 1000, NAN);
	assert_int_equal(t.count, n);
	/* a scan at the same instant replaces the newest */
	fill_trend_add(&t, 3600 * 1000, 4000);
	assert_int_equal(t.count, n);
	assert_true(t.used[n - 1] == 4000);
	/* after a pause longer than the window only the new scan is left */
	fill_trend_add(&t, 3600 * 1000 + 2 * WINDOW_MS, 1);
	assert_int_equal(t.count, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filling),	      cmocka_unit_test(test_too_few_points),
		cmocka_unit_test(test_steady_and_shrinking), cmocka_unit_test(test_full_now),
		cmocka_unit_test(test_noisy),	      cmocka_unit_test(test_window_and_spacing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
