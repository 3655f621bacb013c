/*
 * `actions:` and `notify:` of the main file: what an alert may do (the
 * built-in "log" and exec actions) and which actions each severity calls
 * when a rule binds none. rules_validate() checks the names rules bind.
 */
#include "config_priv.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cfg_decode.h"
#include "core/xalloc.h"

#define DEFAULT_ACTION "log"

_Static_assert(sizeof(enum action_type) == sizeof(int), "action_type is decoded as an int");

static const char *const action_type_names[] = {"log", "exec", "webhook", NULL};
static const int action_type_values[] = {ACTION_LOG, ACTION_EXEC, ACTION_WEBHOOK};

static int decode_command(struct cfg_decoder *dec, const struct cfg_node *node, void *obj);

enum {
	A_TYPE,
	A_COMMAND,
	A_TIMEOUT,
	N_ACTION_KEYS
};

static const struct cfg_key action_keys[N_ACTION_KEYS] = {
	[A_TYPE] = CFG_CHOICE("type", struct action_def, type, NULL, CFG_F_REQUIRED, action_type_names,
			      action_type_values),
	[A_COMMAND] = CFG_CUSTOM("command", decode_command),
	[A_TIMEOUT] = CFG_DURATION("timeout", struct action_def, timeout_ms, "10s", 0, 100, 3600 * 1000),
};

/* notify: severity -> action names; each default is one action name */
static const struct {
	const char *name;
	enum severity severity;
	const char *def;
} notify_keys[] = {
	{"warning", SEVERITY_WARNING, DEFAULT_ACTION},
	{"critical", SEVERITY_CRITICAL, DEFAULT_ACTION},
};

/* ---- small helpers ---- */

static char **
string_list_of(const char *one)
{
	char **list = xrealloc(NULL, 2, sizeof(*list));
	list[0] = cfg_strdup(one);
	list[1] = NULL;
	return list;
}

static char **
string_list_copy(char *const *src, size_t n)
{
	char **list = xrealloc(NULL, n + 1, sizeof(*list));
	for (size_t i = 0; i < n; i++) {
		list[i] = cfg_strdup(src[i]);
	}
	list[n] = NULL;
	return list;
}

static void
action_finish(struct action_def *a)
{
	free(a->name);
	cfg_free_string_list(a->argv);
	webhook_config_free(&a->webhook);
}

/* ---- defaults ---- */

/* "log" is always defined, first, and every severity calls it until notify: says otherwise. */
void
config_actions_defaults(struct config *cfg)
{
	cfg->actions = xrealloc(NULL, 1, sizeof(*cfg->actions));
	cfg->actions[0] = (struct action_def){.name = cfg_strdup(DEFAULT_ACTION), .type = ACTION_LOG};
	cfg->action_count = 1;
	for (size_t k = 0; k < N_OF(notify_keys); k++) {
		cfg->notify[notify_keys[k].severity] = string_list_of(notify_keys[k].def);
		cfg->notify_count[notify_keys[k].severity] = 1;
	}
}

void
config_actions_free(struct config *cfg)
{
	for (size_t i = 0; i < cfg->action_count; i++) {
		action_finish(&cfg->actions[i]);
	}
	free(cfg->actions);
	for (int s = 0; s < SEVERITY_COUNT; s++) {
		cfg_free_string_list(cfg->notify[s]);
	}
}

const struct action_def *
config_find_action(const struct config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->action_count; i++) {
		if (strcmp(cfg->actions[i].name, name) == 0) {
			return &cfg->actions[i];
		}
	}
	return NULL;
}

/* ---- decoding ---- */

static bool
action_name_ok(const char *s)
{
	if (!*s) {
		return false;
	}
	for (; *s; s++) {
		char c = *s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-' || c == '.')) {
			return false;
		}
	}
	return true;
}

static bool
has_blank(const char *s)
{
	return strpbrk(s, " \t\n") != NULL;
}

static int
decode_command(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct action_def *a = obj;
	char **argv;
	size_t argc;
	if (node->type == CFG_SCALAR && !cfg_node_is_null(node) && has_blank(node->value)) {
		cfg_report(dec, node,
			   "command: programs run without a shell: write the program and its arguments as a list, "
			   "like [/usr/local/bin/page, --team, robots]");
		return -EINVAL;
	}
	if (node->type == CFG_SEQ && node->count == 0) {
		cfg_report(dec, node, "command: must not be empty: name the program to run");
		return -EINVAL;
	}
	if (cfg_decode_string_list(dec, node, "command", "a program or argument", &argv, &argc) < 0) {
		return -EINVAL;
	}
	cfg_free_string_list(a->argv);
	a->argv = argv;
	a->argc = argc;
	return 0;
}

