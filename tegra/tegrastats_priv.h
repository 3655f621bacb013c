/*
 * Internals of the tegrastats parser, shared by its parts: the scanner
 * (tegrastats_lex.h/.c), the grammar (tegrastats.c: tokens and the
 * metrics they give; tegrastats_generic.c: engines and rails) and the
 * naming (tegrastats_names.c). Here: the
 * parser state with its first error, and the inline metric output. Not a
 * public API.
 */
#ifndef TEGRAWATCH_TEGRASTATS_PRIV_H
#define TEGRAWATCH_TEGRASTATS_PRIV_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tegrastats.h"
#include "tegrastats_lex.h"

#define MAX_NAME_LEN 40 /* longest token name we turn into a metric */

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
	bool rail3_seen; /* an "a/b/c" rail (JetPack 7): this line's rails have three values */
	bool rail1_seen; /* a lone "amW" rail was skipped: this line's rails may have one value */
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

/* Records the first error; always returns -1 so callers can `return fail()`. */
static inline int
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

static inline int
fail(struct parser *p, const char *msg)
{
	return fail_named(p, p->tok, msg, NULL, 0);
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

#define SUFFIX(s)                                                                                                      \
	{                                                                                                              \
		s, sizeof(s) - 1                                                                                       \
	}

static const struct suffix sfx_on = SUFFIX(".on");
static const struct suffix sfx_online = SUFFIX(".online");
static const struct suffix sfx_load = SUFFIX(".load_pct");
static const struct suffix sfx_freq = SUFFIX(".freq_mhz");
static const struct suffix sfx_mw = SUFFIX(".mw");
static const struct suffix sfx_avg_mw = SUFFIX(".avg_mw");
static const struct suffix sfx_max_mw = SUFFIX(".max_mw");
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
#define PUT_LIT(p, lit, value) put_whole(p, (const char[METRIC_NAME_MAX]){lit}, sizeof(lit) - 1, value)

/* BUF holds a name of LEN bytes (< METRIC_NAME_MAX - 15) and has NAME_BUF room. */
static inline int
put_sfx(struct parser *p, char *buf, size_t len, const struct suffix *sfx, double value)
{
	memcpy(buf + len, sfx->text, sizeof(sfx->text));
	return put_whole(p, buf, len + sfx->len, value);
}

/* Appends NAME lower-cased; MAX_NAME_LEN bounds it. */
static inline size_t
append_lower(char *buf, size_t at, const char *name, size_t len)
{
	for (size_t k = 0; k < len; k++) {
		buf[at + k] = to_lower(name[k]);
	}
	return at + len;
}

static inline size_t
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

static inline size_t
word_end(const struct parser *p, size_t pos)
{
	while (pos < p->len && !is_blank(p->s[pos])) {
		pos++;
	}
	return pos;
}

static inline size_t
skip_blanks(const struct parser *p, size_t pos)
{
	while (pos < p->len && is_blank(p->s[pos])) {
		pos++;
	}
	return pos;
}

/* Next word after *POS into [*ws, *we); false at the end of the line. */
static inline bool
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

static inline int
fail_value(struct parser *p, int r, const char *cut_msg, const char *bad_msg, const char *range_msg)
{
	return fail(p, r == V_SHORT ? cut_msg : r == V_RANGE ? range_msg : bad_msg);
}

/* What parse_token() did with the word. */
enum tok_result {
	TOK_OK = 0,
	TOK_UNKNOWN = 1,      /* a word that starts an unknown token */
	TOK_UNKNOWN_WORD = 2, /* a word that cannot start a token */
	TOK_UNKNOWN_PAIR = 3, /* an unknown NAME VALUE pair, both skipped */
	TOK_ERROR = -1,
};

/* Generic NAME VALUE tokens (tegrastats_generic.c) */

/**
 * NAME at [ws, we) and its value from VS: an engine or a power rail. A
 * tok_result; *NEXT is past the value when the value was read.
 */
int ts_parse_generic(struct parser *p, size_t ws, size_t we, size_t vs, size_t *next);

/* Timestamp (tegrastats_lex.c) */

/** "MM-DD-YYYY HH:MM:SS" at POS; 0, or -1 after recording the error in P. */
int ts_parse_stamp(struct parser *p, size_t pos, struct tegrastats_stamp *st, size_t *next);

/* Naming (tegrastats_names.c) */

/** True for power rail names, whose value is never a single number. */
bool ts_rail_like(const char *s, size_t len);

#endif
