/*
 * The alert engine's life: its one listener hears every transition, a reload
 * (engine_adopt) keeps what did not change, a restart restores the alerts
 * from the state file and announces the active ones.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/diag.h"
#include "core/xalloc.h"
#include "engine_events.h"
#include "helpers.h"

/* ---- the listener ------------------------------------------------------------------------------- */

/* One listener hears every transition, whatever its severity: routing by severity is the listener's business. */
static void
test_listener_hears_every_transition(void **state)
{
	static const struct pt pts[] = {
		{ 0, 92 }, { 1000, 92 }, { 2000, 101 }, { 3000, 101 }, { 4000, 95 }, { 5000, 50 }, END_PT,
	};
	static const struct want want[] = {
		{ 0, TRANSITION_PENDING, SEVERITY_WARNING },
		{ 1000, TRANSITION_FIRING, SEVERITY_WARNING },
		{ 3000, TRANSITION_ESCALATED, SEVERITY_CRITICAL },
		{ 4000, TRANSITION_DEESCALATED, SEVERITY_WARNING },
		{ 5000, TRANSITION_RESOLVED, SEVERITY_WARNING },
		END_WANT,
	};
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(1);
	struct rule *r = th_rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	th_level(r, SEVERITY_WARNING, 90);
	th_level(r, SEVERITY_CRITICAL, 100);
	r->for_ms = 1000;
	e = engine_create(set, record, &rec);
	feed(e, s, "temp.cpu_c", pts);
	expect_events(&rec, want);
	assert_int_equal(rec.ev[2].prev, SEVERITY_WARNING);
	assert_int_equal(rec.ev[3].prev, SEVERITY_CRITICAL);
	assert_int_equal(engine_generation(e), 5);
	engine_destroy(e);
	th_rule_set_free(set);
	rec_reset(&rec);
}

/* ---- reload (engine_adopt) ---------------------------------------------------------------------- */

static void
test_adopt_reload(void **state)
{
	struct sample *s = *state;
	struct rule_set *v1 = th_rule_set_new(3), *v2 = th_rule_set_new(3);
	struct recorder rec1 = { 0 }, rec2 = { 0 };
	struct engine *e1, *e2;

	th_level(th_rule_init(v1, 0, "hot", "temp.cpu_c", RULE_ABOVE), SEVERITY_WARNING, 90);
	th_level(th_rule_init(v1, 1, "gone", "temp.gpu_c", RULE_ABOVE), SEVERITY_WARNING, 90);
	th_level(th_rule_init(v1, 2, "zones", "temp.*_c", RULE_ABOVE), SEVERITY_WARNING, 90);
	/* v2: "hot" kept with a new threshold, "gone" removed, "zones" narrowed to soc*, "new" added */
	th_level(th_rule_init(v2, 0, "new", "temp.cpu_c", RULE_ABOVE), SEVERITY_CRITICAL, 99);
	th_level(th_rule_init(v2, 1, "zones", "temp.soc*_c", RULE_ABOVE), SEVERITY_WARNING, 90);
	th_level(th_rule_init(v2, 2, "hot", "temp.cpu_c", RULE_ABOVE), SEVERITY_WARNING, 92);

	e1 = engine_create(v1, record, &rec1);
	at(s, 10000, "MAXN");
	th_put(s, "temp.cpu_c", 95);
	th_put(s, "temp.gpu_c", 95);
	th_put(s, "temp.soc0_c", 95);
	engine_evaluate(e1, s);
	assert_int_equal(rec1.n, 5); /* hot, gone, zones x3 */
	assert_int_equal(engine_firing_count(e1), 5);

	e2 = engine_create(v2, record, &rec2);
	engine_adopt(e2, e1);
	/* "gone" resolves, and so do the zones instances the new pattern no longer matches */
	assert_int_equal(rec2.n, 3);
	assert_int_equal(rec2.ev[0].t, TRANSITION_RESOLVED);
	assert_string_equal(rec2.ev[0].metric, "temp.gpu_c");
	assert_int_equal(rec2.ev[0].at_ms, 10000);
	assert_int_equal(rec2.ev[0].starts_at_ms, 10000);
	assert_int_equal(rec2.ev[1].t, TRANSITION_RESOLVED);
	assert_string_equal(rec2.ev[1].metric, "temp.cpu_c");
	assert_int_equal(rec2.ev[2].t, TRANSITION_RESOLVED);
	assert_string_equal(rec2.ev[2].metric, "temp.gpu_c");
	assert_int_equal(engine_firing_count(e1), 0);
	assert_int_equal(engine_firing_count(e2), 2); /* hot, zones/soc0 */
	engine_destroy(e1);
	th_rule_set_free(v1);

	/* still hot: nothing new for the kept alerts; "new" is new and fires */
	at(s, 11000, "MAXN");
	th_put(s, "temp.cpu_c", 99.5);
	th_put(s, "temp.soc0_c", 95);
	engine_evaluate(e2, s);
	assert_int_equal(rec2.n, 4);
	assert_string_equal(rec2.ev[3].metric, "temp.cpu_c");
	assert_int_equal(rec2.ev[3].t, TRANSITION_FIRING);
	assert_int_equal(rec2.ev[3].sev, SEVERITY_CRITICAL);

	/* below the new threshold of "hot": resolves, with the starts_at from before the reload */
	at(s, 12000, "MAXN");
	th_put(s, "temp.cpu_c", 91);
	th_put(s, "temp.soc0_c", 95);
	engine_evaluate(e2, s);
	assert_int_equal(rec2.n, 6);
	assert_int_equal(rec2.ev[4].t, TRANSITION_RESOLVED); /* "new" */
	assert_int_equal(rec2.ev[5].t, TRANSITION_RESOLVED); /* "hot" */
	assert_true(rec2.ev[5].threshold == 92);
	assert_int_equal(rec2.ev[5].starts_at_ms, 10000);
	assert_string_equal(rec2.ev[5].fp, "af4de9bec8c7bf48");
	engine_destroy(e2);
	th_rule_set_free(v2);
	rec_reset(&rec1);
	rec_reset(&rec2);
}

