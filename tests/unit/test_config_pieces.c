/*
 * The configuration loader: generated files (too deep, too big, writable by
 * others, too many includes), durations, numbers, suggestions for unknown
 * keys, the metric catalogue, rules decoding, the check command and what a
 * reload cannot apply.
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
#include "helpers.h"
#include "thresholds/catalog.h"
#include "thresholds/rules_load.h"

/* ---- generated files: too deep, too big, writable by others ---- */

static char tmp_dir[] = "/tmp/test_config.XXXXXX";

static void
write_file(const char *name, const char *data, size_t len, mode_t mode)
{
	char path[PATH_MAX];
	th_write_bytes(th_join(path, sizeof(path), tmp_dir, name), data, len, mode);
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
	double t0 = th_cpu_ms();
	load_bad("deep.yaml", want, 1);
	assert_true(th_cpu_ms() - t0 < FAST_MS);
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

/* The read buffer starts at the size fstat() gives: a file that says 0 bytes (as /proc's do) is read whole. */
static void
test_file_larger_than_its_size(void **state)
{
	(void)state;
	static const char *const want[] = {
		"/proc/sys/kernel/ostype:1:1: expected a map with agent, sources, mqtt, web, remote_write, otlp, work, "
		"include, actions, notify and rules, got 'Linux'",
	};
	load_bad("/proc/sys/kernel/ostype", want, 1);
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
	/* each call parses its own options: a stale getopt would check the default path instead (and pass or fail
	 * by what that machine has installed) */
	char *again[] = {"check", "-c", "good/full.yaml", NULL};
	assert_int_equal(cmd_check(3, again), 0);
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
	/* the processes: list too, and its pace */
	changed = load_text("agent: {board_name: a, interval: 1s}\n"
			    "sources: {processes_interval: 2s}\n"
			    "mqtt: {host: h1, metric_topics: [\"temp.*\"]}\n"
			    "web: {listen: \"\"}\n"
			    "processes: [{name: app, comm: app}]\n");
	assert_int_equal(config_restart_changes(old, changed, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "sources.processes_interval, processes");
	config_destroy(changed);
	config_destroy(old);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
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
		cmocka_unit_test(test_file_larger_than_its_size),
		cmocka_unit_test(test_writable_files),
		cmocka_unit_test(test_too_many_includes),
		cmocka_unit_test(test_restart_changes),
	};
	int failed = cmocka_run_group_tests_name("config", tests, setup, NULL);
	failed += cmocka_run_group_tests_name("config-generated", tmp_tests, setup_tmp, teardown_tmp);
	return failed;
}
