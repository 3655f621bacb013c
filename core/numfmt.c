/*
 * Hand-written "%.15g". Why the fast path is exact: when an integer R
 * (|R| < 1e15) divided by 10^K (K <= 6) gives back V in double
 * arithmetic, V is the double nearest to the decimal D = R / 10^K (the
 * division is correctly rounded and both operands are exact). A double's
 * half ulp is below half a unit in D's 15th significant digit, so
 * rounding V to 15 digits gives D again, which has at most 15 digits:
 * "%.15g" prints D with its trailing zeros dropped, in fixed notation
 * since 1e-4 <= |D| < 1e15. K is the smallest that works, so D has no
 * trailing zero and is the shortest text that reads back as V.
 */
#include "numfmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define WHOLE_MAX 1e15 /* below: every whole double is written digit by digit */
#define DECIMALS_MAX 6

static const double pow10_tab[DECIMALS_MAX + 1] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};

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

/* |R| / 10^K as fixed text, R != 0 and K >= 1. */
static size_t
fixed(char *buf, bool neg, uint64_t r, int k)
{
	char tmp[24];
	char *end = tmp + sizeof(tmp);
	char *p = digits(end, r);
	int n = (int)(end - p);
	char *o = buf;
	if (neg) {
		*o++ = '-';
	}
	if (n <= k) {
		/* 0.00ddd */
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
	if (a >= 1e-4 && a < WHOLE_MAX / pow10_tab[1]) {
		for (int k = 1; k <= DECIMALS_MAX; k++) {
			double m = a * pow10_tab[k];
			if (m >= WHOLE_MAX) {
				break;
			}
			double r = nearbyint(m);
			if (r / pow10_tab[k] == a) {
				return fixed(buf, v < 0, (uint64_t)r, k);
			}
		}
	}
	int n = snprintf(buf, NUMFMT_MAX, "%.15g", v);
	return n > 0 ? (size_t)n : 0;
}