/* ---- restart (save / load) ---------------------------------------------------------------------- */

static struct rule_set *
restart_rules(void)
{
	struct rule_set *set = th_rule_set_new(3);
	struct rule *hot = th_rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct rule *slow = th_rule_init(set, 1, "slow-hot", "temp.gpu_c", RULE_ABOVE);
	struct rule *fans = th_rule_init(set, 2, "fans", "fan.*.rpm", RULE_BELOW);

	th_level(hot, SEVERITY_WARNING, 90);
	th_level(hot, SEVERITY_CRITICAL, 100);
	th_level(slow, SEVERITY_WARNING, 90);
	slow->for_ms = 30000;
	th_level(fans, SEVERITY_WARNING, 100);
	fans->absent_for_ms = 5000;
	return set;
}

static char *
read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 4096);

	assert_non_null(f);
	assert_non_null(buf);
	assert_true(fread(buf, 1, 4095, f) > 0);
	fclose(f);
	return buf;
}

static void
test_save_load_restart(void **state)
{
	struct sample *s = *state;
	char dir[] = "/tmp/test_engine.XXXXXX";
	char path[256], bad[256];
	struct rule_set *set1 = restart_rules(), *set2 = restart_rules();
	struct recorder rec = { 0 };
	struct diag_list diags;
	struct engine *e1, *e2;
	char *text;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/alerts.state", dir);
	snprintf(bad, sizeof(bad), "%s/bad.state", dir);

	e1 = engine_create(set1, NULL, NULL);
	for (int64_t t = 100; t <= 110; t += 10) {
		at(s, t * 1000, "MAXN");
		th_put(s, "temp.cpu_c", 101.5);
		th_put(s, "temp.gpu_c", 95);
		engine_evaluate(e1, s);
	}
	assert_int_equal(engine_firing_count(e1), 2); /* hot (critical), fans (absent since 100 s) */
	assert_int_equal(engine_save_state(e1, path), 0);
	text = read_all(path);
	assert_string_equal(text,
			    "# tegrawatch alert state 1\n"
			    "# fingerprint kind rule metric state severity since_ms starts_at_ms last_notify_ms value "
			    "threshold\n"
			    "af4de9bec8c7bf48 value hot temp.cpu_c firing critical 0 100000 100000 101.5 100\n"
			    "9bec019ef31201ba value slow-hot temp.gpu_c pending warning 100000 0 0 95 90\n"
			    "f8bd352e480254ee absent fans fan.*.rpm firing warning 0 110000 110000 nan nan\n");
	free(text);
	engine_destroy(e1);
	th_rule_set_free(set1);

	/* restart: a new engine over freshly decoded rules */
	diag_list_init(&diags);
	e2 = engine_create(set2, record, &rec);
	assert_int_equal(engine_load_state(e2, path, &diags), 0);
	assert_int_equal(diags.count, 0);
	assert_int_equal(engine_firing_count(e2), 2);

	/* gpu still hot: its `for` goes on from 100 s and fires at 130 s, not 30 s after the restart */
	at(s, 120000, "MAXN");
	th_put(s, "temp.cpu_c", 95);
	th_put(s, "temp.gpu_c", 95);
	engine_evaluate(e2, s);
	assert_int_equal(rec.n, 1);
	assert_int_equal(rec.ev[0].t, TRANSITION_DEESCALATED);
	at(s, 130000, "MAXN");
	th_put(s, "temp.cpu_c", 50);
	th_put(s, "temp.gpu_c", 95);
	th_put(s, "fan.0.rpm", 2000);
	engine_evaluate(e2, s);
	assert_int_equal(rec.n, 4);
	assert_int_equal(rec.ev[1].t, TRANSITION_RESOLVED);
	assert_string_equal(rec.ev[1].metric, "temp.cpu_c");
	assert_int_equal(rec.ev[1].starts_at_ms, 100000); /* from before the restart */
	assert_int_equal(rec.ev[1].ends_at_ms, 130000);
	assert_string_equal(rec.ev[1].fp, "af4de9bec8c7bf48");
	assert_int_equal(rec.ev[2].t, TRANSITION_FIRING);
	assert_string_equal(rec.ev[2].metric, "temp.gpu_c");
	assert_int_equal(rec.ev[2].at_ms, 130000);
	assert_int_equal(rec.ev[3].t, TRANSITION_RESOLVED);
	assert_string_equal(rec.ev[3].metric, "fan.*.rpm");
	assert_int_equal(rec.ev[3].starts_at_ms, 110000);
	assert_true(rec.ev[3].value == 2000);
	engine_destroy(e2);

	/* a missing file is no error; bad lines are reported and skipped */
	e2 = engine_create(set2, NULL, NULL);
	assert_int_equal(engine_load_state(e2, "/nonexistent/alerts.state", &diags), 0);
	{
		FILE *f = fopen(bad, "w");
		assert_non_null(f);
		fputs("# tegrawatch alert state 1\n"
		      "af4de9bec8c7bf48 value hot temp.cpu_c firing\n"
		      "0000000000000000 value removed-rule temp.cpu_c firing critical 1 1 1 1 1\n"
		      "0000000000000000 value hot temp.cpu_c firing loud 1 1 1 1 1\n"
		      "0000000000000000 value hot temp.cpu_c firing warning 1x 1 1 1 1\n"
		      "0000000000000000 absent hot temp%20cpu_c firing warning 1 1 1 1 1\n"
		      "0000000000000000 value hot temp.cpu_c firing warning 5 5 5 91 90\n"
		      "0000000000000000 value hot temp.cpu_c firing warning 5 5 5 91 90\n"
		      "0000000000000000 value hot temp.cpu_c%zz firing warning 5 5 5 91 90\n",
		      f);
		fclose(f);
	}
	assert_int_equal(engine_load_state(e2, bad, &diags), 0);
	assert_int_equal(diags.count, 5);
	{
		static const char *const want[] = {
			"bad.state:2: alert state: too few fields",
			"bad.state:4: alert state: severity is not warning or critical",
			"bad.state:5: alert state: bad time",
			"bad.state:8: alert state: duplicate alert",
			"bad.state:9: alert state: empty field or bad %XX escape",
		};
		for (size_t i = 0; i < diags.count; i++) {
			char buf[512];
			diag_format(&diags.items[i], buf, sizeof(buf));
			assert_non_null(strstr(buf, want[i]));
		}
	}
	assert_int_equal(engine_firing_count(e2), 1);
	engine_destroy(e2);
	diag_list_free(&diags);

	/* writing into a directory that does not exist fails and leaves nothing behind */
	e2 = engine_create(set2, NULL, NULL);
	assert_int_equal(engine_save_state(e2, "/nonexistent/dir/alerts.state"), -ENOENT);
	engine_destroy(e2);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(bad), 0);
	assert_int_equal(rmdir(dir), 0); /* no temporary file left over */
	th_rule_set_free(set2);
	rec_reset(&rec);
}

