/*
 * The history's tier 0 storage: narrow (2 bytes a value) rings give back
 * exactly the float a wide ring stores, through finer scales, new bases
 * and the switch to wide; and what a ring holds in bytes.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/metrics.h"
#include "core/sample.h"
#include "web/history.h"

/* Feeds VALUES[i] (NAN: absent) as metric "m" at second i, in a history of CAP samples. */
static struct history *
feed(size_t cap, const double *values, size_t n)
{
	struct history *h = history_create(cap, 0, 1000);
	struct sample *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	for (size_t i = 0; i < n; i++) {
		sample_clear(s);
		s->time_ms = (int64_t)i * 1000;
		s->mono_ms = s->time_ms;
		if (!isnan(values[i])) {
			metric_set_put(&s->metrics, "m", values[i]);
		}
		metric_set_put(&s->metrics, "other", 1);
		history_add(h, s);
	}
	free(s);
	return h;
}

/* The window of "m" is the last CAP values as floats, the absent ones left out. */
static void
assert_kept(const struct history *h, size_t cap, const double *values, size_t n)
{
	struct history_point *p;
	size_t count;
	assert_int_equal(history_window(h, "m", 0, &p, &count), 0);
	size_t first = n > cap ? n - cap : 0, k = 0;
	for (size_t i = first; i < n; i++) {
		if (isnan(values[i])) {
			continue;
		}
		assert_true(k < count);
		assert_int_equal(p[k].time_ms, (int64_t)i * 1000);
		if (p[k].value != history_float_value((float)values[i])) {
			fail_msg("sample %zu: %.17g stored, %.17g read back", i, values[i], p[k].value);
		}
		k++;
	}
	assert_int_equal(k, count);
	free(p);
}

static void
test_sensor_values_stay_narrow(void **state)
{
	(void)state;
	/* whole mW, tenths of a MHz, thousandths of a degree, a limit far from zero, negatives, zero */
	const double series[][6] = {
		{13990, 14100, 0, 25000, 13000, 9},
		{729.6, 2201.6, 1190.4, 729.6, 115.2, 2201.6},
		{44.562, 41.093, 47.125, 45, 60.031, 38.5},
		{62801, 62801, 62800, 62801, 62801, 62801},
		{-12.5, -3, 4.25, 0, -0.75, 1},
	};
	for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++) {
		struct history *h = feed(4, series[i], 6);
		assert_int_equal(history_narrow_count(h), 2); /* "m" and "other" */
		assert_kept(h, 4, series[i], 6);
		history_destroy(h);
	}
}

static void
test_finer_scale_keeps_older_values(void **state)
{
	(void)state;
	/* a whole number first, then tenths, then a thousandth: each older value is rewritten exactly */
	const double v[] = {12, NAN, 7.6, 12, 4.562, 7.6};
	struct history *h = feed(8, v, 6);
	assert_int_equal(history_narrow_count(h), 2);
	assert_kept(h, 8, v, 6);
	history_destroy(h);
}

static void
test_counter_gets_new_bases(void **state)
{
	(void)state;
	/* a counter far past the narrow range: each window still spans less than it */
	enum { N = 100000, CAP = 600 };
	double *v = malloc(N * sizeof(*v));
	assert_non_null(v);
	for (size_t i = 0; i < N; i++) {
		v[i] = (double)(3 * i);
	}
	struct history *h = feed(CAP, v, N);
	assert_int_equal(history_narrow_count(h), 2);
	assert_kept(h, CAP, v, N);
	history_destroy(h);
	free(v);
}

static void
test_widens_when_narrow_cannot_say_it(void **state)
{
	(void)state;
	/* a ratio (no decimal scale), an infinity, a spread wider than 65,534 steps */
	const double ratio[] = {1, 2.5, 100.0 / 3, 4};
	const double inf[] = {1, INFINITY, 2, 3};
	const double spread[] = {-40000, 30000, 12, 1};
	const double *cases[] = {ratio, inf, spread};
	for (size_t i = 0; i < 3; i++) {
		struct history *h = feed(8, cases[i], 4);
		assert_int_equal(history_narrow_count(h), 1); /* "other" only */
		assert_kept(h, 8, cases[i], 4);
		history_destroy(h);
	}
}

