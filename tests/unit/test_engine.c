/*
 * The alert engine on synthetic signals: timing to the sample, hysteresis,
 * escalation, absence, globs, power modes, board-relative thresholds,
 * change rules, templates, reload and restart.
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
#include "core/sample.h"
#include "thresholds/engine.h"
#include "thresholds/rules.h"

/* ---- helpers ------------------------------------------------------------ */

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);
	assert_non_null(p);
	return p;
}

static struct rule_set *
set_new(size_t n)
{
	struct rule_set *set = calloc(1, sizeof(*set));
	assert_non_null(set);
	set->rules = calloc(n, sizeof(*set->rules));
	assert_non_null(set->rules);
	set->count = n;
	return set;
}

static void
set_free(struct rule_set *set)
{
	rule_set_free(set);
	free(set);
}

static struct rule *
rule_init(struct rule_set *set, size_t i, const char *name, const char *metric, enum rule_op op)
{
	struct rule *r = &set->rules[i];

	r->name = xstrdup(name);
	r->metric = xstrdup(metric);
	r->op = op;
	r->event_severity = SEVERITY_WARNING;
	r->absent_severity = SEVERITY_WARNING;
	for (int s = 0; s < SEVERITY_COUNT; s++) {
		r->level[s].scale = 1;
	}
	return r;
}

static void
level(struct rule *r, enum severity s, double v)
{
	r->level[s].set = true;
	r->level[s].ref = REF_NONE;
	r->level[s].offset = v;
}

static void
level_ref(struct rule *r, enum severity s, enum threshold_ref ref, double scale, double offset)
{
	r->level[s].set = true;
	r->level[s].ref = ref;
	r->level[s].scale = scale;
	r->level[s].offset = offset;
}

static void
add_mode(struct rule *r, const char *mode)
{
	r->modes[r->mode_count++] = xstrdup(mode);
}

static void
at(struct sample *s, int64_t t_ms, const char *mode)
{
	sample_clear(s);
	s->time_ms = t_ms;
	s->mono_ms = t_ms; /* as a replay: durations follow the stamps */
	snprintf(s->power_mode, sizeof(s->power_mode), "%s", mode);
}

static void
put(struct sample *s, const char *name, double v)
{
	assert_int_equal(metric_set_put(&s->metrics, name, v), 0);
}

struct rec {
	enum alert_transition t;
	enum severity sev;
	enum severity prev;
	bool absent;
	bool restored;
	double value;
	double threshold;
	int64_t at_ms;
	int64_t starts_at_ms;
	int64_t ends_at_ms;
	char metric[METRIC_NAME_MAX];
	char fp[ALERT_FINGERPRINT_LEN + 1];
	char summary[ALERT_TEXT_MAX];
	char description[ALERT_TEXT_MAX];
	char throttle[ALERT_TEXT_MAX];
	struct throttle_cause causes[THROTTLE_CAUSES_MAX];
	int cause_count;
	char power_mode[POWER_MODE_NAME_MAX];
};

struct recorder {
	struct rec *ev;
	size_t n;
	size_t cap;
	size_t count[TRANSITION_RESOLVED + 1];
};

static void
record(const struct alert_event *e, void *data)
{
	struct recorder *r = data;
	struct rec *x;

	r->count[e->transition]++;
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->ev = realloc(r->ev, r->cap * sizeof(*r->ev));
		assert_non_null(r->ev);
	}
	x = &r->ev[r->n++];
	memset(x, 0, sizeof(*x));
	x->t = e->transition;
	x->sev = e->severity;
	x->prev = e->previous;
	x->absent = e->absent;
	x->restored = e->restored;
	x->value = e->value;
	x->threshold = e->threshold;
	x->at_ms = e->at_ms;
	x->starts_at_ms = e->starts_at_ms;
	x->ends_at_ms = e->ends_at_ms;
	snprintf(x->metric, sizeof(x->metric), "%s", e->metric);
	snprintf(x->fp, sizeof(x->fp), "%s", e->fingerprint);
	snprintf(x->summary, sizeof(x->summary), "%s", e->summary);
	snprintf(x->description, sizeof(x->description), "%s", e->description);
	snprintf(x->throttle, sizeof(x->throttle), "%s", e->throttle);
	memcpy(x->causes, e->throttle_causes, sizeof(x->causes));
	x->cause_count = e->throttle_cause_count;
	snprintf(x->power_mode, sizeof(x->power_mode), "%s", e->power_mode);
}

/* As an action sees them: pending and cancelled are not alerts (yet, or any more). */
static void
record_alerts(const struct alert_event *e, void *data)
{
	if (e->transition != TRANSITION_PENDING && e->transition != TRANSITION_CANCELLED) {
		record(e, data);
	}
}

static void
rec_reset(struct recorder *r)
{
	free(r->ev);
	memset(r, 0, sizeof(*r));
}

