/*
 * `rules:` decoding: one key table for a rule (defaults live there),
 * custom decoders for thresholds (the expressions are parsed and checked
 * in threshold_expr.c), clear, when, labels and actions, then the checks
 * that need several keys of one rule. rules_validate() does the checks
 * across rules and files.
 */
#include "rules_load.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cfg_decode.h"
#include "core/text.h"
#include "core/xalloc.h"
#include "catalog.h"
#include "threshold_expr.h"

#define RULE_NAME_MAX 64
#define DAY_MS (24 * 3600 * 1000LL)
#define CONTEXT_MAX (RULE_NAME_MAX + 16)

_Static_assert(sizeof(enum rule_op) == sizeof(int), "rule_op is decoded as an int");
_Static_assert(sizeof(enum severity) == sizeof(int), "severity is decoded as an int");

/* What the custom decoders need besides the node. */
struct rule_ctx {
	struct rules_refs *refs;
	size_t rule_index; /* the rule's index in the final rule_set */
};

static const char *const op_names[] = {"above", "below", "changes", "increases", NULL};
static const int op_values[] = {RULE_ABOVE, RULE_BELOW, RULE_CHANGES, RULE_INCREASES};
static const char *const severity_names[] = {"warning", "critical", NULL};
static const int severity_values[] = {SEVERITY_WARNING, SEVERITY_CRITICAL};

static int decode_warning(struct cfg_decoder *dec, const struct cfg_node *node, void *obj);
static int decode_critical(struct cfg_decoder *dec, const struct cfg_node *node, void *obj);
static int decode_clear(struct cfg_decoder *dec, const struct cfg_node *node, void *obj);
static int decode_when(struct cfg_decoder *dec, const struct cfg_node *node, void *obj);
static int decode_labels(struct cfg_decoder *dec, const struct cfg_node *node, void *obj);
static void check_template(struct cfg_decoder *dec, const struct cfg_node *node, const char *key, const char *text);
static int decode_actions(struct cfg_decoder *dec, const struct cfg_node *node, void *obj);

enum {
	K_NAME,
	K_METRIC,
	K_OP,
	K_WARNING,
	K_CRITICAL,
	K_SEVERITY,
	K_FOR,
	K_CLEAR,
	K_CLEAR_FOR,
	K_ABSENT_FOR,
	K_ABSENT_SEVERITY,
	K_RESOLVE_WHEN_ABSENT,
	K_REPEAT,
	K_WHEN,
	K_LABELS,
	K_SUMMARY,
	K_DESCRIPTION,
	K_ACTIONS,
	N_RULE_KEYS,
};

#define BIT(k) ((uint64_t)1 << (k))

/* Every key of a rule, with its default. docs/configuration.md lists the same. */
static const struct cfg_key rule_keys[N_RULE_KEYS] = {
	[K_NAME] = CFG_STRING("name", struct rule, name, NULL, CFG_F_REQUIRED | CFG_F_NOT_EMPTY),
	[K_METRIC] = CFG_STRING("metric", struct rule, metric, NULL, CFG_F_REQUIRED | CFG_F_NOT_EMPTY),
	[K_OP] = CFG_CHOICE("op", struct rule, op, "above", 0, op_names, op_values),
	[K_WARNING] = CFG_CUSTOM("warning", decode_warning),
	[K_CRITICAL] = CFG_CUSTOM("critical", decode_critical),
	[K_SEVERITY] =
		CFG_CHOICE("severity", struct rule, event_severity, "warning", 0, severity_names, severity_values),
	[K_FOR] = CFG_DURATION("for", struct rule, for_ms, "0", 0, 0, DAY_MS),
	[K_CLEAR] = CFG_CUSTOM("clear", decode_clear),
	[K_CLEAR_FOR] = CFG_DURATION("clear_for", struct rule, clear_for_ms, "0", 0, 0, DAY_MS),
	[K_ABSENT_FOR] = CFG_DURATION("absent_for", struct rule, absent_for_ms, "0", CFG_F_ZERO_OK, 1000, 7 * DAY_MS),
	[K_ABSENT_SEVERITY] = CFG_CHOICE("absent_severity", struct rule, absent_severity, "warning", 0, severity_names,
					 severity_values),
	[K_RESOLVE_WHEN_ABSENT] = CFG_BOOL("resolve_when_absent", struct rule, resolve_when_absent, "false"),
	[K_REPEAT] = CFG_DURATION("repeat", struct rule, repeat_ms, "0", CFG_F_ZERO_OK, 1000, 7 * DAY_MS),
	[K_WHEN] = CFG_CUSTOM("when", decode_when),
	[K_LABELS] = CFG_CUSTOM("labels", decode_labels),
	[K_SUMMARY] = CFG_STRING("summary", struct rule, summary, RULE_DEFAULT_SUMMARY, CFG_F_NOT_EMPTY),
	[K_DESCRIPTION] = CFG_STRING("description", struct rule, description, NULL, 0),
	[K_ACTIONS] = CFG_CUSTOM("actions", decode_actions),
};

