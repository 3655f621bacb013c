/* report/: statistics, episodes, energy, phases, advice and the recording line reader, without I/O. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/sample_json.h"
#include "report/record.h"
#include "report/criteria.h"
#include "report/report.h"
#include "report/report_series.h"

#include "helpers.h"

/* a replay: durations follow the stamps */
static void
at(struct sample *s, int64_t ms)
{
	th_sample_at(s, ms, ms);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void
test_percentiles_match_a_sort(void **state)
{
	(void)state;
	uint32_t x = 12345;
	for (size_t n = 1; n < 400; n += 37) {
		float *v = calloc(n, sizeof(*v));
		double *d = calloc(n, sizeof(*d));
		for (size_t i = 0; i < n; i++) {
			x = x * 1103515245u + 12345u;
			d[i] = (double)((x >> 16) % 50); /* many duplicates */
			v[i] = (float)d[i];
		}
		qsort(d, n, sizeof(*d), cmp_double);
		const double ps[] = {0, 0.5, 0.95, 0.99, 1};
		for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
			double h = (double)(n - 1) * ps[k];
			size_t lo = (size_t)floor(h);
			double want = lo + 1 < n ? d[lo] + (h - (double)lo) * (d[lo + 1] - d[lo]) : d[lo];
			assert_float_equal(stats_percentile(v, n, ps[k]), want, 1e-9);
		}
		free(v);
		free(d);
	}
}

static void
test_constant_metrics_store_nothing(void **state)
{
	(void)state;
	struct stats st;
	stats_init(&st);
	for (int i = 0; i < 1000; i++) {
		stats_add(&st, "trip.tj.passive_c", 95, i);
		stats_add(&st, "temp.tj_c", i < 500 ? 50 : 60, i);
	}
	const struct stat_metric *trip = stats_find(&st, "trip.tj.passive_c");
	const struct stat_metric *tj = stats_find(&st, "temp.tj_c");
	assert_null(trip->values);
	assert_non_null(tj->values);
	stats_finish(&st);
	assert_int_equal(tj->count, 1000);
	assert_float_equal(tj->mean, 55, 1e-12);
	assert_float_equal(tj->std, 5, 1e-12);
	assert_float_equal(tj->p50, 55, 1e-12); /* halfway between the 500th and the 501st */
	assert_float_equal(tj->p95, 60, 1e-12);
	assert_int_equal(tj->max_at_ms, 500);
	assert_float_equal(trip->p99, 95, 0);
	assert_null(stats_find(&st, "nothing"));
	stats_free(&st);
}

/* Samples every second: 10 W for 5 s, throttled (thermal) at 3 and 4, a 100 s pause, 20 W once more. */
static void
feed(struct report *r)
{
	struct sample *s = th_sample_new();
	for (int i = 0; i < 7; i++) {
		int64_t t = i < 6 ? 1000000 + i * 1000 : 1000000 + 5000 + 100000;
		at(s, t);
		snprintf(s->power_mode, sizeof(s->power_mode), "%s", i < 4 ? "15W" : "MAXN");
		metric_set_put(&s->metrics, "power.vdd_in.mw", i < 6 ? 10000 : 20000);
		metric_set_put(&s->metrics, "power.vdd_in.avg_mw", 1);
		metric_set_put(&s->metrics, "agent.samples_total", i);
		metric_set_put(&s->metrics, "temp.tj_c", 90 + i);
		metric_set_put(&s->metrics, "trip.tj.passive_c", 95);
		if (i == 3 || i == 4) {
			s->throttle.active = true;
			s->throttle.reason[THROTTLE_THERMAL] = true;
			snprintf(s->throttle.why[THROTTLE_THERMAL], THROTTLE_WHY_MAX, "tj hot %d", i);
		}
		report_add_sample(r, s);
	}
	free(s);
}

