/*
 * tegrastats parser, scanner: character classes, numbers and the value
 * shapes of a line ("45.5C", "3%@1190", "[2%@729,off]", "4783mW/4783mW",
 * "MB"). A reader takes the line S, END (the end of the line or of the
 * word) and a position, and returns a V_ result; on V_OK the position is
 * past the value. None of them emits a metric.
 *
 * What a line calls many times is static inline here, so the grammar
 * inlines it as it did when the parser was one file; the rest is in
 * tegrastats_lex.c.
 */
#ifndef TEGRAWATCH_TEGRASTATS_LEX_H
#define TEGRAWATCH_TEGRASTATS_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/text.h"

#define MAX_CPUS 64
#define MAX_FREQS 16 /* entries in an @[f,f,...] list */
#define MAX_PCT 100.0
#define MAX_FREQ_MHZ 100000.0
#define MAX_POWER_MW 1000000.0
#define MIN_TEMP_C -273.0
#define MAX_TEMP_C 500.0
#define TEMP_OFFLINE_C -256.0

/* A string literal and its length, for memcpy-built names. */
#define LIT(s) s, (sizeof(s) - 1)

/* Results of the small value readers. */
enum {
	V_OK = 0,
	V_BAD = -1,   /* a character that does not fit */
	V_SHORT = -2, /* ran out of input: the value is cut off */
	V_RANGE = -3, /* well formed but out of range */
};

struct load_freq {
	bool has_load, has_freq, is_list;
	double load_pct;
	double freq_max_mhz;
	unsigned nfreq;
	double freq_mhz[MAX_FREQS];
};

struct cpu_entry {
	bool online, has_freq;
	double load_pct, freq_mhz;
};

/*
 * Character classes in one table, so that the word loops test one byte
 * with one load and one mask.
 */
enum {
	C_DIGIT = 1 << 0,
	C_ALPHA = 1 << 1,
	C_UNDER = 1 << 2, /* '_' */
	C_DASH = 1 << 3,  /* '-' */
	C_BLANK = 1 << 4, /* ' ', '\t' */
	C_AT = 1 << 5,    /* '@' */
	C_OTHER = 1 << 6, /* anything else */
};

#define CLASS_OF(c)                                                                                                    \
	((c) >= '0' && (c) <= '9'                                   ? C_DIGIT                                          \
	 : ((c) >= 'A' && (c) <= 'Z') || ((c) >= 'a' && (c) <= 'z') ? C_ALPHA                                          \
	 : (c) == '_'                                               ? C_UNDER                                          \
	 : (c) == '-'                                               ? C_DASH                                           \
	 : (c) == ' ' || (c) == '\t'                                ? C_BLANK                                          \
	 : (c) == '@'                                               ? C_AT                                             \
								    : C_OTHER)
#define CLASS_4(c) CLASS_OF(c), CLASS_OF((c) + 1), CLASS_OF((c) + 2), CLASS_OF((c) + 3)
#define CLASS_16(c) CLASS_4(c), CLASS_4((c) + 4), CLASS_4((c) + 8), CLASS_4((c) + 12)
#define CLASS_64(c) CLASS_16(c), CLASS_16((c) + 16), CLASS_16((c) + 32), CLASS_16((c) + 48)

static const unsigned char char_class[256] = {CLASS_64(0), CLASS_64(64), CLASS_64(128), CLASS_64(192)};

static inline unsigned
class_of(char c)
{
	return char_class[(unsigned char)c];
}

static inline bool
is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static inline bool
is_blank(char c)
{
	return class_of(c) & C_BLANK;
}

/* Values end at a blank or at the end of the line. */
static inline bool
at_word_end(const char *s, size_t end, size_t i)
{
	return i == end || is_blank(s[i]);
}

static inline char
to_lower(char c)
{
	return is_upper(c) ? (char)(c - 'A' + 'a') : c;
}

static inline bool
word_is(const char *s, size_t len, const char *lit, size_t lit_len)
{
	return len == lit_len && memcmp(s, lit, len) == 0;
}

/* ---- value readers: all work inside [*pos, end), end = end of the word ---- */

#define MAX_DIGITS 15 /* exact in a double */

/* the eight-bytes-at-a-time digit reader assumes the first byte is the lowest */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWAR_DIGITS 1
#else
#define SWAR_DIGITS 0
#endif

#if SWAR_DIGITS
/*
 * Numbers eight bytes at a time: values are short (1-5 digits), and a byte
 * loop costs about ten instructions a digit.
 *
 * How many of the eight bytes of W (first byte lowest) are digits before
 * the first non-digit: a digit has high nibble 3 and a low nibble that
 * stays below 16 when 6 is added (no carry leaves a byte).
 */
