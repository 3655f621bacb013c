/*
 * tegrastats line parser.
 *
 * The line is read word by word (words are separated by blanks). A word
 * holding "NAME@<digit or ->" is a temperature; a word that is a known token
 * name (RAM, CPU, GR3D_FREQ, ...) is parsed strictly by its own grammar; any
 * other upper-case NAME is classified by the shape of the following word:
 * `a/b` or `amW/bmW[/cmW]` is a power rail, `off`, `<MHz>`, `X%`, `X%@MHz`,
 * `X%@[..]` or `@[..]` an engine. Whatever fits nothing is skipped and
 * counted. Positions never matter.
 *
 * Values that stop short at the end of the line ("VDD_IN 4915mW/") make the
 * line an error, so a truncated paste never yields half a sample.
 *
 * Hot path rules: no allocation, no snprintf/strtod; numbers are read by
 * hand (mantissa / power of ten, correctly rounded for up to 15 digits) and
 * metric names are assembled with memcpy.
 */
#include "tegrastats.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define MAX_CPUS 64
#define MAX_FREQS 16       /* entries in an @[f,f,...] list */
#define MAX_NAME_LEN 40    /* longest token name we turn into a metric */
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

struct gpu_state {
	bool seen;
	struct load_freq gr3d;
	bool has_gr3d2_freq;
	double gr3d2_freq_mhz;
};

struct parser {
	const char *s;
	size_t len;
	struct metric_set *out;
	size_t tok; /* start of the token being parsed, for error columns */
	unsigned tokens, unknown;
	bool in_unknown; /* skipping the words of an unknown token */
	bool jp7_shape;  /* a "T1C/T2C" temperature or an "a/b/c" rail was seen */
	/* CPU mean, emitted once at the end */
	bool has_cpu;
	unsigned cpu_online;
	double cpu_load_sum;
	struct gpu_state gpu;
	/* first error */
	bool failed;
	size_t err_pos;
	const char *err_msg;
	const char *err_name;
	size_t err_name_len;
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

#define CLASS_OF(c)                                                                         \
	((c) >= '0' && (c) <= '9'                                  ? C_DIGIT :              \
	 ((c) >= 'A' && (c) <= 'Z') || ((c) >= 'a' && (c) <= 'z') ? C_ALPHA :              \
	 (c) == '_'                                                ? C_UNDER :              \
	 (c) == '-'                                                ? C_DASH :               \
	 (c) == ' ' || (c) == '\t'                                 ? C_BLANK :              \
	 (c) == '@'                                                ? C_AT :                 \
								     C_OTHER)
#define CLASS_4(c) CLASS_OF(c), CLASS_OF((c) + 1), CLASS_OF((c) + 2), CLASS_OF((c) + 3)
#define CLASS_16(c) CLASS_4(c), CLASS_4((c) + 4), CLASS_4((c) + 8), CLASS_4((c) + 12)
#define CLASS_64(c) CLASS_16(c), CLASS_16((c) + 16), CLASS_16((c) + 32), CLASS_16((c) + 48)

static const unsigned char char_class[256] = { CLASS_64(0), CLASS_64(64), CLASS_64(128),
					       CLASS_64(192) };

static inline unsigned
class_of(char c)
{
	return char_class[(unsigned char)c];
}

static inline bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
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

static bool
word_is(const char *s, size_t len, const char *lit, size_t lit_len)
{
	return len == lit_len && memcmp(s, lit, len) == 0;
}

static bool
has_prefix(const char *s, size_t len, const char *lit, size_t lit_len)
{
	return len >= lit_len && memcmp(s, lit, lit_len) == 0;
}

/* Records the first error; always returns -1 so callers can `return fail()`. */
static int
fail_named(struct parser *p, size_t pos, const char *msg, const char *name, size_t name_len)
{
	if (!p->failed) {
		p->failed = true;
		p->err_pos = pos;
		p->err_msg = msg;
		p->err_name = name;
		p->err_name_len = name_len;
	}
	return -1;
}

static int
fail(struct parser *p, const char *msg)
{
	return fail_named(p, p->tok, msg, NULL, 0);
}

/* ---- value readers: all work inside [*pos, end), end = end of the word ---- */

#define MAX_DIGITS 15 /* exact in a double */

/* 10^k for k <= MAX_DIGITS; exact as doubles too */
static const uint64_t pow10_tab[] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
	1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
	100000000000000ull, 1000000000000000ull,
};

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
	return ((w & pairs) * (100 + (1000000ull << 32)) +
		((w >> 16) & pairs) * (1 + (10000ull << 32))) >> 32;
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
	while (i < lim && is_digit(s[i])) {
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

/* -?digits(.digits)? with at most MAX_DIGITS digits in all. */
static int
read_decimal(const char *s, size_t end, size_t *pos, double *ret)
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

static int
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

static int
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

static int
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

/*
 * One of "X%", "X%@f", "X%@[f,...]", "@[f,...]" up to the end of the word.
 * A list is kept entry by entry (GPCs); freq_max_mhz is its highest.
 *
 * The readers below take END = end of the line and stop at a blank, so a
 * value is scanned once; V_SHORT therefore always means "cut off".
 */
static int
read_load_freq(const char *s, size_t end, size_t *ret_pos, struct load_freq *lf)
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

/* "a/b", "amW/bmW" or "amW/bmW/cmW" up to the end of the word. */
static int
read_rail(const char *s, size_t end, size_t *ret_pos, double *cur_mw, double *avg_mw,
	  unsigned *ret_n)
{
	size_t pos = *ret_pos;
	double v[3];
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
	if (n < 2) {
		return pos == end ? V_SHORT : V_BAD;
	}
	*ret_pos = pos;
	*ret_n = n;
	*cur_mw = v[0];
	*avg_mw = v[n - 1]; /* JetPack 7: cur/?/avg */
	return V_OK;
}

/* "kB", "MB", "GB" or "B": the size of the unit in KiB. */
static int
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

/* ---- metric output ---- */

/*
 * Metric names are assembled in a NAME_BUF buffer: a constant prefix, the
 * token's name (lower-cased) and a suffix copied as a fixed 16-byte block,
 * so the compiler inlines every copy (variable-length memcpy calls were a
 * third of the parse time).
 */
#define NAME_BUF (METRIC_NAME_MAX + 16)

struct suffix {
	char text[16];
	size_t len;
};

#define SUFFIX(s) { s, sizeof(s) - 1 }

static const struct suffix sfx_on = SUFFIX(".on");
static const struct suffix sfx_online = SUFFIX(".online");
static const struct suffix sfx_load = SUFFIX(".load_pct");
static const struct suffix sfx_freq = SUFFIX(".freq_mhz");
static const struct suffix sfx_mw = SUFFIX(".mw");
static const struct suffix sfx_avg_mw = SUFFIX(".avg_mw");
static const struct suffix sfx_c = SUFFIX("_c");

/* BUF has at least METRIC_NAME_MAX bytes: the whole-word put applies. */
static inline int
put_whole(struct parser *p, const char *buf, size_t len, double value)
{
	int r = metric_set_put_buf(p->out, buf, len, value);
	if (r < 0) {
		return fail(p, r == -ENOSPC ? "too many metrics in one line" : "bad metric name");
	}
	return 0;
}

/* the literal padded to a whole name buffer, for metric_set_put_buf() */
#define PUT_LIT(p, lit, value) put_whole(p, (const char[METRIC_NAME_MAX]){ lit }, sizeof(lit) - 1, value)

/* BUF holds a name of LEN bytes (< METRIC_NAME_MAX - 15) and has NAME_BUF room. */
static inline int
put_sfx(struct parser *p, char *buf, size_t len, const struct suffix *sfx, double value)
{
	memcpy(buf + len, sfx->text, sizeof(sfx->text));
	return put_whole(p, buf, len + sfx->len, value);
}

/* Appends NAME lower-cased; MAX_NAME_LEN bounds it. */
static size_t
append_lower(char *buf, size_t at, const char *name, size_t len)
{
	for (size_t k = 0; k < len; k++) {
		buf[at + k] = to_lower(name[k]);
	}
	return at + len;
}

static size_t
fmt_uint(char *buf, unsigned v)
{
	char tmp[12];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++) {
		buf[i] = tmp[n - 1 - i];
	}
	return n;
}