static void
test_energy_episodes_modes(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, NULL, 0, false);
	feed(&r);
	report_finish(&r);
	/* 6 intervals of 1 s (the pause counts as the last normal one) and the last sample for the mean: 1 s */
	assert_int_equal(r.gaps, 1);
	assert_float_equal(report_interval_s(&r), 1.0, 1e-12);
	assert_float_equal(r.all.seconds, 7, 1e-9);
	assert_int_equal(r.all.rails, 1);
	assert_string_equal(r.all.energy[0].rail, "vdd_in");
	assert_float_equal(r.all.energy[0].joules, 6 * 10 + 20, 1e-9);
	assert_int_equal(r.episode_count, 1);
	assert_int_equal(r.episodes[0].start_ms, 1003000);
	assert_int_equal(r.episodes[0].end_ms, 1005000);
	assert_int_equal(r.episodes[0].samples, 2);
	assert_string_equal(r.episodes[0].why[THROTTLE_THERMAL], "tj hot 3");
	assert_float_equal(r.all.throttle_seconds, 2, 1e-9);
	assert_int_equal(r.mode_count, 2);
	assert_float_equal(r.modes[0].seconds, 4, 1e-9);
	assert_float_equal(r.modes[1].seconds, 3, 1e-9);
	assert_null(stats_find(&r.all.stats, "agent.samples_total"));
	/* thermal throttling: advice with the zone against its trip */
	assert_int_equal(r.rec_count, 1);
	assert_string_equal(r.recs[0].id, "thermal-throttling");
	assert_non_null(strstr(r.recs[0].evidence, "\"sensor\":\"tj\""));
	report_free(&r);
}

static void
test_episode_open_at_the_end(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, NULL, 0, false);
	struct sample *s = th_sample_new();
	for (int i = 0; i < 4; i++) {
		at(s, 2000 * (i + 1));
		s->throttle.active = i >= 2;
		s->throttle.reason[THROTTLE_OVERCURRENT] = i >= 2;
		report_add_sample(&r, s);
	}
	report_finish(&r);
	assert_int_equal(r.episode_count, 1);
	assert_int_equal(r.episodes[0].end_ms, 8000 + 2000); /* the last sample stands for the mean interval */
	assert_int_equal(r.rec_count, 1);
	assert_string_equal(r.recs[0].id, "power-supply");
	free(s);
	report_free(&r);
}

/* An episode says how long a throttle had been predicted before it began; a short gap in the forecast does not reset it. */
static void
test_episode_predicted(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, NULL, 0, false);
	struct sample *s = th_sample_new();
	for (int i = 0; i < 400; i++) {
		at(s, 1000 * i);
		if (i >= 100 && i < 300 && (i < 200 || i > 215)) { /* 16 s without a forecast: a load step refits */
			metric_set_put(&s->metrics, "throttle_eta.tj_s", 300 - i);
		}
		if (i >= 300 && i < 310) {
			metric_set_put(&s->metrics, "throttle_eta.tj_s", 0);
		}
		/* two episodes: the first predicted 200 s ahead, the second (a minute after the forecast ended) not */
		s->throttle.active = (i >= 300 && i < 310) || (i >= 380 && i < 390);
		s->throttle.reason[THROTTLE_THERMAL] = s->throttle.active;
		report_add_sample(&r, s);
	}
	report_finish(&r);
	assert_int_equal(r.episode_count, 2);
	assert_float_equal(r.episodes[0].predicted_s, 200, 1e-9);
	assert_float_equal(r.episodes[1].predicted_s, -1, 1e-9);
	free(s);
	report_free(&r);
}

/* --criteria: each limit against the statistics, globs by their worst match, the throttle, an absent metric. */
static void
test_criteria(void **state)
{
	(void)state;
	const char *yaml = "criteria:\n"
			   "  - {metric: temp.tj_c, max_below: 90}\n"
			   "  - {metric: 'temp.*_c', mean_above: 55}\n"
			   "  - {no_throttle: true}\n"
			   "  - {throttle_seconds_below: 10}\n"
			   "  - {metric: fan.0.rpm, p99_below: 1, if_absent: pass}\n"
			   "  - {metric: fan.0.rpm, min_above: 1}\n";
	struct criteria c;
	struct diag_list diags;
	diag_list_init(&diags);
	assert_int_equal(criteria_load_buffer("c.yaml", yaml, strlen(yaml), &c, &diags), 0);
	assert_int_equal(c.count, 6);
	assert_string_equal(c.items[1].name, "temp.*_c mean above 55");
	struct report r;
	report_init(&r, NULL, 0, false);
	struct sample *s = th_sample_new();
	for (int i = 0; i < 10; i++) {
		at(s, 1000 * (i + 1));
		metric_set_put(&s->metrics, "temp.tj_c", 80 + i);
		metric_set_put(&s->metrics, "temp.cpu_c", 50);
		s->throttle.active = i >= 5 && i < 8;
		s->throttle.reason[THROTTLE_THERMAL] = s->throttle.active;
		report_add_sample(&r, s);
	}
	report_finish(&r);
	struct criterion_result res[6];
	assert_false(criteria_evaluate(&c, &r, res));
	assert_true(res[0].pass && res[0].value == 89);
	assert_false(res[1].pass); /* the worst of the glob: cpu's mean 50 */
	assert_string_equal(res[1].metric, "temp.cpu_c");
	assert_false(res[2].pass);
	assert_true(res[3].pass && res[3].value == 3);
	assert_true(res[4].pass && !res[4].measured);
	assert_false(res[5].pass);
	criteria_free(&c);
	free(s);
	report_free(&r);

	const char *bad[] = {"criteria: []\n", "criteria:\n  - {metric: temp.tj_c}\n",
			     "criteria:\n  - {metric: temp.tj_c, max_below: 1, min_above: 0}\n",
			     "criteria:\n  - {max_below: 1}\n", "limits: []\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		diag_list_free(&diags);
		diag_list_init(&diags);
		assert_int_equal(criteria_load_buffer("c.yaml", bad[i], strlen(bad[i]), &c, &diags), -EINVAL);
		assert_true(diags.count > 0);
	}
	diag_list_free(&diags);
}

