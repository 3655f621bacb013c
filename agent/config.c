/*
 * The configuration file: load (cfg_tree), decode (key tables here and in
 * thresholds/rules_load.c), environment overrides, validate. Every mistake
 * found in the file, its includes and the environment is reported in one
 * run, sorted by file and position. Defaults live in the key tables.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/core/cfg_decode.h"
#include "agent/core/cfg_tree.h"
#include "agent/core/log.h"
#include "thresholds/rules_load.h"
#include "agent/core/xalloc.h"

#define CONFIG_MAX_INCLUDES 64
#define ENV_PREFIX          "environment:"
#define ENV_NAME_MAX        96
#define HOST_NAME_BYTES     256
#define DEFAULT_ACTION      "log"
#define N_OF(a)             (sizeof(a) / sizeof((a)[0]))

extern char **environ;

_Static_assert(sizeof(enum tegrastats_mode) == sizeof(int), "tegrastats_mode is decoded as an int");
_Static_assert(sizeof(enum action_type) == sizeof(int), "action_type is decoded as an int");

/* ---- key tables ---- */

static const char *const log_level_names[] = {"error", "warning", "info", "debug", NULL};
static const int log_level_values[] = {LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG};
static const char *const tegrastats_names[] = {"auto", "on", "off", NULL};
static const int tegrastats_values[] = {TEGRASTATS_AUTO, TEGRASTATS_ON, TEGRASTATS_OFF};
static const char *const action_type_names[] = {"log", "exec", NULL};
static const int action_type_values[] = {ACTION_LOG, ACTION_EXEC};

/* agent.board_name has no default here: an unset name becomes the host name. */
static const struct cfg_key agent_keys[] = {
	CFG_DURATION("interval", struct config, interval_ms, "1s", 0, 10, 3600 * 1000),
	CFG_STRING("root", struct config, root, "", 0),
	CFG_STRING("state_file", struct config, state_file, "/var/lib/tegrawatch/alerts.state", CFG_F_RELOADED),
	CFG_STRING("board_name", struct config, board_name, NULL, CFG_F_NOT_EMPTY | CFG_F_RELOADED),
	CFG_CHOICE("log_level", struct config, log_level, "warning", 0, log_level_names, log_level_values),
};

static const struct cfg_key sources_keys[] = {
	CFG_CHOICE("tegrastats", struct config, tegrastats, "auto", 0, tegrastats_names, tegrastats_values),
	CFG_STRING("tegrastats_program", struct config, tegrastats_program, "tegrastats", CFG_F_NOT_EMPTY),
};

static const struct cfg_section agent_section = {"agent", agent_keys, N_OF(agent_keys), NULL};
static const struct cfg_section sources_section = {"sources", sources_keys, N_OF(sources_keys), NULL};

/* Every section and where its settings live in struct config; modules own theirs. */
static const struct section {
	const struct cfg_section *sec;
	size_t base;
} sections[] = {
	{&agent_section, 0},
	{&sources_section, 0},
	{&mqtt_config_section, offsetof(struct config, mqtt)},
	{&web_config_section, offsetof(struct config, web)},
};

static void *
section_obj(const struct config *cfg, const struct section *sec)
{
	return (char *)cfg + sec->base;
}

static int decode_command(struct cfg_decoder *dec, const struct cfg_node *node, void *obj);

enum { A_TYPE, A_COMMAND, A_TIMEOUT, N_ACTION_KEYS };

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

static const char *const top_keys[] = {"agent", "sources", "mqtt", "web", "include", "actions", "notify", "rules"};

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
}

/* ---- defaults ---- */

static void
set_host_name(struct config *cfg)
{
	char host[HOST_NAME_BYTES];
	if (gethostname(host, sizeof(host)) != 0 || host[0] == '\0') {
		snprintf(host, sizeof(host), "jetson");
	}
	host[sizeof(host) - 1] = '\0';
	free(cfg->board_name);
	cfg->board_name = cfg_strdup(host);
}