/* ---- words ---- */

static size_t
word_end(const struct parser *p, size_t pos)
{
	while (pos < p->len && !is_blank(p->s[pos])) {
		pos++;
	}
	return pos;
}

static size_t
skip_blanks(const struct parser *p, size_t pos)
{
	while (pos < p->len && is_blank(p->s[pos])) {
		pos++;
	}
	return pos;
}

/* Next word after *POS into [*ws, *we); false at the end of the line. */
static bool
take_word(const struct parser *p, size_t *pos, size_t *ws, size_t *we)
{
	size_t i = skip_blanks(p, *pos);
	if (i == p->len) {
		return false;
	}
	*ws = i;
	*we = word_end(p, i);
	*pos = *we;
	return true;
}

static int
fail_value(struct parser *p, int r, const char *cut_msg, const char *bad_msg,
	   const char *range_msg)
{
	return fail(p, r == V_SHORT ? cut_msg : r == V_RANGE ? range_msg : bad_msg);
}

/* ---- memory: RAM, SWAP, IRAM ---- */

enum mem_kind { MEM_RAM, MEM_SWAP, MEM_IRAM };

/*
 * "(KEY N[xS]UNIT)" starting at *pos, possibly glued to the value before it
 * ("252kB(lfb 252kB)"). The size goes to *ret_kb.
 */