/* type: was decoded with the action's own table; the webhook table skips it */
static int
skip_type(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	(void)dec;
	(void)node;
	(void)obj;
	return 0;
}

/*
 * A webhook action: its keys belong to the webhook module (webhook_keys),
 * plus `type`, which is decoded here. Checked by the module's validate.
 */
static void
decode_webhook(struct loader *ld, struct cfg_decoder *dec, const struct cfg_node *node, struct action_def *a)
{
	static struct cfg_key table[64];
	static size_t n;
	if (n == 0) {
		for (size_t i = 0; i < webhook_key_count && i + 1 < N_OF(table); i++) {
			table[n++] = webhook_keys[i];
		}
		table[n++] = (struct cfg_key)CFG_CUSTOM("type", skip_type);
	}
	cfg_apply_defaults(table, n, &a->webhook);
	size_t before = ld->diags->count;
	cfg_decode_map(dec, node, table, n, &a->webhook, NULL);
	if (ld->diags->count != before) {
		return;
	}
	char section[CFG_SHOW_MAX + 16];
	snprintf(section, sizeof(section), "actions.%s", a->name);
	struct cfg_place place = {.section = section, .map = node, .file = node->file, .environment = false};
	webhook_config_validate(&a->webhook, &place, ld->diags);
	if (!webhook_supported()) {
		cfg_report(dec, cfg_map_get(node, "type"),
			   "type: webhook: this build has no webhooks (built without libcurl)");
	}
}

static void
decode_action(struct loader *ld, const struct cfg_node *key, const struct cfg_node *node)
{
	char context[CFG_SHOW_MAX + 16], shown[CFG_SHOW_MAX];
	cfg_show(key->value, shown, sizeof(shown));
	snprintf(context, sizeof(context), "action '%s'", shown);
	struct cfg_decoder dec = {.diags = ld->diags, .context = context};
	if (strcmp(key->value, DEFAULT_ACTION) == 0) {
		cfg_report(&dec, key, "actions: '%s' is built in and cannot be redefined; choose another name",
			   DEFAULT_ACTION);
		return;
	}
	if (!action_name_ok(key->value)) {
		cfg_report(&dec, key, "actions: '%s' is not an action name (letters, digits, '_', '-', '.')", shown);
		return;
	}
	struct action_def a = {.name = cfg_strdup(key->value), .type = ACTION_LOG};
	cfg_apply_defaults(action_keys, N_ACTION_KEYS, &a);
	uint64_t present = 0;
	size_t before = ld->diags->count;
	if (cfg_node_is_null(node)) {
		cfg_report(&dec, key, "%s needs 'type' (log, exec or webhook)", context);
	} else if (node->type == CFG_MAP && cfg_map_get(node, "type") &&
		   strcmp(cfg_map_get(node, "type")->value ? cfg_map_get(node, "type")->value : "", "webhook") == 0) {
		a.type = ACTION_WEBHOOK;
		decode_webhook(ld, &dec, node, &a);
	} else {
		cfg_decode_map(&dec, node, action_keys, N_ACTION_KEYS, &a, &present);
	}
	if (ld->diags->count == before) {
		if (a.type == ACTION_EXEC && !(present & (1u << A_COMMAND))) {
			cfg_report(&dec, node, "%s needs 'command' (type exec)", context);
		}
		if (a.type == ACTION_LOG) {
			static const int exec_only[] = {A_COMMAND, A_TIMEOUT};
			for (size_t i = 0; i < N_OF(exec_only); i++) {
				const char *k = action_keys[exec_only[i]].name;
				if (present & (1u << exec_only[i])) {
					cfg_report(&dec, cfg_map_get(node, k), "%s: only for type exec", k);
				}
			}
		}
	}
	struct config *cfg = ld->cfg;
	cfg->actions = xrealloc(cfg->actions, cfg->action_count + 1, sizeof(*cfg->actions));
	cfg->actions[cfg->action_count++] = a;
}