struct want {
	int64_t at_ms;
	enum alert_transition t;
	enum severity sev;
};

#define END_WANT { -1, TRANSITION_PENDING, SEVERITY_NONE }

static void
expect_events(const struct recorder *r, const struct want *w)
{
	size_t n = 0;

	while (w[n].at_ms >= 0) {
		n++;
	}
	for (size_t i = 0; i < r->n && i < n; i++) {
		if (r->ev[i].at_ms != w[i].at_ms || r->ev[i].t != w[i].t || r->ev[i].sev != w[i].sev) {
			fail_msg("event %zu: got %s %s at %lld, want %s %s at %lld", i, alert_transition_name(r->ev[i].t),
				 severity_name(r->ev[i].sev), (long long)r->ev[i].at_ms, alert_transition_name(w[i].t),
				 severity_name(w[i].sev), (long long)w[i].at_ms);
		}
	}
	assert_int_equal(r->n, n);
}

/* One metric: values at given times; NAN = the metric is missing from that sample. */
struct pt {
	int64_t t_ms;
	double v;
};

#define END_PT { -1, 0 }

static void
feed(struct engine *e, struct sample *s, const char *metric, const struct pt *pts)
{
	for (size_t i = 0; pts[i].t_ms >= 0; i++) {
		at(s, pts[i].t_ms, "MAXN");
		if (!isnan(pts[i].v)) {
			put(s, metric, pts[i].v);
		}
		engine_evaluate(e, s);
	}
}

static int
setup(void **state)
{
	struct sample *s = calloc(1, sizeof(*s));
	if (!s) {
		return -1;
	}
	*state = s;
	return 0;
}

static int
teardown(void **state)
{
	free(*state);
	return 0;
}

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
		struct rule_set *set = set_new(1);
		struct rule *r = rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
		struct recorder rec = { 0 };
		struct engine *e;

		level(r, SEVERITY_WARNING, 95);
		r->for_ms = cases[c].for_ms;
		r->clear = cases[c].clear;
		r->clear_for_ms = cases[c].clear_for_ms;
		r->repeat_ms = cases[c].repeat_ms;
		e = engine_create(set, record_alerts, &rec);
		for (int64_t t = 0; t < 3600; t++) {
			at(s, t * 1000, "MAXN");
			put(s, "temp.cpu_c", wave(t));
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
		set_free(set);
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
		struct rule_set *set = set_new(1);
		struct rule *r = rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
		struct recorder rec = { 0 };
		struct engine *e;

		print_message("case: %s\n", cases[c].name);
		level(r, SEVERITY_WARNING, 95);
		r->for_ms = cases[c].for_ms;
		r->clear_for_ms = cases[c].clear_for_ms;
		e = engine_create(set, record, &rec);
		feed(e, s, "temp.cpu_c", cases[c].pts);
		expect_events(&rec, cases[c].want);
		engine_destroy(e);
		set_free(set);
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
		struct rule_set *set = set_new(1);
		struct rule *r = rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
		struct recorder rec = { 0 };
		struct engine *e;

		print_message("case: %s\n", cases[c].name);
		level(r, SEVERITY_WARNING, 90);
		level(r, SEVERITY_CRITICAL, 100);
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
		set_free(set);
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
	struct rule_set *set = set_new(1);
	struct rule *r = rule_init(set, 0, "fan-slow", "fan.0.rpm", RULE_BELOW);
	struct recorder rec = { 0 };
	struct engine *e;

	level(r, SEVERITY_WARNING, 500);
	r->clear_is_value = true;
	r->clear = 600; /* resolves only above 600 */
	e = engine_create(set, record, &rec);
	feed(e, s, "fan.0.rpm", pts);
	expect_events(&rec, want);
	assert_true(rec.ev[0].threshold == 500);
	engine_destroy(e);
	set_free(set);
	rec_reset(&rec);
}

/* ---- absent_for ------------------------------------------------------------------ */

