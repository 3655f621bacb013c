/*
 * The configuration file: load (cfg_tree), decode (key tables here and in
 * thresholds/rules_load.c), environment overrides, validate. Every mistake
 * found in the file, its includes and the environment is reported in one
 * run, sorted by file and position. Defaults live in the key tables.
 * Reading files and `include:` are in config_include.c, `actions:` and
 * `notify:` in config_actions.c.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cfg_decode.h"
#include "core/cfg_tree.h"
#include "core/log.h"
#include "core/xalloc.h"
#include "config_priv.h"
#include "config_memory.h"
#include "predict/predict.h"
#include "thresholds/rules_load.h"

#define ENV_PREFIX "environment:"
#define ENV_NAME_MAX 96
#define HOST_NAME_BYTES 256

extern char **environ;

_Static_assert(sizeof(enum tegrastats_mode) == sizeof(int), "tegrastats_mode is decoded as an int");

/* ---- key tables ---- */

static const char *const log_level_names[] = {"error", "warning", "info", "debug", NULL};
static const int log_level_values[] = {LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG};
static const char *const tegrastats_names[] = {"auto", "on", "off", NULL};
static const int tegrastats_values[] = {TEGRASTATS_AUTO, TEGRASTATS_ON, TEGRASTATS_OFF};
static const char *const json_lines_names[] = {"auto", "on", "off", NULL};
static const int json_lines_values[] = {JSON_LINES_AUTO, JSON_LINES_ON, JSON_LINES_OFF};

/* agent.board_name has no default here: an unset name becomes the host name. */
static const struct cfg_key agent_keys[] = {
	CFG_DURATION("interval", struct config, interval_ms, "1s", 0, 10, 3600 * 1000),
	CFG_STRING("root", struct config, root, "", 0),
	CFG_STRING("state_file", struct config, state_file, "/var/lib/tegrawatch/alerts.state", CFG_F_RELOADED),
	CFG_STRING("board_name", struct config, board_name, NULL, CFG_F_NOT_EMPTY | CFG_F_RELOADED),
	CFG_CHOICE("log_level", struct config, log_level, "warning", 0, log_level_names, log_level_values),
	CFG_CHOICE("json_lines", struct config, json_lines, "auto", 0, json_lines_names, json_lines_values),
	CFG_STRING("memory_max", struct config, memory_max, "auto", CFG_F_NOT_EMPTY),
	CFG_STRING("expected_power_mode", struct config, expected_power_mode, "", 0),
};

static const struct cfg_key sources_keys[] = {
	CFG_CHOICE("tegrastats", struct config, tegrastats, "auto", 0, tegrastats_names, tegrastats_values),
	CFG_STRING("tegrastats_program", struct config, tegrastats_program, "tegrastats", CFG_F_NOT_EMPTY),
	CFG_CHOICE("nvml", struct config, nvml, "auto", 0, tegrastats_names, tegrastats_values),
	CFG_DURATION("processes_interval", struct config, processes_interval_ms, "5s", 0, 1000, 3600 * 1000),
};

/* agent.expected_power_mode's form; whether the board has that mode is known only at start (setup.c). */
static int
validate_agent(const void *obj, const struct cfg_place *place, struct diag_list *diags)
{
	const struct config *cfg = obj;
	struct power_mode_expectation e;
	char err[160];
	if (power_mode_expectation_parse(cfg->expected_power_mode, &e, err, sizeof(err)) < 0) {
		cfg_report_key(diags, place, "expected_power_mode", "agent.expected_power_mode: %s", err);
		return -EINVAL;
	}
	return 0;
}

static const struct cfg_section agent_section = {"agent", agent_keys, N_OF(agent_keys), validate_agent};
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
	{&remote_write_config_section, offsetof(struct config, remote_write)},
	{&otlp_config_section, offsetof(struct config, otlp)},
	{&work_config_section, offsetof(struct config, work)},
	{&host_config_section, offsetof(struct config, host)},
};

static void *
section_obj(const struct config *cfg, const struct section *sec)
{
	return (char *)cfg + sec->base;
}

static const char *const top_keys[] = {"agent",   "sources", "mqtt",  "web",  "remote_write", "otlp",     "include",
				       "actions", "notify",  "rules", "work", "host",         "processes"};

bool
config_is_top_key(const char *name)
{
	for (size_t k = 0; k < N_OF(top_keys); k++) {
		if (strcmp(top_keys[k], name) == 0) {
			return true;
		}
	}
	return false;
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
	struct config *cfg = xcalloc(1, sizeof(*cfg));
	for (size_t s = 0; s < N_OF(sections); s++) {
		cfg_apply_defaults(sections[s].sec->keys, sections[s].sec->key_count, section_obj(cfg, &sections[s]));
	}
	config_actions_defaults(cfg);
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
	config_actions_free(cfg);
	procs_config_free(&cfg->procs);
	rule_set_free(&cfg->rules);
	free(cfg);
}

/* ---- sections ---- */

static void
decode_section(struct loader *ld, const struct section *sec, const struct cfg_node *node)
{
	struct cfg_decoder dec = {.diags = ld->diags, .context = sec->sec->name};
	cfg_decode_map(&dec, node, sec->sec->keys, sec->sec->key_count, section_obj(ld->cfg, sec), NULL);
}