void
rules_refs_free(struct rules_refs *refs)
{
	if (!refs) {
		return;
	}
	for (size_t i = 0; i < refs->count; i++) {
		free(refs->items[i].file);
	}
	free(refs->items);
	refs->items = NULL;
	refs->count = 0;
}

/* ---- thresholds (the expressions themselves: threshold_expr.c) ---- */

static int
decode_warning(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct rule *r = obj;
	return threshold_decode(dec, node, "warning", &r->level[SEVERITY_WARNING]);
}

static int
decode_critical(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct rule *r = obj;
	return threshold_decode(dec, node, "critical", &r->level[SEVERITY_CRITICAL]);
}

/* ---- clear, when, labels, actions ---- */

static int
decode_plain_number(struct cfg_decoder *dec, const struct cfg_node *node, const char *key, double *out)
{
	char got[CFG_SHOW_MAX + 8];
	cfg_describe(node, got, sizeof(got));
	if (node->type != CFG_SCALAR || cfg_node_is_null(node)) {
		cfg_report(dec, node, "%s: expected a number, got %s", key, got);
		return -EINVAL;
	}
	if (node->quoted) {
		cfg_report(dec, node, "%s: expected a number, got the string %s (write it without quotes)", key, got);
		return -EINVAL;
	}
	if (!cfg_parse_number(node->value, out)) {
		cfg_report(dec, node, "%s: expected a number, got %s", key, got);
		return -EINVAL;
	}
	return 0;
}

static int
decode_clear(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct rule *r = obj;
	double v;
	if (node->type == CFG_MAP) {
		static const char *const known[] = {"value"};
		const struct cfg_node *value = NULL;
		for (size_t i = 0; i < node->count; i++) {
			if (strcmp(node->keys[i]->value, "value") == 0) {
				value = node->items[i];
			} else {
				struct cfg_decoder sub = *dec;
				sub.context = "clear";
				cfg_report_unknown_key(&sub, node->keys[i], known, 1);
			}
		}
		if (!value) {
			cfg_report(dec, node,
				   "clear: missing 'value' (an absolute clear value is written {value: 80})");
			return -EINVAL;
		}
		if (decode_plain_number(dec, value, "clear.value", &v) < 0) {
			return -EINVAL;
		}
		r->clear_is_value = true;
		r->clear = v;
		return 0;
	}
	if (node->type == CFG_SEQ) {
		cfg_report(dec, node,
			   "clear: expected a margin like 3 or an absolute value like {value: 80}, got a list");
		return -EINVAL;
	}
	if (decode_plain_number(dec, node, "clear", &v) < 0) {
		return -EINVAL;
	}
	if (v < 0) {
		char shown[CFG_SHOW_MAX];
		cfg_show(node->value, shown, sizeof(shown));
		cfg_report(dec, node,
			   "clear: the margin must be 0 or more, got %s (for an absolute value write {value: %s})",
			   shown, shown);
		return -EINVAL;
	}
	r->clear_is_value = false;
	r->clear = v;
	return 0;
}