static void
test_phases(void **state)
{
	(void)state;
	struct report_phase_def *d;
	size_t n;
	char err[128];
	assert_int_equal(report_phases_parse("# comment\nstart,end,name\n0, 2.5 ,warm up\n"
					     "2025-03-14T10:02:00,2025-03-14T10:09:00Z,load\n"
					     "03-14-2025 10:00:00,03-14-2025 10:00:01,x\n",
					     &d, &n, err, sizeof(err)),
			 0);
	assert_int_equal(n, 3);
	assert_true(d[0].relative);
	assert_string_equal(d[0].name, "warm up");
	assert_float_equal(d[0].end_s, 2.5, 0);
	assert_false(d[1].relative);
	assert_int_equal(d[2].end_ms - d[2].start_ms, 1000);
	free(d);
	assert_int_equal(report_phases_parse("0,10,a\n5,1,b\n", &d, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "2:"));
	assert_int_equal(report_phases_parse("from,to,what\n", &d, &n, err, sizeof(err)), 0); /* a header: nothing */
	assert_int_equal(n, 0);
	free(d);
	assert_int_equal(report_phases_parse("0,1,a\n0,yesterday,b\n", &d, &n, err, sizeof(err)), -EINVAL);

	/* relative phases split statistics and energy */
	struct report_phase_def defs[2] = {{.name = "first", .relative = true, .start_s = 0, .end_s = 3},
					   {.name = "rest", .relative = true, .start_s = 3, .end_s = 1e6}};
	struct report r;
	report_init(&r, defs, 2, false);
	feed(&r);
	report_finish(&r);
	assert_int_equal(r.phases[0].samples, 3);
	assert_int_equal(r.phases[1].samples, 4);
	assert_float_equal(r.phases[0].energy[0].joules, 30, 1e-9);
	assert_float_equal(r.phases[1].energy[0].joules, 50, 1e-9);
	assert_float_equal(r.phases[1].throttle_seconds, 2, 1e-9);
	assert_float_equal(stats_find(&r.phases[0].stats, "temp.tj_c")->max, 92, 0);
	report_free(&r);
}

static void
test_calm_and_load_advice(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, NULL, 0, false);
	struct sample *s = th_sample_new();
	for (int i = 0; i < 100; i++) {
		at(s, 1000 * i);
		metric_set_put(&s->metrics, "gpu.load_pct", 2);
		metric_set_put(&s->metrics, "cpu.load_pct", 5);
		metric_set_put(&s->metrics, "swap.used_mb", 24);
		metric_set_put(&s->metrics, "temp.tj_c", 50);
		metric_set_put(&s->metrics, "trip.tj.passive_c", 95);
		report_add_sample(&r, s);
	}
	report_finish(&r);
	assert_int_equal(r.rec_count, 0);
	report_free(&r);

	report_init(&r, NULL, 0, false);
	for (int i = 0; i < 100; i++) {
		at(s, 1000 * i);
		metric_set_put(&s->metrics, "gpu.load_pct", 5);
		metric_set_put(&s->metrics, "cpu.load_pct", 95);
		metric_set_put(&s->metrics, "swap.used_mb", 24 + 10 * i);
		metric_set_put(&s->metrics, "ram.used_mb", 7500);
		metric_set_put(&s->metrics, "ram.total_mb", 7620);
		metric_set_put(&s->metrics, "temp.tj_c", 91);
		metric_set_put(&s->metrics, "trip.tj.passive_c", 95);
		report_add_sample(&r, s);
	}
	report_finish(&r);
	const char *want[] = {"thermal-headroom", "memory-pressure", "cpu-bound"};
	assert_int_equal(r.rec_count, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(r.recs[i].id, want[i]);
		assert_true(r.recs[i].evidence[0] == '{');
	}
	assert_float_equal(r.sig.swap_growth_s, 100 - 7, 1e-9); /* from swap 94 MB on (64 MB over 24 + 6 s) */
	free(s);
	report_free(&r);
}

