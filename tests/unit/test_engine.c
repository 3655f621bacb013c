/*
 * The alert engine over time: glob matching and template checks, hysteresis
 * over an hour, `for` and `clear_for` to the sample, escalation, absent_for,
 * and a fingerprint per board. What a rule can say: test_engine_rules.c; the
 * listener, reload and restart: test_engine_life.c.
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

/* ---- rules.c -------------------------------------------------------------- */

static void
test_glob_match(void **state)
{
	static const struct {
		const char *pattern;
		const char *name;
		bool match;
	} cases[] = {
		{ "temp.*_c", "temp.cpu_c", true },
		{ "temp.*_c", "temp.soc0_c", true },
		{ "temp.*_c", "temp.a.b_c", true }, /* '*' crosses '.' */
		{ "temp.*_c", "trip.cpu.passive_c", false },
		{ "temp.*_c", "temp.cpu_cx", false },
		{ "cpu.*.freq_mhz", "cpu.11.freq_mhz", true },
		{ "cpu.*.freq_mhz", "cpu.0.max_freq_mhz", false },
		{ "*.load_pct", "gpu.load_pct", true },
		{ "*.load_pct", "cpu.3.load_pct", true },
		{ "*", "anything.at_all", true },
		{ "a*b*c", "aXbYbZc", true },
		{ "a*b*c", "aXbYcZ", false },
		{ "**x", "yyx", true },
		{ "temp.cpu_c", "temp.cpu_c", true },
		{ "temp.cpu_c", "temp.cpu_cc", false },
		{ "", "", true },
		{ "", "a", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (metric_glob_match(cases[i].pattern, cases[i].name) != cases[i].match) {
			fail_msg("%s vs %s: want %d", cases[i].pattern, cases[i].name, cases[i].match);
		}
	}
	assert_true(metric_is_glob("temp.*_c"));
	assert_false(metric_is_glob("temp.cpu_c"));
	assert_string_equal(severity_name(SEVERITY_WARNING), "warning");
	assert_string_equal(severity_name(SEVERITY_CRITICAL), "critical");
	assert_string_equal(severity_name(SEVERITY_NONE), "none");
	assert_string_equal(alert_transition_name(TRANSITION_DEESCALATED), "deescalated");
	assert_string_equal(alert_transition_name(TRANSITION_CANCELLED), "cancelled");
}

static void
test_template_check(void **state)
{
	static const struct {
		const char *tmpl;
		bool ok;
		size_t offset;
	} cases[] = {
		{ "plain text", true, 0 },
		{ "{{metric}} at {{value}} >= {{threshold}}", true, 0 },
		{ "{{ board }} {{severity}} {{rule}} {{power_mode}}", true, 0 },
		{ "{{transition}} {{throttle}} {{labels.team}} {{labels.on-call_2}}", true, 0 },
		{ "single { brace } ok", true, 0 },
		{ "x {{metrc}}", false, 2 },
		{ "{{value}} {{labels.}}", false, 10 },
		{ "{{value}} {{labels}}", false, 10 },
		{ "ab {{value", false, 3 },
		{ "{{}}", false, 0 },
		{ "{{value}} {{labels.a b}}", false, 10 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t off = 999;
		bool ok = rule_template_check(cases[i].tmpl, &off);

		if (ok != cases[i].ok || (!ok && off != cases[i].offset)) {
			fail_msg("'%s': got %d at %zu", cases[i].tmpl, ok, off);
		}
	}
}

/* ---- hysteresis over an hour ------------------------------------------------- */

/*
 * 1 Hz for an hour: 80 for 10 min; then 40 min of a slow wave around the
 * threshold (95 + 2 sin(2 pi k / 120)) with +-0.6 jitter that flips every
 * sample (+ on odd seconds); then 85 for the last 10 min. Lowest value in
 * the wave: 92.4.
 */
static double
wave(int64_t t)
{
	if (t < 600 || t >= 3000) {
		return t < 600 ? 80 : 85;
	}
	return 95 + 2 * sin(2 * M_PI * (double)(t - 600) / 120.0) + ((t & 1) ? 0.6 : -0.6);
}

static void
test_oscillation_hour(void **state)
{
	static const struct {
		int64_t for_ms;
		double clear;
		int64_t clear_for_ms;
		int64_t repeat_ms;
		size_t firing, resolved, repeats;
		int64_t first_fire_ms, first_resolve_ms;
	} cases[] = {
		/*
		 * The first wave crest holds >= 95 from k=5 (t=605 s) to k=55:
		 * `for 30s` fires at 635 s; the 3-degree margin (< 92) is never
		 * reached inside the wave, only by the 85 at 3000 s.
		 */
		{ 30000, 3, 0, 0, 1, 1, 0, 635000, 3000000 },
		{ 30000, 3, 60000, 0, 1, 1, 0, 635000, 3060000 },
		{ 0, 3, 0, 0, 1, 1, 0, 601000, 3000000 },
		/* repeat every 10 min while firing: 1235, 1835, 2435 s */
		{ 30000, 3, 0, 600000, 1, 1, 3, 635000, 3000000 },
		/*
		 * Control, no `for` and no margin: per 120 s period it fires at
		 * k = 1, 3, 5 (rising jitter), 57, 59, 61, 63, 65 (falling) and
		 * 115, 117, 119: 11 episodes x 20 periods.
		 */
		{ 0, 0, 0, 0, 220, 220, 0, 601000, 602000 },
	};
	struct sample *s = *state;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct rule_set *set = th_rule_set_new(1);
		struct rule *r = th_rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
		struct recorder rec = { 0 };
		struct engine *e;

		th_level(r, SEVERITY_WARNING, 95);
		r->for_ms = cases[c].for_ms;
		r->clear = cases[c].clear;
		r->clear_for_ms = cases[c].clear_for_ms;
		r->repeat_ms = cases[c].repeat_ms;
		e = engine_create(set, record_alerts, &rec);
		for (int64_t t = 0; t < 3600; t++) {
			at(s, t * 1000, "MAXN");
			th_put(s, "temp.cpu_c", wave(t));
			engine_evaluate(e, s);
		}
		if (rec.count[TRANSITION_FIRING] != cases[c].firing ||
		    rec.count[TRANSITION_RESOLVED] != cases[c].resolved ||
		    rec.count[TRANSITION_REPEAT] != cases[c].repeats) {
			fail_msg("case %zu: %zu firing, %zu resolved, %zu repeats", c, rec.count[TRANSITION_FIRING],
				 rec.count[TRANSITION_RESOLVED], rec.count[TRANSITION_REPEAT]);
		}
		assert_int_equal(rec.ev[0].t, TRANSITION_FIRING);
		assert_int_equal(rec.ev[0].at_ms, cases[c].first_fire_ms);
		for (size_t i = 0; i < rec.n; i++) {
			if (rec.ev[i].t == TRANSITION_RESOLVED) {
				assert_int_equal(rec.ev[i].at_ms, cases[c].first_resolve_ms);
				assert_int_equal(rec.ev[i].starts_at_ms, cases[c].first_fire_ms);
				assert_int_equal(rec.ev[i].ends_at_ms, cases[c].first_resolve_ms);
				break;
			}
		}
		if (cases[c].repeats == 3) {
			assert_int_equal(rec.ev[1].at_ms, 1235000);
			assert_int_equal(rec.ev[2].at_ms, 1835000);
			assert_int_equal(rec.ev[3].at_ms, 2435000);
		}
		assert_int_equal(engine_firing_count(e), 0);
		engine_destroy(e);
		th_rule_set_free(set);
		rec_reset(&rec);
	}
}

/* ---- `for` / `clear_for` to the sample ---------------------------------------- */

static void
test_for_clear_timing(void **state)
{
	static const struct {
		const char *name;
		int64_t for_ms;
		int64_t clear_for_ms;
		struct pt pts[16];
		struct want want[8];
	} cases[] = {
		{ "for 3s, clear_for 2s", 3000, 2000,
		  { { 0, 80 }, { 1000, 80 }, { 2000, 96 }, { 3000, 96 }, { 4000, 96 }, { 5000, 96 }, { 6000, 96 },
		    { 7000, 80 }, { 8000, 80 }, { 9000, 80 }, { 10000, 80 }, END_PT },
		  { { 2000, TRANSITION_PENDING, SEVERITY_WARNING }, { 5000, TRANSITION_FIRING, SEVERITY_WARNING },
		    { 9000, TRANSITION_RESOLVED, SEVERITY_WARNING }, END_WANT } },
		{ "pending cancelled one sample short", 3000, 0,
		  { { 0, 96 }, { 1000, 96 }, { 2000, 96 }, { 3000, 94 }, { 4000, 80 }, END_PT },
		  { { 0, TRANSITION_PENDING, SEVERITY_WARNING }, { 3000, TRANSITION_CANCELLED, SEVERITY_WARNING },
		    END_WANT } },
		{ "for 0 fires at once, no pending", 0, 0,
		  { { 0, 80 }, { 1000, 95 }, { 2000, 94.9 }, END_PT },
		  { { 1000, TRANSITION_FIRING, SEVERITY_WARNING }, { 2000, TRANSITION_RESOLVED, SEVERITY_WARNING },
		    END_WANT } },
		{ "clear streak broken and restarted", 0, 2000,
		  { { 0, 96 }, { 1000, 96 }, { 2000, 80 }, { 3000, 96 }, { 4000, 80 }, { 5000, 80 }, { 6000, 80 },
		    END_PT },
		  { { 0, TRANSITION_FIRING, SEVERITY_WARNING }, { 6000, TRANSITION_RESOLVED, SEVERITY_WARNING },
		    END_WANT } },
		{ "irregular sample times: first sample 3 s after the start", 3000, 0,
		  { { 0, 96 }, { 1500, 96 }, { 2900, 96 }, { 3100, 96 }, { 3200, 80 }, END_PT },
		  { { 0, TRANSITION_PENDING, SEVERITY_WARNING }, { 3100, TRANSITION_FIRING, SEVERITY_WARNING },
		    { 3200, TRANSITION_RESOLVED, SEVERITY_WARNING }, END_WANT } },
		{ "a gap in the metric cancels pending", 2000, 0,
		  { { 0, 96 }, { 1000, NAN }, { 2000, 96 }, { 3000, 96 }, { 4000, 96 }, END_PT },
		  { { 0, TRANSITION_PENDING, SEVERITY_WARNING }, { 1000, TRANSITION_CANCELLED, SEVERITY_WARNING },
		    { 2000, TRANSITION_PENDING, SEVERITY_WARNING }, { 4000, TRANSITION_FIRING, SEVERITY_WARNING },
		    END_WANT } },
		{ "a firing alert holds through a gap", 0, 0,
		  { { 0, 96 }, { 1000, NAN }, { 2000, NAN }, { 3000, 90 }, END_PT },
		  { { 0, TRANSITION_FIRING, SEVERITY_WARNING }, { 3000, TRANSITION_RESOLVED, SEVERITY_WARNING },
		    END_WANT } },
		{ "starts out fine: nothing at all", 0, 0,
		  { { 0, 80 }, { 1000, 90 }, { 2000, 94.99 }, END_PT }, { END_WANT } },
		{ "a recording's time goes back 5 s: no time passes; events keep the samples' stamps", 3000, 0,
		  { { 10000, 96 }, { 5000, 96 }, { 6000, 96 }, { 7000, 96 }, { 8000, 96 }, END_PT },
		  { { 10000, TRANSITION_PENDING, SEVERITY_WARNING }, { 8000, TRANSITION_FIRING, SEVERITY_WARNING },
		    END_WANT } },
	};
	struct sample *s = *state;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct rule_set *set = th_rule_set_new(1);
		struct rule *r = th_rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
		struct recorder rec = { 0 };
		struct engine *e;

		print_message("case: %s\n", cases[c].name);
		th_level(r, SEVERITY_WARNING, 95);
		r->for_ms = cases[c].for_ms;
		r->clear_for_ms = cases[c].clear_for_ms;
		e = engine_create(set, record, &rec);
		feed(e, s, "temp.cpu_c", cases[c].pts);
		expect_events(&rec, cases[c].want);
		engine_destroy(e);
		th_rule_set_free(set);
		rec_reset(&rec);
	}
}