static struct config *
config_new(void)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	if (!cfg) {
		abort();
	}
	for (size_t s = 0; s < N_OF(sections); s++) {
		cfg_apply_defaults(sections[s].sec->keys, sections[s].sec->key_count, section_obj(cfg, &sections[s]));
	}
	cfg->actions = xrealloc(NULL, 1, sizeof(*cfg->actions));
	cfg->actions[0] = (struct action_def){.name = cfg_strdup(DEFAULT_ACTION), .type = ACTION_LOG};
	cfg->action_count = 1;
	for (size_t k = 0; k < N_OF(notify_keys); k++) {
		cfg->notify[notify_keys[k].severity] = string_list_of(notify_keys[k].def);
		cfg->notify_count[notify_keys[k].severity] = 1;
	}
	return cfg;
}

struct config *
config_default(void)
{
	struct config *cfg = config_new();
	set_host_name(cfg);
	return cfg;
}

void
config_destroy(struct config *cfg)
{
	if (!cfg) {
		return;
	}
	free(cfg->path);
	for (size_t s = 0; s < N_OF(sections); s++) {
		cfg_free_strings(sections[s].sec->keys, sections[s].sec->key_count, section_obj(cfg, &sections[s]));
	}
	for (size_t i = 0; i < cfg->action_count; i++) {
		action_finish(&cfg->actions[i]);
	}
	free(cfg->actions);
	for (int s = 0; s < SEVERITY_COUNT; s++) {
		cfg_free_string_list(cfg->notify[s]);
	}
	rule_set_free(&cfg->rules);
	free(cfg);
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

/* ---- files ---- */

/* Everything one load needs: the config being built and what was read. */
struct loader {
	struct config *cfg;
	struct diag_list *diags;
	size_t diags_before;
	struct cfg_tree **trees;
	size_t tree_count;
	char **files; /* in load order, for sorting messages */
	size_t file_count;
	dev_t *devs;
	ino_t *inos;
	size_t include_count; /* files read: their identities follow the main file's in devs/inos */
	size_t include_tries;
	struct rules_refs refs;
};

static void
note_file(struct loader *ld, const char *path)
{
	ld->files = xrealloc(ld->files, ld->file_count + 1, sizeof(*ld->files));
	ld->files[ld->file_count++] = cfg_strdup(path);
}

/* Reads PATH after checking it is a regular file nobody else may write. */
static int
read_file(struct loader *ld, const char *path, struct stat *st, struct cfg_tree **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int err = -errno;
		diag_add(ld->diags, path, 0, 0, "cannot open: %s", strerror(-err));
		return err;
	}
	if (fstat(fd, st) != 0) {
		int err = -errno;
		close(fd);
		diag_add(ld->diags, path, 0, 0, "cannot read: %s", strerror(-err));
		return err;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		diag_add(ld->diags, path, 0, 0, "not a regular file");
		return -EINVAL;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		close(fd);
		/* the file can start programs (exec actions): only its owner may change it */
		diag_add(ld->diags, path, 0, 0,
			 "refusing a configuration file that is group- or world-writable (mode %04o): it can run "
			 "programs through exec actions; chmod go-w it",
			 (unsigned)(st->st_mode & 07777));
		return -EINVAL;
	}
	/* one byte more than allowed is enough for cfg_tree to refuse the size */
	size_t cap = CFG_MAX_FILE_BYTES + 1, len = 0;
	char *buf = xrealloc(NULL, cap, 1);
	while (len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			int err = -errno;
			close(fd);
			free(buf);
			diag_add(ld->diags, path, 0, 0, "cannot read: %s", strerror(-err));
			return err;
		}
		if (n == 0) {
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	int r = cfg_tree_load_buffer(path, buf, len, out, ld->diags);
	free(buf);
	if (r == 0) {
		ld->trees = xrealloc(ld->trees, ld->tree_count + 1, sizeof(*ld->trees));
		ld->trees[ld->tree_count++] = *out;
	}
	return r;
}

/* ---- sections ---- */

static void
decode_section(struct loader *ld, const struct section *sec, const struct cfg_node *node)
{
	struct cfg_decoder dec = {.diags = ld->diags, .context = sec->sec->name};
	cfg_decode_map(&dec, node, sec->sec->keys, sec->sec->key_count, section_obj(ld->cfg, sec), NULL);
}

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
		cfg_report(&dec, key, "%s needs 'type' (log or exec)", context);
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

static void
decode_actions(struct loader *ld, const struct cfg_node *node)
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
}