static void
test_recording_line_round_trip(void **state)
{
	(void)state;
	struct sample *s = th_sample_new(), *back = th_sample_new();
	s->seq = 7;
	s->time_ms = 1741946823000;
	snprintf(s->power_mode, sizeof(s->power_mode), "MAXN_SUPER");
	metric_set_put(&s->metrics, "temp.tj_c", 95.031);
	metric_set_put(&s->metrics, "power.vdd_in.mw", 13990);
	metric_set_put(&s->metrics, "cpu.0.min_freq_mhz", 729.6);
	s->throttle.active = true;
	s->throttle.reason[THROTTLE_THERMAL] = true;
	snprintf(s->throttle.why[THROTTLE_THERMAL], THROTTLE_WHY_MAX, "tj at \"95.0\" C\t>= trip");
	snprintf(s->throttle.context, THROTTLE_CONTEXT_MAX, "power mode MAXN_SUPER");
	struct json j;
	json_init(&j);
	sample_to_json(&j, s);
	struct board_identity id;
	bool known = false;
	int column = 0;
	assert_int_equal(record_parse_line(j.out.buf, back, &id, &known, &column), 1);
	assert_int_equal(back->time_ms, s->time_ms);
	assert_string_equal(back->power_mode, "MAXN_SUPER");
	assert_int_equal(back->metrics.count, 3);
	for (size_t i = 0; i < s->metrics.count; i++) {
		double v;
		assert_true(metric_set_get(&back->metrics, s->metrics.items[i].name, &v));
		assert_true(v == s->metrics.items[i].value); /* %.15g round-trips these exactly */
	}
	assert_true(back->throttle.active);
	assert_string_equal(back->throttle.why[THROTTLE_THERMAL], s->throttle.why[THROTTLE_THERMAL]);
	assert_string_equal(back->throttle.context, "power mode MAXN_SUPER");

	assert_int_equal(record_parse_line("{\"tegrawatch_recording\":1,\"board\":{\"model\":\"Orin \\u00e9\","
					   "\"soc\":\"tegra234\",\"l4t\":null}}",
					   back, &id, &known, &column),
			 0);
	assert_true(known);
	assert_string_equal(id.model, "Orin \xc3\xa9");
	assert_int_equal(record_parse_line("{\"time_ms\":1,\"metrics\":{\"a.b\":}}", back, &id, &known, &column),
			 -EINVAL);
	assert_int_equal(column, 31); /* at the "}" where a value was due */
	assert_int_equal(record_parse_line("{\"seq\":1}", back, &id, &known, &column), -EINVAL); /* no time */
	assert_int_equal(record_parse_line("{\"time_ms\":1} x", back, &id, &known, &column), -EINVAL);
	json_free(&j);
	free(s);
	free(back);
}

static void
test_series_stay_bounded(void **state)
{
	(void)state;
	struct report_series *rs = series_create();
	struct sample *s = th_sample_new();
	for (int i = 0; i < 86400; i++) {
		at(s, (int64_t)i * 1000);
		metric_set_put(&s->metrics, "temp.tj_c", i % 100);
		metric_set_put(&s->metrics, "throttle.active", i == 5000);
		metric_set_put(&s->metrics, "ram.used_mb", 1); /* not charted */
		series_add(rs, s);
	}
	struct json j;
	json_init(&j);
	series_to_json(rs, &j);
	assert_non_null(strstr(j.out.buf, "\"samples_per_point\":128"));
	assert_null(strstr(j.out.buf, "ram.used_mb"));
	/* the one throttled sample survives the merging as its bucket's maximum */
	const char *th = strstr(j.out.buf, "\"throttle.active\":[");
	assert_non_null(th);
	assert_non_null(strstr(th, ",1,"));
	json_free(&j);
	free(s);
	series_destroy(rs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentiles_match_a_sort),
		cmocka_unit_test(test_constant_metrics_store_nothing),
		cmocka_unit_test(test_energy_episodes_modes),
		cmocka_unit_test(test_episode_open_at_the_end),
		cmocka_unit_test(test_episode_predicted),
		cmocka_unit_test(test_criteria),
		cmocka_unit_test(test_phases),
		cmocka_unit_test(test_calm_and_load_advice),
		cmocka_unit_test(test_recording_line_round_trip),
		cmocka_unit_test(test_series_stay_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
