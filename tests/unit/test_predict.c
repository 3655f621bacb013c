/* predict/: the power-mode guard (expectation, resolution, per sample), the thermal fit, cooling health. */
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

#include "predict/predict.h"
#include "predict/predict_priv.h"

static const struct nvpmodel_conf modes = {
	.mode_count = 4,
	.default_id = 1,
	.modes = {{.id = 0, .name = "15W"}, {.id = 1, .name = "25W"}, {.id = 2, .name = "MAXN_SUPER"}, {.id = 3, .name = "7W"}},
};

static struct power_mode_expectation
parsed(const char *text)
{
	struct power_mode_expectation e;
	char err[160] = "";
	assert_int_equal(power_mode_expectation_parse(text, &e, err, sizeof(err)), 0);
	return e;
}

static void
refused(const char *text, const char *why)
{
	struct power_mode_expectation e = {.id = 42};
	char err[160] = "";
	assert_int_equal(power_mode_expectation_parse(text, &e, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, why));
	assert_int_equal(e.id, 42); /* untouched */
}

static void
test_expectation_forms(void **state)
{
	(void)state;
	struct power_mode_expectation e = parsed("");
	assert_false(e.mode_set);
	assert_int_equal(e.jetson_clocks, -1);
	assert_string_equal(e.text, "");

	e = parsed("MAXN_SUPER");
	assert_true(e.mode_set);
	assert_int_equal(e.id, -1);
	assert_string_equal(e.name, "MAXN_SUPER");
	assert_string_equal(e.text, "MAXN_SUPER");

	e = parsed("2");
	assert_int_equal(e.id, 2);
	assert_string_equal(e.name, "");
	assert_string_equal(e.text, "id 2");

	e = parsed("maxn_super, jetson_clocks ON");
	assert_string_equal(e.name, "maxn_super");
	assert_int_equal(e.jetson_clocks, 1);
	assert_string_equal(e.text, "maxn_super, jetson_clocks on");

	e = parsed("  jetson_clocks off ");
	assert_false(e.mode_set);
	assert_int_equal(e.jetson_clocks, 0);
	assert_string_equal(e.text, "jetson_clocks off");

	refused("jetson_clocks", "after jetson_clocks");
	refused("MAXN jetson_clocks maybe", "got 'maybe'");
	refused("MAXN 15W", "got '15W' after the mode");
	refused("jetson_clocks on, jetson_clocks off", "named twice");
}

static void
test_expectation_resolved(void **state)
{
	(void)state;
	struct power_mode_expectation e = parsed("maxn_super, jetson_clocks on");
	assert_int_equal(power_mode_expectation_resolve(&e, &modes), 0);
	assert_int_equal(e.id, 2);
	assert_string_equal(e.name, "MAXN_SUPER"); /* the board's spelling */
	assert_string_equal(e.text, "MAXN_SUPER (id 2), jetson_clocks on");

	e = parsed("0");
	assert_int_equal(power_mode_expectation_resolve(&e, &modes), 0);
	assert_string_equal(e.text, "15W (id 0)");

	e = parsed("MAXN");
	assert_int_equal(power_mode_expectation_resolve(&e, &modes), -ENOENT);
	assert_string_equal(e.text, "MAXN");
	assert_int_equal(e.id, -1);
}