static int
decode_when(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct rule *r = obj;
	static const char *const known[] = {"nvpmodel"};
	char got[CFG_SHOW_MAX + 8];
	if (node->type != CFG_MAP) {
		cfg_describe(node, got, sizeof(got));
		cfg_report(dec, node, "when: expected a map like {nvpmodel: [MAXN, 15W]}, got %s", got);
		return -EINVAL;
	}
	if (node->count == 0) {
		cfg_report(dec, node, "when: needs 'nvpmodel', like {nvpmodel: [MAXN, 15W]}");
		return -EINVAL;
	}
	int ret = 0;
	for (size_t i = 0; i < node->count; i++) {
		if (strcmp(node->keys[i]->value, "nvpmodel") != 0) {
			struct cfg_decoder sub = *dec;
			sub.context = "when";
			cfg_report_unknown_key(&sub, node->keys[i], known, 1);
			ret = -EINVAL;
			continue;
		}
		char **modes;
		size_t count;
		if (cfg_decode_string_list(dec, node->items[i], "nvpmodel", "a power mode name or id", &modes, &count) <
		    0) {
			ret = -EINVAL;
			continue;
		}
		if (count == 0 || count > RULE_MODES_MAX) {
			cfg_report(dec, node->items[i], "nvpmodel: expected 1 to %d power modes, got %zu",
				   RULE_MODES_MAX, count);
			cfg_free_string_list(modes);
			ret = -EINVAL;
			continue;
		}
		/* an id must be written as a number: "0" in quotes would be a name */
		const struct cfg_node *list = node->items[i];
		for (size_t k = 0; k < count; k++) {
			const struct cfg_node *it = list->type == CFG_SEQ ? list->items[k] : list;
			if (it->quoted && rule_mode_is_id(it->value)) {
				char shown[CFG_SHOW_MAX];
				cfg_show(it->value, shown, sizeof(shown));
				cfg_report(dec, it, "nvpmodel: write the power mode id %s without quotes", shown);
				ret = -EINVAL;
			}
		}
		for (size_t k = 0; k < r->mode_count; k++) {
			free(r->modes[k]);
		}
		for (size_t k = 0; k < count; k++) {
			r->modes[k] = modes[k];
		}
		r->mode_count = count;
		free(modes);
	}
	return ret;
}

/* Label and metric names use the word characters of threshold expressions. */
static bool
is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool
label_key_ok(const char *k)
{
	if (!((k[0] >= 'a' && k[0] <= 'z') || (k[0] >= 'A' && k[0] <= 'Z') || k[0] == '_')) {
		return false;
	}
	for (; *k; k++) {
		if (!is_word_char(*k)) {
			return false;
		}
	}
	return true;
}

static int
decode_labels(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct rule *r = obj;
	char got[CFG_SHOW_MAX + 8];
	if (cfg_node_is_null(node)) {
		return 0;
	}
	if (node->type != CFG_MAP) {
		cfg_describe(node, got, sizeof(got));
		cfg_report(dec, node, "labels: expected a map of names to values, got %s", got);
		return -EINVAL;
	}
	int ret = 0;
	struct alert_label *labels = xrealloc(NULL, node->count, sizeof(*labels));
	size_t n = 0;
	for (size_t i = 0; i < node->count; i++) {
		const struct cfg_node *k = node->keys[i], *v = node->items[i];
		if (!label_key_ok(k->value)) {
			char shown[CFG_SHOW_MAX];
			cfg_show(k->value, shown, sizeof(shown));
			cfg_report(
				dec, k,
				"labels: '%s' is not a label name (letters, digits and '_', not starting with a digit)",
				shown);
			ret = -EINVAL;
			continue;
		}
		if (v->type != CFG_SCALAR || cfg_node_is_null(v)) {
			cfg_describe(v, got, sizeof(got));
			cfg_report(dec, v, "labels: expected a text value for '%s', got %s", k->value, got);
			ret = -EINVAL;
			continue;
		}
		char what[CFG_SHOW_MAX + 16];
		snprintf(what, sizeof(what), "labels.%s", k->value);
		size_t before = dec->diags->count;
		check_template(dec, v, what, v->value); /* "{{metric.name}}": rendered per alert */
		if (dec->diags->count != before) {
			ret = -EINVAL;
			continue;
		}
		labels[n].key = cfg_strdup(k->value);
		labels[n].value = cfg_strdup(v->value);
		n++;
	}
	for (size_t i = 0; i < r->label_count; i++) {
		free(r->labels[i].key);
		free(r->labels[i].value);
	}
	free(r->labels);
	r->labels = labels;
	r->label_count = n;
	return ret;
}