static void
test_announce_active(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(1);
	struct rule *r = th_rule_init(set, 0, "hot", "temp.*_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	th_level(r, SEVERITY_WARNING, 90);
	r->for_ms = 5000;
	e = engine_create(set, record, &rec);
	at(s, 0, "MAXN");
	th_put(s, "temp.cpu_c", 95);
	engine_evaluate(e, s);
	at(s, 5000, "MAXN");
	th_put(s, "temp.cpu_c", 95);
	th_put(s, "temp.gpu_c", 91);
	engine_evaluate(e, s);
	assert_int_equal(rec.n, 3); /* cpu pending, cpu firing, gpu pending */
	assert_false(rec.ev[0].restored || rec.ev[1].restored || rec.ev[2].restored);
	rec_reset(&rec);
	uint64_t generation = engine_generation(e);
	/* through the same listener, marked restored; nothing in the engine changes */
	engine_announce_active(e);
	assert_int_equal(engine_generation(e), generation);
	assert_int_equal(rec.n, 2);
	assert_true(rec.ev[0].restored && rec.ev[1].restored);
	assert_string_equal(rec.ev[0].metric, "temp.cpu_c");
	assert_int_equal(rec.ev[0].t, TRANSITION_FIRING);
	assert_int_equal(rec.ev[0].starts_at_ms, 5000);
	assert_true(rec.ev[0].value == 95);
	assert_string_equal(rec.ev[1].metric, "temp.gpu_c");
	assert_int_equal(rec.ev[1].t, TRANSITION_PENDING);
	assert_int_equal(rec.ev[1].starts_at_ms, 0);
	engine_destroy(e);
	th_rule_set_free(set);
	rec_reset(&rec);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_listener_hears_every_transition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_adopt_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_load_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_announce_active, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