static int
read_group(const struct parser *p, size_t *pos, const char *key, size_t key_len,
	   double *ret_kb)
{
	const char *s = p->s;
	size_t end = p->len;
	size_t i = *pos;
	int r = expect(s, end, &i, LIT("("));
	if (r == V_OK) {
		r = expect(s, end, &i, key, key_len);
	}
	if (r != V_OK) {
		return r;
	}
	if (i == end) {
		return V_SHORT;
	}
	if (!is_blank(s[i])) {
		return V_BAD;
	}
	i = skip_blanks(p, i);
	uint64_t n;
	r = read_uint(s, end, &i, &n);
	if (r == V_OK && i < end && s[i] == 'x') {
		i++;
		r = read_uint(s, end, &i, &n);
	}
	double unit_kb = 0;
	if (r == V_OK) {
		r = read_unit(s, end, &i, &unit_kb);
	}
	if (r == V_OK) {
		r = expect(s, end, &i, LIT(")"));
	}
	if (r == V_OK && !at_word_end(s, end, i)) {
		r = V_BAD;
	}
	if (r == V_OK) {
		*pos = i;
		*ret_kb = (double)n * unit_kb;
	}
	return r;
}

/* NAME used/totalUNIT [(lfb ..)|(cached ..)]; the value starts at POS. */
static int
parse_memory(struct parser *p, size_t pos, size_t *next, enum mem_kind kind)
{
	static const char *const cut_msg[] = { "RAM value cut off", "SWAP value cut off",
					       "IRAM value cut off" };
	static const char *const bad_msg[] = { "bad RAM value", "bad SWAP value",
					       "bad IRAM value" };
	const char *s = p->s;
	size_t end = p->len;
	uint64_t used, total;
	double unit_kb = 0;
	size_t i = pos;
	int r = read_uint(s, end, &i, &used);
	if (r == V_OK) {
		r = expect(s, end, &i, LIT("/"));
	}
	if (r == V_OK) {
		r = read_uint(s, end, &i, &total);
	}
	if (r == V_OK) {
		r = read_unit(s, end, &i, &unit_kb);
	}
	if (r == V_OK && !at_word_end(s, end, i) && s[i] != '(') {
		r = V_BAD;
	}
	if (r != V_OK) {
		return fail_value(p, r, cut_msg[kind], bad_msg[kind], bad_msg[kind]);
	}
	/* the group may be glued to the value or follow after a blank */
	size_t q = skip_blanks(p, i);
	double group_kb = 0;
	bool has_group = false;
	if (q < end && s[q] == '(') {
		i = q;
		if (kind == MEM_SWAP) {
			r = read_group(p, &i, LIT("cached"), &group_kb);
		} else {
			r = read_group(p, &i, LIT("lfb"), &group_kb);
		}
		if (r != V_OK) {
			return fail_value(p, r,
					  kind == MEM_SWAP ? "unterminated (cached ..) group" :
							     "unterminated (lfb ..) group",
					  "bad memory group", "bad memory group");
		}
		has_group = true;
	}
	double used_kb = (double)used * unit_kb;
	double total_kb = (double)total * unit_kb;
	int e;
	switch (kind) {
	case MEM_RAM:
		e = PUT_LIT(p, "ram.used_mb", used_kb / 1024.0);
		if (e == 0) {
			e = PUT_LIT(p, "ram.total_mb", total_kb / 1024.0);
		}
		break;
	case MEM_SWAP:
		e = PUT_LIT(p, "swap.used_mb", used_kb / 1024.0);
		if (e == 0) {
			e = PUT_LIT(p, "swap.total_mb", total_kb / 1024.0);
		}
		if (e == 0 && has_group) {
			e = PUT_LIT(p, "swap.cached_mb", group_kb / 1024.0);
		}
		break;
	default:
		e = PUT_LIT(p, "iram.used_kb", used_kb);
		if (e == 0) {
			e = PUT_LIT(p, "iram.total_kb", total_kb);
		}
		break;
	}
	*next = i;
	return e;
}

/* ---- CPU ---- */

struct cpu_entry {
	bool online, has_freq;
	double load_pct, freq_mhz;
};

/* "[e,e,...]" or "[e,...]@f", e = "off" | "X%" | "X%@f", to the word end. */
static int
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

static int
parse_cpu(struct parser *p, size_t pos, size_t *next)
{
	struct cpu_entry cpus[MAX_CPUS];
	unsigned n = 0;
	int r = read_cpu_list(p->s, p->len, &pos, cpus, &n);
	if (r != V_OK) {
		return fail_value(p, r, "unterminated CPU list", "bad CPU list entry",
				  "CPU value out of range");
	}
	p->has_cpu = true;
	p->cpu_online = 0;
	p->cpu_load_sum = 0;
	char buf[NAME_BUF];
	memcpy(buf, "cpu.", 4);
	for (unsigned k = 0; k < n; k++) {
		size_t len = 4 + fmt_uint(buf + 4, k);
		if (put_sfx(p, buf, len, &sfx_online, cpus[k].online ? 1 : 0) < 0) {
			return -1;
		}
		if (!cpus[k].online) {
			continue;
		}
		p->cpu_online++;
		p->cpu_load_sum += cpus[k].load_pct;
		if (put_sfx(p, buf, len, &sfx_load, cpus[k].load_pct) < 0) {
			return -1;
		}
		if (cpus[k].has_freq && put_sfx(p, buf, len, &sfx_freq, cpus[k].freq_mhz) < 0) {
			return -1;
		}
	}
	*next = pos;
	return 0;
}