static void
add_ref(struct rule_ctx *ctx, enum severity sev, size_t index, const struct cfg_node *at)
{
	struct rules_refs *refs = ctx->refs;
	if (!refs) {
		return;
	}
	refs->items = xrealloc(refs->items, refs->count + 1, sizeof(*refs->items));
	refs->items[refs->count++] = (struct rule_action_ref){
		.rule = ctx->rule_index,
		.severity = sev,
		.index = index,
		.file = cfg_strdup(at->file),
		.line = at->line,
		.column = at->column,
	};
}

static int
decode_actions(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct rule *r = obj;
	struct rule_ctx *ctx = dec->user;
	char got[CFG_SHOW_MAX + 8];
	if (node->type != CFG_MAP) {
		cfg_describe(node, got, sizeof(got));
		cfg_report(dec, node, "actions: expected a map like {warning: [log], critical: [log, page-me]}, got %s",
			   got);
		return -EINVAL;
	}
	int ret = 0;
	for (size_t i = 0; i < node->count; i++) {
		const struct cfg_node *k = node->keys[i], *v = node->items[i];
		enum severity sev = SEVERITY_NONE;
		for (size_t s = 0; severity_names[s]; s++) {
			if (strcmp(k->value, severity_names[s]) == 0) {
				sev = (enum severity)severity_values[s];
			}
		}
		if (sev == SEVERITY_NONE) {
			struct cfg_decoder sub = *dec;
			sub.context = "actions";
			cfg_report_unknown_key(&sub, k, severity_names, 2);
			ret = -EINVAL;
			continue;
		}
		char key[32];
		snprintf(key, sizeof(key), "actions.%s", severity_names[sev - 1]);
		char **names;
		size_t count;
		if (cfg_decode_string_list(dec, v, key, "an action name", &names, &count) < 0) {
			ret = -EINVAL;
			continue;
		}
		for (size_t a = 0; a < count; a++) {
			add_ref(ctx, sev, a, v->type == CFG_SEQ ? v->items[a] : v);
		}
		cfg_free_string_list(r->actions[sev]);
		r->actions[sev] = names;
		r->action_count[sev] = count;
		r->has_actions = true;
	}
	return ret;
}

/* ---- checks over one rule ---- */

static bool
name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

static void
check_name(struct cfg_decoder *dec, const struct cfg_node *node, const char *name)
{
	char shown[CFG_SHOW_MAX];
	cfg_show(name, shown, sizeof(shown));
	if (strlen(name) > RULE_NAME_MAX) {
		cfg_report(dec, node, "name: longer than %d characters", RULE_NAME_MAX);
		return;
	}
	for (const char *p = name; *p; p++) {
		if (!name_char_ok(*p)) {
			cfg_report(dec, node, "name: '%s' may only hold a-z, 0-9, '_', '.' and '-'", shown);
			return;
		}
	}
}

/* Syntax of a metric name or glob; then the catalogue. */
static void
check_metric(struct cfg_decoder *dec, const struct cfg_node *node, const char *metric)
{
	char shown[CFG_SHOW_MAX];
	cfg_show(metric, shown, sizeof(shown));
	size_t len = strlen(metric);
	if (len >= 64) {
		cfg_report(dec, node, "metric: '%s' is longer than 63 characters", shown);
		return;
	}
	for (const char *p = metric; *p; p++) {
		char c = *p;
		if (c >= 'A' && c <= 'Z') {
			cfg_report(dec, node, "metric: '%s': metric names are lower-case", shown);
			return;
		}
		if (c == '?' || c == '[' || c == ']' || c == '{' || c == '}') {
			cfg_report(dec, node, "metric: '%s': only '*' is a wildcard in metric patterns", shown);
			return;
		}
		if (!(c == '*' || c == '.' || is_word_char(c))) {
			cfg_report(dec, node,
				   "metric: '%s': metric names hold only a-z, 0-9, '_', '.' (and '*' in patterns)",
				   shown);
			return;
		}
	}
	if (metric[0] == '.' || metric[len - 1] == '.' || strstr(metric, "..")) {
		cfg_report(dec, node, "metric: '%s' has an empty segment", shown);
		return;
	}
	if (catalog_glob_known(metric)) {
		return;
	}
	char hint[128];
	if (!metric_is_glob(metric) && catalog_suggest(metric, hint, sizeof(hint))) {
		cfg_report(dec, node, "metric: unknown metric '%s' (did you mean '%s'?)", shown, hint);
	} else if (metric_is_glob(metric)) {
		cfg_report(dec, node, "metric: '%s' matches no known metric (see docs/metrics.md)", shown);
	} else {
		cfg_report(dec, node, "metric: unknown metric '%s' (see docs/metrics.md)", shown);
	}
}

