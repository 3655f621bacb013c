/*
 * Hand-written "%.15g". Why the first fast path is exact: when an integer R
 * (|R| < 1e15) divided by 10^K (K <= 6) gives back V in double
 * arithmetic, V is the double nearest to the decimal D = R / 10^K (the
 * division is correctly rounded and both operands are exact). A double's
 * half ulp is below half a unit in D's 15th significant digit, so
 * rounding V to 15 digits gives D again, which has at most 15 digits:
 * "%.15g" prints D with its trailing zeros dropped, in fixed notation
 * since 1e-4 <= |D| < 1e15. K is the smallest that works, so D has no
 * trailing zero and is the shortest text that reads back as V.
 *
 * The second (sums like 0.1 + 0.2, ratios) rounds V itself to 15
 * significant digits, as printf does. V * 10^S (10^S exact for S <= 22)
 * is P + ERR exactly (ERR from fma), so how far that lies from the integer
 * P rounds to is known to within a relative 2^-53: far enough from a half,
 * the rounding is printf's; within a hair of one (a tie, or a value that
 * close to it), printf decides.
 */
#include "numfmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define WHOLE_MAX 1e15 /* below: every whole double is written digit by digit */
#define DECIMALS_MAX 6

/* 10^0 .. 10^18, all exact */
static const double pow10_exact[] = {1,    1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
				     1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};

/* Writes the digits of V at the end of TMP (24 bytes); returns where they start. */
static char *
digits(char *end, uint64_t v)
{
	char *p = end;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

size_t
numfmt_u64(char *buf, uint64_t v)
{
	char tmp[24];
	char *p = digits(tmp + sizeof(tmp), v);
	size_t n = (size_t)(tmp + sizeof(tmp) - p);
	memcpy(buf, p, n);
	buf[n] = '\0';
	return n;
}

size_t
numfmt_i64(char *buf, int64_t v)
{
	if (v >= 0) {
		return numfmt_u64(buf, (uint64_t)v);
	}
	buf[0] = '-';
	/* the magnitude of INT64_MIN does not fit an int64_t */
	return 1 + numfmt_u64(buf + 1, (uint64_t)0 - (uint64_t)v);
}

/* The N digits at P, with K of them decimals, as fixed text (0.00ddd when N <= K); no point when K is 0. */
static size_t
fixed_text(char *buf, bool neg, const char *p, int n, int k)
{
	char *o = buf;
	if (neg) {
		*o++ = '-';
	}
	if (k == 0) {
		memcpy(o, p, (size_t)n);
		o += n;
	} else if (n <= k) {
		*o++ = '0';
		*o++ = '.';
		for (int i = n; i < k; i++) {
			*o++ = '0';
		}
		memcpy(o, p, (size_t)n);
		o += n;
	} else {
		memcpy(o, p, (size_t)(n - k));
		o += n - k;
		*o++ = '.';
		memcpy(o, p + n - k, (size_t)k);
		o += k;
	}
	*o = '\0';
	return (size_t)(o - buf);
}

/* |R| / 10^K as fixed text, R != 0 and K >= 1. */
static size_t
fixed(char *buf, bool neg, uint64_t r, int k)
{
	char tmp[24];
	char *end = tmp + sizeof(tmp);
	char *p = digits(end, r);
	return fixed_text(buf, neg, p, (int)(end - p), k);
}

#define DIGITS 15
#define DIGITS_MIN 1e14 /* a 15-digit integer is at least this */
#define HALF_DOUBT 1e-9 /* how near a half the error's bound may bring a value */

/* A * 10^S rounded to an integer as exact arithmetic would, or -1 when too near a half to tell (a tie, say). */
static double
scaled_round(double a, int s)
{
	double p = a * pow10_exact[s];
	double err = fma(a, pow10_exact[s], -p); /* a * 10^S = p + err exactly */
	double r = nearbyint(p);
	double d = (p - r) + err; /* p - r is exact: both lie within a half of each other */
	double off = fabs(d);
	if (fabs(off - 0.5) < HALF_DOUBT) {
		return -1;
	}
	return off < 0.5 ? r : r + (d > 0 ? 1 : -1);
}

/*
 * "%.15g" of A (1e-4 <= A < 1e14, V's magnitude) from its 15 significant
 * digits R: 10^14 < R < 10^15 proves the exponent X (10^X < A < 10^(X+1),
 * and no carry to 10^(X+1)); R exactly 10^14 (A a hair from a power of
 * ten) is left to printf. Returns 0 when printf must decide.
 */
static size_t
rounded(char *buf, bool neg, double a)
{
	/* a guess of X, off by one at most where the table's inexact powers below 1 are near A */
	int x = -4;
	while (x < 13 && a >= (x + 1 >= 0 ? pow10_exact[x + 1] : 1.0 / pow10_exact[-(x + 1)])) {
		x++;
	}
	double r = -1;
	for (int tries = 0; tries < 3 && x >= -4 && x <= 13; tries++) {
		r = scaled_round(a, DIGITS - 1 - x);
		if (r < 0 || r == DIGITS_MIN) {
			return 0;
		}
		if (r > DIGITS_MIN && r < DIGITS_MIN * 10) {
			break;
		}
		x += r > DIGITS_MIN ? 1 : -1;
	}
	if (!(r > DIGITS_MIN && r < DIGITS_MIN * 10) || x < -4 || x > 13) {
		return 0;
	}
	/* R is d.dddd x 10^X: fixed notation with 14 - X decimals, trailing zeros dropped */
	char tmp[24];
	char *end = tmp + sizeof(tmp);
	char *p = digits(end, (uint64_t)r);
	int decimals = DIGITS - 1 - x;
	while (decimals > 0 && end[-1] == '0') {
		end--;
		decimals--;
	}
	return fixed_text(buf, neg, p, (int)(end - p), decimals);
}

size_t
numfmt_g15(char *buf, double v)
{
	double a = fabs(v);
	if (a < WHOLE_MAX && v == floor(v)) {
		if (v == 0) {
			/* "%.15g" keeps the sign of -0 */
			return signbit(v) ? (memcpy(buf, "-0", 3), 2) : (memcpy(buf, "0", 2), 1);
		}
		return numfmt_i64(buf, (int64_t)v);
	}
	if (a >= 1e-4 && a < WHOLE_MAX / pow10_exact[1]) {
		for (int k = 1; k <= DECIMALS_MAX; k++) {
			double m = a * pow10_exact[k];
			if (m >= WHOLE_MAX) {
				break;
			}
			double r = nearbyint(m);
			if (r / pow10_exact[k] == a) {
				return fixed(buf, v < 0, (uint64_t)r, k);
			}
		}
	}
	if (a >= 1e-4 && a < DIGITS_MIN) {
		size_t n = rounded(buf, v < 0, a);
		if (n > 0) {
			return n;
		}
	}
	int n = snprintf(buf, NUMFMT_MAX, "%.15g", v);
	return n > 0 ? (size_t)n : 0;
}
