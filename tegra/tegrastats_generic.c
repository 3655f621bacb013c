/*
 * tegrastats parser, generic part: a NAME that is no known token, read by
 * the shape of its value (tegrastats.c has the grammar). `off`, `<MHz>`,
 * `X%`, `X%@MHz`, `X%@[..]` or `@[..]` is an engine; `a/b`, `amW/bmW` or
 * JetPack 7's `amW/bmW/cmW` a power rail.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tegrastats_priv.h"

enum shape {
	SHAPE_OFF,
	SHAPE_INT,
	SHAPE_LOAD_FREQ,
	SHAPE_RAIL
};

/* Reads the value at *POS (to the end of its word) and tells its shape. */
static int
classify(const char *s, size_t end, size_t *pos, enum shape *shape, struct load_freq *lf, struct rail_values *rv)
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
		return ts_read_load_freq(s, end, pos, lf);
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
		return ts_read_load_freq(s, end, pos, lf);
	}
	if (s[i] == '/' || s[i] == 'm') {
		*shape = SHAPE_RAIL;
		return read_rail(s, end, pos, rv);
	}
	return V_BAD;
}

static int
emit_engine(struct parser *p, const char *name, size_t len, enum shape shape, const struct load_freq *lf)
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

/*
 * JetPack 3-6 print current/average, JetPack 7 current/average/maximum
 * (since tegrastats started; successive captures show the first moving,
 * the second the mean so far, the third never below an earlier first).
 * A triple that breaks current <= maximum or average <= maximum is still
 * emitted as printed and not counted as an error: if tegrastats updates
 * its maximum before or after reading the current value, a new peak shows
 * exactly so, and dropping it would drop the current power - the value
 * energy.RAIL.joules_total integrates - at the peaks. A reordered format
 * would break the rule on most lines, not on a few; the unit tests and the
 * field order in the docs are where that shows.
 */
static int
emit_rail(struct parser *p, const char *name, size_t len, const struct rail_values *rv)
{
	if (len == 2 && name[0] == 'N' && name[1] == 'C') {
		return 0; /* unconnected INA3221 channel */
	}
	char buf[NAME_BUF];
	memcpy(buf, "power.", 6);
	size_t n = append_lower(buf, 6, name, len);
	if (put_sfx(p, buf, n, &sfx_mw, rv->mw[0]) < 0 || put_sfx(p, buf, n, &sfx_avg_mw, rv->mw[1]) < 0) {
		return -1;
	}
	return rv->n == 3 ? put_sfx(p, buf, n, &sfx_max_mw, rv->mw[2]) : 0;
}

/*
 * A rail's value, read. Cuts: a last "a/b" in a line whose rails have
 * three values is "a/b/c" cut off. A lone "amW" is skipped and counted as
 * unknown: no JetPack is known to print it, and it could only be guessed
 * to be the current power. Last in the line it is "amW/bmW" cut off,
 * unless the line already had one (a format of lone values).
 */
static int
parse_rail(struct parser *p, size_t ws, size_t len, const struct rail_values *rv, bool at_end)
{
	const char *name = p->s + ws;
	if (rv->n == 1) {
		if (at_end && !p->rail1_seen) {
			return fail_named(p, ws, "value cut off", name, len);
		}
		p->rail1_seen = true;
		return TOK_UNKNOWN_PAIR;
	}
	if (rv->n == 3) {
		p->rail3_seen = true;
	} else if (at_end && p->rail3_seen) {
		return fail_named(p, ws, "value cut off", name, len);
	}
	return emit_rail(p, name, len, rv) < 0 ? TOK_ERROR : TOK_OK;
}

int
ts_parse_generic(struct parser *p, size_t ws, size_t we, size_t vs, size_t *next)
{
	const char *s = p->s;
	const char *name = s + ws;
	size_t len = we - ws;
	enum shape shape = SHAPE_OFF;
	struct load_freq lf;
	struct rail_values rv = {{0, 0, 0}, 0}; /* read only for SHAPE_RAIL; gcc cannot tell */
	size_t ve = vs;
	int r = classify(s, p->len, &ve, &shape, &lf, &rv);
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
		return parse_rail(p, ws, len, &rv, at_end);
	}
	if (shape == SHAPE_INT && at_end && !word_is(name, len, LIT("APE"))) {
		/*
		 * The line may be cut: "VDD_IN 4915" from "VDD_IN 4915/4915",
		 * "NVDEC 40" from "NVDEC 40%@115". Only APE is always bare MHz.
		 */
		if (ts_rail_like(name, len)) {
			return fail_named(p, ws, "value cut off", name, len);
		}
		return TOK_UNKNOWN_PAIR;
	}
	return emit_engine(p, name, len, shape, &lf) < 0 ? TOK_ERROR : TOK_OK;
}