/* An absolute clear value must lie on the safe side of every plain threshold. */
static void
check_clear_value(struct cfg_decoder *dec, const struct cfg_node *at, const struct rule *r)
{
	bool above = r->op == RULE_ABOVE;
	for (int s = SEVERITY_WARNING; s <= SEVERITY_CRITICAL; s++) {
		const struct threshold *th = &r->level[s];
		if (!th->set || th->ref != REF_NONE) {
			continue;
		}
		if (above ? r->clear >= th->offset : r->clear <= th->offset) {
			cfg_report(dec, at, "clear: the value %g must be %s the %s threshold %g", r->clear,
				   above ? "below" : "above", severity_name((enum severity)s), th->offset);
			return;
		}
	}
}

static void
check_pct(struct cfg_decoder *dec, const struct cfg_node *map, const struct rule *r)
{
	if (!text_has_suffix(r->metric, "_pct")) {
		return;
	}
	for (int s = SEVERITY_WARNING; s <= SEVERITY_CRITICAL; s++) {
		const struct threshold *th = &r->level[s];
		const char *key = severity_name((enum severity)s);
		if (th->set && th->ref == REF_NONE && (th->offset < 0 || th->offset > 100)) {
			cfg_report(dec, cfg_map_get(map, key), "%s: %g is not a percentage (0 to 100)", key,
				   th->offset);
		}
	}
}

static void
check_template(struct cfg_decoder *dec, const struct cfg_node *node, const char *key, const char *text)
{
	size_t bad;
	if (!text || rule_template_check(text, &bad)) {
		return;
	}
	static const char *const fields[] = {"metric",   "value",      "threshold",          "board",
					     "severity", "rule",       "power_mode",         "transition",
					     "throttle", "oom_killed", "expected_power_mode"};
	const char *open = text + bad + 2;
	const char *close = strstr(open, "}}");
	if (!close) {
		cfg_report(dec, node, "%s: '{{' without a closing '}}'", key);
		return;
	}
	char field[CFG_SHOW_MAX];
	size_t len = (size_t)(close - open);
	char raw[CFG_SHOW_MAX];
	snprintf(raw, sizeof(raw), "%.*s", (int)(len < sizeof(raw) - 1 ? len : sizeof(raw) - 1), open);
	/* "{{ value }}" is allowed: compare without the spaces */
	char *f = raw;
	while (*f == ' ') {
		f++;
	}
	size_t fl = strlen(f);
	while (fl > 0 && f[fl - 1] == ' ') {
		f[--fl] = '\0';
	}
	cfg_show(f, field, sizeof(field));
	const char *hint = cfg_suggest(f, fields, sizeof(fields) / sizeof(fields[0]));
	if (hint) {
		cfg_report(dec, node, "%s: unknown field '{{%s}}' (did you mean '{{%s}}'?)", key, field, hint);
	} else {
		cfg_report(
			dec, node,
			"%s: unknown field '{{%s}}' (fields: metric, value, threshold, board, severity, rule, "
			"power_mode, transition, throttle, expected_power_mode, oom_killed, labels.KEY, metric.LABEL)",
			key, field);
	}
}

