/*
 * Threshold values of a rule: a plain number, or an expression on a value
 * the board reports ("passive_trip - 5", "ceiling * 0.9", "hot_trip or
 * 90"). A small lexer and a fixed-order parser, then the two checks that
 * read expressions: a reference fits the rule's metric, and warning comes
 * before critical.
 */
#include "threshold_expr.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/text.h"

static const struct {
	const char *name;
	enum threshold_ref ref;
} refs_by_name[] = {
	{"passive_trip", REF_PASSIVE_TRIP}, {"hot_trip", REF_HOT_TRIP}, {"critical_trip", REF_CRITICAL_TRIP},
	{"ceiling", REF_CEILING},           {"hw_max", REF_HW_MAX},
};
#define N_REFS (sizeof(refs_by_name) / sizeof(refs_by_name[0]))

/* REF as a rule writes it; "number" for REF_NONE. */
static const char *
threshold_ref_name(enum threshold_ref ref)
{
	for (size_t i = 0; i < N_REFS; i++) {
		if (refs_by_name[i].ref == ref) {
			return refs_by_name[i].name;
		}
	}
	return "number";
}

/* Expression tokens: a word, a number or one operator character. */
struct lexer {
	const char *s;
	size_t pos;
	char tok[CFG_SHOW_MAX];
	bool is_word, is_number;
	double number;
};

static bool
is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Reads the next token into lx->tok; returns false at the end. */
static bool
lex(struct lexer *lx)
{
	const char *s = lx->s;
	while (s[lx->pos] == ' ' || s[lx->pos] == '\t') {
		lx->pos++;
	}
	if (s[lx->pos] == '\0') {
		return false;
	}
	size_t start = lx->pos;
	char c = s[start];
	if (c == '*' || c == '+' || c == '-') {
		lx->pos++;
	} else if (is_word_char(c) || c == '.') {
		/* numbers may hold '.', and an exponent sign right after 'e' */
		while (is_word_char(s[lx->pos]) || s[lx->pos] == '.' ||
		       ((s[lx->pos] == '+' || s[lx->pos] == '-') && lx->pos > start &&
			(s[lx->pos - 1] == 'e' || s[lx->pos - 1] == 'E') && s[start] >= '0' && s[start] <= '9')) {
			lx->pos++;
		}
	} else {
		lx->pos++;
	}
	size_t len = lx->pos - start;
	char raw[CFG_SHOW_MAX * 2];
	snprintf(raw, sizeof(raw), "%.*s", (int)(len < sizeof(raw) - 1 ? len : sizeof(raw) - 1), s + start);
	cfg_show(raw, lx->tok, sizeof(lx->tok));
	lx->is_number = cfg_parse_number(raw, &lx->number);
	lx->is_word = !lx->is_number && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_');
	return true;
}

/*
 * "REF [* N] [+|- N] [or N]": writes *TH or reports (KEY: ...) at NODE.
 * A plain number never gets here.
 */
static int
parse_expression(struct cfg_decoder *dec, const struct cfg_node *node, const char *key, struct threshold *th)
{
	const char *text = node->value;
	char shown[CFG_SHOW_MAX];
	cfg_show(text, shown, sizeof(shown));
	struct lexer lx = {.s = text};
	struct threshold t = {.set = true, .scale = 1.0};

	if (!lex(&lx) || !lx.is_word) {
		cfg_report(dec, node, "%s: expected a number or an expression like 'passive_trip - 5 or 90', got '%s'",
			   key, shown);
		return -EINVAL;
	}
	size_t r = 0;
	while (r < N_REFS && strcmp(refs_by_name[r].name, lx.tok) != 0) {
		r++;
	}
	if (r == N_REFS) {
		const char *names[N_REFS];
		for (size_t i = 0; i < N_REFS; i++) {
			names[i] = refs_by_name[i].name;
		}
		const char *hint = cfg_suggest(lx.tok, names, N_REFS);
		if (hint) {
			cfg_report(dec, node, "%s: unknown reference '%s' in '%s' (did you mean '%s'?)", key, lx.tok,
				   shown, hint);
		} else {
			cfg_report(dec, node,
				   "%s: unknown reference '%s' in '%s' (use passive_trip, hot_trip, critical_trip, "
				   "ceiling or hw_max)",
				   key, lx.tok, shown);
		}
		return -EINVAL;
	}
	t.ref = refs_by_name[r].ref;

	/* optional parts, each at most once and in this order */
	enum {
		STEP_SCALE,
		STEP_OFFSET,
		STEP_FALLBACK
	};
	int step = STEP_SCALE;
	while (lex(&lx)) {
		char op[CFG_SHOW_MAX];
		snprintf(op, sizeof(op), "%s", lx.tok);
		int which;
		if (strcmp(op, "*") == 0 && step <= STEP_SCALE) {
			which = STEP_SCALE;
		} else if ((strcmp(op, "+") == 0 || strcmp(op, "-") == 0) && step <= STEP_OFFSET) {
			which = STEP_OFFSET;
		} else if (strcmp(op, "or") == 0 && step <= STEP_FALLBACK) {
			which = STEP_FALLBACK;
		} else {
			cfg_report(dec, node,
				   "%s: unexpected '%s' in '%s' (the form is: REFERENCE [* N] [+ N | - N] [or N])", key,
				   op, shown);
			return -EINVAL;
		}
		bool negative = false;
		bool got = lex(&lx);
		if (got && which == STEP_FALLBACK && strcmp(lx.tok, "-") == 0) {
			negative = true;
			got = lex(&lx);
		}
		if (!got || !lx.is_number) {
			cfg_report(dec, node, "%s: expected a number after '%s' in '%s'", key, op, shown);
			return -EINVAL;
		}
		double v = negative ? -lx.number : lx.number;
		if (which == STEP_SCALE) {
			if (!(v > 0)) {
				cfg_report(dec, node, "%s: the factor in '%s' must be greater than 0", key, shown);
				return -EINVAL;
			}
			t.scale = v;
		} else if (which == STEP_OFFSET) {
			t.offset = op[0] == '-' ? -v : v;
		} else {
			t.has_fallback = true;
			t.fallback = v;
		}
		step = which + 1;
	}
	*th = t;
	return 0;
}