/* ---- MTS fg X% bg Y%, EDP limit N ---- */

static int
parse_words(struct parser *p, size_t pos, size_t *next, const char *const *keys,
	    unsigned nkeys, double *vals, bool pct, const char *cut_msg, const char *bad_msg)
{
	for (unsigned k = 0; k < nkeys; k++) {
		size_t ws, we;
		if (!take_word(p, &pos, &ws, &we)) {
			return fail(p, cut_msg);
		}
		if (!word_is(p->s + ws, we - ws, keys[k], strlen(keys[k]))) {
			return fail(p, we == p->len ? cut_msg : bad_msg);
		}
		if (!take_word(p, &pos, &ws, &we)) {
			return fail(p, cut_msg);
		}
		size_t i = ws;
		int r = pct ? read_pct(p->s, we, &i, &vals[k]) : read_freq(p->s, we, &i, &vals[k]);
		if (r == V_OK && i != we) {
			r = V_BAD;
		}
		if (r == V_SHORT && we != p->len) {
			r = V_BAD;
		}
		if (r != V_OK) {
			return fail_value(p, r, cut_msg, bad_msg, "value out of range");
		}
	}
	*next = pos;
	return 0;
}

static int
parse_mts(struct parser *p, size_t pos, size_t *next)
{
	static const char *const keys[] = { "fg", "bg" };
	double v[2];
	if (parse_words(p, pos, next, keys, 2, v, true, "MTS token cut off", "bad MTS token") < 0) {
		return -1;
	}
	if (PUT_LIT(p, "mts.fg_pct", v[0]) < 0) {
		return -1;
	}
	return PUT_LIT(p, "mts.bg_pct", v[1]);
}

static int
parse_edp(struct parser *p, size_t pos, size_t *next)
{
	static const char *const keys[] = { "limit" };
	double v;
	if (parse_words(p, pos, next, keys, 1, &v, false, "EDP token cut off", "bad EDP token") < 0) {
		return -1;
	}
	return PUT_LIT(p, "cpu.edp_limit_mhz", v);
}

/* ---- temperatures: NAME@T C, NAME@T1C/T2C ---- */

static bool
temp_ok(double t)
{
	return t == TEMP_OFFLINE_C || (t >= MIN_TEMP_C && t <= MAX_TEMP_C);
}

static int
read_temp(const char *s, size_t end, size_t i, double *ret_c, bool *ret_pair)
{
	*ret_pair = false;
	double t, t2;
	int r = read_decimal(s, end, &i, &t);
	if (r == V_OK) {
		r = expect(s, end, &i, LIT("C"));
	}
	if (r == V_OK && i < end) {
		/* JetPack 7: a second reading; the first one counts */
		r = expect(s, end, &i, LIT("/"));
		if (r == V_OK) {
			r = read_decimal(s, end, &i, &t2);
		}
		if (r == V_OK) {
			r = expect(s, end, &i, LIT("C"));
		}
		if (r == V_OK && !temp_ok(t2)) {
			r = V_RANGE;
		}
		*ret_pair = true;
	}
	if (r == V_OK && i != end) {
		r = V_BAD;
	}
	if (r == V_OK && !temp_ok(t)) {
		r = V_RANGE;
	}
	if (r == V_OK) {
		*ret_c = t;
	}
	return r;
}

static int
parse_temp(struct parser *p, size_t ws, size_t at, size_t we)
{
	double t;
	bool pair;
	int r = read_temp(p->s, we, at + 1, &t, &pair);
	if (r == V_SHORT && we != p->len) {
		r = V_BAD;
	}
	if (r != V_OK) {
		return fail_value(p, r, "temperature cut off", "bad temperature",
				  "temperature out of range");
	}
	p->jp7_shape |= pair;
	char buf[NAME_BUF];
	memcpy(buf, "temp.", 5);
	size_t n = tegra_sensor_name(p->s + ws, at - ws, buf + 5, MAX_NAME_LEN + 1);
	if (n == 0 || tegra_sensor_is_placeholder(buf + 5) || t == TEMP_OFFLINE_C) {
		return 0; /* absent means absent */
	}
	return put_sfx(p, buf, 5 + n, &sfx_c, t);
}

/* ---- GPU, EMC ---- */

static int
parse_gpu(struct parser *p, size_t pos, size_t *next, bool second_gpc)
{
	struct load_freq lf;
	int r = read_load_freq(p->s, p->len, &pos, &lf);
	if (r != V_OK) {
		return fail_value(p, r, "GR3D_FREQ value cut off", "bad GR3D_FREQ value",
				  "GR3D_FREQ value out of range");
	}
	p->gpu.seen = true;
	if (!second_gpc) {
		p->gpu.gr3d = lf;
	} else if (lf.has_freq) {
		/* a GR3D2 percentage never replaces the GR3D_FREQ one */
		p->gpu.has_gr3d2_freq = true;
		p->gpu.gr3d2_freq_mhz = lf.freq_max_mhz;
	}
	*next = pos;
	return 0;
}

