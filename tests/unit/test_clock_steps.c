/*
 * Wall clock steps against the monotonic clock (issue 21): the step
 * detector, and the engine, the history and the report fed samples whose
 * wall clock steps by an hour while their monotonic clock runs on.
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

#include <cmocka.h>

#include "core/clock.h"
#include "core/sample.h"
#include "report/report.h"
#include "thresholds/engine.h"
#include "thresholds/rules.h"
#include "web/history.h"

#include "helpers.h"

#define HOUR_MS 3600000LL
#define MIN_MS 60000LL
#define T0 1741946400000LL /* the wall clock at the first sample */

/* A sample MONO ms after the first, on a wall clock stepped by STEP ms so far. */
static void
at(struct sample *s, int64_t mono, int64_t step)
{
	sample_clear(s);
	s->mono_ms = mono;
	s->time_ms = T0 + mono + step;
	snprintf(s->power_mode, sizeof(s->power_mode), "MAXN");
}

/* ---- the step detector ------------------------------------------------------- */

static void
test_clock_watch(void **state)
{
	(void)state;
	struct clock_watch w = {0};
	int64_t mono = 5000, wall = T0;

	assert_int_equal(clock_watch_step(&w, wall, mono), 0); /* the first stamps: nothing to compare */
	for (int i = 0; i < 10; i++) {
		mono += 1000;
		wall += 1000;
		assert_int_equal(clock_watch_step(&w, wall, mono), 0);
	}
	/* NTP slews (at most 500 ppm), a late tick, a 900 ms adjustment: no step */
	mono += 1000;
	wall += 1000 + 1;
	assert_int_equal(clock_watch_step(&w, wall, mono), 0);
	mono += 7000;
	wall += 7000;
	assert_int_equal(clock_watch_step(&w, wall, mono), 0);
	mono += 1000;
	wall += 1900;
	assert_int_equal(clock_watch_step(&w, wall, mono), 0);
	/* an hour between samples allows 2.8 s of slew */
	mono += HOUR_MS;
	wall += HOUR_MS + 2500;
	assert_int_equal(clock_watch_step(&w, wall, mono), 0);
	/* NTP at boot: an hour forward; then an hour back; each seen once */
	mono += 1000;
	wall += 1000 + HOUR_MS;
	assert_int_equal(clock_watch_step(&w, wall, mono), HOUR_MS);
	mono += 1000;
	wall += 1000;
	assert_int_equal(clock_watch_step(&w, wall, mono), 0);
	mono += 1000;
	wall += 1000 - HOUR_MS;
	assert_int_equal(clock_watch_step(&w, wall, mono), -HOUR_MS);
	/* a step of 1.5 s is a step */
	mono += 1000;
	wall += 2500;
	assert_int_equal(clock_watch_step(&w, wall, mono), 1500);
}

/* ---- the engine ------------------------------------------------------------ */

struct seen {
	enum alert_transition t[32];
	int64_t at_ms[32], starts_at_ms[32], ends_at_ms[32], mono[32];
	bool absent[32];
	size_t n;
	int64_t now_mono; /* of the sample being evaluated */
};

static void
record(const struct alert_event *e, void *data)
{
	struct seen *r = data;
	if (r->n < 32) {
		r->t[r->n] = e->transition;
		r->at_ms[r->n] = e->at_ms;
		r->starts_at_ms[r->n] = e->starts_at_ms;
		r->ends_at_ms[r->n] = e->ends_at_ms;
		r->absent[r->n] = e->absent;
		r->mono[r->n] = r->now_mono;
	}
	r->n++;
}

static struct rule_set *
one_rule(const char *metric)
{
	struct rule_set *set = th_rule_set_new(1);
	th_level(th_rule_init(set, 0, "hot", metric, RULE_ABOVE), SEVERITY_WARNING, 95);
	return set;
}

/*
 * Samples every STEP_EVERY ms of monotonic time up to END; the wall clock
 * steps by STEP at STEP_AT. VALUE(mono) gives temp.cpu_c (NAN: absent).
 */
static void
run_engine(struct engine *e, struct seen *rec, int64_t every, int64_t end, int64_t step_at, int64_t step,
	   double (*value)(int64_t mono))
{
	struct sample *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	for (int64_t m = 0; m <= end; m += every) {
		at(s, m, m >= step_at ? step : 0);
		double v = value(m);
		if (!isnan(v)) {
			assert_int_equal(metric_set_put(&s->metrics, "temp.cpu_c", v), 0);
		}
		rec->now_mono = m;
		engine_evaluate(e, s);
	}
	free(s);
}

static double
always_hot(int64_t mono)
{
	(void)mono;
	return 100;
}

static double
hot_first_minute(int64_t mono)
{
	return mono < MIN_MS ? 100 : 50;
}