static inline unsigned
swar_digit_count(uint64_t w)
{
	const uint64_t hi = 0xF0F0F0F0F0F0F0F0ull, lo = 0x0F0F0F0F0F0F0F0Full;
	const uint64_t seven = 0x7F7F7F7F7F7F7F7Full;
	uint64_t nd = ((w & hi) ^ 0x3030303030303030ull) | (((w & lo) + 0x0606060606060606ull) & hi);
	/* the top bit of every non-zero byte of ND */
	uint64_t m = (((nd & seven) + seven) | nd) & ~seven;
	return m ? (unsigned)__builtin_ctzll(m) / 8 : 8;
}

/* The value of the first N (1..8) bytes of W, all digits. */
static inline uint64_t
swar_digit_value(uint64_t w, unsigned n)
{
	/* digit values, moved up so that the missing ones read as leading zeros */
	w = (w - 0x3030303030303030ull) << (8 * (8 - n));
	w = w * 10 + (w >> 8); /* byte 2k: digit pair k as 0..99 */
	const uint64_t pairs = 0x000000FF000000FFull;
	return ((w & pairs) * (100 + (1000000ull << 32)) + ((w >> 16) & pairs) * (1 + (10000ull << 32))) >> 32;
}
#endif

/*
 * Reads the digits at I (at most MAX_DIGITS + 1 of them) into *V and returns
 * how many there were; more than MAX_DIGITS means too many.
 */
static inline unsigned
scan_digits(const char *s, size_t end, size_t i, uint64_t *v)
{
#if SWAR_DIGITS
	if (end - i >= 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		unsigned n = swar_digit_count(w);
		if (n < 8) {
			*v = n ? swar_digit_value(w, n) : 0;
			return n;
		}
	}
#endif
	size_t lim = end - i > MAX_DIGITS + 1 ? i + MAX_DIGITS + 1 : end;
	size_t start = i;
	uint64_t x = 0;
	while (i < lim && text_is_digit(s[i])) {
		x = x * 10 + (uint64_t)(s[i] - '0');
		i++;
	}
	*v = x;
	return (unsigned)(i - start);
}

/* Unsigned integer of at most MAX_DIGITS digits. */
static inline int
read_uint(const char *s, size_t end, size_t *pos, uint64_t *ret)
{
	size_t i = *pos;
	uint64_t v;
	unsigned n = scan_digits(s, end, i, &v);
	if (n == 0) {
		return i == end ? V_SHORT : V_BAD;
	}
	if (n > MAX_DIGITS) {
		return V_BAD;
	}
	*pos = i + n;
	*ret = v;
	return V_OK;
}

static inline int
expect(const char *s, size_t end, size_t *pos, const char *lit, size_t lit_len)
{
	size_t i = *pos;
	for (size_t k = 0; k < lit_len; k++, i++) {
		if (i >= end) {
			return V_SHORT;
		}
		if (s[i] != lit[k]) {
			return V_BAD;
		}
	}
	*pos = i;
	return V_OK;
}

static inline int
read_freq(const char *s, size_t end, size_t *pos, double *ret)
{
	uint64_t v;
	int r = read_uint(s, end, pos, &v);
	if (r != V_OK) {
		return r;
	}
	if ((double)v > MAX_FREQ_MHZ) {
		return V_RANGE;
	}
	*ret = (double)v;
	return V_OK;
}

/* "X%" with X <= MAX_PCT. */
static inline int
read_pct(const char *s, size_t end, size_t *pos, double *ret)
{
	uint64_t v;
	int r = read_uint(s, end, pos, &v);
	if (r == V_OK) {
		r = expect(s, end, pos, LIT("%"));
	}
	if (r != V_OK) {
		return r;
	}
	if ((double)v > MAX_PCT) {
		return V_RANGE;
	}
	*ret = (double)v;
	return V_OK;
}

/* ---- value shapes read out of line (tegrastats_lex.c) ---- */

/** -?digits(.digits)? with at most MAX_DIGITS digits in all. */
int ts_read_decimal(const char *s, size_t end, size_t *pos, double *ret);

/** "X%", "X%@f", "X%@[f,...]" or "@[f,...]" up to the end of the word. */
int ts_read_load_freq(const char *s, size_t end, size_t *ret_pos, struct load_freq *lf);

/* ---- value shapes read inline on the hot path ---- */

/*
 * The numbers of a rail: "a/b" and "amW/bmW" (JetPack 3-6: current,
 * average), "amW/bmW/cmW" (JetPack 7: current, average, maximum) or a lone
 * "amW" (N = 1, a shape no JetPack is known to print; the grammar skips it).
 */
struct rail_values {
	double mw[3];
	unsigned n;
};