static int
parse_emc(struct parser *p, size_t pos, size_t *next)
{
	struct load_freq lf;
	int r = read_load_freq(p->s, p->len, &pos, &lf);
	if (r != V_OK) {
		return fail_value(p, r, "EMC_FREQ value cut off", "bad EMC_FREQ value",
				  "EMC_FREQ value out of range");
	}
	if (lf.has_load && PUT_LIT(p, "emc.load_pct", lf.load_pct) < 0) {
		return -1;
	}
	if (lf.has_freq && PUT_LIT(p, "emc.freq_mhz", lf.freq_max_mhz) < 0) {
		return -1;
	}
	*next = pos;
	return 0;
}

/*
 * GPU metrics once the whole line is read, since GR3D_FREQ and GR3D2_FREQ
 * may come in any order. gpu.freq_mhz is the highest GPC, and only when the
 * first GPC's clock is known (non-root "GR3D_FREQ 0% GR3D2_FREQ 0%@0" gives
 * gpc.1 alone: its 0 says nothing about GPC 0).
 */
static int
finish_gpu(struct parser *p)
{
	const struct gpu_state *g = &p->gpu;
	const struct load_freq *lf = &g->gr3d;
	if (!g->seen) {
		return 0;
	}
	if (lf->has_load && PUT_LIT(p, "gpu.load_pct", lf->load_pct) < 0) {
		return -1;
	}
	double max_mhz = lf->freq_max_mhz;
	unsigned ngpc = 0;
	if (lf->is_list) {
		char buf[NAME_BUF];
		memcpy(buf, "gpu.gpc.", 8);
		for (unsigned k = 0; k < lf->nfreq; k++) {
			size_t len = 8 + fmt_uint(buf + 8, k);
			if (put_sfx(p, buf, len, &sfx_freq, lf->freq_mhz[k]) < 0) {
				return -1;
			}
		}
		ngpc = lf->nfreq;
	} else if (lf->has_freq && g->has_gr3d2_freq) {
		if (PUT_LIT(p, "gpu.gpc.0.freq_mhz", lf->freq_max_mhz) < 0) {
			return -1;
		}
		ngpc = 1;
	}
	if (g->has_gr3d2_freq && ngpc < 2) {
		if (PUT_LIT(p, "gpu.gpc.1.freq_mhz", g->gr3d2_freq_mhz) < 0) {
			return -1;
		}
		if (g->gr3d2_freq_mhz > max_mhz) {
			max_mhz = g->gr3d2_freq_mhz;
		}
	}
	if (lf->has_freq && PUT_LIT(p, "gpu.freq_mhz", max_mhz) < 0) {
		return -1;
	}
	return 0;
}

/* ---- generic NAME VALUE: engines and power rails ---- */

enum shape { SHAPE_OFF, SHAPE_INT, SHAPE_LOAD_FREQ, SHAPE_RAIL };

/* Reads the value at *POS (to the end of its word) and tells its shape. */
static int
classify(const char *s, size_t end, size_t *pos, enum shape *shape, struct load_freq *lf,
	 double *cur_mw, double *avg_mw, unsigned *nvalues)
{
	size_t i = *pos;
	int r;
	if (s[i] == 'o') {
		*shape = SHAPE_OFF;
		r = expect(s, end, &i, LIT("off"));
		if (r == V_OK && !at_word_end(s, end, i)) {
			r = V_BAD;
		}
		if (r == V_OK) {
			*pos = i;
		}
		return r;
	}
	if (s[i] == '@') {
		*shape = SHAPE_LOAD_FREQ;
		return read_load_freq(s, end, pos, lf);
	}
	uint64_t v;
	r = read_uint(s, end, &i, &v);
	if (r != V_OK) {
		return r;
	}
	if (at_word_end(s, end, i)) {
		*shape = SHAPE_INT;
		lf->has_load = false;
		lf->has_freq = true;
		lf->is_list = false;
		lf->freq_max_mhz = (double)v;
		*pos = i;
		return (double)v > MAX_FREQ_MHZ ? V_RANGE : V_OK;
	}
	if (s[i] == '%') {
		*shape = SHAPE_LOAD_FREQ;
		return read_load_freq(s, end, pos, lf);
	}
	if (s[i] == '/' || s[i] == 'm') {
		*shape = SHAPE_RAIL;
		return read_rail(s, end, pos, cur_mw, avg_mw, nvalues);
	}
	return V_BAD;
}

static bool
has_any_prefix(const char *s, size_t len, const char *const *list)
{
	for (; *list; list++) {
		if (has_prefix(s, len, *list, strlen(*list))) {
			return true;
		}
	}
	return false;
}

