/*
 * tegrastats parser, scanner part: the value readers that are not inline
 * in tegrastats_lex.h (decimals, engine loads and clocks) and the line's
 * timestamp. They read a value and emit no metric.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tegrastats_priv.h"

/* ---- decimals, loads and clocks ---- */

/* 10^k for k <= MAX_DIGITS; exact as doubles too */
static const uint64_t pow10_tab[] = {
	1ull,
	10ull,
	100ull,
	1000ull,
	10000ull,
	100000ull,
	1000000ull,
	10000000ull,
	100000000ull,
	1000000000ull,
	10000000000ull,
	100000000000ull,
	1000000000000ull,
	10000000000000ull,
	100000000000000ull,
	1000000000000000ull,
};

/* -?digits(.digits)? with at most MAX_DIGITS digits in all. */
int
ts_read_decimal(const char *s, size_t end, size_t *pos, double *ret)
{
	size_t i = *pos;
	bool neg = false;
	if (i < end && s[i] == '-') {
		neg = true;
		i++;
	}
	uint64_t mant, frac_v = 0;
	unsigned n = scan_digits(s, end, i, &mant), frac = 0;
	if (n == 0) {
		return i == end ? V_SHORT : V_BAD;
	}
	if (n > MAX_DIGITS) {
		return V_BAD;
	}
	i += n;
	if (i < end && s[i] == '.') {
		i++;
		frac = scan_digits(s, end, i, &frac_v);
		if (frac == 0) {
			return i == end ? V_SHORT : V_BAD;
		}
		if (n + frac > MAX_DIGITS) {
			return V_BAD;
		}
		i += frac;
		mant = mant * pow10_tab[frac] + frac_v;
	}
	/* both operands are exact, so one division rounds correctly */
	double v = (double)mant / (double)pow10_tab[frac];
	*pos = i;
	*ret = neg && mant != 0 ? -v : v; /* "-0" is 0 */
	return V_OK;
}

/*
 * One of "X%", "X%@f", "X%@[f,...]", "@[f,...]" up to the end of the word.
 * A list is kept entry by entry (GPCs); freq_max_mhz is its highest.
 *
 * The value readers take END = end of the line and stop at a blank, so a
 * value is scanned once; V_SHORT therefore always means "cut off".
 */
int
ts_read_load_freq(const char *s, size_t end, size_t *ret_pos, struct load_freq *lf)
{
	size_t pos = *ret_pos;
	int r;
	lf->has_load = lf->has_freq = lf->is_list = false;
	lf->nfreq = 0;
	if (pos < end && s[pos] != '@') {
		r = read_pct(s, end, &pos, &lf->load_pct);
		if (r != V_OK) {
			return r;
		}
		lf->has_load = true;
		if (at_word_end(s, end, pos)) {
			*ret_pos = pos;
			return V_OK;
		}
	}
	r = expect(s, end, &pos, LIT("@"));
	if (r != V_OK) {
		return r;
	}
	if (pos < end && s[pos] == '[') {
		pos++;
		lf->is_list = true;
		for (;;) {
			double f;
			if (lf->nfreq == MAX_FREQS) {
				return V_RANGE;
			}
			r = read_freq(s, end, &pos, &f);
			if (r != V_OK) {
				return r;
			}
			lf->freq_mhz[lf->nfreq++] = f;
			if (!lf->has_freq || f > lf->freq_max_mhz) {
				lf->freq_max_mhz = f;
			}
			lf->has_freq = true;
			if (pos == end) {
				return V_SHORT;
			}
			if (s[pos] == ']') {
				pos++;
				break;
			}
			if (s[pos] != ',') {
				return V_BAD;
			}
			pos++;
		}
	} else {
		r = read_freq(s, end, &pos, &lf->freq_max_mhz);
		if (r != V_OK) {
			return r;
		}
		lf->has_freq = true;
	}
	if (!at_word_end(s, end, pos)) {
		return V_BAD;
	}
	*ret_pos = pos;
	return V_OK;
}

/* ---- timestamp ---- */

static int
two_digits(const char *s)
{
	return (s[0] - '0') * 10 + (s[1] - '0');
}

static bool
leap_year(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* "MM-DD-YYYY HH:MM:SS" at POS (line start, month first). */
int
ts_parse_stamp(struct parser *p, size_t pos, struct tegrastats_stamp *st, size_t *next)
{
	static const char shape[] = "00-00-0000 00:00:00";
	static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	const char *s = p->s + pos;
	size_t n = sizeof(shape) - 1;
	if (p->len - pos < n || (p->len - pos > n && !is_blank(s[n]))) {
		return fail(p, "bad timestamp, expected MM-DD-YYYY HH:MM:SS");
	}
	for (size_t k = 0; k < n; k++) {
		if (shape[k] == '0' ? !text_is_digit(s[k]) : s[k] != shape[k]) {
			return fail(p, "bad timestamp, expected MM-DD-YYYY HH:MM:SS");
		}
	}
	struct tegrastats_stamp t = {
		.present = true,
		.month = two_digits(s),
		.day = two_digits(s + 3),
		.year = two_digits(s + 6) * 100 + two_digits(s + 8),
		.hour = two_digits(s + 11),
		.minute = two_digits(s + 14),
		.second = two_digits(s + 17),
	};
	if (t.month < 1 || t.month > 12 || t.year < 1900 || t.day < 1 ||
	    t.day > mdays[t.month - 1] + (t.month == 2 && leap_year(t.year)) || t.hour > 23 || t.minute > 59 ||
	    t.second > 60) {
		return fail(p, "timestamp out of range");
	}
	*st = t;
	*next = pos + n;
	return 0;
}
