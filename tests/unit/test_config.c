/*
 * The configuration loader (agent/config.c, core/cfg_decode.c,
 * thresholds/rules_load.c, thresholds/catalog.c): good files decode to the
 * expected values, environment overrides apply, and every bad file in
 * tests/fixtures/config/bad/ gives exactly the messages in its .expected
 * file. Paths are relative to tests/fixtures/config (the test chdirs
 * there), so the expectations hold no absolute paths. Generated files and
 * the loader's pieces: test_config_pieces.c.
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

#include "agent/commands.h"
#include "agent/config.h"
#include "config_checks.h"
#include "core/cfg_decode.h"
#include "core/log.h"
#include "thresholds/catalog.h"
#include "thresholds/rules_load.h"

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

	/* the last sections' keys too: a table of 64 names once left them out ("unknown setting") */
	setenv("TEGRAWATCH_OTLP_URL", "http://127.0.0.1:4318/v1/metrics", 1);
	setenv("TEGRAWATCH_WORK_LISTEN", "127.0.0.1:9475", 1);
	cfg = load_ok("good/full.yaml");
	assert_string_equal(cfg->otlp.url, "http://127.0.0.1:4318/v1/metrics");
	assert_string_equal(cfg->work.listen, "127.0.0.1:9475");
	config_destroy(cfg);
	unsetenv("TEGRAWATCH_OTLP_URL");
	unsetenv("TEGRAWATCH_WORK_LISTEN");

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
		double t0 = th_cpu_ms();
		load_bad(path, (const char *const *)lines, nlines);
		double ms = th_cpu_ms() - t0;
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
	};
	return cmocka_run_group_tests_name("config", tests, setup, NULL);
}