/* What the agent logs at start for a mode the board lacks (the JetPack 7.2 case: test_board_jp72.c). */
static void
test_expectation_missing(void **state)
{
	(void)state;
	static const struct nvpmodel_conf two = {
		.mode_count = 2,
		.default_id = 0,
		.modes = {{.id = 0, .name = "15W"}, {.id = 1, .name = "7W"}},
	};
	struct board_identity nano = {.model = "NVIDIA Jetson Orin Nano Developer Kit", .l4t = "36.4.3"};
	char why[512];
	struct power_mode_expectation e = parsed("MAXN_SUPER");
	assert_int_equal(power_mode_expectation_resolve(&e, &two), -ENOENT);
	/* JetPack 6: flashed with the plain configuration */
	power_mode_expectation_missing(&e, &two, &nano, why, sizeof(why));
	assert_string_equal(why, "the board's nvpmodel.conf has no power mode MAXN_SUPER (only 15W, 7W): this Orin Nano "
				 "may have been flashed without its Super configuration (flash it with a -super board "
				 "configuration: jetson-orin-nano-devkit-super on the developer kit)");
	/* not a Super mode, not an Orin Nano, no identity: the modes only */
	e = parsed("MAXN");
	power_mode_expectation_resolve(&e, &two);
	power_mode_expectation_missing(&e, &two, &nano, why, sizeof(why));
	assert_string_equal(why, "the board's nvpmodel.conf has no power mode MAXN (only 15W, 7W)");
	e = parsed("maxn_super");
	struct board_identity agx = {.model = "NVIDIA Jetson AGX Orin Developer Kit", .l4t = "39.2.0"};
	power_mode_expectation_missing(&e, &two, &agx, why, sizeof(why));
	assert_string_equal(why, "the board's nvpmodel.conf has no power mode maxn_super (only 15W, 7W)");
	power_mode_expectation_missing(&e, &two, NULL, why, sizeof(why));
	assert_string_equal(why, "the board's nvpmodel.conf has no power mode maxn_super (only 15W, 7W)");
	/* by id, and a short buffer cut */
	e = parsed("9");
	power_mode_expectation_resolve(&e, &modes);
	power_mode_expectation_missing(&e, &modes, &nano, why, sizeof(why));
	assert_string_equal(why, "the board's nvpmodel.conf has no power mode id 9 (only 15W, 25W, MAXN_SUPER, 7W)");
	char tiny[16];
	power_mode_expectation_missing(&e, &modes, &nano, tiny, sizeof(tiny));
	assert_string_equal(tiny, "the board's nvp");
}

static void
put(struct sample *s, const char *name, double v)
{
	assert_int_equal(metric_set_put(&s->metrics, name, v), 0);
}

static double
get(const struct sample *s, const char *name)
{
	double v;
	return metric_set_get(&s->metrics, name, &v) ? v : NAN;
}

static void
board_clocks(struct sample *s, double cpu_min, double gpu_min)
{
	for (int n = 0; n < 2; n++) {
		char name[64];
		snprintf(name, sizeof(name), "cpu.%d.online", n);
		put(s, name, 1);
		snprintf(name, sizeof(name), "cpu.%d.min_freq_mhz", n);
		put(s, name, cpu_min);
		snprintf(name, sizeof(name), "cpu.%d.max_freq_mhz", n);
		put(s, name, 1728);
	}
	put(s, "gpu.min_freq_mhz", gpu_min);
	put(s, "gpu.max_freq_mhz", 1020);
}

static void
test_guard_per_sample(void **state)
{
	(void)state;
	static struct sample s;
	struct power_mode_expectation by_id = parsed("MAXN_SUPER, jetson_clocks on");
	power_mode_expectation_resolve(&by_id, &modes);

	/* nothing known about the mode: nothing said */
	sample_clear(&s);
	mode_guard_check(&by_id, &s);
	assert_true(isnan(get(&s, "nvpmodel.unexpected")));
	assert_true(isnan(get(&s, "jetson_clocks.active")));

	sample_clear(&s);
	put(&s, "nvpmodel.id", 0);
	board_clocks(&s, 729, 306);
	mode_guard_check(&by_id, &s);
	assert_true(get(&s, "nvpmodel.unexpected") == 1);
	assert_true(get(&s, "jetson_clocks.active") == 0);
	assert_true(get(&s, "jetson_clocks.unexpected") == 1);

	sample_clear(&s);
	put(&s, "nvpmodel.id", 2);
	board_clocks(&s, 1728, 1020);
	mode_guard_check(&by_id, &s);
	assert_true(get(&s, "nvpmodel.unexpected") == 0);
	assert_true(get(&s, "jetson_clocks.active") == 1);
	assert_true(get(&s, "jetson_clocks.unexpected") == 0);

	/* a GPU floor below its ceiling: not jetson_clocks */
	sample_clear(&s);
	board_clocks(&s, 1728, 306);
	mode_guard_check(&by_id, &s);
	assert_true(get(&s, "jetson_clocks.active") == 0);

	/* a name the board's table lacks is compared by name */
	struct power_mode_expectation by_name = parsed("MAXN");
	power_mode_expectation_resolve(&by_name, &modes);
	sample_clear(&s);
	snprintf(s.power_mode, sizeof(s.power_mode), "maxn");
	mode_guard_check(&by_name, &s);
	assert_true(get(&s, "nvpmodel.unexpected") == 0);
	snprintf(s.power_mode, sizeof(s.power_mode), "15W");
	metric_set_clear(&s.metrics);
	mode_guard_check(&by_name, &s);
	assert_true(get(&s, "nvpmodel.unexpected") == 1);
	assert_true(isnan(get(&s, "jetson_clocks.unexpected"))); /* not asked for */
}

