/*
 * The configuration loader (agent/config.c, core/cfg_decode.c,
 * thresholds/rules_load.c, thresholds/catalog.c): good files decode to the
 * expected values, environment overrides apply, and every bad file in
 * tests/fixtures/config/bad/ gives exactly the messages in its .expected
 * file. Paths are relative to tests/fixtures/config (the test chdirs
 * there), so the expectations hold no absolute paths.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/cfg_decode.h"
#include "agent/commands.h"
#include "agent/config.h"
#include "core/log.h"
#include "thresholds/catalog.h"
#include "thresholds/rules_load.h"
#include "tests/unit/emulator.h"

#define CONFIG_DIR     FIXTURES_DIR "/config"
#define FAST_MS (100.0 * emulator_slowdown()) /* generous for ASan on a small CI box; loads take well under 5 ms */
#define LINE_MAX_BYTES 1024

extern char **environ;

static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Overrides from the developer's shell must not leak into the tests. */
static void
clear_env(void)
{
	for (;;) {
		char name[256] = "";
		for (char **e = environ; e && *e; e++) {
			if (strncmp(*e, "TEGRAWATCH_", 11) == 0) {
				const char *eq = strchr(*e, '=');
				size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
				if (len < sizeof(name)) {
					memcpy(name, *e, len);
					name[len] = '\0';
				}
				break;
			}
		}
		if (!name[0]) {
			return;
		}
		unsetenv(name);
	}
}

static int
setup(void **state)
{
	(void)state;
	clear_env();
	return chdir(CONFIG_DIR);
}

/* Loads PATH, which must be fine. */
static struct config *
load_ok(const char *path)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg = NULL;
	int r = config_load(path, &cfg, &diags);
	diag_list_print(&diags, stderr);
	assert_int_equal(r, 0);
	assert_int_equal(diags.count, 0);
	assert_non_null(cfg);
	diag_list_free(&diags);
	return cfg;
}

/* Loads PATH, which must fail with exactly the N lines of WANT. */
static void
load_bad(const char *path, const char *const *want, size_t n)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg = (struct config *)&diags; /* must stay untouched */
	int r = config_load(path, &cfg, &diags);
	assert_true(r < 0);
	assert_ptr_equal(cfg, (struct config *)&diags);
	for (size_t i = 0; i < diags.count || i < n; i++) {
		char got[LINE_MAX_BYTES] = "(nothing)";
		if (i < diags.count) {
			diag_format(&diags.items[i], got, sizeof(got));
		}
		if (i >= n || strcmp(got, want[i]) != 0) {
			fprintf(stderr, "%s: message %zu\n  want: %s\n  got:  %s\n", path, i + 1,
				i < n ? want[i] : "(nothing)", got);
			fail();
		}
	}
	diag_list_free(&diags);
}

static void
assert_strv(char *const *got, size_t count, const char *const *want, size_t n)
{
	assert_int_equal(count, n);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(got[i], want[i]);
	}
}

static const struct rule *
find_rule(const struct config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->rules.count; i++) {
		if (strcmp(cfg->rules.rules[i].name, name) == 0) {
			return &cfg->rules.rules[i];
		}
	}
	fail_msg("no rule %s", name);
	return NULL;
}

/* ---- good files ---- */

static void
check_defaults(const struct config *cfg)
{
	char host[256] = "";
	gethostname(host, sizeof(host));
	assert_int_equal(cfg->interval_ms, 1000);
	assert_string_equal(cfg->root, "");
	assert_string_equal(cfg->state_file, "/var/lib/tegrawatch/alerts.state");
	assert_string_equal(cfg->board_name, host[0] ? host : "jetson");
	assert_int_equal(cfg->log_level, LOG_WARN);
	assert_int_equal(cfg->tegrastats, TEGRASTATS_AUTO);
	assert_string_equal(cfg->tegrastats_program, "tegrastats");
	assert_int_equal(cfg->action_count, 1);
	assert_string_equal(cfg->actions[0].name, "log");
	assert_int_equal(cfg->actions[0].type, ACTION_LOG);
	static const char *const log_only[] = {"log"};
	assert_strv(cfg->notify[SEVERITY_WARNING], cfg->notify_count[SEVERITY_WARNING], log_only, 1);
	assert_strv(cfg->notify[SEVERITY_CRITICAL], cfg->notify_count[SEVERITY_CRITICAL], log_only, 1);
	assert_int_equal(cfg->rules.count, 0);
}

