/* work/: StatsD lines, the POST body, the ledger, and the stage's energy per unit. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "work/work.h"
#include "work/work_priv.h"

static void
statsd_ok(const char *line, const char *name, double count)
{
	const char *n;
	size_t nl;
	double c;
	char err[128] = "";
	assert_int_equal(work_parse_statsd(line, strlen(line), &n, &nl, &c, err, sizeof(err)), 0);
	assert_int_equal(nl, strlen(name));
	assert_memory_equal(n, name, nl);
	assert_true(fabs(c - count) < 1e-9);
}

static void
statsd_bad(const char *line, const char *why)
{
	const char *n;
	size_t nl;
	double c;
	char err[128] = "";
	assert_int_equal(work_parse_statsd(line, strlen(line), &n, &nl, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, why));
}

static void
test_statsd(void **state)
{
	(void)state;
	statsd_ok("inference:1|c", "inference", 1);
	statsd_ok("app.tokens:250|c|@0.5", "app.tokens", 500);
	statsd_ok("frames:3|c|#cam:front", "frames", 3);
	statsd_bad("inference:1|g", "only counters");
	statsd_bad("inference:1|ms", "only counters");
	statsd_bad("inference", "NAME:VALUE|c");
	statsd_bad("inference:abc|c", "not a number");
	statsd_bad("inference:1|c|@2", "sample rate");
	statsd_ok("frames:4|c|@0.5|#cam:front", "frames", 8);
	statsd_bad("inference:1|c|@", "sample rate");
	statsd_bad("inference:1|c|@0.5x", "sample rate");
	statsd_bad("inference:|c", "expected a number");
	/* LEN bytes: what follows them is not read ("|@0.25" would make it 4) */
	const char *n;
	size_t nl;
	double c;
	char err[128];
	const char *line = "inference:1|c|@0.5|@0.25";
	assert_int_equal(work_parse_statsd(line, 18, &n, &nl, &c, err, sizeof(err)), 0);
	assert_true(c == 2);
	assert_int_equal(work_parse_statsd("inference:1|c|@0.5", 16, &n, &nl, &c, err, sizeof(err)), -EINVAL);
}

static double
units_of(struct work_ledger *l, const char *name)
{
	char names[WORK_NAMES_MAX][WORK_NAME_MAX];
	double units[WORK_NAMES_MAX];
	uint64_t reports;
	size_t n = work_ledger_snapshot(l, names, units, &reports);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(names[i], name) == 0) {
			return units[i];
		}
	}
	return NAN;
}

static void
test_ledger_and_post(void **state)
{
	(void)state;
	struct work_ledger *l = work_ledger_create();
	char err[160];
	assert_int_equal(work_ledger_add(l, "App.Tokens-Out", 14, 5, err, sizeof(err)), 0);
	assert_true(units_of(l, "app_tokens_out") == 5); /* normalised */
	assert_int_equal(work_ledger_add(l, "a b", 3, 1, err, sizeof(err)), -EINVAL);
	assert_int_equal(work_ledger_add(l, "x", 1, 0, err, sizeof(err)), -EINVAL);
	assert_int_equal(work_ledger_add(l, "x", 1, NAN, err, sizeof(err)), -EINVAL);
	assert_int_equal(work_ledger_add(l, "abcdefghijklmnopqrstuvwxy", 25, 1, err, sizeof(err)), -EINVAL);

	const char *body = " {\"count\": 2.5, \"name\" : \"inference\"}\n";
	assert_int_equal(work_post_json(l, body, strlen(body), err, sizeof(err)), 0);
	body = "{\"name\":\"inference\"}";
	assert_int_equal(work_post_json(l, body, strlen(body), err, sizeof(err)), 0);
	assert_true(units_of(l, "inference") == 3.5);
	/* an escaped name is the same name */
	body = "{\"name\": \"\\u0069nference\", \"count\": 1e0}";
	assert_int_equal(work_post_json(l, body, strlen(body), err, sizeof(err)), 0);
	assert_true(units_of(l, "inference") == 4.5);
	const char *bad[][2] = {
		{"[]", "JSON object"},       {"{\"count\": 1}", "missing"},  {"{\"name\": 5}", "is a string at byte 10"},
		{"{\"nme\": \"x\"}", "unknown member 'nme'"}, {"{\"name\": \"x\"} {}", "nothing after"},
		{"{\"name\": \"x\", \"count\": \"5\"}", "\"count\" is a number at byte 24"},
		{"{\"name\": \"x\", \"count\": null}", "\"count\" is a number"},
		{"{\"name\": \"x\", \"count\": 0x10}", "\"count\" is a number at byte 24"},
		{"{\"name\": \"x\", \"count\": -x}", "\"count\" is a number at byte 24"},
		{"{\"name\": \"x\",}", "expected a member's name in quotes at byte 14"},
		{"{\"name\" \"x\"}", "expected ':' at byte 9"},
		{"{\"name\": \"x\"", "expected ',' or '}' at byte 13"},
		{"{\"name\": \"x\\q\"}", "a bad escape in a string"},
		{"{\"name\": \"abcdefghijklmnopqrstuvwxyz0123456789\"}", "1 to 24 characters"},
		{"{\"name\": \"x y\"}", "letters, digits"},
		{"{\"name\": \"x\", \"count\": 0}", "above 0"},
		{"", "JSON object"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(work_post_json(l, bad[i][0], strlen(bad[i][0]), err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i][1])) {
			fail_msg("%s: '%s', not '%s'", bad[i][0], err, bad[i][1]);
		}
	}
	/* LEN bytes, not up to a NUL: a NUL inside is something after the object, and bytes past LEN are not read */
	static const char nul[] = "{\"name\": \"x\"}\0{}";
	assert_int_equal(work_post_json(l, nul, sizeof(nul) - 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "nothing after"));
	body = "{\"name\": \"inference\"}garbage";
	assert_int_equal(work_post_json(l, body, 21, err, sizeof(err)), 0);
	assert_true(units_of(l, "inference") == 5.5);
	/* at most 32 names */
	for (int i = 0; i < WORK_NAMES_MAX; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i);
		work_ledger_add(l, name, strlen(name), 1, err, sizeof(err));
	}
	assert_int_equal(work_ledger_add(l, "one_more", 8, 1, err, sizeof(err)), -ENOSPC);
	assert_true(units_of(l, "inference") == 5.5);
	work_ledger_unref(work_ledger_ref(l));
	work_ledger_unref(l);
}