/* ---- thermal_fit ---- */

/* A fixed noise source: uniform in [-amp, amp], then the sensor's 1/32 C steps. */
static double
reading(double c, double amp, uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	double u = (double)(*state >> 11) / (double)(1ULL << 53);
	return floor((c + (2 * u - 1) * amp) * 32) / 32;
}

/* T(t) = tss - (tss - t0) e^(-t/tau), read every STEP_MS up to UNTIL_S. */
static void
feed_curve(struct thermal_fit *f, double t0, double tss, double tau, int64_t step_ms, double until_s, uint64_t *rng)
{
	for (int64_t ms = 0; ms <= (int64_t)(until_s * 1000); ms += step_ms) {
		double c = tss - (tss - t0) * exp(-(double)ms / 1000.0 / tau);
		thermal_fit_add(f, ms, reading(c, 0.09, rng));
	}
}

static void
test_fit_curve_and_eta(void **state)
{
	(void)state;
	for (int step = 0; step < 2; step++) {
		int64_t step_ms = step ? 100 : 1000; /* the interval does not change the answer */
		static struct thermal_fit f;
		memset(&f, 0, sizeof(f));
		uint64_t rng = 42;
		feed_curve(&f, 50, 100, 150, step_ms, 200, &rng);
		assert_int_equal(f.model.kind, FIT_CURVE);
		assert_true(fabs(f.model.tss_c - 100) < 2);
		assert_true(fabs(f.model.tau_s - 150) < 30);
		struct fit_forecast fc;
		thermal_fit_forecast(&f, 95, &fc);
		assert_true(fc.have_steady && fc.have_eta);
		/* the curve reaches 95 C at 150 ln(50/5) = 345.4 s, 145.4 s after the last reading */
		double truth = 150 * log(10.0) - 200;
		assert_true(fabs(fc.eta_s - truth) < 10);
		assert_true(fc.eta_error_s > 0 && fc.eta_error_s < 30);
		/* no trip within reach: a steady temperature, no time */
		thermal_fit_forecast(&f, 105, &fc);
		assert_true(fc.have_steady);
		assert_false(fc.have_eta);
	}
}

static void
test_fit_steady_rising_falling(void **state)
{
	(void)state;
	static struct thermal_fit f;
	uint64_t rng = 7;
	struct fit_forecast fc;

	memset(&f, 0, sizeof(f));
	feed_curve(&f, 60, 60, 100, 1000, 300, &rng);
	assert_int_equal(f.model.kind, FIT_STEADY);
	thermal_fit_forecast(&f, 95, &fc);
	assert_true(fc.have_steady && fabs(fc.steady_c - 60) < 0.2);
	assert_false(fc.have_eta);

	/* 0.05 C/s with no bend: a straight line, and an ETA that only says "not before" */
	memset(&f, 0, sizeof(f));
	for (int t = 0; t <= 120; t++) {
		thermal_fit_add(&f, t * 1000, reading(50 + 0.05 * t, 0.09, &rng));
	}
	assert_int_equal(f.model.kind, FIT_RISING);
	thermal_fit_forecast(&f, 95, &fc);
	assert_false(fc.have_steady);
	assert_true(fc.have_eta && fabs(fc.eta_s - (95 - 56.0) / 0.05) < 60);
	assert_true(fc.eta_error_s >= fc.eta_s);

	/* cooling: where it settles, never an ETA */
	memset(&f, 0, sizeof(f));
	feed_curve(&f, 90, 60, 120, 1000, 240, &rng);
	thermal_fit_forecast(&f, 95, &fc);
	assert_true(fc.have_steady && fabs(fc.steady_c - 60) < 3);
	assert_false(fc.have_eta);
}