static void
test_defaults(void **state)
{
	(void)state;
	struct config *cfg = config_default();
	check_defaults(cfg);
	assert_null(config_find_action(cfg, "page-me"));
	assert_non_null(config_find_action(cfg, "log"));
	config_destroy(cfg);
	config_destroy(NULL);
}

static void
test_empty_file(void **state)
{
	(void)state;
	struct config *cfg = load_ok("good/empty.yaml");
	check_defaults(cfg);
	assert_string_equal(cfg->path, "good/empty.yaml");
	config_destroy(cfg);
}

static void
test_full_file(void **state)
{
	(void)state;
	struct config *cfg = load_ok("good/full.yaml");
	assert_int_equal(cfg->interval_ms, 90000);
	assert_string_equal(cfg->root, "/srv/board");
	assert_string_equal(cfg->state_file, "");
	assert_string_equal(cfg->board_name, "lab-7");
	assert_int_equal(cfg->log_level, LOG_DEBUG);
	assert_int_equal(cfg->tegrastats, TEGRASTATS_OFF);
	assert_string_equal(cfg->tegrastats_program, "/opt/bin/tegrastats");

	assert_int_equal(cfg->action_count, 3);
	const struct action_def *page = config_find_action(cfg, "page-me");
	assert_non_null(page);
	assert_int_equal(page->type, ACTION_EXEC);
	static const char *const argv[] = {"/usr/local/bin/page", "--team", "robots"};
	assert_strv(page->argv, page->argc, argv, 3);
	assert_null(page->argv[3]);
	assert_int_equal(page->timeout_ms, 2500);
	const struct action_def *note = config_find_action(cfg, "note");
	assert_non_null(note);
	assert_int_equal(note->type, ACTION_LOG);
	assert_null(note->argv);
	static const char *const warn_actions[] = {"note"};
	static const char *const crit_actions[] = {"log", "page-me"};
	assert_strv(cfg->notify[SEVERITY_WARNING], cfg->notify_count[SEVERITY_WARNING], warn_actions, 1);
	assert_strv(cfg->notify[SEVERITY_CRITICAL], cfg->notify_count[SEVERITY_CRITICAL], crit_actions, 2);

	/* the main file's rules first, then the includes in name order, each once */
	assert_int_equal(cfg->rules.count, 5);
	static const char *const order[] = {"soc-hot", "gpu-capped", "mode", "oc", "fan-stopped"};
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(cfg->rules.rules[i].name, order[i]);
	}

	const struct rule *r = find_rule(cfg, "soc-hot");
	assert_string_equal(r->metric, "temp.soc0_c");
	assert_int_equal(r->op, RULE_ABOVE);
	const struct threshold *w = &r->level[SEVERITY_WARNING], *c = &r->level[SEVERITY_CRITICAL];
	assert_true(w->set);
	assert_int_equal(w->ref, REF_PASSIVE_TRIP);
	assert_true(w->scale == 1.0 && w->offset == -10.0 && w->has_fallback && w->fallback == 85.0);
	assert_true(c->set);
	assert_int_equal(c->ref, REF_PASSIVE_TRIP);
	assert_true(c->scale == 1.0 && c->offset == 2.5 && !c->has_fallback);
	assert_false(r->clear_is_value);
	assert_true(r->clear == 3.0);
	assert_int_equal(r->for_ms, 10000);
	assert_int_equal(r->clear_for_ms, 30000);
	assert_int_equal(r->absent_for_ms, 60000);
	assert_int_equal(r->absent_severity, SEVERITY_CRITICAL);
	assert_int_equal(r->repeat_ms, 4 * 3600 * 1000);
	assert_int_equal(r->mode_count, 2);
	assert_string_equal(r->modes[0], "MAXN");
	assert_string_equal(r->modes[1], "0");
	assert_int_equal(r->label_count, 2);
	assert_string_equal(r->labels[0].key, "team");
	assert_string_equal(r->labels[0].value, "robots");
	assert_string_equal(r->labels[1].key, "room");
	assert_string_equal(r->labels[1].value, "42");
	assert_string_equal(r->summary, "{{board}}: {{metric}} at {{ value }} C");
	assert_string_equal(r->description, "{{labels.team}} on call");
	/* critical bound here; warning falls back to notify: */
	assert_true(r->has_actions);
	static const char *const page_only[] = {"page-me"};
	assert_strv(r->actions[SEVERITY_CRITICAL], r->action_count[SEVERITY_CRITICAL], page_only, 1);
	assert_strv(r->actions[SEVERITY_WARNING], r->action_count[SEVERITY_WARNING], warn_actions, 1);
	assert_string_equal(r->file, "good/full.yaml");
	assert_int_equal(r->line, 25);
	assert_int_equal(r->column, 5);

	r = find_rule(cfg, "gpu-capped");
	assert_int_equal(r->op, RULE_BELOW);
	w = &r->level[SEVERITY_WARNING];
	c = &r->level[SEVERITY_CRITICAL];
	assert_int_equal(w->ref, REF_CEILING);
	assert_true(w->scale == 0.9 && w->offset == 0.0 && !w->has_fallback);
	assert_int_equal(c->ref, REF_HW_MAX);
	assert_true(c->scale == 0.5 && c->offset == -10.0 && c->has_fallback && c->fallback == 100.0);
	assert_true(r->clear_is_value);
	assert_true(r->clear == 1000.0);
	assert_false(r->has_actions);
	assert_int_equal(r->mode_count, 0);
	/* defaults from the key table */
	assert_string_equal(r->summary, "{{rule}}: {{metric}} is {{value}} (threshold {{threshold}})");
	assert_null(r->description);
	assert_int_equal(r->for_ms, 0);
	assert_int_equal(r->repeat_ms, 0);
	assert_int_equal(r->absent_for_ms, 0);
	assert_int_equal(r->absent_severity, SEVERITY_WARNING);

	r = find_rule(cfg, "mode");
	assert_int_equal(r->op, RULE_CHANGES);
	assert_int_equal(r->event_severity, SEVERITY_WARNING);
	assert_false(r->level[SEVERITY_WARNING].set);
	assert_false(r->level[SEVERITY_CRITICAL].set);
	assert_string_equal(r->file, "good/rules.d/10-board.yaml");
	assert_int_equal(r->line, 2);
	r = find_rule(cfg, "oc");
	assert_int_equal(r->op, RULE_INCREASES);
	assert_string_equal(r->metric, "oc.*.events");
	assert_int_equal(r->event_severity, SEVERITY_CRITICAL);

	r = find_rule(cfg, "fan-stopped");
	assert_true(r->has_actions);
	assert_int_equal(r->action_count[SEVERITY_WARNING], 0);
	assert_non_null(r->actions[SEVERITY_WARNING]); /* an empty list, not "use notify" */
	static const char *const log_only[] = {"log"};
	assert_strv(r->actions[SEVERITY_CRITICAL], r->action_count[SEVERITY_CRITICAL], log_only, 1);
	config_destroy(cfg);
}

