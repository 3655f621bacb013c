/*
 * Key-table decoding of cfg_tree maps, and the value parsers behind it
 * (durations, numbers, choices). Messages name the key, quote the value
 * and, for near misses, suggest the intended word.
 */
#include "cfg_decode.h"
#include "buf.h"
#include "log.h"
#include "text.h"
#include "xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DURATION_WHAT "a duration like 10s, 5m or 1h30m"
#define DURATION_HINT "expected " DURATION_WHAT
#define MAX_DIGITS 15 /* per duration component: far beyond any useful value, no overflow */
#define MSG_MAX 256
#define EDIT_MAX_LEN 64 /* longer words are never "close" to a key */

char *
cfg_strdup(const char *s)
{
	return xstrdup(s);
}

void
cfg_report(struct cfg_decoder *dec, const struct cfg_node *node, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_addv(dec->diags, node->file, node->line, node->column, fmt, ap);
	va_end(ap);
}

void
cfg_show(const char *text, char *buf, size_t size)
{
	diag_show(text, buf, size);
}

bool
cfg_node_is_null(const struct cfg_node *node)
{
	if (!node) {
		return true;
	}
	if (node->type != CFG_SCALAR || node->quoted) {
		return false;
	}
	const char *v = node->value;
	return v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
	       strcmp(v, "NULL") == 0;
}

void
cfg_describe(const struct cfg_node *node, char *buf, size_t size)
{
	if (cfg_node_is_null(node)) {
		snprintf(buf, size, "nothing");
	} else if (node->type == CFG_MAP) {
		snprintf(buf, size, "a map");
	} else if (node->type == CFG_SEQ) {
		snprintf(buf, size, "a list");
	} else {
		char shown[CFG_SHOW_MAX];
		cfg_show(node->value, shown, sizeof(shown));
		snprintf(buf, size, "'%s'", shown);
	}
}

/* ---- words: distance and suggestions ---- */

static char
lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static size_t
min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;
	return m < c ? m : c;
}

size_t
cfg_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > EDIT_MAX_LEN || lb > EDIT_MAX_LEN) {
		return SIZE_MAX;
	}
	/* three rows of the optimal-string-alignment table: i-2, i-1, i */
	size_t rows[3][EDIT_MAX_LEN + 1];
	size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= lb; j++) {
		prev[j] = j;
	}
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]) && prev2[j - 2] + 1 < cur[j]) {
				cur[j] = prev2[j - 2] + 1;
			}
		}
		size_t *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

static bool
has_prefix_ci(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++) {
		if (lower(*s) != lower(*prefix)) {
			return false;
		}
	}
	return true;
}

const char *
cfg_suggest(const char *word, const char *const *candidates, size_t n)
{
	size_t len = strlen(word);
	const char *best = NULL;
	size_t best_d = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t d = cfg_edit_distance(word, candidates[i]);
		if (d <= 2 && d < len && d < best_d) {
			best = candidates[i];
			best_d = d;
		}
	}
	if (best || len < 3) {
		return best;
	}
	for (size_t i = 0; i < n; i++) {
		size_t cl = strlen(candidates[i]);
		if (has_prefix_ci(candidates[i], word) || (cl >= 3 && has_prefix_ci(word, candidates[i]))) {
			return candidates[i];
		}
	}
	return NULL;
}

void
cfg_report_unknown_key(struct cfg_decoder *dec, const struct cfg_node *key, const char *const *known, size_t n)
{
	char shown[CFG_SHOW_MAX];
	cfg_show(key->value, shown, sizeof(shown));
	const char *in = dec->context ? " in " : "";
	const char *ctx = dec->context ? dec->context : "";
	const char *hint = cfg_suggest(key->value, known, n);
	if (hint) {
		cfg_report(dec, key, "unknown key '%s'%s%s (did you mean '%s'?)", shown, in, ctx, hint);
		return;
	}
	struct buf names;
	buf_init(&names);
	buf_adds(&names, ""); /* "" rather than NULL when there is none */
	for (size_t i = 0; i < n; i++) {
		if (i) {
			buf_adds(&names, ", ");
		}
		buf_adds(&names, known[i]);
	}
	cfg_report(dec, key, "unknown key '%s'%s%s (known keys: %s)", shown, in, ctx, names.buf);
	buf_free(&names);
}