int
threshold_decode(struct cfg_decoder *dec, const struct cfg_node *node, const char *key, struct threshold *th)
{
	char got[CFG_SHOW_MAX + 8];
	if (node->type != CFG_SCALAR || cfg_node_is_null(node)) {
		cfg_describe(node, got, sizeof(got));
		cfg_report(dec, node, "%s: expected a number or an expression like 'passive_trip - 5 or 90', got %s",
			   key, got);
		return -EINVAL;
	}
	double v;
	if (cfg_parse_number(node->value, &v)) {
		if (node->quoted) {
			char shown[CFG_SHOW_MAX];
			cfg_show(node->value, shown, sizeof(shown));
			cfg_report(dec, node, "%s: expected a number, got the string '%s' (write it without quotes)",
				   key, shown);
			return -EINVAL;
		}
		*th = (struct threshold){.set = true, .ref = REF_NONE, .scale = 1.0, .offset = v};
		return 0;
	}
	return parse_expression(dec, node, key, th);
}

/* TH written back as an expression ("ceiling * 0.9 - 5 or 1200"), for messages. */
static void
threshold_format(const struct threshold *th, char *buf, size_t size)
{
	char num[32];
	snprintf(num, sizeof(num), "%g", th->offset);
	if (th->ref == REF_NONE) {
		snprintf(buf, size, "%s", num);
		return;
	}
	size_t at = (size_t)snprintf(buf, size, "%s", threshold_ref_name(th->ref));
	if (th->scale != 1.0 && at < size) {
		at += (size_t)snprintf(buf + at, size - at, " * %g", th->scale);
	}
	if (th->offset != 0 && at < size) {
		at += (size_t)snprintf(buf + at, size - at, " %c %g", th->offset < 0 ? '-' : '+',
				       th->offset < 0 ? -th->offset : th->offset);
	}
	if (th->has_fallback && at < size) {
		snprintf(buf + at, size - at, " or %g", th->fallback);
	}
}

/* ---- checks ---- */

void
threshold_check_ref(struct cfg_decoder *dec, const struct cfg_node *node, const char *key, const struct threshold *th,
		    const char *metric)
{
	char shown[CFG_SHOW_MAX];
	cfg_show(metric, shown, sizeof(shown));
	switch (th->ref) {
	case REF_PASSIVE_TRIP:
	case REF_HOT_TRIP:
	case REF_CRITICAL_TRIP:
		if (!text_has_prefix(metric, "temp.") || !text_has_suffix(metric, "_c")) {
			cfg_report(dec, node, "%s: '%s' needs a temp.*_c metric, not '%s'", key,
				   threshold_ref_name(th->ref), shown);
		}
		break;
	case REF_CEILING:
	case REF_HW_MAX:
		if (!text_has_suffix(metric, ".freq_mhz")) {
			cfg_report(dec, node, "%s: '%s' needs a *.freq_mhz metric, not '%s'", key,
				   threshold_ref_name(th->ref), shown);
		}
		break;
	case REF_NONE:
		break;
	}
}

/* warning must be reached before critical: below it for 'above', above it for 'below'. */
void
threshold_check_order(struct cfg_decoder *dec, const struct cfg_node *at, const struct rule *r)
{
	const struct threshold *w = &r->level[SEVERITY_WARNING], *c = &r->level[SEVERITY_CRITICAL];
	if (!w->set || !c->set) {
		return;
	}
	bool above = r->op == RULE_ABOVE;
	bool bad = false;
	if (w->ref == c->ref && w->scale == c->scale) {
		bad = above ? w->offset >= c->offset : w->offset <= c->offset;
	}
	if (!bad && w->has_fallback && c->has_fallback) {
		bad = above ? w->fallback >= c->fallback : w->fallback <= c->fallback;
	}
	if (bad) {
		char ws[96], cs[96];
		threshold_format(w, ws, sizeof(ws));
		threshold_format(c, cs, sizeof(cs));
		cfg_report(dec, at, "warning (%s) must be %s critical (%s) for op '%s'", ws, above ? "below" : "above",
			   cs, above ? "above" : "below");
	}
}