/* The shipped files: configs/tegrawatch.yaml and its rules.d. */
static void
test_shipped_configs(void **state)
{
	(void)state;
	struct config *cfg = load_ok(FIXTURES_DIR "/../../configs/tegrawatch.yaml");
	assert_int_equal(cfg->interval_ms, 1000);
	assert_non_null(config_find_action(cfg, "page-me"));

	const struct rule *r = find_rule(cfg, "throttling");
	assert_string_equal(r->metric, "throttle.active");
	assert_true(r->level[SEVERITY_CRITICAL].set && r->level[SEVERITY_CRITICAL].offset == 1.0);
	assert_false(r->level[SEVERITY_WARNING].set);
	assert_int_equal(r->for_ms, 5000);
	assert_non_null(strstr(r->summary, "{{throttle}}"));

	r = find_rule(cfg, "power-mode-changed");
	assert_string_equal(r->metric, "nvpmodel.id");
	assert_int_equal(r->op, RULE_CHANGES);
	assert_int_equal(r->event_severity, SEVERITY_WARNING);

	r = find_rule(cfg, "over-current");
	assert_string_equal(r->metric, "oc.*.events");
	assert_int_equal(r->op, RULE_INCREASES);
	assert_int_equal(r->event_severity, SEVERITY_CRITICAL);

	r = find_rule(cfg, "temperature");
	assert_string_equal(r->metric, "temp.*_c");
	const struct threshold *w = &r->level[SEVERITY_WARNING], *c = &r->level[SEVERITY_CRITICAL];
	assert_true(w->ref == REF_PASSIVE_TRIP && w->offset == -10.0 && w->has_fallback && w->fallback == 85.0);
	assert_true(c->ref == REF_PASSIVE_TRIP && c->offset == -3.0 && c->has_fallback && c->fallback == 95.0);
	assert_true(!r->clear_is_value && r->clear == 3.0);
	assert_int_equal(r->for_ms, 10000);
	config_destroy(cfg);
}