/* ---- durations and numbers ---- */

static bool
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static const struct {
	const char *name;
	int64_t ms;
} duration_units[] = {
	{"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}, {"ms", 1},
};
#define N_UNITS (sizeof(duration_units) / sizeof(duration_units[0]))

int
cfg_parse_duration(const char *text, int64_t *ret_ms, char *err, size_t err_size)
{
	char shown[CFG_SHOW_MAX];
	cfg_show(text, shown, sizeof(shown));
	if (text[0] == '\0') {
		snprintf(err, err_size, DURATION_HINT ", got nothing");
		return -EINVAL;
	}
	if (text[0] == '-' && text_is_digit(text[1])) {
		snprintf(err, err_size, "a duration cannot be negative, got '%s'", shown);
		return -EINVAL;
	}
	if (strcmp(text, "0") == 0) {
		*ret_ms = 0;
		return 0;
	}
	const char *p = text;
	int64_t total = 0;
	size_t last_rank = N_UNITS; /* units must come in table order */
	while (*p) {
		if (!text_is_digit(*p)) {
			snprintf(err, err_size, DURATION_HINT ", got '%s'", shown);
			return -EINVAL;
		}
		const char *num = p;
		int64_t n = 0;
		while (text_is_digit(*p)) {
			if (p - num >= MAX_DIGITS) {
				snprintf(err, err_size, "duration '%s' is too long", shown);
				return -EINVAL;
			}
			n = n * 10 + (*p - '0');
			p++;
		}
		size_t num_len = (size_t)(p - num);
		if (*p == '.') {
			snprintf(err, err_size, DURATION_HINT ", got '%s' (whole numbers only: 1500ms, not 1.5s)",
				 shown);
			return -EINVAL;
		}
		const char *unit = p;
		while (is_alpha(*p)) {
			p++;
		}
		size_t unit_len = (size_t)(p - unit);
		if (unit_len == 0) {
			if (*p != '\0') {
				snprintf(err, err_size, DURATION_HINT ", got '%s'", shown);
			} else if (num == text) {
				snprintf(err, err_size, DURATION_HINT ", got '%s' (a unit is needed: ms, s, m, h or d)",
					 shown);
			} else {
				snprintf(err, err_size,
					 "missing unit after '%.*s' in duration '%s' (use ms, s, m, h or d)",
					 (int)num_len, num, shown);
			}
			return -EINVAL;
		}
		size_t rank = N_UNITS;
		for (size_t k = 0; k < N_UNITS; k++) {
			if (strlen(duration_units[k].name) == unit_len &&
			    memcmp(duration_units[k].name, unit, unit_len) == 0) {
				rank = k;
				break;
			}
		}
		if (rank == N_UNITS) {
			char u[CFG_SHOW_MAX];
			snprintf(u, sizeof(u), "%.*s", (int)(unit_len < 20 ? unit_len : 20), unit);
			snprintf(err, err_size, "unknown unit '%s' in duration '%s' (use ms, s, m, h or d)", u, shown);
			return -EINVAL;
		}
		if (last_rank != N_UNITS && rank <= last_rank) {
			snprintf(err, err_size,
				 "units in duration '%s' must go from largest to smallest, each once (like 1h30m)",
				 shown);
			return -EINVAL;
		}
		last_rank = rank;
		int64_t unit_ms = duration_units[rank].ms;
		if (n > INT64_MAX / unit_ms || total > INT64_MAX - n * unit_ms) {
			snprintf(err, err_size, "duration '%s' is too long", shown);
			return -EINVAL;
		}
		total += n * unit_ms;
	}
	*ret_ms = total;
	return 0;
}

void
cfg_format_duration(int64_t ms, char *buf, size_t size)
{
	if (ms <= 0) {
		snprintf(buf, size, "0");
		return;
	}
	size_t at = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < N_UNITS && at < size; k++) {
		int64_t n = ms / duration_units[k].ms;
		if (n > 0) {
			int w = snprintf(buf + at, size - at, "%lld%s", (long long)n, duration_units[k].name);
			if (w < 0) {
				return;
			}
			at += (size_t)w;
			ms -= n * duration_units[k].ms;
		}
	}
}