static double
get(const struct sample *s, const char *name)
{
	double v;
	return metric_set_get(&s->metrics, name, &v) ? v : NAN;
}

/* 10 units a second at 15 W after 2 min of idle at 5 W: 1.5 J a unit, 1.0 above idle, once the idle minutes
 * have left the ~1 min window (e^-9). */
static void
test_stage(void **state)
{
	(void)state;
	static struct sample s;
	struct stage *st = work_stage_create();
	double total = 0;
	for (int t = 0; t <= 660; t++) {
		sample_clear(&s);
		s.mono_ms = s.time_ms = t * 1000LL;
		bool busy = t > 120;
		total += busy ? 10 : 0;
		metric_set_put(&s.metrics, "power.vdd_in.mw", busy ? 15000 : 5000);
		metric_set_put(&s.metrics, "power.vdd_soc.mw", busy ? 3000 : 1000);
		metric_set_put(&s.metrics, "work.inference.count_total", total);
		st->ops->process(st, &s);
		if (t == 100) {
			assert_true(fabs(get(&s, "work.idle_mw") - 5000) < 1);
			assert_true(isnan(get(&s, "work.inference.joules_per_unit"))); /* nothing done yet */
		}
	}
	assert_true(fabs(get(&s, "work.inference.rate_per_s") - 10) < 0.01);
	assert_true(fabs(get(&s, "work.inference.joules_per_unit") - 1.5) < 1e-3);
	assert_true(fabs(get(&s, "work.inference.above_idle_joules_per_unit") - 1.0) < 1e-3);
	assert_true(fabs(get(&s, "work.inference.vdd_soc.joules_per_unit") - 0.3) < 1e-3);
	stage_destroy(st);
}

/* Units reported before the first sample that shows the name are that interval's, not a baseline: on a slow
 * machine a burst can all land before that sample, and was lost from the rate and the energy per unit. */
static void
test_stage_name_appears_late(void **state)
{
	(void)state;
	static struct sample s;
	struct stage *st = work_stage_create();
	for (int t = 0; t <= 2; t++) {
		sample_clear(&s);
		s.mono_ms = s.time_ms = t * 1000LL;
		metric_set_put(&s.metrics, "power.vdd_in.mw", 10000);
		if (t > 0) {
			metric_set_put(&s.metrics, "work.inference.count_total", 10);
		}
		st->ops->process(st, &s);
		if (t == 1) {
			assert_true(fabs(get(&s, "work.inference.rate_per_s") - 10) < 1e-9);
			assert_true(fabs(get(&s, "work.inference.joules_per_unit") - 1.0) < 1e-9);
		}
	}
	assert_true(get(&s, "work.inference.rate_per_s") > 0); /* the next interval decays it, never restarts it */
	stage_destroy(st);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statsd),
		cmocka_unit_test(test_ledger_and_post),
		cmocka_unit_test(test_stage),
		cmocka_unit_test(test_stage_name_appears_late),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