/* ---- escalation ---------------------------------------------------------------- */

static void
test_escalation(void **state)
{
	static const struct {
		const char *name;
		struct pt pts[16];
		struct want want[8];
	} cases[] = {
		{ "warning, escalate, de-escalate, resolve: no resolve in between",
		  { { 0, 85 }, { 1000, 92 }, { 2000, 92 }, { 3000, 92 }, { 4000, 101 }, { 5000, 101 }, { 6000, 101 },
		    { 7000, 99 }, { 8000, 97 }, { 9000, 89 }, { 10000, 87 }, END_PT },
		  { { 1000, TRANSITION_PENDING, SEVERITY_WARNING }, { 3000, TRANSITION_FIRING, SEVERITY_WARNING },
		    { 6000, TRANSITION_ESCALATED, SEVERITY_CRITICAL }, { 8000, TRANSITION_DEESCALATED, SEVERITY_WARNING },
		    { 10000, TRANSITION_RESOLVED, SEVERITY_WARNING }, END_WANT } },
		{ "straight to critical, straight back to normal",
		  { { 0, 85 }, { 1000, 105 }, { 2000, 105 }, { 3000, 105 }, { 4000, 50 }, END_PT },
		  { { 1000, TRANSITION_PENDING, SEVERITY_CRITICAL }, { 3000, TRANSITION_FIRING, SEVERITY_CRITICAL },
		    { 4000, TRANSITION_RESOLVED, SEVERITY_CRITICAL }, END_WANT } },
		{ "critical blip shorter than `for` does not escalate",
		  { { 0, 92 }, { 1000, 92 }, { 2000, 92 }, { 3000, 101 }, { 4000, 101 }, { 5000, 92 }, { 6000, 80 },
		    END_PT },
		  { { 0, TRANSITION_PENDING, SEVERITY_WARNING }, { 2000, TRANSITION_FIRING, SEVERITY_WARNING },
		    { 6000, TRANSITION_RESOLVED, SEVERITY_WARNING }, END_WANT } },
		{ "oscillating around critical: escalates once, no de-escalation inside the margin",
		  { { 0, 101 }, { 1000, 101 }, { 2000, 101 }, { 3000, 99 }, { 4000, 100.5 }, { 5000, 98.5 },
		    { 6000, 100 }, { 7000, 99 }, END_PT },
		  { { 0, TRANSITION_PENDING, SEVERITY_CRITICAL }, { 2000, TRANSITION_FIRING, SEVERITY_CRITICAL },
		    END_WANT } },
	};
	struct sample *s = *state;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct rule_set *set = th_rule_set_new(1);
		struct rule *r = th_rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
		struct recorder rec = { 0 };
		struct engine *e;

		print_message("case: %s\n", cases[c].name);
		th_level(r, SEVERITY_WARNING, 90);
		th_level(r, SEVERITY_CRITICAL, 100);
		r->clear = 2;
		r->for_ms = 2000;
		e = engine_create(set, record, &rec);
		feed(e, s, "temp.cpu_c", cases[c].pts);
		expect_events(&rec, cases[c].want);
		if (c == 0) {
			/* escalated: the critical threshold; de-escalated: the critical one cleared */
			assert_true(rec.ev[2].threshold == 100 && rec.ev[2].prev == SEVERITY_WARNING);
			assert_true(rec.ev[3].threshold == 100 && rec.ev[3].prev == SEVERITY_CRITICAL);
			assert_true(rec.ev[4].threshold == 90 && rec.ev[4].value == 87);
			assert_int_equal(rec.ev[4].starts_at_ms, 3000);
		}
		engine_destroy(e);
		th_rule_set_free(set);
		rec_reset(&rec);
	}
}