bool
cfg_parse_number(const char *text, double *ret)
{
	const char *p = text;
	if (*p == '+' || *p == '-') {
		p++;
	}
	size_t int_digits = 0, frac_digits = 0;
	while (text_is_digit(*p)) {
		p++;
		int_digits++;
	}
	if (*p == '.') {
		p++;
		while (text_is_digit(*p)) {
			p++;
			frac_digits++;
		}
	}
	if (int_digits + frac_digits == 0) {
		return false;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-') {
			p++;
		}
		if (!text_is_digit(*p)) {
			return false;
		}
		while (text_is_digit(*p)) {
			p++;
		}
	}
	if (*p != '\0') {
		return false;
	}
	char *end;
	double v = strtod(text, &end);
	if (*end != '\0' || !isfinite(v)) {
		return false;
	}
	*ret = v;
	return true;
}

/* ---- values ---- */

const char *const cfg_bool_names[] = {"true", "false", "yes", "no", "on", "off", NULL};
const int cfg_bool_values[] = {1, 0, 1, 0, 1, 0};

static void *
member(void *obj, const struct cfg_key *key)
{
	return (char *)obj + key->offset;
}

static const char *
kind_expect(const struct cfg_key *key)
{
	switch (key->kind) {
	case CFG_K_STRING:
		return "a string";
	case CFG_K_DURATION:
		return DURATION_WHAT;
	case CFG_K_NUMBER:
		return "a number";
	case CFG_K_INT:
		return "a whole number";
	case CFG_K_CHOICE:
	case CFG_K_CUSTOM:
	case CFG_K_RENAMED:
		break;
	}
	return "a value";
}

/* "credential:NAME": the file systemd put in $CREDENTIALS_DIRECTORY for LoadCredential=NAME:... */
static int
decode_credential(struct cfg_decoder *dec, const struct cfg_node *node, const char *prefix, char **slot)
{
	const char *name = node->value + strlen(CFG_CREDENTIAL_PREFIX);
	const char *dir = getenv("CREDENTIALS_DIRECTORY");
	char shown[CFG_SHOW_MAX];
	cfg_show(node->value, shown, sizeof(shown));
	if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		cfg_report(dec, node, "%s%s: a credential is named without '/'", prefix, shown);
		return -EINVAL;
	}
	if (!dir || dir[0] != '/') {
		cfg_report(dec, node,
			   "%s%s: $CREDENTIALS_DIRECTORY is not set (the unit gives it with LoadCredential=%s:FILE; "
			   "to check by hand, set CREDENTIALS_DIRECTORY to a directory holding %s)",
			   prefix, shown, name, name);
		return -EINVAL;
	}
	struct buf path;
	buf_init(&path);
	buf_addf(&path, "%s/%s", dir, name);
	free(*slot);
	*slot = buf_take(&path, NULL);
	return 0;
}

static void
report_choice(struct cfg_decoder *dec, const struct cfg_node *node, const char *prefix, const struct cfg_key *key)
{
	struct buf names;
	buf_init(&names);
	size_t n = 0;
	buf_adds(&names, "");
	for (; key->choices[n]; n++) {
		buf_adds(&names, n ? (key->choices[n + 1] ? ", " : " or ") : "");
		buf_adds(&names, key->choices[n]);
	}
	char got[CFG_SHOW_MAX + 8];
	cfg_describe(node, got, sizeof(got));
	const char *hint = node->type == CFG_SCALAR ? cfg_suggest(node->value, key->choices, n) : NULL;
	if (hint) {
		cfg_report(dec, node, "%sexpected %s, got %s (did you mean '%s'?)", prefix, names.buf, got, hint);
	} else {
		cfg_report(dec, node, "%sexpected %s, got %s", prefix, names.buf, got);
	}
	buf_free(&names);
}