/* ---- environment ---- */

static void
test_env_overrides(void **state)
{
	(void)state;
	setenv("TEGRAWATCH_AGENT_INTERVAL", "5s", 1);
	setenv("TEGRAWATCH_AGENT_STATE_FILE", "", 1);
	setenv("TEGRAWATCH_AGENT_LOG_LEVEL", "info", 1);
	setenv("TEGRAWATCH_AGENT_ROOT", "/tmp/board", 1);
	setenv("TEGRAWATCH_AGENT_BOARD_NAME", "from-env", 1);
	setenv("TEGRAWATCH_SOURCES_TEGRASTATS", "on", 1);
	setenv("TEGRAWATCH_SOURCES_TEGRASTATS_PROGRAM", "/bin/fake-tegrastats", 1);
	struct config *cfg = load_ok("good/full.yaml");
	assert_int_equal(cfg->interval_ms, 5000);
	assert_string_equal(cfg->state_file, "");
	assert_int_equal(cfg->log_level, LOG_INFO);
	assert_string_equal(cfg->root, "/tmp/board");
	assert_string_equal(cfg->board_name, "from-env");
	assert_int_equal(cfg->tegrastats, TEGRASTATS_ON);
	assert_string_equal(cfg->tegrastats_program, "/bin/fake-tegrastats");
	config_destroy(cfg);

	/* an empty file takes them too */
	setenv("TEGRAWATCH_AGENT_STATE_FILE", "/run/alerts", 1);
	cfg = load_ok("good/empty.yaml");
	assert_int_equal(cfg->interval_ms, 5000);
	assert_string_equal(cfg->state_file, "/run/alerts");
	config_destroy(cfg);
	clear_env();
}

static void
test_env_errors(void **state)
{
	(void)state;
	setenv("TEGRAWATCH_AGENT_INTERVAL", "ten", 1);
	setenv("TEGRAWATCH_AGENT_LOG_LEVEL", "warn", 1);
	setenv("TEGRAWATCH_AGENT_BOARD_NAME", "", 1);
	setenv("TEGRAWATCH_SOURCES_TEGRASTAT", "off", 1);
	setenv("TEGRAWATCH_AGENT_COLOUR", "red", 1);
	/* file errors first, then the environment in key-table order, then unknown names */
	static const char *const want[] = {
		"bad/02-unknown-agent-key.yaml:2:3: unknown key 'intervall' in agent (did you mean 'interval'?)",
		"environment:TEGRAWATCH_AGENT_INTERVAL: expected a duration like 10s, 5m or 1h30m, got 'ten'",
		"environment:TEGRAWATCH_AGENT_BOARD_NAME: must not be empty",
		("environment:TEGRAWATCH_AGENT_LOG_LEVEL: expected error, warning, info or debug, got 'warn' (did you "
		 "mean 'warning'?)"),
		"environment:TEGRAWATCH_AGENT_COLOUR: unknown setting (see docs/configuration.md)",
		"environment:TEGRAWATCH_SOURCES_TEGRASTAT: unknown setting (did you mean TEGRAWATCH_SOURCES_TEGRASTATS?)",
	};
	load_bad("bad/02-unknown-agent-key.yaml", want, sizeof(want) / sizeof(want[0]));
	clear_env();
}

/* ---- bad files ---- */

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Reads the lines of PATH (without newlines) into a malloc'ed array. */
static char **
read_lines(const char *path, size_t *count)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fail_msg("%s: %s", path, strerror(errno));
	}
	char **lines = NULL;
	size_t n = 0;
	char buf[LINE_MAX_BYTES];
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		lines = realloc(lines, (n + 1) * sizeof(*lines));
		assert_non_null(lines);
		lines[n++] = strdup(buf);
	}
	fclose(f);
	*count = n;
	return lines;
}

/*
 * Git keeps only the executable bit: a checkout under umask 002 makes the
 * fixtures group-writable, which the loader refuses. They are meant 0644.
 */
static void
make_0644(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH))) {
		assert_int_equal(chmod(path, 0644), 0);
	}
}

static void
make_tree_0644(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.') {
			continue;
		}
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct stat st;
		assert_int_equal(stat(path, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			make_tree_0644(path);
		} else {
			make_0644(path);
		}
	}
	closedir(d);
}

