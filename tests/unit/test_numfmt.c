/*
 * core/numfmt.c: the hand-written "%.15g" must be printf's text byte
 * for byte (the golden outputs depend on it), and the values it writes by
 * hand must read back exactly. Checked on edge cases, sensor-like values
 * with 1 to 7 decimals, whole numbers around 1e15, random bit patterns,
 * and what the rounding path takes: sums and ratios at every magnitude
 * from 1e-4 to 1e14, neighbours of the powers of ten and of the halves
 * between two 15-digit decimals (its ties and near-ties).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/numfmt.h"

/* xorshift64: a fixed sequence, the same on every run */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

static void
check_g15(double v)
{
	char want[64];
	char got[NUMFMT_MAX];
	int wn = snprintf(want, sizeof(want), "%.15g", v);
	size_t n = numfmt_g15(got, v);
	if ((size_t)wn != n || strcmp(want, got) != 0) {
		fail_msg("%.17g: printf \"%s\", numfmt \"%s\"", v, want, got);
	}
	assert_int_equal(strlen(got), n);
}

/* A decimal of at most 15 digits, as a double, is written so that it reads back as itself. */
static void
check_round_trip(double v)
{
	char got[NUMFMT_MAX];
	numfmt_g15(got, v);
	if (strtod(got, NULL) != v) {
		fail_msg("%.17g written as \"%s\" does not read back", v, got);
	}
}

static void
test_edge_cases(void **state)
{
	(void)state;
	const double cases[] = {
		0.0, -0.0, 1, -1, 0.5, -0.5, 0.1, 0.2, 0.1 + 0.2, 1.0 / 3, 2.0 / 3, 47.875, -256, 1e-4, 1.5e-4,
		9.99e-5, 1e-5, 0.00012345, 123456789012345, 999999999999999, 1e15, 1e15 + 2, 123456789012345.6,
		12345678901234.5, 1e16, 1e21, 1e22, 1e300, -1e300, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
		9007199254740993.0, 0.000999, 12.000001, 3.14159265358979, 1.2345678, 100.25, 1e14 + 0.5, 65.53599999999999,
		4294967295.0, 18446744073709551615.0, -9223372036854775808.0,
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check_g15(cases[i]);
		check_g15(-cases[i]);
	}
	/* shortest texts; printf's 15 digits are not always exact: 0.1 + 0.2 gives "0.3" (as before) */
	const struct {
		double v;
		const char *text;
	} texts[] = {
		{0.0, "0"}, {-0.0, "-0"}, {47.875, "47.875"}, {0.1, "0.1"}, {-0.05, "-0.05"}, {1e-4, "0.0001"},
		{1e-5, "1e-05"}, {100.25, "100.25"}, {1e15, "1e+15"}, {999999999999999, "999999999999999"},
		{0.1 + 0.2, "0.3"}, {1.0 / 3, "0.333333333333333"},
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char got[NUMFMT_MAX];
		numfmt_g15(got, texts[i].v);
		assert_string_equal(got, texts[i].text);
	}
}

static void
test_sensor_values(void **state)
{
	(void)state;
	/* millidegrees, MHz, mW and percentages as a board gives them, 0 to 7 decimals */
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 400000; i++) {
		uint64_t x = next_random(&rng);
		int decimals = (int)(x % 8);
		int64_t mantissa = (int64_t)((x >> 8) % 100000000000ull) - 50000000000ll;
		if (x & 0x10) {
			mantissa /= 100000; /* small magnitudes too */
		}
		double v = (double)mantissa / pow(10, decimals);
		check_g15(v);
		check_round_trip(v);
	}
}

static void
test_random_doubles(void **state)
{
	(void)state;
	uint64_t rng = 0x243f6a8885a308d3ull;
	for (int i = 0; i < 200000; i++) {
		uint64_t bits = next_random(&rng);
		double v;
		memcpy(&v, &bits, sizeof(v));
		if (!isfinite(v)) {
			continue;
		}
		check_g15(v);
		/* and the same at sensor-like magnitudes */
		double w = fmod(fabs(v), 1e6) * (bits & 1 ? -1 : 1);
		check_g15(w);
	}
}

/* Every magnitude the rounding path takes, with all 53 bits of mantissa busy. */
static void
test_rounded_values(void **state)
{
	(void)state;
	uint64_t rng = 0x452821e638d01377ull;
	for (int i = 0; i < 100000; i++) {
		uint64_t x = next_random(&rng);
		double unit = (double)(x >> 11) / 9007199254740992.0; /* [0, 1), 53 bits */
		int e = (int)(x % 19) - 4;                              /* 1e-4 .. 1e14 */
		double v = (1 + 9 * unit) * pow(10, e);
		check_g15(v);
		check_g15(-v);
	}
	/* running sums and ratios, as energy counters and shares are made */
	double sum = 0;
	for (int i = 0; i < 30000; i++) {
		sum += 0.01716 + i * 1e-7;
		check_g15(sum);
		check_g15(sum / 3600);
		check_g15((double)i / 7);
	}
}

/* A power of ten's neighbours, and the halves between two 15-digit decimals: where rounding could go wrong. */
static void
test_rounding_edges(void **state)
{
	(void)state;
	for (int e = -5; e <= 15; e++) {
		double p = pow(10, e);
		double v = p;
		for (int k = 0; k < 40; k++) {
			v = nextafter(v, 0);
		}
		for (int k = 0; k < 80; k++, v = nextafter(v, INFINITY)) {
			check_g15(v);
		}
		/* 9.99999999999999x 10^(e-1): just below and just at the rounding up to P */
		for (int d = 0; d < 100; d++) {
			check_g15(p * (1 - (45 + d) * 1e-17));
		}
	}
	uint64_t rng = 0x13198a2e03707344ull;
	for (int i = 0; i < 30000; i++) {
		uint64_t x = next_random(&rng);
		int e = (int)(x % 18) - 4;
		/* a 15-digit integer R plus a half, scaled to 10^E: the nearest doubles straddle the tie */
		double r = 1e14 + (double)((x >> 8) % 900000000000000ull);
		double v = (r + 0.5) * pow(10, e - 14);
		check_g15(v);
		check_g15(nextafter(v, 0));
		check_g15(nextafter(v, INFINITY));
	}
}

static void
test_integers(void **state)
{
	(void)state;
	const int64_t cases[] = {0, 1, -1, 9, 10, -10, 123456789, INT64_MAX, INT64_MIN, INT64_MIN + 1};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[32];
		char got[NUMFMT_MAX];
		snprintf(want, sizeof(want), "%lld", (long long)cases[i]);
		assert_int_equal(numfmt_i64(got, cases[i]), strlen(want));
		assert_string_equal(got, want);
	}
	char got[NUMFMT_MAX];
	assert_int_equal(numfmt_u64(got, UINT64_MAX), 20);
	assert_string_equal(got, "18446744073709551615");
	assert_int_equal(numfmt_u64(got, 0), 1);
	assert_string_equal(got, "0");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edge_cases),
		cmocka_unit_test(test_sensor_values),
		cmocka_unit_test(test_random_doubles),
		cmocka_unit_test(test_rounded_values),
		cmocka_unit_test(test_rounding_edges),
		cmocka_unit_test(test_integers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