/* Power rails, whose value is never a single number. */
static bool
rail_like(const char *s, size_t len)
{
	static const char *const names[] = { "VDD", "VIN", "POM_", NULL };
	return has_any_prefix(s, len, names) || word_is(s, len, LIT("NC")) ||
	       word_is(s, len, LIT("GPU")) || word_is(s, len, LIT("CPU")) ||
	       word_is(s, len, LIT("SOC")) || word_is(s, len, LIT("CV")) ||
	       word_is(s, len, LIT("SYS5V"));
}

static int
emit_engine(struct parser *p, const char *name, size_t len, enum shape shape,
	    const struct load_freq *lf)
{
	char buf[NAME_BUF];
	memcpy(buf, "engine.", 7);
	size_t n = append_lower(buf, 7, name, len);
	if (len > 5 && memcmp(buf + n - 5, "_freq", 5) == 0) {
		n -= 5;
	}
	if (put_sfx(p, buf, n, &sfx_on, shape == SHAPE_OFF ? 0 : 1) < 0) {
		return -1;
	}
	if (shape == SHAPE_OFF) {
		return 0;
	}
	if (lf->has_load && put_sfx(p, buf, n, &sfx_load, lf->load_pct) < 0) {
		return -1;
	}
	if (lf->has_freq && put_sfx(p, buf, n, &sfx_freq, lf->freq_max_mhz) < 0) {
		return -1;
	}
	return 0;
}

static int
emit_rail(struct parser *p, const char *name, size_t len, double cur_mw, double avg_mw)
{
	if (len == 2 && name[0] == 'N' && name[1] == 'C') {
		return 0; /* unconnected INA3221 channel */
	}
	char buf[NAME_BUF];
	memcpy(buf, "power.", 6);
	size_t n = append_lower(buf, 6, name, len);
	if (put_sfx(p, buf, n, &sfx_mw, cur_mw) < 0) {
		return -1;
	}
	return put_sfx(p, buf, n, &sfx_avg_mw, avg_mw);
}

/* What parse_token() did with the word. */
enum tok_result {
	TOK_OK = 0,
	TOK_UNKNOWN = 1,      /* a word that starts an unknown token */
	TOK_UNKNOWN_WORD = 2, /* a word that cannot start a token */
	TOK_UNKNOWN_PAIR = 3, /* an unknown NAME VALUE pair, both skipped */
	TOK_ERROR = -1,
};

static int
parse_generic(struct parser *p, size_t ws, size_t we, size_t vs, size_t *next)
{
	const char *s = p->s;
	const char *name = s + ws;
	size_t len = we - ws;
	enum shape shape = SHAPE_OFF;
	struct load_freq lf;
	double cur_mw = 0, avg_mw = 0;
	size_t ve = vs;
	unsigned nvalues = 0;
	int r = classify(s, p->len, &ve, &shape, &lf, &cur_mw, &avg_mw, &nvalues);
	bool at_end = ve == p->len;
	if (r == V_RANGE) {
		return fail_named(p, ws, "value out of range", name, len);
	}
	if (r == V_SHORT) {
		return fail_named(p, ws, "value cut off", name, len);
	}
	if (r != V_OK) {
		return TOK_UNKNOWN;
	}
	*next = ve;
	if (shape == SHAPE_RAIL) {
		/*
		 * JetPack 7 prints cur/?/avg: there a last "a/b" is "a/b/c" cut
		 * off, and b is not the average.
		 */
		if (nvalues == 3) {
			p->jp7_shape = true;
		} else if (at_end && p->jp7_shape) {
			return fail_named(p, ws, "value cut off", name, len);
		}
		return emit_rail(p, name, len, cur_mw, avg_mw) < 0 ? TOK_ERROR : TOK_OK;
	}
	if (shape == SHAPE_INT && at_end && !word_is(name, len, LIT("APE"))) {
		/*
		 * The line may be cut: "VDD_IN 4915" from "VDD_IN 4915/4915",
		 * "NVDEC 40" from "NVDEC 40%@115". Only APE is always bare MHz.
		 */
		if (rail_like(name, len)) {
			return fail_named(p, ws, "value cut off", name, len);
		}
		return TOK_UNKNOWN_PAIR;
	}
	return emit_engine(p, name, len, shape, &lf) < 0 ? TOK_ERROR : TOK_OK;
}

/*
 * A name of LEN bytes starting with a letter, whose characters' classes
 * (SEEN, or-ed while the word was scanned) are all in ALLOWED.
 */
static bool
name_ok(const char *s, size_t len, unsigned seen, unsigned allowed)
{
	return len > 0 && (class_of(s[0]) & C_ALPHA) && !(seen & ~allowed);
}

/* A known token name: dispatched before the generic rules. */
enum known {
	K_NONE,
	K_RAM,
	K_SWAP,
	K_IRAM,
	K_CPU,
	K_CPU_OLD,
	K_MTS,
	K_EDP,
	K_GR3D,
	K_GR3D2,
	K_EMC,
};