static void
test_bad_fixtures(void **state)
{
	(void)state;
	make_tree_0644("bad");
	DIR *d = opendir("bad");
	assert_non_null(d);
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0) {
			names = realloc(names, (n + 1) * sizeof(*names));
			assert_non_null(names);
			names[n++] = strdup(e->d_name);
		}
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	assert_true(n >= 60);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX], expected[PATH_MAX];
		snprintf(path, sizeof(path), "bad/%s", names[i]);
		snprintf(expected, sizeof(expected), "bad/%.*s.expected", (int)(strlen(names[i]) - 5), names[i]);
		size_t nlines;
		char **lines = read_lines(expected, &nlines);
		assert_true(nlines >= 1); /* a bad file says why */
		double t0 = now_ms();
		load_bad(path, (const char *const *)lines, nlines);
		double ms = now_ms() - t0;
		if (ms > FAST_MS) {
			fail_msg("%s took %.1f ms", path, ms);
		}
		for (size_t k = 0; k < nlines; k++) {
			free(lines[k]);
		}
		free(lines);
		free(names[i]);
	}
	free(names);
}

/* ---- generated files: too deep, too big, writable by others ---- */

static char tmp_dir[] = "/tmp/test_config.XXXXXX";

static void
write_file(const char *name, const char *data, size_t len, mode_t mode)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static int
setup_tmp(void **state)
{
	(void)state;
	clear_env();
	if (!mkdtemp(tmp_dir)) {
		return -1;
	}
	return chdir(tmp_dir);
}

static int
teardown_tmp(void **state)
{
	(void)state;
	static const char *const files[] = {"deep.yaml", "big.yaml", "writable.yaml", "rules.yaml", "world.yaml"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", tmp_dir, files[i]);
		unlink(path);
	}
	int r = chdir("/");
	rmdir(tmp_dir);
	return r;
}

static void
test_deep_nesting(void **state)
{
	(void)state;
	enum { DEPTH = 10000 };
	static char buf[2 * DEPTH + 16];
	size_t len = 0;
	len += (size_t)snprintf(buf, sizeof(buf), "rules: ");
	memset(buf + len, '[', DEPTH);
	len += DEPTH;
	memset(buf + len, ']', DEPTH);
	len += DEPTH;
	buf[len++] = '\n';
	write_file("deep.yaml", buf, len, 0644);
	/* "rules: " is 7 characters; the map is level 1, so the 32nd '[' is level 33 */
	static const char *const want[] = {"deep.yaml:1:39: nesting deeper than 32 levels"};
	double t0 = now_ms();
	load_bad("deep.yaml", want, 1);
	assert_true(now_ms() - t0 < FAST_MS);
}

static void
test_big_file(void **state)
{
	(void)state;
	size_t len = CFG_MAX_FILE_BYTES + 1;
	char *buf = malloc(len);
	assert_non_null(buf);
	memset(buf, '#', len); /* one long comment: valid YAML, only too big */
	buf[len - 1] = '\n';
	write_file("big.yaml", buf, len, 0644);
	free(buf);
	static const char *const want[] = {"big.yaml: file is larger than 1 MiB"};
	load_bad("big.yaml", want, 1);
}

static void
test_writable_files(void **state)
{
	(void)state;
	static const char yaml[] = "agent:\n  interval: 1s\n";
	write_file("writable.yaml", yaml, sizeof(yaml) - 1, 0664);
	static const char *const want[] = {
		"writable.yaml: refusing a configuration file that is group- or world-writable (mode 0664): it can "
		"run programs through exec actions; chmod go-w it",
	};
	load_bad("writable.yaml", want, 1);

	/* an included file is checked the same way, and the rest still loads */
	static const char main_yaml[] = "include: world.yaml\nrules:\n  - {name: a, metric: temp.x_c, critical: 1}\n";
	static const char rules_yaml[] = "rules: []\n";
	write_file("rules.yaml", main_yaml, sizeof(main_yaml) - 1, 0644);
	write_file("world.yaml", rules_yaml, sizeof(rules_yaml) - 1, 0646);
	static const char *const want2[] = {
		"world.yaml: refusing a configuration file that is group- or world-writable (mode 0646): it can "
		"run programs through exec actions; chmod go-w it",
	};
	load_bad("rules.yaml", want2, 1);

	static const char *const want3[] = {"none-such.yaml: cannot open: No such file or directory"};
	load_bad("none-such.yaml", want3, 1);
}