void
loader_decode_actions(struct loader *ld, const struct cfg_node *node)
{
	if (cfg_node_is_null(node)) {
		return;
	}
	if (node->type != CFG_MAP) {
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(node, got, sizeof(got));
		diag_add(ld->diags, node->file, node->line, node->column,
			 "actions: expected a map of action names to their settings, got %s", got);
		return;
	}
	for (size_t i = 0; i < node->count; i++) {
		decode_action(ld, node->keys[i], node->items[i]);
	}
	/* one queue file, one action: two would fight over its lock and its records */
	const struct config *cfg = ld->cfg;
	for (size_t i = 1; i < cfg->action_count; i++) {
		const struct webhook_config *w = &cfg->actions[i].webhook;
		for (size_t k = 1; k < i && cfg->actions[i].type == ACTION_WEBHOOK && w->queue_file && w->queue_file[0];
		     k++) {
			const struct webhook_config *o = &cfg->actions[k].webhook;
			if (cfg->actions[k].type == ACTION_WEBHOOK && o->queue_file &&
			    strcmp(o->queue_file, w->queue_file) == 0) {
				const struct cfg_node *at =
					cfg_map_get(cfg_map_get(node, cfg->actions[i].name), "queue_file");
				diag_add(
					ld->diags, at ? at->file : node->file, at ? at->line : node->line,
					at ? at->column : node->column,
					"queue_file: %s is already the queue of action '%s': give each webhook its own",
					w->queue_file, cfg->actions[k].name);
			}
		}
	}
}

const char **
config_action_names(const struct config *cfg)
{
	const char **names = xrealloc(NULL, cfg->action_count, sizeof(*names));
	for (size_t i = 0; i < cfg->action_count; i++) {
		names[i] = cfg->actions[i].name;
	}
	return names;
}

static void
report_unknown_action(struct loader *ld, const struct cfg_node *at, const char *name)
{
	char shown[CFG_SHOW_MAX];
	cfg_show(name, shown, sizeof(shown));
	const char **names = config_action_names(ld->cfg);
	const char *hint = cfg_suggest(name, names, ld->cfg->action_count);
	if (hint) {
		diag_add(ld->diags, at->file, at->line, at->column, "unknown action '%s' (did you mean '%s'?)", shown,
			 hint);
	} else {
		diag_add(ld->diags, at->file, at->line, at->column,
			 "unknown action '%s' (define it under 'actions:'; 'log' is built in)", shown);
	}
	free(names);
}

void
loader_decode_notify(struct loader *ld, const struct cfg_node *node)
{
	struct cfg_decoder dec = {.diags = ld->diags, .context = "notify"};
	if (cfg_node_is_null(node)) {
		return;
	}
	if (node->type != CFG_MAP) {
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(node, got, sizeof(got));
		cfg_report(&dec, node, "notify: expected a map like {warning: [log], critical: [log, page-me]}, got %s",
			   got);
		return;
	}
	const char *names[N_OF(notify_keys)];
	for (size_t k = 0; k < N_OF(notify_keys); k++) {
		names[k] = notify_keys[k].name;
	}
	for (size_t i = 0; i < node->count; i++) {
		const struct cfg_node *key = node->keys[i], *value = node->items[i];
		size_t k = 0;
		while (k < N_OF(notify_keys) && strcmp(notify_keys[k].name, key->value) != 0) {
			k++;
		}
		if (k == N_OF(notify_keys)) {
			cfg_report_unknown_key(&dec, key, names, N_OF(notify_keys));
			continue;
		}
		char what[32];
		snprintf(what, sizeof(what), "notify.%s", notify_keys[k].name);
		char **list;
		size_t count;
		if (cfg_decode_string_list(&dec, value, what, "an action name", &list, &count) < 0) {
			continue;
		}
		for (size_t a = 0; a < count; a++) {
			if (!config_find_action(ld->cfg, list[a])) {
				report_unknown_action(ld, value->type == CFG_SEQ ? value->items[a] : value, list[a]);
			}
		}
		enum severity sev = notify_keys[k].severity;
		cfg_free_string_list(ld->cfg->notify[sev]);
		ld->cfg->notify[sev] = list;
		ld->cfg->notify_count[sev] = count;
	}
}

/* Rules that bind actions for one severity only use the global binding for the other. */
void
config_fill_rule_actions(struct config *cfg)
{
	for (size_t i = 0; i < cfg->rules.count; i++) {
		struct rule *r = &cfg->rules.rules[i];
		if (!r->has_actions) {
			continue;
		}
		for (int s = SEVERITY_WARNING; s < SEVERITY_COUNT; s++) {
			if (!r->actions[s]) {
				r->actions[s] = string_list_copy(cfg->notify[s], cfg->notify_count[s]);
				r->action_count[s] = cfg->notify_count[s];
			}
		}
	}
}