static enum known
known_token(const char *w, size_t wl)
{
	switch (w[0]) {
	case 'R':
		return word_is(w, wl, LIT("RAM")) ? K_RAM : K_NONE;
	case 'S':
		return word_is(w, wl, LIT("SWAP")) ? K_SWAP : K_NONE;
	case 'I':
		return word_is(w, wl, LIT("IRAM")) ? K_IRAM : K_NONE;
	case 'C':
		return word_is(w, wl, LIT("CPU")) ? K_CPU : K_NONE;
	case 'c':
		return word_is(w, wl, LIT("cpu")) ? K_CPU_OLD : K_NONE;
	case 'M':
		return word_is(w, wl, LIT("MTS")) ? K_MTS : K_NONE;
	case 'E':
		if (word_is(w, wl, LIT("EMC_FREQ")) || word_is(w, wl, LIT("EMC"))) {
			return K_EMC;
		}
		return word_is(w, wl, LIT("EDP")) ? K_EDP : K_NONE;
	case 'G':
		if (word_is(w, wl, LIT("GR3D_FREQ")) || word_is(w, wl, LIT("GR3D"))) {
			return K_GR3D;
		}
		return word_is(w, wl, LIT("GR3D2_FREQ")) ? K_GR3D2 : K_NONE;
	default:
		return K_NONE;
	}
}

static int
known_result(int r)
{
	return r < 0 ? TOK_ERROR : TOK_OK;
}

/*
 * The word [ws, we) with its first '@' at AT (or AT == we); SEEN is the
 * classes of the characters before AT.
 */
static int
parse_token(struct parser *p, size_t ws, size_t we, size_t at, unsigned seen, size_t *next)
{
	const char *s = p->s;
	const char *w = s + ws;
	size_t wl = we - ws;
	if (at < we) {
		if (at - ws > MAX_NAME_LEN ||
		    !name_ok(w, at - ws, seen, C_ALPHA | C_DIGIT | C_UNDER | C_DASH)) {
			return TOK_UNKNOWN;
		}
		if (at + 1 == we) {
			return fail(p, "temperature without value");
		}
		if (!is_digit(s[at + 1]) && s[at + 1] != '-') {
			return TOK_UNKNOWN;
		}
		return known_result(parse_temp(p, ws, at, we));
	}
	if (!name_ok(w, wl, seen, C_ALPHA | C_DIGIT | C_UNDER)) {
		return TOK_UNKNOWN_WORD;
	}
	size_t vs = skip_blanks(p, we);
	bool has_value = vs < p->len;
	enum known k = known_token(w, wl);
	if (k == K_CPU || k == K_CPU_OLD) {
		if (has_value && s[vs] == '[') {
			return known_result(parse_cpu(p, vs, next));
		}
		if (k == K_CPU_OLD) {
			return has_value ? TOK_UNKNOWN_WORD : fail(p, "CPU list missing");
		}
		/* "CPU 466/466" is a rail on AGX Xavier: generic below */
		k = K_NONE;
	} else if (!is_upper(w[0])) {
		return TOK_UNKNOWN_WORD;
	}
	if (!has_value) {
		return fail_named(p, ws, "value missing (line cut off?)", w, wl);
	}
	switch (k) {
	case K_RAM:
		return known_result(parse_memory(p, vs, next, MEM_RAM));
	case K_SWAP:
		return known_result(parse_memory(p, vs, next, MEM_SWAP));
	case K_IRAM:
		return known_result(parse_memory(p, vs, next, MEM_IRAM));
	case K_MTS:
		return known_result(parse_mts(p, we, next));
	case K_EDP:
		return known_result(parse_edp(p, we, next));
	case K_GR3D:
		return known_result(parse_gpu(p, vs, next, false));
	case K_GR3D2:
		return known_result(parse_gpu(p, vs, next, true));
	case K_EMC:
		return known_result(parse_emc(p, vs, next));
	default:
		break;
	}
	if (wl > MAX_NAME_LEN) {
		return TOK_UNKNOWN;
	}
	return parse_generic(p, ws, we, vs, next);
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
static int
parse_stamp(struct parser *p, size_t pos, struct tegrastats_stamp *st, size_t *next)
{
	static const char shape[] = "00-00-0000 00:00:00";
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	const char *s = p->s + pos;
	size_t n = sizeof(shape) - 1;
	if (p->len - pos < n || (p->len - pos > n && !is_blank(s[n]))) {
		return fail(p, "bad timestamp, expected MM-DD-YYYY HH:MM:SS");
	}
	for (size_t k = 0; k < n; k++) {
		if (shape[k] == '0' ? !is_digit(s[k]) : s[k] != shape[k]) {
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
	    t.day > mdays[t.month - 1] + (t.month == 2 && leap_year(t.year)) || t.hour > 23 ||
	    t.minute > 59 || t.second > 60) {
		return fail(p, "timestamp out of range");
	}
	*st = t;
	*next = pos + n;
	return 0;
}

/* ---- entry points ---- */

static void
copy_msg(char *dst, size_t size, size_t *at, const char *src, size_t len)
{
	size_t room = size - 1 - *at;
	if (len > room) {
		len = room;
	}
	memcpy(dst + *at, src, len);
	*at += len;
	dst[*at] = '\0';
}

static void
fill_error(const struct parser *p, struct parse_error *err)
{
	size_t at = 0;
	err->line = 0;
	err->column = (int)(p->err_pos < (size_t)INT32_MAX ? p->err_pos + 1 : INT32_MAX);
	err->msg[0] = '\0';
	copy_msg(err->msg, sizeof(err->msg), &at, p->err_msg, strlen(p->err_msg));
	if (p->err_name) {
		copy_msg(err->msg, sizeof(err->msg), &at, LIT(": "));
		copy_msg(err->msg, sizeof(err->msg), &at, p->err_name, p->err_name_len);
	}
}

int
tegrastats_parse_line(const char *line, size_t len, struct metric_set *out,
		      struct tegrastats_info *info, struct parse_error *err)
{
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || is_blank(line[len - 1]))) {
		len--;
	}
	struct parser p = { .s = line, .len = len, .out = out };

	struct tegrastats_stamp stamp = { .present = false };
	size_t pos = skip_blanks(&p, 0);
	if (pos < len && is_digit(line[pos])) {
		p.tok = pos;
		parse_stamp(&p, pos, &stamp, &pos);
	}
	while (!p.failed) {
		pos = skip_blanks(&p, pos);
		if (pos >= len) {
			break;
		}
		/* one pass finds the word's first '@' (or its end), then its end */
		size_t at = pos;
		unsigned seen = 0;
		while (at < len) {
			unsigned c = class_of(line[at]);
			if (c & (C_BLANK | C_AT)) {
				break;
			}
			seen |= c;
			at++;
		}
		size_t we = at;
		if (at < len && line[at] == '@') {
			while (we < len && !is_blank(line[we])) {
				we++;
			}
		}
		size_t next = we;
		p.tok = pos;
		int r = parse_token(&p, pos, we, at, seen, &next);
		switch (r) {
		case TOK_OK:
			p.tokens++;
			p.in_unknown = false;
			pos = next;
			break;
		case TOK_UNKNOWN_WORD:
			/* a stray word continues the unknown token before it */
			if (!p.in_unknown) {
				p.unknown++;
			}
			p.in_unknown = true;
			pos = we;
			break;
		case TOK_UNKNOWN_PAIR:
			p.unknown++;
			p.in_unknown = false;
			pos = next;
			break;
		case TOK_UNKNOWN:
			p.unknown++;
			p.in_unknown = true;
			pos = we;
			break;
		default:
			break;
		}
	}
	if (!p.failed && p.has_cpu && p.cpu_online > 0) {
		PUT_LIT(&p, "cpu.load_pct", p.cpu_load_sum / p.cpu_online);
	}
	if (!p.failed) {
		finish_gpu(&p);
	}
	if (!p.failed && p.tokens == 0) {
		fail_named(&p, 0, len == 0 ? "empty line" : "no tegrastats token in line", NULL, 0);
	}
	if (p.failed) {
		metric_set_clear(out);
		fill_error(&p, err);
		return -EINVAL;
	}
	info->stamp = stamp;
	info->tokens = p.tokens;
	info->unknown_tokens = p.unknown;
	return 0;
}