/* 70 matching files: 64 are read, one message says so, the rest are left alone. */
static void
test_too_many_includes(void **state)
{
	(void)state;
	assert_int_equal(mkdir("inc", 0755), 0);
	for (int i = 1; i <= 70; i++) {
		char name[32], yaml[96];
		snprintf(name, sizeof(name), "inc/%03d.yaml", i);
		int len = snprintf(yaml, sizeof(yaml), "rules:\n  - {name: r%d, metric: temp.x_c, critical: 1}\n", i);
		write_file(name, yaml, (size_t)len, 0644);
	}
	static const char main_yaml[] = "include: inc/*.yaml\n";
	write_file("many.yaml", main_yaml, sizeof(main_yaml) - 1, 0644);
	static const char *const want[] = {"many.yaml:1:10: include: more than 64 files"};
	load_bad("many.yaml", want, 1);

	/* and 64 are fine */
	for (int i = 65; i <= 70; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/inc/%03d.yaml", tmp_dir, i);
		assert_int_equal(unlink(path), 0);
	}
	struct config *cfg = load_ok("many.yaml");
	assert_int_equal(cfg->rules.count, 64);
	assert_string_equal(cfg->rules.rules[63].name, "r64");
	assert_string_equal(cfg->rules.rules[63].file, "inc/064.yaml");
	config_destroy(cfg);
	for (int i = 1; i <= 64; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/inc/%03d.yaml", tmp_dir, i);
		unlink(path);
	}
	unlink("many.yaml");
	assert_int_equal(rmdir("inc"), 0);
}

/* ---- the pieces ---- */

static void
test_durations(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int64_t ms;
	} good[] = {
		{"0", 0},         {"1s", 1000},     {"250ms", 250},    {"5m", 300000}, {"1h30m", 5400000},
		{"1d", 86400000}, {"2m5s", 125000}, {"1s500ms", 1500}, {"0s", 0},      {"1d2h3m4s5ms", 93784005},
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int64_t ms = -1;
		char err[256] = "";
		if (cfg_parse_duration(good[i].text, &ms, err, sizeof(err)) != 0) {
			fail_msg("%s: %s", good[i].text, err);
		}
		assert_int_equal(ms, good[i].ms);
		char back[32];
		cfg_format_duration(ms, back, sizeof(back));
		int64_t again = -1;
		assert_int_equal(cfg_parse_duration(back, &again, err, sizeof(err)), 0);
		assert_int_equal(again, ms);
	}
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{"", "expected a duration like 10s, 5m or 1h30m, got nothing"},
		{"10", "expected a duration like 10s, 5m or 1h30m, got '10' (a unit is needed: ms, s, m, h or d)"},
		{"10x", "unknown unit 'x' in duration '10x' (use ms, s, m, h or d)"},
		{"-5s", "a duration cannot be negative, got '-5s'"},
		{"1h30", "missing unit after '30' in duration '1h30' (use ms, s, m, h or d)"},
		{"ms", "expected a duration like 10s, 5m or 1h30m, got 'ms'"},
		{"1m1h", "units in duration '1m1h' must go from largest to smallest, each once (like 1h30m)"},
		{"1S", "unknown unit 'S' in duration '1S' (use ms, s, m, h or d)"},
		{"10 s", "expected a duration like 10s, 5m or 1h30m, got '10 s'"},
		{"999999999999999d", "duration '999999999999999d' is too long"},
		{"1234567890123456s", "duration '1234567890123456s' is too long"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t ms = -7;
		char err[256] = "";
		assert_int_equal(cfg_parse_duration(bad[i].text, &ms, err, sizeof(err)), -EINVAL);
		assert_int_equal(ms, -7);
		assert_string_equal(err, bad[i].msg);
	}
}

static void
test_numbers(void **state)
{
	(void)state;
	double v = 0;
	assert_true(cfg_parse_number("90", &v) && v == 90.0);
	assert_true(cfg_parse_number("-2.5", &v) && v == -2.5);
	assert_true(cfg_parse_number(".5", &v) && v == 0.5);
	assert_true(cfg_parse_number("1e3", &v) && v == 1000.0);
	assert_true(cfg_parse_number("+7", &v) && v == 7.0);
	v = 42;
	assert_false(cfg_parse_number("0x10", &v));
	assert_false(cfg_parse_number("inf", &v));
	assert_false(cfg_parse_number("nan", &v));
	assert_false(cfg_parse_number("1_000", &v));
	assert_false(cfg_parse_number("1e999", &v));
	assert_false(cfg_parse_number("", &v));
	assert_false(cfg_parse_number(".", &v));
	assert_false(cfg_parse_number("5 ", &v));
	assert_true(v == 42.0);
}