static int
decode_duration(struct cfg_decoder *dec, const struct cfg_key *key, const struct cfg_node *node, const char *prefix,
		int64_t *out)
{
	char err[MSG_MAX];
	int64_t ms;
	const char *text = cfg_node_is_null(node) ? "" : node->value;
	if (cfg_parse_duration(text, &ms, err, sizeof(err)) < 0) {
		cfg_report(dec, node, "%s%s", prefix, err);
		return -EINVAL;
	}
	bool zero_ok = (key->flags & CFG_F_ZERO_OK) && ms == 0;
	if (!zero_ok && (ms < key->min_ms || (key->max_ms > 0 && ms > key->max_ms))) {
		char lo[32], hi[32], shown[CFG_SHOW_MAX];
		cfg_format_duration(key->min_ms, lo, sizeof(lo));
		cfg_format_duration(key->max_ms, hi, sizeof(hi));
		cfg_show(node->value, shown, sizeof(shown));
		const char *zero = (key->flags & CFG_F_ZERO_OK) ? "0 (off) or " : "";
		if (key->max_ms > 0) {
			cfg_report(dec, node, "%smust be %sbetween %s and %s, got '%s'", prefix, zero, lo, hi, shown);
		} else {
			cfg_report(dec, node, "%smust be %sat least %s, got '%s'", prefix, zero, lo, shown);
		}
		return -EINVAL;
	}
	*out = ms;
	return 0;
}