/* The checks that need several keys of one rule, once each key decoded. */
static void
check_rule(struct cfg_decoder *dec, const struct cfg_node *map, struct rule *r, uint64_t present, bool metric_ok)
{
	bool threshold_op = r->op == RULE_ABOVE || r->op == RULE_BELOW;
	const char *op = op_names[r->op];
	if (threshold_op) {
		if (!(present & (BIT(K_WARNING) | BIT(K_CRITICAL)))) {
			cfg_report(dec, map, "%s needs 'warning' or 'critical' (op %s)", dec->context, op);
		}
		if (present & BIT(K_SEVERITY)) {
			cfg_report(dec, cfg_map_get(map, "severity"),
				   "severity: only for op changes or increases; op %s uses warning and critical", op);
		}
	} else {
		static const int no_keys[] = {K_WARNING,   K_CRITICAL, K_CLEAR,
					      K_CLEAR_FOR, K_FOR,      K_RESOLVE_WHEN_ABSENT};
		for (size_t i = 0; i < sizeof(no_keys) / sizeof(no_keys[0]); i++) {
			const char *key = rule_keys[no_keys[i]].name;
			if (present & BIT(no_keys[i])) {
				cfg_report(dec, cfg_map_get(map, key),
					   "%s: does not apply to op %s (it alerts on each %s; use 'severity')", key,
					   op, r->op == RULE_CHANGES ? "change" : "increase");
			}
		}
	}
	if (threshold_op && metric_ok) {
		for (int s = SEVERITY_WARNING; s <= SEVERITY_CRITICAL; s++) {
			const char *key = severity_name((enum severity)s);
			if (r->level[s].set) {
				threshold_check_ref(dec, cfg_map_get(map, key), key, &r->level[s], r->metric);
			}
		}
		check_pct(dec, map, r);
	}
	if (threshold_op) {
		const struct cfg_node *w = cfg_map_get(map, "warning");
		threshold_check_order(dec, w ? w : map, r);
		if (r->clear_is_value) {
			check_clear_value(dec, cfg_map_get(map, "clear"), r);
		}
	}
	if ((present & BIT(K_ABSENT_SEVERITY)) && r->absent_for_ms == 0) {
		cfg_report(dec, cfg_map_get(map, "absent_severity"), "absent_severity: needs 'absent_for'");
	}
	if (present & BIT(K_SUMMARY)) {
		check_template(dec, cfg_map_get(map, "summary"), "summary", r->summary);
	}
	if (present & BIT(K_DESCRIPTION)) {
		check_template(dec, cfg_map_get(map, "description"), "description", r->description);
	}
}

/* Decodes one item of `rules:` into *R (defaults first). */
static void
decode_rule(struct diag_list *diags, struct rule_ctx *ctx, const struct cfg_node *map, size_t ordinal, const char *file,
	    struct rule *r)
{
	char context[CONTEXT_MAX];
	const struct cfg_node *name = map->type == CFG_MAP ? cfg_map_get(map, "name") : NULL;
	if (name && name->type == CFG_SCALAR && name->value[0]) {
		char shown[CFG_SHOW_MAX];
		cfg_show(name->value, shown, sizeof(shown));
		snprintf(context, sizeof(context), "rule '%s'", shown);
	} else {
		snprintf(context, sizeof(context), "rule #%zu", ordinal);
	}
	struct cfg_decoder dec = {.diags = diags, .context = context, .user = ctx};

	memset(r, 0, sizeof(*r));
	cfg_apply_defaults(rule_keys, N_RULE_KEYS, r);
	r->file = cfg_strdup(file);
	r->line = map->line;
	r->column = map->column;
	if (map->type != CFG_MAP) {
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(map, got, sizeof(got));
		cfg_report(&dec, map, "rules: each rule must be a map with name, metric, ..., got %s", got);
		return;
	}
	uint64_t present = 0;
	cfg_decode_map(&dec, map, rule_keys, N_RULE_KEYS, r, &present);

	if (r->name) {
		check_name(&dec, cfg_map_get(map, "name"), r->name);
	}
	size_t before = diags->count;
	if (r->metric) {
		check_metric(&dec, cfg_map_get(map, "metric"), r->metric);
	}
	check_rule(&dec, map, r, present, r->metric && diags->count == before);
}