static void
test_suggestions(void **state)
{
	(void)state;
	assert_int_equal(cfg_edit_distance("critical", "critcal"), 1);
	assert_int_equal(cfg_edit_distance("critical", "crtiical"), 1); /* transposition */
	assert_int_equal(cfg_edit_distance("Warning", "warning"), 0);
	assert_int_equal(cfg_edit_distance("", "abc"), 3);
	static const char *const keys[] = {"warning", "critical", "clear", "clear_for", "for"};
	assert_string_equal(cfg_suggest("critcal", keys, 5), "critical");
	assert_string_equal(cfg_suggest("warn", keys, 5), "warning"); /* a prefix */
	assert_string_equal(cfg_suggest("clearfor", keys, 5), "clear_for");
	assert_string_equal(cfg_suggest("fr", keys, 5), "for");
	assert_null(cfg_suggest("colour", keys, 5));
	assert_null(cfg_suggest("x", keys, 5));
}

static void
test_catalog(void **state)
{
	(void)state;
	static const char *const known[] = {
		"temp.gpu_c",
		"temp.*_c",
		"temp.*",
		"*",
		"*.freq_mhz",
		"cpu.*.load_pct",
		"cpu.*",
		"oc.*.events",
		"hwmon.nct.in0_mv",
		"trip.*",
		"agent.samples_total",
		"power.*.mw",
		"engine.nvenc.on",
		"*_alarm",
		"gpu.gpc.1.freq_mhz",
		"nvpmodel.id",
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (!catalog_glob_known(known[i])) {
			fail_msg("%s should be known", known[i]);
		}
	}
	static const char *const unknown[] = {
		"tmp.*",     "temp.*_mhz",  "cpu.*.freq",    "temp.gpu", "cpu.x.load_pct", "gpu.gpc.x.freq_mhz",
		"oc.events", "fan.*.speed", "agent.samples", "throttle", "temp._c",
	};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		if (catalog_glob_known(unknown[i])) {
			fail_msg("%s should be unknown", unknown[i]);
		}
	}
	assert_true(catalog_pattern_match("cpu.N.load_pct", "cpu.11.load_pct"));
	assert_false(catalog_pattern_match("cpu.N.load_pct", "cpu.a.load_pct"));
	assert_true(catalog_pattern_match("temp.SENSOR_c", "temp.soc_0_c"));
	assert_false(catalog_pattern_match("temp.SENSOR_c", "temp.a.b_c"));

	char buf[64];
	assert_true(catalog_suggest("temp.gpu", buf, sizeof(buf)));
	assert_string_equal(buf, "temp.gpu_c");
	assert_true(catalog_suggest("gpu.freqq_mhz", buf, sizeof(buf)));
	assert_string_equal(buf, "gpu.freq_mhz");
	assert_true(catalog_suggest("cpu.3.lod_pct", buf, sizeof(buf)));
	assert_string_equal(buf, "cpu.3.load_pct");
	assert_false(catalog_suggest("memory.used_mb", buf, sizeof(buf)));
}

/* rules_decode() appends, and rules_validate() sees across the pieces. */
static void
test_rules_decode_appends(void **state)
{
	(void)state;
	static const char a[] = "rules:\n  - {name: x, metric: temp.a_c, critical: 90}\n";
	static const char b[] =
		"rules:\n  - {name: y, metric: gpu.load_pct, warning: 80, actions: {warning: [mail]}}\n"
		"  - {name: x, metric: temp.b_c, critical: 90}\n";
	struct diag_list diags;
	diag_list_init(&diags);
	struct cfg_tree *ta, *tb;
	assert_int_equal(cfg_tree_load_buffer("a.yaml", a, sizeof(a) - 1, &ta, &diags), 0);
	assert_int_equal(cfg_tree_load_buffer("b.yaml", b, sizeof(b) - 1, &tb, &diags), 0);
	struct rule_set set = {0};
	struct rules_refs refs = {0};
	assert_int_equal(rules_decode_refs(cfg_map_get(cfg_tree_root(ta), "rules"), "a.yaml", &set, &refs, &diags),
			 0);
	assert_int_equal(rules_decode_refs(cfg_map_get(cfg_tree_root(tb), "rules"), "b.yaml", &set, &refs, &diags),
			 0);
	assert_int_equal(set.count, 3);
	assert_string_equal(set.rules[1].name, "y");
	assert_int_equal(refs.count, 1);
	assert_int_equal(refs.items[0].rule, 1);
	assert_int_equal(refs.items[0].line, 2);
	assert_int_equal(refs.items[0].column, 70);
	static const char *const actions[] = {"log", "page-me"};
	assert_int_equal(rules_validate(&set, &refs, actions, 2, &diags), -EINVAL);
	assert_int_equal(diags.count, 2);
	char msg[LINE_MAX_BYTES];
	diag_format(&diags.items[0], msg, sizeof(msg));
	assert_string_equal(msg, "b.yaml:3:5: duplicate rule name 'x' (first at a.yaml:2:5)");
	diag_format(&diags.items[1], msg, sizeof(msg));
	assert_string_equal(msg,
			    "b.yaml:2:70: unknown action 'mail' (define it under 'actions:'; 'log' is built in)");
	rules_refs_free(&refs);
	rule_set_free(&set);
	cfg_tree_destroy(ta);
	cfg_tree_destroy(tb);
	diag_list_free(&diags);
}