static void
test_fit_restart_gap_and_trip(void **state)
{
	(void)state;
	static struct thermal_fit f;
	memset(&f, 0, sizeof(f));
	uint64_t rng = 3;
	feed_curve(&f, 50, 100, 150, 1000, 200, &rng);
	assert_int_equal(f.model.kind, FIT_CURVE);
	/* a load step: nothing until 15 s + 6 blocks of the new curve */
	thermal_fit_restart(&f, 200000, FIT_SKIP_MS);
	assert_int_equal(f.model.kind, FIT_NONE);
	for (int t = 201; t < 270; t++) {
		thermal_fit_add(&f, t * 1000, 80);
	}
	assert_int_equal(f.model.kind, FIT_NONE);
	for (int t = 270; t < 300; t++) {
		thermal_fit_add(&f, t * 1000, 80);
	}
	assert_int_equal(f.model.kind, FIT_STEADY);
	/* a gap of a minute: the window starts again */
	thermal_fit_add(&f, 360000, 80);
	assert_int_equal(f.nblocks, 0);
	assert_int_equal(f.model.kind, FIT_NONE);
	/* at the trip: 0, whatever the fit */
	thermal_fit_add(&f, 361000, 95.5);
	struct fit_forecast fc;
	thermal_fit_forecast(&f, 95, &fc);
	assert_true(fc.have_eta && fc.eta_s == 0);
}

/* The stage's part: zones found by their trips, headroom, a load step restarting the fits. */
static void
test_forecast_zones(void **state)
{
	(void)state;
	static struct forecast fc;
	static struct sample s;
	memset(&fc, 0, sizeof(fc));
	uint64_t rng = 11;
	for (int t = 0; t <= 400; t++) {
		sample_clear(&s);
		s.mono_ms = s.time_ms = t * 1000;
		double tj = 100 - 50 * exp(-t / 150.0);
		put(&s, "temp.tj_c", reading(tj, 0.09, &rng));
		put(&s, "trip.tj.passive_c", 95);
		put(&s, "trip.tj.hot_c", 99);
		put(&s, "temp.cpu_c", 40);
		put(&s, "trip.cpu.hot_c", 99); /* a hot trip only: used */
		put(&s, "temp.gpu_c", 60);    /* no trip: no forecast */
		put(&s, "power.vdd_in.mw", t < 300 ? 17000 : 9000);
		forecast_process(&fc, &s);
		if (t == 250) {
			double eta = get(&s, "throttle_eta.tj_s");
			assert_true(fabs(eta - (150 * log(10.0) - 250)) < 10);
			assert_true(get(&s, "throttle_eta_error.tj_s") > 0);
			assert_true(get(&s, "steady_temp.tj_c") > 97);
			assert_true(fabs(get(&s, "headroom.cpu_c") - 59) < 1e-9);
			assert_true(isnan(get(&s, "headroom.gpu_c")));
		}
	}
	assert_int_equal(fc.zone_count, 2);
	assert_int_equal(fc.steps, 1);
	/* 100 s after the step at 300: no fit of the new curve yet */
	assert_true(isnan(get(&s, "steady_temp.tj_c")) || get(&s, "steady_temp.tj_c") < 100);
	assert_true(isnan(get(&s, "throttle_eta.cpu_s")));
}

/* ---- cooling ---- */