int
rules_decode_refs(const struct cfg_node *seq, const char *file, struct rule_set *out, struct rules_refs *refs,
		  struct diag_list *diags)
{
	size_t before = diags->count;
	if (!file) {
		file = "";
	}
	if (cfg_node_is_null(seq)) {
		return 0; /* "rules:" with nothing: no rules */
	}
	if (seq->type != CFG_SEQ) {
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(seq, got, sizeof(got));
		diag_add(diags, seq->file, seq->line, seq->column, "rules: expected a list of rules, got %s", got);
		return -EINVAL;
	}
	if (seq->count == 0) {
		return 0;
	}
	/*
	 * One allocation for the whole list: OUT may come from anywhere, its
	 * capacity is unknown. Both counts are of things already in memory, so
	 * their sum cannot wrap; xrealloc() aborts when the bytes would.
	 */
	struct rule *rules = xrealloc(out->rules, out->count + seq->count, sizeof(*rules));
	out->rules = rules;
	for (size_t i = 0; i < seq->count; i++) {
		struct rule_ctx ctx = {.refs = refs, .rule_index = out->count};
		decode_rule(diags, &ctx, seq->items[i], i + 1, file, &rules[out->count]);
		out->count++;
	}
	return diags->count == before ? 0 : -EINVAL;
}

/* ---- checks over every rule ---- */

struct name_idx {
	const char *name;
	size_t idx;
};

static int
cmp_by_name(const void *a, const void *b)
{
	const struct name_idx *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c != 0) {
		return c;
	}
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A rule whose name was used before: LATER is reported, FIRST named. */
struct dup {
	size_t later, first;
};

static int
cmp_dup(const void *a, const void *b)
{
	const struct dup *x = a, *y = b;
	return x->later < y->later ? -1 : x->later > y->later;
}

int
rules_validate(const struct rule_set *set, const struct rules_refs *refs, const char *const *actions,
	       size_t action_count, struct diag_list *diags)
{
	size_t before = diags->count;
	/* duplicates: sort by name, so huge files stay n log n */
	struct name_idx *sorted = xrealloc(NULL, set->count, sizeof(*sorted));
	struct dup *dups = xrealloc(NULL, set->count, sizeof(*dups));
	size_t n = 0, ndups = 0;
	for (size_t i = 0; i < set->count; i++) {
		if (set->rules[i].name) {
			sorted[n++] = (struct name_idx){set->rules[i].name, i};
		}
	}
	if (n > 1) { /* qsort(NULL, 0) is undefined */
		qsort(sorted, n, sizeof(*sorted), cmp_by_name);
	}
	for (size_t i = 1, first = 0; i < n; i++) {
		if (strcmp(sorted[i].name, sorted[first].name) == 0) {
			dups[ndups++] = (struct dup){sorted[i].idx, sorted[first].idx};
		} else {
			first = i;
		}
	}
	if (ndups > 1) { /* qsort(NULL, 0) is undefined */
		qsort(dups, ndups, sizeof(*dups), cmp_dup);
	}
	for (size_t k = 0; k < ndups; k++) {
		const struct rule *r = &set->rules[dups[k].later], *f = &set->rules[dups[k].first];
		char shown[CFG_SHOW_MAX];
		cfg_show(r->name, shown, sizeof(shown));
		diag_add(diags, r->file, r->line, r->column, "duplicate rule name '%s' (first at %s:%d:%d)", shown,
			 f->file, f->line, f->column);
	}
	free(sorted);
	free(dups);

	for (size_t i = 0; refs && i < refs->count; i++) {
		const struct rule_action_ref *ref = &refs->items[i];
		if (ref->rule >= set->count || ref->severity <= SEVERITY_NONE || ref->severity >= SEVERITY_COUNT) {
			continue;
		}
		const struct rule *r = &set->rules[ref->rule];
		if (ref->index >= r->action_count[ref->severity]) {
			continue;
		}
		const char *name = r->actions[ref->severity][ref->index];
		bool found = false;
		for (size_t a = 0; a < action_count && !found; a++) {
			found = strcmp(actions[a], name) == 0;
		}
		if (found) {
			continue;
		}
		char shown[CFG_SHOW_MAX];
		cfg_show(name, shown, sizeof(shown));
		const char *hint = cfg_suggest(name, actions, action_count);
		if (hint) {
			diag_add(diags, ref->file, ref->line, ref->column, "unknown action '%s' (did you mean '%s'?)",
				 shown, hint);
		} else {
			diag_add(diags, ref->file, ref->line, ref->column,
				 "unknown action '%s' (define it under 'actions:'; 'log' is built in)", shown);
		}
	}
	return diags->count == before ? 0 : -EINVAL;
}