static const char **
action_names(const struct config *cfg)
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
	const char **names = action_names(ld->cfg);
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

static void
decode_notify(struct loader *ld, const struct cfg_node *node)
{
	struct cfg_decoder dec = {.diags = ld->diags, .context = "notify"};
	if (cfg_node_is_null(node)) {
		return;
	}
	if (node->type != CFG_MAP) {
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(node, got, sizeof(got));
		cfg_report(&dec, node,
			   "notify: expected a map like {warning: [log], critical: [log, page-me]}, got %s", got);
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

static void
decode_rules(struct loader *ld, const struct cfg_node *node, const char *file)
{
	rules_decode_refs(node, file, &ld->cfg->rules, &ld->refs, ld->diags);
}

/* ---- includes ---- */

static bool
has_wildcard(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* DIR/PATTERN with DIR's glob characters escaped; PATTERN alone when absolute or DIR is "". */
static char *
include_pattern(const char *dir, const char *pattern, bool escape)
{
	if (pattern[0] == '/' || dir[0] == '\0') {
		return cfg_strdup(pattern);
	}
	size_t dl = strlen(dir), pl = strlen(pattern);
	char *out = xrealloc(NULL, 2 * dl + pl + 2, 1);
	size_t at = 0;
	for (size_t i = 0; i < dl; i++) {
		if (escape && strchr("*?[]\\", dir[i])) {
			out[at++] = '\\';
		}
		out[at++] = dir[i];
	}
	if (at == 0 || out[at - 1] != '/') {
		out[at++] = '/';
	}
	memcpy(out + at, pattern, pl + 1);
	return out;
}

static void
load_include_file(struct loader *ld, const struct cfg_node *at, const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0) {
		if (st.st_dev == ld->devs[0] && st.st_ino == ld->inos[0]) {
			char shown[CFG_SHOW_MAX];
			cfg_show(path, shown, sizeof(shown));
			diag_add(ld->diags, at->file, at->line, at->column,
				 "include: '%s' is the main configuration file", shown);
			return;
		}
		for (size_t i = 1; i < ld->include_count + 1; i++) {
			if (st.st_dev == ld->devs[i] && st.st_ino == ld->inos[i]) {
				return; /* matched by two patterns: once is enough */
			}
		}
	}
	/* unreadable files count too: a pattern matching thousands of them stays cheap */
	if (ld->include_tries++ == CONFIG_MAX_INCLUDES) {
		diag_add(ld->diags, at->file, at->line, at->column, "include: more than %d files",
			 CONFIG_MAX_INCLUDES);
	}
	if (ld->include_tries > CONFIG_MAX_INCLUDES) {
		return;
	}
	note_file(ld, path);
	struct cfg_tree *tree;
	if (read_file(ld, path, &st, &tree) < 0) {
		return;
	}
	ld->include_count++;
	ld->devs[ld->include_count] = st.st_dev;
	ld->inos[ld->include_count] = st.st_ino;

	const struct cfg_node *root = cfg_tree_root(tree);
	struct cfg_decoder dec = {.diags = ld->diags, .context = "an included file"};
	if (root->type != CFG_MAP) {
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(root, got, sizeof(got));
		cfg_report(&dec, root, "an included file holds only a 'rules:' list, got %s", got);
		return;
	}
	static const char *const include_keys[] = {"rules"};
	for (size_t i = 0; i < root->count; i++) {
		const struct cfg_node *key = root->keys[i];
		if (strcmp(key->value, "rules") == 0) {
			decode_rules(ld, root->items[i], path);
		} else if (strcmp(key->value, "include") == 0) {
			cfg_report(&dec, key, "include: an included file cannot include other files");
		} else {
			bool top = false;
			for (size_t k = 0; k < N_OF(top_keys); k++) {
				top = top || strcmp(top_keys[k], key->value) == 0;
			}
			if (top) {
				cfg_report(&dec, key,
					   "'%s' belongs in the main file; an included file holds only 'rules:'",
					   key->value);
			} else {
				cfg_report_unknown_key(&dec, key, include_keys, 1);
			}
		}
	}
}

static void
include_one(struct loader *ld, const struct cfg_node *pat, const char *dir)
{
	char got[CFG_SHOW_MAX + 8];
	if (pat->type != CFG_SCALAR || cfg_node_is_null(pat) || pat->value[0] == '\0') {
		cfg_describe(pat, got, sizeof(got));
		diag_add(ld->diags, pat->file, pat->line, pat->column,
			 "include: expected a file name or pattern, got %s", got);
		return;
	}
	if (!has_wildcard(pat->value)) {
		char *path = include_pattern(dir, pat->value, false);
		struct stat st;
		if (stat(path, &st) != 0) {
			char shown[CFG_SHOW_MAX];
			cfg_show(pat->value, shown, sizeof(shown));
			diag_add(ld->diags, pat->file, pat->line, pat->column, "include: cannot open '%s': %s", shown,
				 strerror(errno));
		} else {
			load_include_file(ld, pat, path);
		}
		free(path);
		return;
	}
	char *pattern = include_pattern(dir, pat->value, true);
	glob_t g;
	int r = glob(pattern, 0, NULL, &g);
	free(pattern);
	if (r == GLOB_NOMATCH) {
		return; /* an empty rules.d is fine */
	}
	if (r != 0) {
		char shown[CFG_SHOW_MAX];
		cfg_show(pat->value, shown, sizeof(shown));
		diag_add(ld->diags, pat->file, pat->line, pat->column, "include: cannot expand '%s'", shown);
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		load_include_file(ld, pat, g.gl_pathv[i]);
	}
	globfree(&g);
}

static void
decode_include(struct loader *ld, const struct cfg_node *node, const char *main_path)
{
	if (cfg_node_is_null(node)) {
		return;
	}
	/* patterns are relative to the main file's directory */
	const char *slash = strrchr(main_path, '/');
	char *dir;
	if (!slash) {
		dir = cfg_strdup("");
	} else if (slash == main_path) {
		dir = cfg_strdup("/");
	} else {
		dir = cfg_strdup(main_path);
		dir[slash - main_path] = '\0';
	}
	if (node->type == CFG_MAP) {
		diag_add(ld->diags, node->file, node->line, node->column,
			 "include: expected a file pattern or a list of them, got a map");
	} else if (node->type == CFG_SCALAR) {
		include_one(ld, node, dir);
	} else {
		for (size_t i = 0; i < node->count; i++) {
			include_one(ld, node->items[i], dir);
		}
	}
	free(dir);
}

/* ---- environment ---- */

static int
cmp_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
apply_environment(struct loader *ld)
{
	char name[ENV_NAME_MAX], where[ENV_NAME_MAX + sizeof(ENV_PREFIX)];
	const char *known[64];
	size_t nknown = 0;
	char all[64][ENV_NAME_MAX];
	for (size_t s = 0; s < N_OF(sections); s++) {
		struct cfg_decoder dec = {.diags = ld->diags};
		const struct cfg_section *sec = sections[s].sec;
		for (size_t k = 0; k < sec->key_count; k++) {
			const struct cfg_key *key = &sec->keys[k];
			cfg_env_name(sec->name, key->name, name, sizeof(name));
			if (nknown < N_OF(all)) {
				snprintf(all[nknown], sizeof(all[nknown]), "%s", name);
				known[nknown] = all[nknown];
				nknown++;
			}
			const char *value = getenv(name);
			if (!value) {
				continue;
			}
			snprintf(where, sizeof(where), ENV_PREFIX "%s", name);
			note_file(ld, where);
			cfg_decode_text(&dec, key, value, where, 0, 0, section_obj(ld->cfg, &sections[s]));
		}
	}
	/* a misspelt override would be ignored silently: refuse it (sorted: environ has no order) */
	char **unknown = NULL;
	size_t nunknown = 0;
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
		if (len >= sizeof(name)) {
			continue;
		}
		memcpy(name, *e, len);
		name[len] = '\0';
		bool ours = false;
		for (size_t s = 0; s < N_OF(sections); s++) {
			char prefix[ENV_NAME_MAX];
			cfg_env_name(sections[s].sec->name, "", prefix, sizeof(prefix));
			ours = ours || strncmp(name, prefix, strlen(prefix)) == 0;
		}
		bool found = false;
		for (size_t k = 0; k < nknown && !found; k++) {
			found = strcmp(known[k], name) == 0;
		}
		/* a secret, not a setting: read by the MQTT sink, never by the loader */
		found = found || strcmp(name, MQTT_PASSWORD_ENV) == 0;
		if (ours && !found) {
			unknown = xrealloc(unknown, nunknown + 1, sizeof(*unknown));
			unknown[nunknown++] = cfg_strdup(name);
		}
	}
	if (nunknown > 1) { /* qsort(NULL, 0) is undefined */
		qsort(unknown, nunknown, sizeof(*unknown), cmp_string);
	}
	for (size_t i = 0; i < nunknown; i++) {
		snprintf(where, sizeof(where), ENV_PREFIX "%s", unknown[i]);
		note_file(ld, where);
		const char *hint = cfg_suggest(unknown[i], known, nknown);
		if (hint) {
			diag_add(ld->diags, where, 0, 0, "unknown setting (did you mean %s?)", hint);
		} else {
			diag_add(ld->diags, where, 0, 0, "unknown setting (see docs/configuration.md)");
		}
		free(unknown[i]);
	}
	free(unknown);
}

/* ---- putting it together ---- */

/* Rules that bind actions for one severity only use the global binding for the other. */
static void
fill_rule_actions(struct config *cfg)
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

struct sort_item {
	size_t rank;
	size_t order;
	struct diag d;
};

static int
cmp_diag(const void *a, const void *b)
{
	const struct sort_item *x = a, *y = b;
	if (x->rank != y->rank) {
		return x->rank < y->rank ? -1 : 1;
	}
	if (x->d.line != y->d.line) {
		return x->d.line < y->d.line ? -1 : 1;
	}
	if (x->d.column != y->d.column) {
		return x->d.column < y->d.column ? -1 : 1;
	}
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Orders the new messages by file (load order), line and column. */
static void
sort_diags(struct loader *ld)
{
	struct diag_list *list = ld->diags;
	size_t n = list->count - ld->diags_before;
	if (n < 2) {
		return;
	}
	struct sort_item *items = xrealloc(NULL, n, sizeof(*items));
	for (size_t i = 0; i < n; i++) {
		struct diag *d = &list->items[ld->diags_before + i];
		size_t rank = ld->file_count;
		for (size_t f = 0; f < ld->file_count; f++) {
			if (strcmp(ld->files[f], d->file) == 0) {
				rank = f;
				break;
			}
		}
		items[i] = (struct sort_item){rank, i, *d};
	}
	if (n > 1) { /* qsort(NULL, 0) is undefined */
		qsort(items, n, sizeof(*items), cmp_diag);
	}
	for (size_t i = 0; i < n; i++) {
		list->items[ld->diags_before + i] = items[i].d;
	}
	free(items);
}

static void
loader_finish(struct loader *ld)
{
	for (size_t i = 0; i < ld->tree_count; i++) {
		cfg_tree_destroy(ld->trees[i]);
	}
	free(ld->trees);
	for (size_t i = 0; i < ld->file_count; i++) {
		free(ld->files[i]);
	}
	free(ld->files);
	free(ld->devs);
	free(ld->inos);
	rules_refs_free(&ld->refs);
}

/* Decodes the main file's ROOT into ld->cfg. */
static void
decode_main(struct loader *ld, const struct cfg_node *root, const char *path, bool from_file)
{
	struct cfg_decoder dec = {.diags = ld->diags, .context = "the configuration"};
	if (root->type != CFG_MAP) {
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(root, got, sizeof(got));
		cfg_report(&dec, root,
			   "expected a map with agent, sources, mqtt, web, include, actions, notify and rules, got %s",
			   got);
		return;
	}
	for (size_t i = 0; i < root->count; i++) {
		const struct cfg_node *key = root->keys[i];
		bool known = false;
		for (size_t k = 0; k < N_OF(top_keys); k++) {
			known = known || strcmp(top_keys[k], key->value) == 0;
		}
		if (!known) {
			cfg_report_unknown_key(&dec, key, top_keys, N_OF(top_keys));
		}
	}
	for (size_t s = 0; s < N_OF(sections); s++) {
		const struct cfg_node *node = cfg_map_get(root, sections[s].sec->name);
		if (node) {
			decode_section(ld, &sections[s], node);
		}
	}
	/* actions before everything that names them */
	const struct cfg_node *node;
	if ((node = cfg_map_get(root, "actions"))) {
		decode_actions(ld, node);
	}
	if ((node = cfg_map_get(root, "notify"))) {
		decode_notify(ld, node);
	}
	if ((node = cfg_map_get(root, "rules"))) {
		decode_rules(ld, node, path);
	}
	if ((node = cfg_map_get(root, "include")) && from_file) {
		decode_include(ld, node, path);
	} else if (node && !cfg_node_is_null(node)) {
		diag_add(ld->diags, node->file, node->line, node->column,
			 "include: not available here (the configuration was not read from a file)");
	}
}

/* Each module's checks of its own section (files it will read, keys that go together). */
static void
validate_sections(struct loader *ld, const struct cfg_node *root, const char *path, bool env)
{
	for (size_t s = 0; s < N_OF(sections); s++) {
		const struct cfg_section *sec = sections[s].sec;
		if (!sec->validate) {
			continue;
		}
		const struct cfg_node *map = root->type == CFG_MAP ? cfg_map_get(root, sec->name) : NULL;
		struct cfg_place place = {
			.section = sec->name,
			.map = map && map->type == CFG_MAP ? map : NULL,
			.file = path,
			.environment = env,
		};
		sec->validate(section_obj(ld->cfg, &sections[s]), &place, ld->diags);
	}
}

/* Decodes TREE (the main file, already read), validates and hands over. */
static int
finish_load(struct loader *ld, const struct cfg_tree *tree, const char *path, bool from_file, bool env,
	    struct config **out)
{
	ld->cfg->path = cfg_strdup(path);
	decode_main(ld, cfg_tree_root(tree), path, from_file);
	if (env) {
		apply_environment(ld);
	}
	if (!ld->cfg->board_name) {
		set_host_name(ld->cfg);
	}
	validate_sections(ld, cfg_tree_root(tree), path, env);
	const char **names = action_names(ld->cfg);
	rules_validate(&ld->cfg->rules, &ld->refs, names, ld->cfg->action_count, ld->diags);
	free(names);

	sort_diags(ld);
	bool failed = ld->diags->count != ld->diags_before;
	struct config *cfg = ld->cfg;
	loader_finish(ld);
	if (failed) {
		config_destroy(cfg);
		return -EINVAL;
	}
	fill_rule_actions(cfg);
	*out = cfg;
	return 0;
}

static void
loader_init(struct loader *ld, const char *path, struct diag_list *diags)
{
	*ld = (struct loader){.diags = diags, .diags_before = diags->count};
	ld->devs = xrealloc(NULL, CONFIG_MAX_INCLUDES + 1, sizeof(*ld->devs));
	ld->inos = xrealloc(NULL, CONFIG_MAX_INCLUDES + 1, sizeof(*ld->inos));
	ld->cfg = config_new();
	note_file(ld, path);
}

int
config_load(const char *path, struct config **out, struct diag_list *diags)
{
	struct loader ld;
	loader_init(&ld, path, diags);
	struct stat st;
	struct cfg_tree *tree;
	int r = read_file(&ld, path, &st, &tree);
	if (r < 0) {
		config_destroy(ld.cfg);
		loader_finish(&ld);
		return r;
	}
	ld.devs[0] = st.st_dev;
	ld.inos[0] = st.st_ino;
	return finish_load(&ld, tree, path, true, true, out);
}

static int
load_buffer(const char *name, const char *buf, size_t len, bool env, struct config **out, struct diag_list *diags)
{
	if (!name) {
		name = "";
	}
	struct loader ld;
	loader_init(&ld, name, diags);
	struct cfg_tree *tree;
	int r = cfg_tree_load_buffer(name, buf, len, &tree, diags);
	if (r < 0) {
		config_destroy(ld.cfg);
		loader_finish(&ld);
		return r;
	}
	ld.trees = xrealloc(ld.trees, 1, sizeof(*ld.trees));
	ld.trees[ld.tree_count++] = tree;
	return finish_load(&ld, tree, name, false, env, out);
}

int
config_load_buffer(const char *name, const char *buf, size_t len, struct config **out, struct diag_list *diags)
{
	return load_buffer(name, buf, len, false, out, diags);
}

int
config_load_environment(struct config **out, struct diag_list *diags)
{
	return load_buffer("", "", 0, true, out, diags);
}

/* ---- what a reload cannot apply ---- */

static bool
strings_equal(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* The value of KEY in A and B is the same. */
static bool
key_equal(const struct cfg_key *key, const void *a, const void *b)
{
	const char *pa = (const char *)a + key->offset;
	const char *pb = (const char *)b + key->offset;
	switch (key->kind) {
	case CFG_K_STRING:
		return strings_equal(*(char *const *)(const void *)pa, *(char *const *)(const void *)pb);
	case CFG_K_DURATION:
		return *(const int64_t *)(const void *)pa == *(const int64_t *)(const void *)pb;
	case CFG_K_NUMBER:
		return *(const double *)(const void *)pa == *(const double *)(const void *)pb;
	case CFG_K_CHOICE:
	case CFG_K_INT:
		return *(const int *)(const void *)pa == *(const int *)(const void *)pb;
	case CFG_K_CUSTOM:
		break;
	}
	return !key->equal || key->equal(a, b);
}

size_t
config_restart_changes(const struct config *old, const struct config *new, char *buf, size_t size)
{
	size_t n = 0, at = 0;
	bool cut = false;
	if (size > 0) {
		buf[0] = '\0';
	}
	for (size_t s = 0; s < N_OF(sections); s++) {
		const struct cfg_section *sec = sections[s].sec;
		for (size_t k = 0; k < sec->key_count; k++) {
			const struct cfg_key *key = &sec->keys[k];
			if ((key->flags & CFG_F_RELOADED) ||
			    key_equal(key, section_obj(old, &sections[s]), section_obj(new, &sections[s]))) {
				continue;
			}
			n++;
			if (cut || size == 0) {
				continue;
			}
			/* keep room for ", ..." so that a cut list says so */
			int w = snprintf(buf + at, size - at, "%s%s.%s", at ? ", " : "", sec->name, key->name);
			if (w > 0 && at + (size_t)w + sizeof(", ...") < size) {
				at += (size_t)w;
			} else {
				cut = true;
				snprintf(buf + at, size - at, ", ...");
			}
		}
	}
	return n;
}