static double
seen_first_10s(int64_t mono)
{
	return mono <= 10000 ? 50 : NAN;
}

static void
test_engine_for_and_repeat_across_a_step_forward(void **state)
{
	(void)state;
	/* for: 30m, repeat: 30m; the wall clock jumps an hour forward 60 s in */
	struct rule_set *set = one_rule("temp.cpu_c");
	set->rules[0].for_ms = 30 * MIN_MS;
	set->rules[0].repeat_ms = 30 * MIN_MS;
	struct seen rec = {0};
	struct engine *e = engine_create(set, record, &rec);
	run_engine(e, &rec, 10000, 61 * MIN_MS, MIN_MS, HOUR_MS, always_hot);
	/* pending at once, firing after 30 minutes that passed, one repeat 30 minutes later */
	assert_int_equal(rec.n, 3);
	assert_int_equal(rec.t[0], TRANSITION_PENDING);
	assert_int_equal(rec.t[1], TRANSITION_FIRING);
	assert_int_equal(rec.mono[1], 30 * MIN_MS);
	/* the event is stamped with its sample's wall clock; it started then */
	assert_int_equal(rec.at_ms[1], T0 + 30 * MIN_MS + HOUR_MS);
	assert_int_equal(rec.starts_at_ms[1], rec.at_ms[1]);
	assert_int_equal(rec.t[2], TRANSITION_REPEAT);
	assert_int_equal(rec.mono[2], 60 * MIN_MS);
	engine_destroy(e);
	th_rule_set_free(set);
}

static void
test_engine_clear_for_and_lengths_across_steps(void **state)
{
	(void)state;
	/* fires at once, cools down after a minute; clear_for: 10m; the clock steps between */
	for (int dir = -1; dir <= 1; dir += 2) {
		struct rule_set *set = one_rule("temp.cpu_c");
		set->rules[0].clear_for_ms = 10 * MIN_MS;
		struct seen rec = {0};
		struct engine *e = engine_create(set, record, &rec);
		run_engine(e, &rec, 10000, 20 * MIN_MS, MIN_MS + 10000, dir * HOUR_MS, hot_first_minute);
		assert_int_equal(rec.n, 2);
		assert_int_equal(rec.t[0], TRANSITION_FIRING);
		assert_int_equal(rec.t[1], TRANSITION_RESOLVED);
		assert_int_equal(rec.mono[1], 11 * MIN_MS); /* cool from 1 min, for 10 min */
		/* ends at its sample's stamp; the length is the time that passed, not the step */
		assert_int_equal(rec.ends_at_ms[1], T0 + 11 * MIN_MS + dir * HOUR_MS);
		assert_int_equal(rec.ends_at_ms[1] - rec.starts_at_ms[1], 11 * MIN_MS);
		engine_destroy(e);
		th_rule_set_free(set);
	}
}

/*
 * Two clocks read one after the other disagree by a millisecond from sample
 * to sample: every event of an alert still tells the same starts_at.
 */
static void
test_engine_starts_at_steady_under_jitter(void **state)
{
	(void)state;
	struct rule_set *set = one_rule("temp.cpu_c");
	struct seen rec = {0};
	struct engine *e = engine_create(set, record, &rec);
	struct sample *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	for (int64_t m = 0; m <= 2 * MIN_MS; m += 1000) {
		at(s, m, (m / 1000) % 7 - 3); /* the wall clock read up to 3 ms off */
		assert_int_equal(metric_set_put(&s->metrics, "temp.cpu_c", hot_first_minute(m)), 0);
		rec.now_mono = m;
		engine_evaluate(e, s);
	}
	free(s);
	assert_int_equal(rec.n, 2);
	assert_int_equal(rec.t[0], TRANSITION_FIRING);
	assert_int_equal(rec.t[1], TRANSITION_RESOLVED);
	assert_int_equal(rec.starts_at_ms[0], rec.at_ms[0]);
	assert_int_equal(rec.starts_at_ms[1], rec.at_ms[0]);
	engine_destroy(e);
	th_rule_set_free(set);
}

static void
test_engine_absent_for_across_a_step_forward(void **state)
{
	(void)state;
	struct rule_set *set = one_rule("temp.cpu_c");
	set->rules[0].absent_for_ms = 30 * MIN_MS;
	struct seen rec = {0};
	struct engine *e = engine_create(set, record, &rec);
	run_engine(e, &rec, 10000, 45 * MIN_MS, 20000, HOUR_MS, seen_first_10s);
	assert_int_equal(rec.n, 1);
	assert_true(rec.absent[0]);
	assert_int_equal(rec.t[0], TRANSITION_FIRING);
	assert_int_equal(rec.mono[0], 10000 + 30 * MIN_MS);
	engine_destroy(e);
	th_rule_set_free(set);
}