size_t
tegra_sensor_name(const char *name, size_t len, char *buf, size_t size)
{
	/* zone types carry these; tegrastats prints the part before them */
	static const struct suffix suffixes[] = {
		SUFFIX("-thermal"), SUFFIX("-therm"), SUFFIX("_tegra"), SUFFIX("-fan-est"), SUFFIX("-die"),
	};
	/* fast path: names as tegrastats prints them ("soc2", "CPU") */
	if (len < size) {
		size_t i = 0;
		for (; i < len; i++) {
			char c = to_lower(name[i]);
			if (!((c >= 'a' && c <= 'z') || is_digit(c))) {
				break;
			}
			buf[i] = c;
		}
		if (i == len && len > 0) {
			buf[len] = '\0';
			return len;
		}
	}
	for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
		size_t sl = suffixes[k].len;
		if (len <= sl) {
			continue;
		}
		bool match = true;
		for (size_t i = 0; i < sl; i++) {
			if (to_lower(name[len - sl + i]) != suffixes[k].text[i]) {
				match = false;
				break;
			}
		}
		if (match) {
			len -= sl;
			break;
		}
	}
	if (len == 0 || len >= size) {
		return 0;
	}
	bool usable = false;
	for (size_t i = 0; i < len; i++) {
		char c = to_lower(name[i]);
		if ((c >= 'a' && c <= 'z') || is_digit(c)) {
			usable = true;
		} else if (c != '_') {
			c = '_';
		}
		buf[i] = c;
	}
	buf[len] = '\0';
	return usable ? len : 0;
}

bool
tegra_sensor_is_placeholder(const char *normalised)
{
	return normalised[0] == 'p' && normalised[1] == 'm' && normalised[2] == 'i' &&
	       normalised[3] == 'c';
}