/* One of the shapes of struct rail_values up to the end of the word. */
static inline int
read_rail(const char *s, size_t end, size_t *ret_pos, struct rail_values *rv)
{
	size_t pos = *ret_pos;
	double v[3] = {0, 0, 0};
	unsigned n = 0;
	bool with_unit = false;
	for (;;) {
		uint64_t x;
		int r = read_uint(s, end, &pos, &x);
		if (r != V_OK) {
			return r;
		}
		if ((double)x > MAX_POWER_MW) {
			return V_RANGE;
		}
		if (n == 0) {
			with_unit = pos < end && s[pos] == 'm';
		}
		if (with_unit) {
			r = expect(s, end, &pos, LIT("mW"));
			if (r != V_OK) {
				return r;
			}
		}
		v[n++] = (double)x;
		if (at_word_end(s, end, pos)) {
			break;
		}
		if (s[pos] != '/' || n == 3) {
			return V_BAD;
		}
		pos++;
	}
	*ret_pos = pos;
	memcpy(rv->mw, v, sizeof(v));
	rv->n = n;
	return V_OK;
}

/* "[e,e,...]" or "[e,...]@f", e = "off" | "X%" | "X%@f", to the word end. */
static inline int
read_cpu_list(const char *s, size_t end, size_t *pos, struct cpu_entry *cpus, unsigned *ret_n)
{
	size_t i = *pos;
	unsigned n = 0;
	int r = expect(s, end, &i, LIT("["));
	if (r != V_OK) {
		return r;
	}
	for (;;) {
		if (n == MAX_CPUS) {
			return V_RANGE;
		}
		struct cpu_entry *c = &cpus[n];
		if (i < end && s[i] == 'o') {
			r = expect(s, end, &i, LIT("off"));
			c->online = false;
			c->has_freq = false;
		} else {
			r = read_pct(s, end, &i, &c->load_pct);
			c->online = true;
			c->has_freq = false;
			if (r == V_OK && i < end && s[i] == '@') {
				i++;
				r = read_freq(s, end, &i, &c->freq_mhz);
				c->has_freq = true;
			}
		}
		if (r != V_OK) {
			return r;
		}
		n++;
		if (i == end) {
			return V_SHORT;
		}
		if (s[i] == ']') {
			i++;
			break;
		}
		if (s[i] != ',') {
			return V_BAD;
		}
		i++;
	}
	if (!at_word_end(s, end, i)) {
		/* old form: one frequency for all cores after the bracket */
		double f;
		r = expect(s, end, &i, LIT("@"));
		if (r == V_OK) {
			r = read_freq(s, end, &i, &f);
		}
		if (r != V_OK) {
			return r;
		}
		if (!at_word_end(s, end, i)) {
			return V_BAD;
		}
		for (unsigned k = 0; k < n; k++) {
			if (cpus[k].online && !cpus[k].has_freq) {
				cpus[k].freq_mhz = f;
				cpus[k].has_freq = true;
			}
		}
	}
	*ret_n = n;
	*pos = i;
	return V_OK;
}

static inline bool
temp_ok(double t)
{
	return t == TEMP_OFFLINE_C || (t >= MIN_TEMP_C && t <= MAX_TEMP_C);
}

/* "T C" (n = 1) or JetPack 7's "T1C/T2C" (n = 2: current, maximum). */
struct temp_values {
	double c[2];
	unsigned n;
};

/* One of the shapes of struct temp_values from I to END (the word's end). */
static inline int
read_temp(const char *s, size_t end, size_t i, struct temp_values *ret)
{
	double t[2] = {0, 0};
	unsigned n = 0;
	int r;
	do {
		if (n == 1) {
			r = expect(s, end, &i, LIT("/"));
			if (r != V_OK) {
				return r;
			}
		}
		r = ts_read_decimal(s, end, &i, &t[n]);
		if (r == V_OK) {
			r = expect(s, end, &i, LIT("C"));
		}
		if (r != V_OK) {
			return r;
		}
		n++;
	} while (n < 2 && i < end);
	if (i != end) {
		return V_BAD; /* a third value, or anything else after the second */
	}
	for (unsigned k = 0; k < n; k++) {
		if (!temp_ok(t[k])) {
			return V_RANGE;
		}
	}
	memcpy(ret->c, t, sizeof(t));
	ret->n = n;
	return V_OK;
}

/* "kB", "MB", "GB" or "B": the size of the unit in KiB. */
static inline int
read_unit(const char *s, size_t end, size_t *pos, double *ret_kb)
{
	size_t i = *pos;
	double kb = 1.0;
	if (i == end) {
		return V_SHORT;
	}
	switch (s[i]) {
	case 'k':
		i++;
		break;
	case 'M':
		kb = 1024.0;
		i++;
		break;
	case 'G':
		kb = 1024.0 * 1024.0;
		i++;
		break;
	default:
		kb = 1.0 / 1024.0;
		break;
	}
	int r = expect(s, end, &i, LIT("B"));
	if (r != V_OK) {
		return r;
	}
	*pos = i;
	*ret_kb = kb;
	return V_OK;
}

#endif