static void
test_random_values_match_floats(void **state)
{
	(void)state;
	/* a mix of kinds, in random order, with gaps: the narrow encoding never changes what is read back */
	enum { N = 20000, CAP = 300 };
	double *v = malloc(N * sizeof(*v));
	assert_non_null(v);
	srand(15);
	for (size_t i = 0; i < N; i++) {
		int kind = rand() % 8;
		double r = (double)(rand() % 200000) - 100000;
		v[i] = kind == 0 ? NAN : kind == 1 ? r / 7 : kind == 2 ? r / 1000 : kind == 3 ? r * 1e6 : r / 10;
		if (i > N / 2 && kind != 0) {
			v[i] = (double)(rand() % 1000); /* later, only whole numbers: a ring that widened stays right */
		}
	}
	struct history *h = feed(CAP, v, N);
	assert_kept(h, CAP, v, N);
	history_destroy(h);
	free(v);
}

static void
test_held_bytes(void **state)
{
	(void)state;
	const double narrow[] = {1, 2, 3};
	struct history *h = feed(3600, narrow, 3);
	uint64_t shared = 3600 * 8;
	/* two narrow rings, 2 bytes a sample, with room for the first 64 samples: blocks grow as the hour fills */
	assert_int_equal(history_held_bytes(h), shared + 2 * (64 * 2 + HISTORY_RING_BYTES));
	history_destroy(h);
	const double wide[] = {1, 2, 0.5 / 3};
	h = feed(3600, wide, 3);
	assert_int_equal(history_held_bytes(h), shared + (64 * 2 + HISTORY_RING_BYTES) + (64 * 4 + HISTORY_RING_BYTES));
	history_destroy(h);
	/* the hour full: every slot held, no more; the bound counts 4 bytes a sample */
	double *hour = malloc(3700 * sizeof(*hour));
	assert_non_null(hour);
	for (size_t i = 0; i < 3700; i++) {
		hour[i] = (double)(i % 50);
	}
	h = feed(3600, hour, 3700);
	assert_int_equal(history_held_bytes(h), shared + 2 * (3600 * 2 + HISTORY_RING_BYTES));
	assert_true(history_held_bytes(h) < history_bytes(3600, 0, 1000, 2));
	assert_kept(h, 3600, hour, 3700);
	history_destroy(h);
	free(hour);
}

/* Tier 1's blocks grow with the minutes too: room for 4, then 8, 16... up to the day's 1441. */
static void
test_held_bytes_minutes(void **state)
{
	(void)state;
	struct history *h = history_create(60, 1441, 60000);
	struct sample *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	uint64_t shared = (60 + 1441) * 8;
	for (int k = 0; k < 1500; k++) {
		sample_clear(s);
		s->time_ms = k * 60000LL;
		s->mono_ms = s->time_ms;
		metric_set_put(&s->metrics, "m", k % 7);
		history_add(h, s);
		if (k == 4) { /* 5 minutes opened: room for 8 buckets, 13 bytes each; tier 0 held whole (under 64) */
			assert_int_equal(history_held_bytes(h), shared + 8 * 13 + 60 * 2 + HISTORY_RING_BYTES);
		}
	}
	/* the whole day: 1441 x 13 bytes, rounded to 4, and the 60 samples */
	assert_int_equal(history_held_bytes(h), shared + 18736 + 60 * 2 + HISTORY_RING_BYTES);
	struct history_bucket *b;
	size_t n;
	assert_int_equal(history_window_minutes(h, "m", 0, &b, &n), 0);
	assert_int_equal(n, 1441);
	for (size_t i = 0; i < n; i++) {
		double v = (double)((59 + i) % 7);
		if (b[i].time_ms != (int64_t)(59 + i) * 60000 || b[i].mean != v || b[i].count != 1) {
			fail_msg("bucket %zu: %lld %g x%u", i, (long long)b[i].time_ms, b[i].mean, b[i].count);
		}
	}
	free(b);
	history_destroy(h);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sensor_values_stay_narrow),
		cmocka_unit_test(test_finer_scale_keeps_older_values),
		cmocka_unit_test(test_counter_gets_new_bases),
		cmocka_unit_test(test_widens_when_narrow_cannot_say_it),
		cmocka_unit_test(test_random_values_match_floats),
		cmocka_unit_test(test_held_bytes),
		cmocka_unit_test(test_held_bytes_minutes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