static void
test_engine_for_across_a_step_back(void **state)
{
	(void)state;
	/* for: 60s: the wall clock goes back an hour 20 s in; it still fires 60 s after it began */
	struct rule_set *set = one_rule("temp.cpu_c");
	set->rules[0].for_ms = MIN_MS;
	struct seen rec = {0};
	struct engine *e = engine_create(set, record, &rec);
	run_engine(e, &rec, 10000, 2 * MIN_MS, 20000, -HOUR_MS, always_hot);
	assert_int_equal(rec.n, 2);
	assert_int_equal(rec.t[1], TRANSITION_FIRING);
	assert_int_equal(rec.mono[1], MIN_MS);
	assert_int_equal(rec.at_ms[1], T0 + MIN_MS - HOUR_MS);
	engine_destroy(e);
	th_rule_set_free(set);
}

/* ---- the history --------------------------------------------------------------- */

static void
test_history_across_steps(void **state)
{
	(void)state;
	for (int dir = -1; dir <= 1; dir += 2) {
		struct history *h = history_create(3600, history_buckets_for(HOUR_MS, 1000), 1000);
		struct sample *s = calloc(1, sizeof(*s));
		assert_non_null(s);
		/* 5 minutes at 1 Hz; the wall clock steps an hour 150 s in */
		for (int64_t m = 0; m < 5 * MIN_MS; m += 1000) {
			at(s, m, m >= 150000 ? dir * HOUR_MS : 0);
			assert_int_equal(metric_set_put(&s->metrics, "a", (double)(m / 1000)), 0);
			history_add(h, s);
		}
		int64_t newest = s->time_ms;
		struct history_point *p;
		size_t n;
		/* a minute's window is the last minute that passed: 60 points, not the run, not none */
		assert_int_equal(history_window(h, "a", MIN_MS, &p, &n), 0);
		assert_int_equal(n, 60);
		assert_int_equal(p[59].time_ms, newest);
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(p[i].time_ms, newest - (int64_t)(59 - i) * 1000);
			assert_true(p[i].value == (double)(240 + i));
		}
		free(p);
		/* every point: in order, a second apart, told on the clock as it reads now */
		assert_int_equal(history_window(h, "a", 0, &p, &n), 0);
		assert_int_equal(n, 300);
		for (size_t i = 1; i < n; i++) {
			assert_int_equal(p[i].time_ms - p[i - 1].time_ms, 1000);
		}
		free(p);
		/* the minutes: in order, never overlapping, every sample counted once */
		struct history_bucket *b;
		assert_int_equal(history_window_minutes(h, "a", 0, &b, &n), 0);
		uint32_t count = b[0].count;
		for (size_t i = 1; i < n; i++) {
			assert_true(b[i].time_ms > b[i - 1].time_ms);
			count += b[i].count;
		}
		assert_int_equal(count, 300);
		assert_true(b[n - 1].time_ms <= newest && b[n - 1].time_ms > newest - MIN_MS);
		free(b);
		free(s);
		history_destroy(h);
	}
}

/* ---- the report ------------------------------------------------------------------ */

static void
test_report_episode_across_a_step(void **state)
{
	(void)state;
	for (int dir = -1; dir <= 1; dir += 2) {
		struct report r;
		report_init(&r, NULL, 0, false);
		struct sample *s = calloc(1, sizeof(*s));
		assert_non_null(s);
		/* throttled from 60 s to 180 s; the clock steps an hour 120 s in */
		for (int64_t m = 0; m <= 4 * MIN_MS; m += 1000) {
			at(s, m, m >= 2 * MIN_MS ? dir * HOUR_MS : 0);
			s->throttle.active = m >= MIN_MS && m < 3 * MIN_MS;
			s->throttle.reason[THROTTLE_THERMAL] = s->throttle.active;
			report_add_sample(&r, s);
		}
		report_finish(&r);
		assert_int_equal(r.episode_count, 1);
		assert_int_equal(r.episodes[0].end_ms - r.episodes[0].start_ms, 2 * MIN_MS);
		assert_int_equal(r.episodes[0].end_ms, T0 + 3 * MIN_MS + dir * HOUR_MS);
		assert_int_equal(r.gaps, 0);
		assert_true(fabs(r.all.seconds - 241) < 1e-9);
		assert_true(fabs(r.all.throttle_seconds - 120) < 1e-9);
		report_free(&r);
		free(s);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_watch),
		cmocka_unit_test(test_engine_for_and_repeat_across_a_step_forward),
		cmocka_unit_test(test_engine_clear_for_and_lengths_across_steps),
		cmocka_unit_test(test_engine_starts_at_steady_under_jitter),
		cmocka_unit_test(test_engine_absent_for_across_a_step_forward),
		cmocka_unit_test(test_engine_for_across_a_step_back),
		cmocka_unit_test(test_history_across_steps),
		cmocka_unit_test(test_report_episode_across_a_step),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