static void
test_below_and_absolute_clear(void **state)
{
	/* a BELOW rule (fan too slow) with an absolute clear value */
	static const struct pt pts[] = {
		{ 0, 1200 }, { 1000, 400 }, { 2000, 450 }, { 3000, 550 }, { 4000, 600 }, { 5000, 601 }, END_PT,
	};
	static const struct want want[] = {
		{ 1000, TRANSITION_FIRING, SEVERITY_WARNING },
		{ 5000, TRANSITION_RESOLVED, SEVERITY_WARNING },
		END_WANT,
	};
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(1);
	struct rule *r = th_rule_init(set, 0, "fan-slow", "fan.0.rpm", RULE_BELOW);
	struct recorder rec = { 0 };
	struct engine *e;

	th_level(r, SEVERITY_WARNING, 500);
	r->clear_is_value = true;
	r->clear = 600; /* resolves only above 600 */
	e = engine_create(set, record, &rec);
	feed(e, s, "fan.0.rpm", pts);
	expect_events(&rec, want);
	assert_true(rec.ev[0].threshold == 500);
	engine_destroy(e);
	th_rule_set_free(set);
	rec_reset(&rec);
}

/* ---- absent_for ------------------------------------------------------------------ */

static void
test_absent_exact(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(2);
	struct rule *r = th_rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct rule *never = th_rule_init(set, 1, "nvme", "temp.nvme_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	th_level(r, SEVERITY_WARNING, 95);
	r->absent_for_ms = 5000;
	r->absent_severity = SEVERITY_CRITICAL;
	th_level(never, SEVERITY_WARNING, 70);
	never->absent_for_ms = 4000;
	e = engine_create(set, record, &rec);
	for (int64_t t = 0; t <= 10; t++) {
		at(s, t * 1000, "MAXN");
		if (t <= 2 || t == 10) {
			th_put(s, "temp.cpu_c", 50);
		}
		engine_evaluate(e, s);
	}
	/* last seen at 2 s: absent at 7 s; the never-seen metric 4 s after the first sample */
	assert_int_equal(rec.n, 3);
	assert_string_equal(rec.ev[0].metric, "temp.nvme_c");
	assert_int_equal(rec.ev[0].at_ms, 4000);
	assert_int_equal(rec.ev[0].sev, SEVERITY_WARNING);
	assert_true(rec.ev[0].absent);
	assert_string_equal(rec.ev[1].metric, "temp.cpu_c");
	assert_int_equal(rec.ev[1].t, TRANSITION_FIRING);
	assert_int_equal(rec.ev[1].at_ms, 7000);
	assert_int_equal(rec.ev[1].sev, SEVERITY_CRITICAL);
	assert_true(rec.ev[1].absent);
	assert_true(isnan(rec.ev[1].value));
	assert_string_equal(rec.ev[1].summary, "hot firing: temp.cpu_c not seen for 5s");
	/* the absent alert has its own fingerprint, not the threshold alert's (af4de9bec8c7bf48) */
	assert_string_equal(rec.ev[1].fp, "6fcbcf67adcc326d");
	assert_int_equal(rec.ev[2].t, TRANSITION_RESOLVED);
	assert_int_equal(rec.ev[2].at_ms, 10000);
	assert_int_equal(rec.ev[2].starts_at_ms, 7000);
	assert_true(rec.ev[2].value == 50);
	assert_true(rec.ev[2].absent);
	assert_int_equal(engine_firing_count(e), 1); /* temp.nvme_c is still absent */
	engine_destroy(e);
	th_rule_set_free(set);
	rec_reset(&rec);
}

static void
test_absent_glob(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(2);
	struct rule *temps = th_rule_init(set, 0, "hot", "temp.*_c", RULE_ABOVE);
	struct rule *fans = th_rule_init(set, 1, "fan-stopped", "fan.*.rpm", RULE_BELOW);
	struct recorder rec = { 0 };
	struct engine *e;

	th_level(temps, SEVERITY_WARNING, 95);
	temps->absent_for_ms = 3000;
	th_level(fans, SEVERITY_WARNING, 100);
	fans->absent_for_ms = 3000;
	e = engine_create(set, record, &rec);
	for (int64_t t = 0; t <= 8; t++) {
		at(s, t * 1000, "MAXN");
		th_put(s, "temp.cpu_c", 50);
		if (t < 2) {
			th_put(s, "temp.gpu_c", 50); /* the gpu zone vanishes at 2 s */
		}
		if (t >= 6) {
			th_put(s, "fan.0.rpm", 1200); /* the fan shows up at 6 s */
		}
		engine_evaluate(e, s);
	}
	/* fan.*.rpm never matched: the rule itself is absent at 3 s; gpu last seen at 1 s: absent at 4 s */
	assert_int_equal(rec.n, 3);
	assert_string_equal(rec.ev[0].metric, "fan.*.rpm");
	assert_int_equal(rec.ev[0].t, TRANSITION_FIRING);
	assert_int_equal(rec.ev[0].at_ms, 3000);
	assert_string_equal(rec.ev[1].metric, "temp.gpu_c");
	assert_int_equal(rec.ev[1].t, TRANSITION_FIRING);
	assert_int_equal(rec.ev[1].at_ms, 4000);
	assert_string_equal(rec.ev[2].metric, "fan.*.rpm");
	assert_int_equal(rec.ev[2].t, TRANSITION_RESOLVED);
	assert_int_equal(rec.ev[2].at_ms, 6000);
	assert_int_equal(engine_firing_count(e), 1);
	assert_int_equal(engine_instance_count(e), 3); /* cpu, gpu, fan.0 */
	engine_destroy(e);
	th_rule_set_free(set);
	rec_reset(&rec);
}

/* The same rule and metric on two boards: two fingerprints (receivers group by them). */
static void
test_fingerprint_per_board(void **state)
{
	struct sample *s = *state;
	char fp[3][ALERT_FINGERPRINT_LEN + 1];
	const char *boards[3] = {"orin-a", "orin-b", ""};
	for (int b = 0; b < 3; b++) {
		struct rule_set *set = th_rule_set_new(1);
		th_level(th_rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE), SEVERITY_WARNING, 90);
		struct recorder rec = {0};
		struct engine *e = engine_create(set, record, &rec);
		engine_set_board(e, boards[b], "id");
		at(s, 0, "MAXN");
		th_put(s, "temp.cpu_c", 95);
		engine_evaluate(e, s);
		assert_int_equal(rec.n, 1);
		snprintf(fp[b], sizeof(fp[b]), "%s", rec.ev[0].fp);
		assert_int_equal(strlen(fp[b]), ALERT_FINGERPRINT_LEN);
		rec_reset(&rec);
		free(rec.ev);
		engine_destroy(e);
		th_rule_set_free(set);
	}
	assert_string_not_equal(fp[0], fp[1]);
	assert_string_not_equal(fp[0], fp[2]);
	assert_string_not_equal(fp[1], fp[2]);
}