static void
test_cmd_check(void **state)
{
	(void)state;
	/* stdout/stderr are the test log; only the exit codes are checked here */
	char *ok[] = {"check", "-c", "good/full.yaml", NULL};
	assert_int_equal(cmd_check(3, ok), 0);
	char *bad[] = {"check", "--config", "bad/52-multiple-errors.yaml", NULL};
	assert_int_equal(cmd_check(3, bad), EX_CONFIG);
	char *missing[] = {"check", "-c", "good/none-such.yaml", NULL};
	assert_int_equal(cmd_check(3, missing), EX_CONFIG);
	char *extra[] = {"check", "-c", "good/full.yaml", "more", NULL};
	assert_int_equal(cmd_check(4, extra), 64);
}

/* Loads a configuration from TEXT, which must be fine. */
static struct config *
load_text(const char *text)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg = NULL;
	int r = config_load_buffer("mem.yaml", text, strlen(text), &cfg, &diags);
	diag_list_print(&diags, stderr);
	assert_int_equal(r, 0);
	diag_list_free(&diags);
	return cfg;
}

/* What a reload cannot apply is named, key by key, in section order. */
static void
test_restart_changes(void **state)
{
	(void)state;
	static const char base[] = "agent: {board_name: a, interval: 1s}\n"
				   "mqtt: {host: h1, metric_topics: [\"temp.*\"]}\n"
				   "web: {listen: \"\"}\n";
	struct config *old = load_text(base);
	char buf[256];
	struct config *same = load_text(base);
	assert_int_equal(config_restart_changes(old, same, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	config_destroy(same);
	/* board_name and state_file are applied by a reload: not listed */
	struct config *applied = load_text("agent: {board_name: b, interval: 1s, state_file: /tmp/x}\n"
					   "mqtt: {host: h1, metric_topics: [\"temp.*\"]}\n"
					   "web: {listen: \"\"}\n");
	assert_int_equal(config_restart_changes(old, applied, buf, sizeof(buf)), 0);
	config_destroy(applied);
	struct config *changed = load_text("agent: {board_name: a, interval: 2s}\n"
					   "sources: {tegrastats: off}\n"
					   "mqtt: {host: h2, port: 1884, metric_topics: [\"temp.*\", \"power.*\"]}\n"
					   "web: {listen: 127.0.0.1:9999}\n");
	assert_int_equal(config_restart_changes(old, changed, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "agent.interval, sources.tegrastats, mqtt.host, mqtt.port, mqtt.metric_topics, "
				 "web.listen");
	/* a short buffer says that the list goes on */
	char small[32];
	assert_int_equal(config_restart_changes(old, changed, small, sizeof(small)), 6);
	assert_string_equal(small, "agent.interval, ...");
	config_destroy(changed);
	config_destroy(old);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_empty_file),
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_shipped_configs),
		cmocka_unit_test(test_env_overrides),
		cmocka_unit_test(test_env_errors),
		cmocka_unit_test(test_bad_fixtures),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_suggestions),
		cmocka_unit_test(test_catalog),
		cmocka_unit_test(test_rules_decode_appends),
		cmocka_unit_test(test_cmd_check),
	};
	const struct CMUnitTest tmp_tests[] = {
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_big_file),
		cmocka_unit_test(test_writable_files),
		cmocka_unit_test(test_too_many_includes),
		cmocka_unit_test(test_restart_changes),
	};
	int failed = cmocka_run_group_tests_name("config", tests, setup, NULL);
	failed += cmocka_run_group_tests_name("config-generated", tmp_tests, setup_tmp, teardown_tmp);
	return failed;
}