void
loader_decode_rules(struct loader *ld, const struct cfg_node *node, const char *file)
{
	rules_decode_refs(node, file, &ld->cfg->rules, &ld->refs, ld->diags);
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
	const char *known[160]; /* every key of every section (64 once left otlp out) */
	size_t nknown = 0;
	char all[160][ENV_NAME_MAX];
	for (size_t s = 0; s < N_OF(sections); s++) {
		struct cfg_decoder dec = {.diags = ld->diags};
		const struct cfg_section *sec = sections[s].sec;
		for (size_t k = 0; k < sec->key_count; k++) {
			const struct cfg_key *key = &sec->keys[k];
			cfg_env_name(sec->name, key->name, name, sizeof(name));
			/* a key left out here would make its own variable "unknown": the table must hold them all */
			assert(nknown < N_OF(all));
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
			loader_note_file(ld, where);
			const struct cfg_key *target = cfg_key_target(sec->keys, sec->key_count, key);
			if (target && target != key) {
				log_warn(
					"%s: %s.%s is now called %s.%s; the old name still works: rename it when you can",
					where, sec->name, key->name, sec->name, target->name);
			}
			if (target) {
				cfg_decode_text(&dec, target, value, where, 0, 0, section_obj(ld->cfg, &sections[s]));
			}
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
		loader_note_file(ld, where);
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
		cfg_report(
			&dec, root,
			"expected a map with agent, sources, mqtt, web, remote_write, otlp, work, include, actions, notify and rules, "
			"got %s",
			got);
		return;
	}
	for (size_t i = 0; i < root->count; i++) {
		const struct cfg_node *key = root->keys[i];
		if (!config_is_top_key(key->value)) {
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
		loader_decode_actions(ld, node);
	}
	if ((node = cfg_map_get(root, "notify"))) {
		loader_decode_notify(ld, node);
	}
	if ((node = cfg_map_get(root, "rules"))) {
		loader_decode_rules(ld, node, path);
	}
	if ((node = cfg_map_get(root, "processes"))) {
		struct cfg_decoder pdec = {.diags = ld->diags, .context = "processes"};
		procs_config_decode(&pdec, node, &ld->cfg->procs);
	}
	if ((node = cfg_map_get(root, "include")) && from_file) {
		loader_decode_include(ld, node, path);
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
	/* across sections: the buffers each module's settings ask for, against agent.memory_max */
	config_memory_validate(ld->cfg, cfg_tree_root(tree), path, env, ld->diags);
	const char **names = config_action_names(ld->cfg);
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
	config_fill_rule_actions(cfg);
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
	loader_note_file(ld, path);
}

int
config_load(const char *path, struct config **out, struct diag_list *diags)
{
	struct loader ld;
	loader_init(&ld, path, diags);
	struct stat st;
	struct cfg_tree *tree;
	int r = loader_read_file(&ld, path, &st, &tree);
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

int
config_load_rules_dir(const char *dir, struct config **out, struct diag_list *diags)
{
	/* a main file of one include, as if it lay in DIR: the pattern is DIR's, escaped by the loader */
	static const char main[] = "include: ['*.yaml']\n";
	size_t size = strlen(dir) + sizeof("/(no configuration)");
	char *name = xrealloc(NULL, size, 1);
	snprintf(name, size, "%s/(no configuration)", dir);
	struct loader ld;
	loader_init(&ld, name, diags);
	struct cfg_tree *tree;
	int r = cfg_tree_load_buffer(name, main, sizeof(main) - 1, &tree, diags);
	if (r == 0) {
		ld.trees = xrealloc(ld.trees, 1, sizeof(*ld.trees));
		ld.trees[ld.tree_count++] = tree;
		r = finish_load(&ld, tree, name, true, true, out);
	} else {
		config_destroy(ld.cfg);
		loader_finish(&ld);
	}
	free(name);
	if (r == 0) {
		free((*out)->path);
		(*out)->path = cfg_strdup(""); /* no file of its own: a reload has nothing to read */
	}
	return r;
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
	case CFG_K_RENAMED:
		break;
	}
	return !key->equal || key->equal(a, b);
}

/* Appends ", NAME" (NAME first without the comma) to BUF at *AT; once it no longer fits, ", ..." and *CUT. */
static void
add_change(char *buf, size_t size, size_t *at, bool *cut, const char *name)
{
	if (*cut || size == 0) {
		return;
	}
	/* keep room for ", ..." so that a cut list says so */
	int w = snprintf(buf + *at, size - *at, "%s%s", *at ? ", " : "", name);
	if (w > 0 && *at + (size_t)w + sizeof(", ...") < size) {
		*at += (size_t)w;
	} else {
		*cut = true;
		snprintf(buf + *at, size - *at, ", ...");
	}
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
			char name[96];
			snprintf(name, sizeof(name), "%s.%s", sec->name, key->name);
			add_change(buf, size, &at, &cut, name);
			n++;
		}
	}
	/* the processes source is made at start, from this list */
	if (!procs_config_equal(&old->procs, &new->procs)) {
		add_change(buf, size, &at, &cut, "processes");
		n++;
	}
	return n;
}