/* resolve_when_absent: a prediction that is gone is an all-clear, after clear_for; without it the alert stays. */
static void
test_resolve_when_absent(void **state)
{
	static const struct pt pts[] = {
		{0, 400}, {1000, 200}, {2000, NAN}, {3000, NAN}, {4000, NAN}, {5000, NAN}, END_PT,
	};
	static const struct want with[] = {
		{1000, TRANSITION_FIRING, SEVERITY_WARNING},
		{4000, TRANSITION_RESOLVED, SEVERITY_WARNING},
		END_WANT,
	};
	static const struct want without[] = {
		{1000, TRANSITION_FIRING, SEVERITY_WARNING},
		END_WANT,
	};
	struct sample *s = *state;
	for (int on = 0; on <= 1; on++) {
		struct rule_set *set = th_rule_set_new(1);
		struct rule *r = th_rule_init(set, 0, "throttle-predicted", "throttle_eta.*_s", RULE_BELOW);
		th_level(r, SEVERITY_WARNING, 300);
		r->clear_for_ms = 3000; /* gone since 1000: resolved at 4000 */
		r->resolve_when_absent = on;
		r->summary = strdup("{{metric}} {{value}} expected {{expected_power_mode}}");
		struct recorder rec = {0};
		struct engine *e = engine_create(set, record, &rec);
		engine_set_expected_power_mode(e, "MAXN_SUPER (id 2)");
		feed(e, s, "throttle_eta.tj_s", pts);
		expect_events(&rec, on ? with : without);
		assert_string_equal(rec.ev[0].summary, "throttle_eta.tj_s 200 expected MAXN_SUPER (id 2)");
		if (on) {
			assert_true(isnan(rec.ev[1].value));
		}
		engine_destroy(e);
		th_rule_set_free(set);
		rec_reset(&rec);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glob_match),
		cmocka_unit_test(test_template_check),
		cmocka_unit_test_setup_teardown(test_oscillation_hour, setup, teardown),
		cmocka_unit_test_setup_teardown(test_for_clear_timing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escalation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fingerprint_per_board, setup, teardown),
		cmocka_unit_test_setup_teardown(test_below_and_absolute_clear, setup, teardown),
		cmocka_unit_test_setup_teardown(test_absent_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_absent_glob, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve_when_absent, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