static int
decode_number(struct cfg_decoder *dec, const struct cfg_key *key, const struct cfg_node *node, const char *prefix,
	      double *out)
{
	double v;
	char shown[CFG_SHOW_MAX];
	cfg_show(node->value, shown, sizeof(shown));
	if (node->quoted) {
		cfg_report(dec, node, "%sexpected a number, got the string '%s' (write it without quotes)", prefix,
			   shown);
		return -EINVAL;
	}
	if (!cfg_parse_number(node->value, &v)) {
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(node, got, sizeof(got));
		cfg_report(dec, node, "%sexpected a number, got %s", prefix, got);
		return -EINVAL;
	}
	if (key->min != key->max && (v < key->min || v > key->max)) {
		cfg_report(dec, node, "%smust be between %g and %g, got %s", prefix, key->min, key->max, shown);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Decodes NODE for KEY into OBJ; PREFIX ("key: " or "") starts every message. */
static int
decode_value(struct cfg_decoder *dec, const struct cfg_key *key, const struct cfg_node *node, const char *prefix,
	     void *obj)
{
	if (key->kind == CFG_K_CUSTOM) {
		return key->decode(dec, node, obj);
	}
	if (node->type != CFG_SCALAR || (cfg_node_is_null(node) && key->kind != CFG_K_DURATION)) {
		if (key->kind == CFG_K_CHOICE) {
			report_choice(dec, node, prefix, key);
			return -EINVAL;
		}
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(node, got, sizeof(got));
		bool empty_ok =
			key->kind == CFG_K_STRING && node->type == CFG_SCALAR && !(key->flags & CFG_F_NOT_EMPTY);
		cfg_report(dec, node, "%sexpected %s, got %s%s", prefix, kind_expect(key), got,
			   empty_ok ? " (write \"\" for an empty string)" : "");
		return -EINVAL;
	}
	switch (key->kind) {
	case CFG_K_STRING: {
		if ((key->flags & CFG_F_NOT_EMPTY) && node->value[0] == '\0') {
			cfg_report(dec, node, "%smust not be empty", prefix);
			return -EINVAL;
		}
		char **slot = member(obj, key);
		if ((key->flags & CFG_F_SECRET_FILE) &&
		    strncmp(node->value, CFG_CREDENTIAL_PREFIX, strlen(CFG_CREDENTIAL_PREFIX)) == 0) {
			return decode_credential(dec, node, prefix, slot);
		}
		free(*slot);
		*slot = cfg_strdup(node->value);
		return 0;
	}
	case CFG_K_DURATION:
		return decode_duration(dec, key, node, prefix, member(obj, key));
	case CFG_K_NUMBER:
		return decode_number(dec, key, node, prefix, member(obj, key));
	case CFG_K_INT: {
		double v;
		if (decode_number(dec, key, node, prefix, &v) < 0) {
			return -EINVAL;
		}
		if (v != (double)(long long)v || v < -2147483648.0 || v > 2147483647.0) {
			char shown[CFG_SHOW_MAX];
			cfg_show(node->value, shown, sizeof(shown));
			cfg_report(dec, node, "%sexpected a whole number, got %s", prefix, shown);
			return -EINVAL;
		}
		*(int *)member(obj, key) = (int)v;
		return 0;
	}
	case CFG_K_CHOICE:
		for (size_t i = 0; key->choices[i]; i++) {
			if (strcmp(node->value, key->choices[i]) == 0) {
				*(int *)member(obj, key) = key->values[i];
				return 0;
			}
		}
		report_choice(dec, node, prefix, key);
		return -EINVAL;
	case CFG_K_CUSTOM:
	case CFG_K_RENAMED:
		break;
	}
	return -EINVAL;
}

const struct cfg_key *
cfg_key_target(const struct cfg_key *table, size_t nkeys, const struct cfg_key *key)
{
	if (key->kind != CFG_K_RENAMED) {
		return key;
	}
	for (size_t i = 0; i < nkeys; i++) {
		if (table[i].kind != CFG_K_RENAMED && strcmp(table[i].name, key->renamed_to) == 0) {
			return &table[i];
		}
	}
	return NULL;
}

void
cfg_apply_defaults(const struct cfg_key *table, size_t nkeys, void *obj)
{
	/* The defaults are checked by the tests: a bad one would be a bug here. */
	struct diag_list sink;
	diag_list_init(&sink);
	struct cfg_decoder dec = {.diags = &sink};
	for (size_t i = 0; i < nkeys; i++) {
		const struct cfg_key *key = &table[i];
		if (!key->def || key->kind == CFG_K_CUSTOM || key->kind == CFG_K_RENAMED) {
			continue;
		}
		struct cfg_node node = {
			.type = CFG_SCALAR,
			.file = "",
			.value = (char *)key->def,
			.quoted = key->kind == CFG_K_STRING,
		};
		decode_value(&dec, key, &node, "", obj);
	}
	diag_list_free(&sink);
}

int
cfg_decode_text(struct cfg_decoder *dec, const struct cfg_key *key, const char *text, const char *file, int line,
		int column, void *obj)
{
	struct cfg_node node = {
		.type = CFG_SCALAR,
		.file = file,
		.line = line,
		.column = column,
		.value = (char *)text,
		/* an environment value is text: "" is an empty string, not null */
		.quoted = key->kind == CFG_K_STRING || key->kind == CFG_K_CHOICE,
	};
	return decode_value(dec, key, &node, "", obj);
}

void
cfg_free_strings(const struct cfg_key *table, size_t nkeys, void *obj)
{
	for (size_t i = 0; i < nkeys; i++) {
		if (table[i].kind == CFG_K_STRING) {
			char **slot = member(obj, &table[i]);
			free(*slot);
			*slot = NULL;
		} else if (table[i].kind == CFG_K_CUSTOM && table[i].release) {
			table[i].release(obj);
		}
	}
}

int
cfg_decode_map(struct cfg_decoder *dec, const struct cfg_node *map, const struct cfg_key *table, size_t nkeys,
	       void *obj, uint64_t *present)
{
	size_t before = dec->diags->count;
	uint64_t seen = 0;
	if (map && cfg_node_is_null(map)) {
		map = NULL; /* "agent:" with nothing under it: all defaults */
	}
	if (map && map->type != CFG_MAP) {
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(map, got, sizeof(got));
		cfg_report(dec, map, "%s: expected a map, got %s", dec->context ? dec->context : "value", got);
		return -EINVAL;
	}
	const char *names[64];
	size_t nnames = nkeys < 64 ? nkeys : 64;
	for (size_t i = 0; i < nnames; i++) {
		names[i] = table[i].name;
	}
	for (size_t p = 0; map && p < map->count; p++) {
		const struct cfg_node *k = map->keys[p];
		size_t i = 0;
		while (i < nnames && strcmp(table[i].name, k->value) != 0) {
			i++;
		}
		if (i == nnames) {
			cfg_report_unknown_key(dec, k, names, nnames);
			continue;
		}
		const struct cfg_key *key = cfg_key_target(table, nnames, &table[i]);
		if (!key) {
			continue; /* a table mistake the tests catch */
		}
		if (key != &table[i]) {
			if (cfg_map_get(map, key->name)) {
				cfg_report(dec, k, "'%s' is the old name of '%s': give one of them", k->value,
					   key->name);
				continue;
			}
			/* a warning, not a mistake: the file keeps working */
			log_warn("%s:%d:%d: '%s' is now called '%s'; the old name still works: rename it when you can",
				 k->file, k->line, k->column, k->value, key->name);
			i = (size_t)(key - table);
		}
		seen |= (uint64_t)1 << i;
		char prefix[CFG_SHOW_MAX + 4];
		snprintf(prefix, sizeof(prefix), "%s: ", key->name);
		decode_value(dec, key, map->items[p], prefix, obj);
	}
	for (size_t i = 0; i < nnames; i++) {
		if ((table[i].flags & CFG_F_REQUIRED) && !(seen & ((uint64_t)1 << i))) {
			if (map) {
				cfg_report(dec, map, "missing '%s'%s%s", table[i].name, dec->context ? " in " : "",
					   dec->context ? dec->context : "");
			} else {
				diag_add(dec->diags, NULL, 0, 0, "missing '%s'", table[i].name);
			}
		}
	}
	if (present) {
		*present = seen;
	}
	return dec->diags->count == before ? 0 : -EINVAL;
}

int
cfg_decode_string_list(struct cfg_decoder *dec, const struct cfg_node *node, const char *key, const char *what,
		       char ***ret, size_t *ret_count)
{
	size_t before = dec->diags->count;
	char got[CFG_SHOW_MAX + 8];
	if (node->type == CFG_MAP || cfg_node_is_null(node)) {
		cfg_describe(node, got, sizeof(got));
		cfg_report(dec, node, "%s: expected %s or a list of them, got %s", key, what, got);
		return -EINVAL;
	}
	size_t n = node->type == CFG_SEQ ? node->count : 1;
	const struct cfg_node *const *items = node->type == CFG_SEQ ? (const struct cfg_node *const *)node->items
								    : (const struct cfg_node *const *)&node;
	char **list = xcalloc(n + 1, sizeof(*list));
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cfg_node *it = items[i];
		if (it->type != CFG_SCALAR || cfg_node_is_null(it) || it->value[0] == '\0') {
			cfg_describe(it, got, sizeof(got));
			cfg_report(dec, it, "%s: expected %s, got %s", key, what, got);
			continue;
		}
		list[count++] = cfg_strdup(it->value);
	}
	if (dec->diags->count != before) {
		cfg_free_string_list(list);
		return -EINVAL;
	}
	*ret = list;
	*ret_count = count;
	return 0;
}

void
cfg_free_string_list(char **list)
{
	if (!list) {
		return;
	}
	for (char **p = list; *p; p++) {
		free(*p);
	}
	free(list);
}

void
cfg_env_name(const char *section, const char *key, char *buf, size_t size)
{
	snprintf(buf, size, "TEGRAWATCH_%s_%s", section, key);
	for (char *p = buf; *p; p++) {
		if (*p >= 'a' && *p <= 'z') {
			*p = (char)(*p - 'a' + 'A');
		}
	}
}

void
cfg_report_key(struct diag_list *diags, const struct cfg_place *place, const char *key, const char *fmt, ...)
{
	char env[128];
	cfg_env_name(place->section, key, env, sizeof(env));
	char where[160];
	const char *file = place->file;
	int line = 0, column = 0;
	const struct cfg_node *node = place->map ? cfg_map_get(place->map, key) : NULL;
	if (place->environment && getenv(env)) {
		snprintf(where, sizeof(where), "environment:%s", env);
		file = where;
	} else if (node) {
		file = node->file;
		line = node->line;
		column = node->column;
	} else if (place->map) {
		file = place->map->file;
		line = place->map->line;
		column = place->map->column;
	}
	va_list ap;
	va_start(ap, fmt);
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_add(diags, file, line, column, "%s", msg);
}