static void
test_fan_dead(void **state)
{
	(void)state;
	static struct cooling c;
	static struct sample s;
	const double cases[][3] = {{120, 2400, 0}, {120, 0, 1}, {0, 0, 0}, {255, 1, 0}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&c, 0, sizeof(c));
		sample_clear(&s);
		put(&s, "fan.0.pwm", cases[i][0]);
		put(&s, "fan.0.rpm", cases[i][1]);
		put(&s, "fan.1.pwm", 200); /* no tachometer: no verdict */
		cooling_process(&c, &s);
		assert_true(get(&s, "fan.0.dead") == cases[i][2]);
		assert_true(isnan(get(&s, "fan.1.dead")));
	}
}

/* 10 W, the junction 30 C above the board sensor: 3 C/W once steady for 5 min, per mode, kept and reloaded. */
static void
test_resistance_and_state(void **state)
{
	(void)state;
	static struct cooling c, back;
	static struct sample s;
	memset(&c, 0, sizeof(c));
	c.keep = true;
	for (int t = 0; t < 900; t++) {
		sample_clear(&s);
		s.mono_ms = t * 1000LL;
		snprintf(s.power_mode, sizeof(s.power_mode), "MAXN_SUPER");
		put(&s, "temp.tj_c", 65);
		put(&s, "temp.tboard_c", 35);
		put(&s, "temp.cpu_c", 64);
		put(&s, "power.vdd_in.mw", 10000);
		cooling_process(&c, &s);
		if (t < 300) {
			assert_true(isnan(get(&s, "thermal.resistance_now_c_per_w"))); /* not 5 min of steady yet */
		}
	}
	assert_true(fabs(get(&s, "thermal.resistance_now_c_per_w") - 3.0) < 1e-9);
	assert_true(fabs(get(&s, "thermal.resistance_c_per_w") - 3.0) < 1e-9); /* 10 min of steady time */
	assert_true(isnan(get(&s, "thermal.resistance_rise_pct")));             /* the baseline takes 6 h */
	assert_int_equal(c.mode_count, 1);
	cooling_add(&c.modes[0], 3.0, COOLING_BASELINE_MS);
	assert_true(c.modes[0].baseline_frozen && fabs(c.modes[0].baseline - 3.0) < 1e-9);

	char path[] = "/tmp/tegrawatch-thermal-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(cooling_state_save(&c, path), 0);
	memset(&back, 0, sizeof(back));
	assert_int_equal(cooling_state_load(&back, path), 0);
	assert_int_equal(back.mode_count, 1);
	assert_string_equal(back.modes[0].mode, "MAXN_SUPER");
	assert_true(back.modes[0].avg == c.modes[0].avg && back.modes[0].baseline == c.modes[0].baseline);
	assert_true(back.modes[0].steady_ms == c.modes[0].steady_ms && back.modes[0].baseline_frozen);
	unlink(path);

	char text[] = "# comment\ntegrawatch-thermal 1\n15W\t2\t1\t0\t0\t0\t0\nbad\t1\n25W\t-1\t1\t0\t0\t0\t0\n"
		      "MAXN\t2\t1\t0\t0\t1\t0\n";
	memset(&back, 0, sizeof(back));
	assert_int_equal(cooling_state_parse(text, &back, "t"), 3); /* too few fields, negative, frozen without */
	assert_int_equal(back.mode_count, 1);
	char other[] = "hello\n";
	assert_int_equal(cooling_state_parse(other, &back, "t"), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expectation_forms),
		cmocka_unit_test(test_expectation_resolved),
		cmocka_unit_test(test_expectation_missing),
		cmocka_unit_test(test_guard_per_sample),
		cmocka_unit_test(test_fit_curve_and_eta),
		cmocka_unit_test(test_fit_steady_rising_falling),
		cmocka_unit_test(test_fit_restart_gap_and_trip),
		cmocka_unit_test(test_forecast_zones),
		cmocka_unit_test(test_fan_dead),
		cmocka_unit_test(test_resistance_and_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