static void
test_absent_exact(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = set_new(2);
	struct rule *r = rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct rule *never = rule_init(set, 1, "nvme", "temp.nvme_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	level(r, SEVERITY_WARNING, 95);
	r->absent_for_ms = 5000;
	r->absent_severity = SEVERITY_CRITICAL;
	level(never, SEVERITY_WARNING, 70);
	never->absent_for_ms = 4000;
	e = engine_create(set, record, &rec);
	for (int64_t t = 0; t <= 10; t++) {
		at(s, t * 1000, "MAXN");
		if (t <= 2 || t == 10) {
			put(s, "temp.cpu_c", 50);
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
	set_free(set);
	rec_reset(&rec);
}

static void
test_absent_glob(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = set_new(2);
	struct rule *temps = rule_init(set, 0, "hot", "temp.*_c", RULE_ABOVE);
	struct rule *fans = rule_init(set, 1, "fan-stopped", "fan.*.rpm", RULE_BELOW);
	struct recorder rec = { 0 };
	struct engine *e;

	level(temps, SEVERITY_WARNING, 95);
	temps->absent_for_ms = 3000;
	level(fans, SEVERITY_WARNING, 100);
	fans->absent_for_ms = 3000;
	e = engine_create(set, record, &rec);
	for (int64_t t = 0; t <= 8; t++) {
		at(s, t * 1000, "MAXN");
		put(s, "temp.cpu_c", 50);
		if (t < 2) {
			put(s, "temp.gpu_c", 50); /* the gpu zone vanishes at 2 s */
		}
		if (t >= 6) {
			put(s, "fan.0.rpm", 1200); /* the fan shows up at 6 s */
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
	set_free(set);
	rec_reset(&rec);
}

/* ---- globs ---------------------------------------------------------------------------- */

static void
test_glob_expansion(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = set_new(1);
	struct rule *r = rule_init(set, 0, "hot", "temp.*_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	level(r, SEVERITY_WARNING, 90);
	e = engine_create(set, record, &rec);

	at(s, 0, "MAXN");
	put(s, "temp.cpu_c", 95);
	put(s, "trip.cpu.passive_c", 95);
	put(s, "temp.gpu_c", 91);
	put(s, "temp.soc0_c", 40);
	engine_evaluate(e, s);
	assert_int_equal(rec.n, 2);
	assert_string_equal(rec.ev[0].metric, "temp.cpu_c");
	assert_string_equal(rec.ev[0].fp, "af4de9bec8c7bf48");
	assert_string_equal(rec.ev[1].metric, "temp.gpu_c");
	assert_string_equal(rec.ev[1].fp, "ee9560eb19a6217c");
	assert_int_equal(engine_instance_count(e), 3);
	assert_int_equal(engine_firing_count(e), 2);

	/* same names, other order: a new layout, and every value still goes to its instance */
	at(s, 1000, "MAXN");
	put(s, "temp.soc0_c", 40);
	put(s, "temp.gpu_c", 80);
	put(s, "trip.cpu.passive_c", 95);
	put(s, "temp.cpu_c", 96);
	engine_evaluate(e, s);
	assert_int_equal(rec.n, 3);
	assert_int_equal(rec.ev[2].t, TRANSITION_RESOLVED);
	assert_string_equal(rec.ev[2].metric, "temp.gpu_c");
	assert_int_equal(engine_layout_rebuilds(e), 2);

	/* the same layout again: no rebuild */
	at(s, 2000, "MAXN");
	put(s, "temp.soc0_c", 40);
	put(s, "temp.gpu_c", 80);
	put(s, "trip.cpu.passive_c", 95);
	put(s, "temp.cpu_c", 96);
	engine_evaluate(e, s);
	assert_int_equal(engine_layout_rebuilds(e), 2);
	assert_int_equal(rec.n, 3);
	engine_destroy(e);
	set_free(set);
	rec_reset(&rec);
}

static void
test_glob_instance_cap(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = set_new(1);
	struct rule *r = rule_init(set, 0, "many", "x.*.v", RULE_ABOVE);
	struct engine *e;

	level(r, SEVERITY_WARNING, 1);
	e = engine_create(set, NULL, NULL);
	at(s, 0, "");
	for (int i = 0; i < 300; i++) {
		assert_int_equal(metric_set_putf(&s->metrics, 0, "x.%d.v", i), 0);
	}
	engine_evaluate(e, s);
	assert_int_equal(engine_instance_count(e), 256);
	assert_int_equal(engine_dropped_instances(e), 44);
	engine_destroy(e);
	set_free(set);
}

/* ---- power modes ----------------------------------------------------------------------- */

static void
test_power_mode_filter(void **state)
{
	static const struct {
		const char *mode;
		double id; /* nvpmodel.id, NAN = not in the sample */
		double v;
		struct want want;
	} steps[] = {
		{ "15W", 1, 99, { 0, TRANSITION_PENDING, SEVERITY_NONE } },        /* not evaluated */
		{ "MAXN", 0, 99, { 1000, TRANSITION_FIRING, SEVERITY_WARNING } },  /* in the list */
		{ "MAXN", 0, 99, { 0, TRANSITION_PENDING, SEVERITY_NONE } },
		{ "15W", 1, 99, { 3000, TRANSITION_RESOLVED, SEVERITY_WARNING } }, /* leaves the list */
		{ "", 2, 99, { 4000, TRANSITION_FIRING, SEVERITY_WARNING } },      /* mode "2" by id */
		{ "", NAN, 99, { 5000, TRANSITION_RESOLVED, SEVERITY_WARNING } },  /* unknown mode */
		{ "maxn", 0, 99, { 6000, TRANSITION_FIRING, SEVERITY_WARNING } },  /* names ignore case */
	};
	struct sample *s = *state;
	struct rule_set *set = set_new(1);
	struct rule *r = rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;
	size_t n = 0;

	level(r, SEVERITY_WARNING, 95);
	add_mode(r, "MAXN");
	add_mode(r, "2");
	e = engine_create(set, record, &rec);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		at(s, (int64_t)i * 1000, steps[i].mode);
		put(s, "temp.cpu_c", steps[i].v);
		if (!isnan(steps[i].id)) {
			put(s, "nvpmodel.id", steps[i].id);
		}
		engine_evaluate(e, s);
		if (steps[i].want.sev != SEVERITY_NONE) {
			n++;
			assert_int_equal(rec.n, n);
			assert_int_equal(rec.ev[n - 1].at_ms, steps[i].want.at_ms);
			assert_int_equal(rec.ev[n - 1].t, steps[i].want.t);
		} else {
			assert_int_equal(rec.n, n);
		}
	}
	assert_string_equal(rec.ev[0].power_mode, "MAXN");
	engine_destroy(e);
	set_free(set);
	rec_reset(&rec);
}

static void
test_power_mode_cancels_pending(void **state)
{
	static const struct want want[] = {
		{ 0, TRANSITION_PENDING, SEVERITY_WARNING },
		{ 1000, TRANSITION_CANCELLED, SEVERITY_WARNING },
		END_WANT,
	};
	struct sample *s = *state;
	struct rule_set *set = set_new(1);
	struct rule *r = rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	level(r, SEVERITY_WARNING, 95);
	r->for_ms = 10000;
	add_mode(r, "MAXN");
	e = engine_create(set, record, &rec);
	at(s, 0, "MAXN");
	put(s, "temp.cpu_c", 99);
	engine_evaluate(e, s);
	at(s, 1000, "30W");
	put(s, "temp.cpu_c", 99);
	engine_evaluate(e, s);
	expect_events(&rec, want);
	engine_destroy(e);
	set_free(set);
	rec_reset(&rec);
}

/* ---- thresholds relative to the board --------------------------------------------------------- */

static void
test_trip_relative(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = set_new(3);
	struct rule *hot = rule_init(set, 0, "near-trip", "temp.*_c", RULE_ABOVE);
	struct rule *hot_fb = rule_init(set, 1, "near-trip-fb", "temp.*_c", RULE_ABOVE);
	struct rule *slow = rule_init(set, 2, "capped", "*.freq_mhz", RULE_BELOW);
	struct recorder rec = { 0 };
	struct engine *e;

	level_ref(hot, SEVERITY_CRITICAL, REF_PASSIVE_TRIP, 1, -5);
	level_ref(hot_fb, SEVERITY_WARNING, REF_HOT_TRIP, 1, -10);
	hot_fb->level[SEVERITY_WARNING].has_fallback = true;
	hot_fb->level[SEVERITY_WARNING].fallback = 95;
	level_ref(slow, SEVERITY_WARNING, REF_CEILING, 0.5, 0);
	level_ref(slow, SEVERITY_CRITICAL, REF_HW_MAX, 0.25, 0);
	e = engine_create(set, record, &rec);

	at(s, 0, "MAXN");
	put(s, "temp.cpu_c", 91);           /* passive 95 - 5 = 90: critical; hot 99 - 10 = 89: warning */
	put(s, "trip.cpu.passive_c", 95);
	put(s, "trip.cpu.hot_c", 99);
	put(s, "temp.tj_c", 100);           /* no trips: no critical; fallback 95: warning */
	put(s, "temp.soc0_c", 60);
	put(s, "trip.soc0.passive_c", 95);
	put(s, "cpu.0.freq_mhz", 729.6);    /* ceiling 2201.6 x 0.5 = 1100.8: warning */
	put(s, "cpu.0.max_freq_mhz", 2201.6);
	put(s, "cpu.0.hw_max_freq_mhz", 2201.6);
	put(s, "cpu.1.freq_mhz", 729.6);    /* ceiling 1000 x 0.5 = 500: fine */
	put(s, "cpu.1.max_freq_mhz", 1000);
	put(s, "gpu.freq_mhz", 300);        /* hw max 1300.5 x 0.25 = 325.125: critical */
	put(s, "gpu.hw_max_freq_mhz", 1300.5);
	put(s, "emc.freq_mhz", 10);         /* no ceiling, no fallback: never alerts */
	engine_evaluate(e, s);

	assert_int_equal(rec.n, 5);
	assert_string_equal(rec.ev[0].metric, "temp.cpu_c");
	assert_int_equal(rec.ev[0].sev, SEVERITY_CRITICAL);
	assert_true(rec.ev[0].threshold == 90);
	assert_string_equal(rec.ev[1].metric, "temp.cpu_c");
	assert_int_equal(rec.ev[1].sev, SEVERITY_WARNING);
	assert_true(rec.ev[1].threshold == 89);
	assert_string_equal(rec.ev[2].metric, "temp.tj_c");
	assert_true(rec.ev[2].threshold == 95);
	assert_string_equal(rec.ev[3].metric, "cpu.0.freq_mhz");
	assert_true(rec.ev[3].threshold == 1100.8);
	assert_string_equal(rec.ev[4].metric, "gpu.freq_mhz");
	assert_int_equal(rec.ev[4].sev, SEVERITY_CRITICAL);
	assert_true(rec.ev[4].threshold == 325.125);

	/* the trip point moves (another board state): the threshold follows per sample */
	at(s, 1000, "MAXN");
	put(s, "temp.cpu_c", 91);
	put(s, "trip.cpu.passive_c", 100);
	put(s, "trip.cpu.hot_c", 99);
	put(s, "temp.tj_c", 100);
	put(s, "temp.soc0_c", 60);
	put(s, "trip.soc0.passive_c", 95);
	put(s, "cpu.0.freq_mhz", 729.6);
	put(s, "cpu.0.max_freq_mhz", 2201.6);
	put(s, "cpu.0.hw_max_freq_mhz", 2201.6);
	put(s, "cpu.1.freq_mhz", 729.6);
	put(s, "cpu.1.max_freq_mhz", 1000);
	put(s, "gpu.freq_mhz", 300);
	put(s, "gpu.hw_max_freq_mhz", 1300.5);
	put(s, "emc.freq_mhz", 10);
	engine_evaluate(e, s);
	assert_int_equal(rec.n, 6);
	assert_string_equal(rec.ev[5].metric, "temp.cpu_c");
	assert_int_equal(rec.ev[5].t, TRANSITION_RESOLVED);
	assert_true(rec.ev[5].threshold == 95);
	engine_destroy(e);
	set_free(set);
	rec_reset(&rec);
}

/* ---- changes / increases ------------------------------------------------------------------------ */

static void
test_changes_increases(void **state)
{
	static const struct {
		const char *name;
		enum rule_op op;
		int64_t clear_for_ms;
		struct pt pts[12];
		struct want want[8];
	} cases[] = {
		{ "power mode changes, resolve on the next unchanged sample", RULE_CHANGES, 0,
		  { { 0, 0 }, { 1000, 0 }, { 2000, 2 }, { 3000, 2 }, { 4000, 2 }, { 5000, 0 }, END_PT },
		  { { 2000, TRANSITION_FIRING, SEVERITY_CRITICAL }, { 3000, TRANSITION_RESOLVED, SEVERITY_CRITICAL },
		    { 5000, TRANSITION_FIRING, SEVERITY_CRITICAL }, END_WANT } },
		{ "changes with clear_for 3s; a second change restarts the clock", RULE_CHANGES, 3000,
		  { { 0, 0 }, { 1000, 2 }, { 2000, 2 }, { 3000, 1 }, { 4000, 1 }, { 5000, 1 }, { 6000, 1 }, END_PT },
		  { { 1000, TRANSITION_FIRING, SEVERITY_CRITICAL }, { 6000, TRANSITION_RESOLVED, SEVERITY_CRITICAL },
		    END_WANT } },
		{ "counter increases; a reset only rebaselines", RULE_INCREASES, 0,
		  { { 0, 5 }, { 1000, 5 }, { 2000, 7 }, { 3000, 7 }, { 4000, 3 }, { 5000, 3 }, { 6000, 4 }, END_PT },
		  { { 2000, TRANSITION_FIRING, SEVERITY_CRITICAL }, { 3000, TRANSITION_RESOLVED, SEVERITY_CRITICAL },
		    { 6000, TRANSITION_FIRING, SEVERITY_CRITICAL }, END_WANT } },
		{ "a gap keeps the baseline", RULE_INCREASES, 0,
		  { { 0, 5 }, { 1000, NAN }, { 2000, 5 }, { 3000, NAN }, { 4000, 6 }, END_PT },
		  { { 4000, TRANSITION_FIRING, SEVERITY_CRITICAL }, END_WANT } },
	};
	struct sample *s = *state;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct rule_set *set = set_new(1);
		struct rule *r = rule_init(set, 0, "mode-change", "nvpmodel.id", cases[c].op);
		struct recorder rec = { 0 };
		struct engine *e;

		print_message("case: %s\n", cases[c].name);
		r->event_severity = SEVERITY_CRITICAL;
		r->clear_for_ms = cases[c].clear_for_ms;
		e = engine_create(set, record, &rec);
		feed(e, s, "nvpmodel.id", cases[c].pts);
		expect_events(&rec, cases[c].want);
		assert_true(isnan(rec.ev[0].threshold));
		engine_destroy(e);
		set_free(set);
		rec_reset(&rec);
	}
}

/* ---- repeat ------------------------------------------------------------------------------------- */

static void
test_repeat(void **state)
{
	static const struct pt pts[] = {
		{ 0, 99 }, { 5000, 99 }, { 10000, 99 }, { 15000, 99 }, { 20000, 99 }, { 24000, 99 }, { 25000, 80 },
		END_PT,
	};
	static const struct want want[] = {
		{ 0, TRANSITION_FIRING, SEVERITY_WARNING },
		{ 10000, TRANSITION_REPEAT, SEVERITY_WARNING },
		{ 20000, TRANSITION_REPEAT, SEVERITY_WARNING },
		{ 25000, TRANSITION_RESOLVED, SEVERITY_WARNING },
		END_WANT,
	};
	struct sample *s = *state;
	struct rule_set *set = set_new(1);
	struct rule *r = rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	level(r, SEVERITY_WARNING, 95);
	r->repeat_ms = 10000;
	e = engine_create(set, record_alerts, &rec);
	feed(e, s, "temp.cpu_c", pts);
	expect_events(&rec, want);
	assert_int_equal(rec.ev[1].starts_at_ms, 0);
	engine_destroy(e);
	set_free(set);
	rec_reset(&rec);
}

/* ---- templates ---------------------------------------------------------------------------------- */

static void
test_template_rendering(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = set_new(3);
	struct rule *r = rule_init(set, 0, "cpu-hot", "temp.cpu_c", RULE_ABOVE);
	struct rule *thr = rule_init(set, 1, "throttled", "throttle.*", RULE_ABOVE);
	struct rule *plain = rule_init(set, 2, "gpu-hot", "temp.gpu_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;
	char big[ALERT_TEXT_MAX + 64];

	level(r, SEVERITY_CRITICAL, 95);
	r->labels = calloc(2, sizeof(*r->labels));
	assert_non_null(r->labels);
	r->labels[0] = (struct alert_label){ xstrdup("team"), xstrdup("robots") };
	r->labels[1] = (struct alert_label){ xstrdup("room"), xstrdup("lab 2") };
	r->label_count = 2;
	r->summary = xstrdup("{{rule}} on {{board}}: {{metric}} at {{value}} C >= {{threshold}} "
			     "({{ severity }}, {{labels.team}}, {{labels.nope}}, {{power_mode}}, {{transition}})");
	r->description = xstrdup("{{labels.room}} {{bogus}} {single}");
	level(thr, SEVERITY_WARNING, 1);
	thr->summary = xstrdup("{{metric}}: {{throttle}}");
	level(plain, SEVERITY_WARNING, 80);
	/* a long summary is cut at a character boundary: each 'é' is two bytes */
	memset(big, 0, sizeof(big));
	for (size_t i = 0; i + 2 < sizeof(big); i += 2) {
		memcpy(big + i, "\xc3\xa9", 2);
	}
	plain->summary = xstrdup(big);

	e = engine_create(set, record, &rec);
	engine_set_board(e, "orin-7", "orin-7-id");
	at(s, 0, "MAXN");
	put(s, "temp.cpu_c", 96.5);
	put(s, "temp.gpu_c", 81);
	put(s, "throttle.active", 1);
	put(s, "throttle.thermal", 1);
	put(s, "throttle.overcurrent", 1);
	s->throttle.active = true;
	s->throttle.reason[THROTTLE_THERMAL] = true;
	snprintf(s->throttle.why[THROTTLE_THERMAL], THROTTLE_WHY_MAX, "cpu at 96.0 C >= passive trip 95.0 C");
	s->throttle.reason[THROTTLE_OVERCURRENT] = true;
	snprintf(s->throttle.why[THROTTLE_OVERCURRENT], THROTTLE_WHY_MAX, "oc1 event count 0 -> 2 (+2)");
	s->throttle.causes[0] = (struct throttle_cause){THROTTLE_THERMAL, "trip", "cpu", 96, 95};
	s->throttle.causes[1] = (struct throttle_cause){THROTTLE_OVERCURRENT, "oc_event", "oc1", 2, 0};
	s->throttle.cause_count = 2;
	engine_evaluate(e, s);

	assert_int_equal(rec.n, 5);
	assert_string_equal(rec.ev[0].summary,
			    "cpu-hot on orin-7: temp.cpu_c at 96.5 C >= 95 (critical, robots, , MAXN, firing)");
	assert_string_equal(rec.ev[0].description, "lab 2 {{bogus}} {single}");
	assert_string_equal(rec.ev[0].throttle, "");
	/* scoped to the board: the same rule and metric elsewhere give another fingerprint */
	assert_string_equal(rec.ev[0].fp, "2b91b15c8f535318");
	assert_string_equal(rec.ev[1].metric, "throttle.active");
	assert_string_equal(rec.ev[1].throttle,
			    "thermal: cpu at 96.0 C >= passive trip 95.0 C; overcurrent: oc1 event count 0 -> 2 (+2)");
	assert_string_equal(rec.ev[1].summary, "throttle.active: thermal: cpu at 96.0 C >= passive trip 95.0 C; "
					       "overcurrent: oc1 event count 0 -> 2 (+2)");
	assert_string_equal(rec.ev[2].metric, "throttle.thermal");
	assert_string_equal(rec.ev[2].throttle, "thermal: cpu at 96.0 C >= passive trip 95.0 C");
	assert_string_equal(rec.ev[3].metric, "throttle.overcurrent");
	assert_string_equal(rec.ev[3].throttle, "overcurrent: oc1 event count 0 -> 2 (+2)");
	/* the same reasons as data: all for throttle.active, its own for a reason, none elsewhere */
	assert_int_equal(rec.ev[0].cause_count, 0);
	assert_int_equal(rec.ev[1].cause_count, 2);
	assert_string_equal(rec.ev[1].causes[1].source, "oc1");
	assert_int_equal(rec.ev[2].cause_count, 1);
	assert_string_equal(rec.ev[2].causes[0].kind, "trip");
	assert_string_equal(rec.ev[2].causes[0].source, "cpu");
	assert_true(rec.ev[2].causes[0].value == 96 && rec.ev[2].causes[0].limit == 95);
	assert_int_equal(rec.ev[3].cause_count, 1);
	assert_int_equal(rec.ev[3].causes[0].reason, THROTTLE_OVERCURRENT);
	assert_string_equal(rec.ev[4].metric, "temp.gpu_c");
	/* 511 bytes fit: 255 characters, and half of the 256th is dropped */
	assert_int_equal(strlen(rec.ev[4].summary), 510);
	assert_int_equal((unsigned char)rec.ev[4].summary[509], 0xa9);

	/* the resolve renders the same template with the new value and transition */
	at(s, 1000, "MAXN");
	put(s, "temp.cpu_c", 93.25);
	put(s, "temp.gpu_c", 81);
	engine_evaluate(e, s);
	assert_string_equal(rec.ev[5].summary,
			    "cpu-hot on orin-7: temp.cpu_c at 93.25 C >= 95 (critical, robots, , MAXN, resolved)");
	engine_destroy(e);
	set_free(set);
	rec_reset(&rec);
}

static void
test_default_summary(void **state)
{
	static const struct pt pts[] = { { 0, 40 }, { 1000, 96.125 }, END_PT };
	struct sample *s = *state;
	struct rule_set *set = set_new(1);
	struct rule *r = rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	level(r, SEVERITY_WARNING, 95);
	e = engine_create(set, record, &rec);
	feed(e, s, "temp.cpu_c", pts);
	assert_int_equal(rec.n, 1);
	assert_string_equal(rec.ev[0].summary, "hot firing: temp.cpu_c = 96.125 (threshold 95)");
	assert_string_equal(rec.ev[0].description, "");
	engine_destroy(e);
	set_free(set);
	rec_reset(&rec);
}

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
	struct rule_set *set = set_new(1);
	struct rule *r = rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	level(r, SEVERITY_WARNING, 90);
	level(r, SEVERITY_CRITICAL, 100);
	r->for_ms = 1000;
	e = engine_create(set, record, &rec);
	feed(e, s, "temp.cpu_c", pts);
	expect_events(&rec, want);
	assert_int_equal(rec.ev[2].prev, SEVERITY_WARNING);
	assert_int_equal(rec.ev[3].prev, SEVERITY_CRITICAL);
	assert_int_equal(engine_generation(e), 5);
	engine_destroy(e);
	set_free(set);
	rec_reset(&rec);
}

/* ---- reload (engine_adopt) ---------------------------------------------------------------------- */

static void
test_adopt_reload(void **state)
{
	struct sample *s = *state;
	struct rule_set *v1 = set_new(3), *v2 = set_new(3);
	struct recorder rec1 = { 0 }, rec2 = { 0 };
	struct engine *e1, *e2;

	level(rule_init(v1, 0, "hot", "temp.cpu_c", RULE_ABOVE), SEVERITY_WARNING, 90);
	level(rule_init(v1, 1, "gone", "temp.gpu_c", RULE_ABOVE), SEVERITY_WARNING, 90);
	level(rule_init(v1, 2, "zones", "temp.*_c", RULE_ABOVE), SEVERITY_WARNING, 90);
	/* v2: "hot" kept with a new threshold, "gone" removed, "zones" narrowed to soc*, "new" added */
	level(rule_init(v2, 0, "new", "temp.cpu_c", RULE_ABOVE), SEVERITY_CRITICAL, 99);
	level(rule_init(v2, 1, "zones", "temp.soc*_c", RULE_ABOVE), SEVERITY_WARNING, 90);
	level(rule_init(v2, 2, "hot", "temp.cpu_c", RULE_ABOVE), SEVERITY_WARNING, 92);

	e1 = engine_create(v1, record, &rec1);
	at(s, 10000, "MAXN");
	put(s, "temp.cpu_c", 95);
	put(s, "temp.gpu_c", 95);
	put(s, "temp.soc0_c", 95);
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
	set_free(v1);

	/* still hot: nothing new for the kept alerts; "new" is new and fires */
	at(s, 11000, "MAXN");
	put(s, "temp.cpu_c", 99.5);
	put(s, "temp.soc0_c", 95);
	engine_evaluate(e2, s);
	assert_int_equal(rec2.n, 4);
	assert_string_equal(rec2.ev[3].metric, "temp.cpu_c");
	assert_int_equal(rec2.ev[3].t, TRANSITION_FIRING);
	assert_int_equal(rec2.ev[3].sev, SEVERITY_CRITICAL);

	/* below the new threshold of "hot": resolves, with the starts_at from before the reload */
	at(s, 12000, "MAXN");
	put(s, "temp.cpu_c", 91);
	put(s, "temp.soc0_c", 95);
	engine_evaluate(e2, s);
	assert_int_equal(rec2.n, 6);
	assert_int_equal(rec2.ev[4].t, TRANSITION_RESOLVED); /* "new" */
	assert_int_equal(rec2.ev[5].t, TRANSITION_RESOLVED); /* "hot" */
	assert_true(rec2.ev[5].threshold == 92);
	assert_int_equal(rec2.ev[5].starts_at_ms, 10000);
	assert_string_equal(rec2.ev[5].fp, "af4de9bec8c7bf48");
	engine_destroy(e2);
	set_free(v2);
	rec_reset(&rec1);
	rec_reset(&rec2);
}

/* ---- restart (save / load) ---------------------------------------------------------------------- */

static struct rule_set *
restart_rules(void)
{
	struct rule_set *set = set_new(3);
	struct rule *hot = rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct rule *slow = rule_init(set, 1, "slow-hot", "temp.gpu_c", RULE_ABOVE);
	struct rule *fans = rule_init(set, 2, "fans", "fan.*.rpm", RULE_BELOW);

	level(hot, SEVERITY_WARNING, 90);
	level(hot, SEVERITY_CRITICAL, 100);
	level(slow, SEVERITY_WARNING, 90);
	slow->for_ms = 30000;
	level(fans, SEVERITY_WARNING, 100);
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
		put(s, "temp.cpu_c", 101.5);
		put(s, "temp.gpu_c", 95);
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
	set_free(set1);

	/* restart: a new engine over freshly decoded rules */
	diag_list_init(&diags);
	e2 = engine_create(set2, record, &rec);
	assert_int_equal(engine_load_state(e2, path, &diags), 0);
	assert_int_equal(diags.count, 0);
	assert_int_equal(engine_firing_count(e2), 2);

	/* gpu still hot: its `for` goes on from 100 s and fires at 130 s, not 30 s after the restart */
	at(s, 120000, "MAXN");
	put(s, "temp.cpu_c", 95);
	put(s, "temp.gpu_c", 95);
	engine_evaluate(e2, s);
	assert_int_equal(rec.n, 1);
	assert_int_equal(rec.ev[0].t, TRANSITION_DEESCALATED);
	at(s, 130000, "MAXN");
	put(s, "temp.cpu_c", 50);
	put(s, "temp.gpu_c", 95);
	put(s, "fan.0.rpm", 2000);
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
	set_free(set2);
	rec_reset(&rec);
}

static void
test_announce_active(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = set_new(1);
	struct rule *r = rule_init(set, 0, "hot", "temp.*_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	level(r, SEVERITY_WARNING, 90);
	r->for_ms = 5000;
	e = engine_create(set, record, &rec);
	at(s, 0, "MAXN");
	put(s, "temp.cpu_c", 95);
	engine_evaluate(e, s);
	at(s, 5000, "MAXN");
	put(s, "temp.cpu_c", 95);
	put(s, "temp.gpu_c", 91);
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
	set_free(set);
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
		struct rule_set *set = set_new(1);
		level(rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE), SEVERITY_WARNING, 90);
		struct recorder rec = {0};
		struct engine *e = engine_create(set, record, &rec);
		engine_set_board(e, boards[b], "id");
		at(s, 0, "MAXN");
		put(s, "temp.cpu_c", 95);
		engine_evaluate(e, s);
		assert_int_equal(rec.n, 1);
		snprintf(fp[b], sizeof(fp[b]), "%s", rec.ev[0].fp);
		assert_int_equal(strlen(fp[b]), ALERT_FINGERPRINT_LEN);
		rec_reset(&rec);
		free(rec.ev);
		engine_destroy(e);
		set_free(set);
	}
	assert_string_not_equal(fp[0], fp[1]);
	assert_string_not_equal(fp[0], fp[2]);
	assert_string_not_equal(fp[1], fp[2]);
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
		cmocka_unit_test_setup_teardown(test_glob_expansion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_glob_instance_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_mode_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_mode_cancels_pending, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trip_relative, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changes_increases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repeat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_template_rendering, setup, teardown),
		cmocka_unit_test_setup_teardown(test_default_summary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listener_hears_every_transition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_adopt_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_load_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_announce_active, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
