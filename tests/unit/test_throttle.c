/* Throttle detection scenarios: each reason, and what must not count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tegra/throttle.h"

struct kv {
	const char *name;
	double value;
};

static struct sample *
make_sample(const struct kv *kvs, size_t n)
{
	struct sample *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	sample_clear(s);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(metric_set_put(&s->metrics, kvs[i].name, kvs[i].value), 0);
	}
	return s;
}

#define SAMPLE(...) make_sample((const struct kv[]){__VA_ARGS__}, \
	sizeof((const struct kv[]){__VA_ARGS__}) / sizeof(struct kv))

static double
metric(const struct sample *s, const char *name)
{
	double v = -1;
	assert_true(metric_set_get(&s->metrics, name, &v));
	return v;
}

static void
assert_only_reason(const struct sample *s, enum throttle_reason r)
{
	assert_true(s->throttle.active);
	for (int i = 0; i < THROTTLE_REASON_COUNT; i++) {
		assert_int_equal(s->throttle.reason[i], i == (int)r);
	}
	assert_true(metric(s, "throttle.active") == 1);
}

static void
assert_not_throttled(const struct sample *s)
{
	assert_false(s->throttle.active);
	assert_true(metric(s, "throttle.active") == 0);
	assert_true(metric(s, "throttle.thermal") == 0);
	assert_true(metric(s, "throttle.overcurrent") == 0);
	assert_true(metric(s, "throttle.rail_alarm") == 0);
	assert_true(metric(s, "throttle.freq_cap") == 0);
}

static void
test_oc_counter_increment(void **state)
{
	(void)state;
	struct throttle_detector *det = throttle_detector_create();
	struct sample *a = SAMPLE({"oc.1.events", 0}, {"oc.3.events", 27}, {"oc.3.throttle_enabled", 1});
	throttle_detector_update(det, a);
	/* the first reading has no previous one: a high count alone is history, not news */
	assert_not_throttled(a);

	struct sample *b = SAMPLE({"oc.1.events", 0}, {"oc.3.events", 31});
	throttle_detector_update(det, b);
	assert_only_reason(b, THROTTLE_OVERCURRENT);
	assert_string_equal(b->throttle.why[THROTTLE_OVERCURRENT], "oc3 event count 27 -> 31 (+4)");

	struct sample *c = SAMPLE({"oc.1.events", 0}, {"oc.3.events", 31});
	throttle_detector_update(det, c);
	assert_not_throttled(c);
	free(a);
	free(b);
	free(c);
	throttle_detector_destroy(det);
}

static void
test_trip_crossed(void **state)
{
	(void)state;
	struct throttle_detector *det = throttle_detector_create();
	struct sample *below = SAMPLE({"temp.cpu_c", 94.9}, {"trip.cpu.passive_c", 95}, {"trip.cpu.critical_c", 104.5});
	throttle_detector_update(det, below);
	assert_not_throttled(below);

	struct sample *at = SAMPLE({"temp.cpu_c", 95}, {"trip.cpu.passive_c", 95}, {"trip.cpu.critical_c", 104.5});
	throttle_detector_update(det, at);
	assert_only_reason(at, THROTTLE_THERMAL);
	assert_string_equal(at->throttle.why[THROTTLE_THERMAL], "cpu at 95.0 C >= passive trip 95.0 C");
	/* the same cause as data */
	assert_int_equal(at->throttle.cause_count, 1);
	assert_int_equal(at->throttle.causes[0].reason, THROTTLE_THERMAL);
	assert_string_equal(at->throttle.causes[0].kind, "trip");
	assert_string_equal(at->throttle.causes[0].source, "cpu");
	assert_true(at->throttle.causes[0].value == 95 && at->throttle.causes[0].limit == 95);

	/* a hot trip counts too; a trip without a temperature does not */
	struct sample *hot = SAMPLE({"temp.gpu_c", 99.5}, {"trip.gpu.hot_c", 99}, {"trip.soc0.passive_c", 10});
	throttle_detector_update(det, hot);
	assert_only_reason(hot, THROTTLE_THERMAL);
	assert_string_equal(hot->throttle.why[THROTTLE_THERMAL], "gpu at 99.5 C >= hot trip 99.0 C");
	free(below);
	free(at);
	free(hot);
	throttle_detector_destroy(det);
}

static void
test_cooling_device(void **state)
{
	(void)state;
	struct throttle_detector *det = throttle_detector_create();
	struct sample *s = SAMPLE({"cooling.pwm_fan.state", 3}, {"cooling.pwm_fan.max_state", 3},
				  {"cooling.skin_balanced.state", 0}, {"cooling.skin_balanced.max_state", 56});
	throttle_detector_update(det, s);
	assert_not_throttled(s); /* a spinning fan is cooling, not throttling */

	struct sample *t = SAMPLE({"cooling.pwm_fan.state", 3}, {"cooling.skin_balanced.state", 12},
				  {"cooling.skin_balanced.max_state", 56});
	throttle_detector_update(det, t);
	assert_only_reason(t, THROTTLE_THERMAL);
	assert_string_equal(t->throttle.why[THROTTLE_THERMAL], "cooling device skin_balanced at state 12 of 56");
	assert_int_equal(t->throttle.cause_count, 1);
	assert_string_equal(t->throttle.causes[0].kind, "cooling_device");
	assert_string_equal(t->throttle.causes[0].source, "skin_balanced");
	assert_true(t->throttle.causes[0].value == 12 && t->throttle.causes[0].limit == 56);
	free(s);
	free(t);
	throttle_detector_destroy(det);
}

static void
test_rail_alarm(void **state)
{
	(void)state;
	struct throttle_detector *det = throttle_detector_create();
	struct sample *s = SAMPLE({"power.vdd_in.ma", 7900}, {"power.vdd_in.crit_ma", 7784},
				  {"power.vdd_in.crit_alarm", 1}, {"power.vdd_in.max_alarm", 0});
	throttle_detector_update(det, s);
	assert_only_reason(s, THROTTLE_RAIL_ALARM);
	assert_string_equal(s->throttle.why[THROTTLE_RAIL_ALARM],
			    "vdd_in current 7900 mA raised the critical alarm (limit 7784 mA)");
	free(s);
	throttle_detector_destroy(det);
}

static void
test_clock_capped_under_load(void **state)
{
	(void)state;
	struct throttle_detector *det = throttle_detector_create();
	struct sample *s = SAMPLE({"gpu.load_pct", 99}, {"gpu.freq_mhz", 612}, {"gpu.max_freq_mhz", 1020},
				  {"gpu.hw_max_freq_mhz", 1020}, {"temp.gpu_c", 60});
	throttle_detector_update(det, s);
	assert_only_reason(s, THROTTLE_FREQ_CAP);
	assert_string_equal(s->throttle.why[THROTTLE_FREQ_CAP], "gpu at 612 MHz under 99% load below its ceiling");

	/* the same clock at low load is the governor saving power */
	struct sample *idle = SAMPLE({"gpu.load_pct", 20}, {"gpu.freq_mhz", 306}, {"gpu.max_freq_mhz", 1020});
	throttle_detector_update(det, idle);
	assert_not_throttled(idle);

	/* a CPU core at 100 % far below its ceiling */
	struct sample *cpu = SAMPLE({"cpu.0.online", 1}, {"cpu.0.load_pct", 100}, {"cpu.0.freq_mhz", 729},
				    {"cpu.0.max_freq_mhz", 1728}, {"cpu.1.online", 1}, {"cpu.1.load_pct", 100},
				    {"cpu.1.freq_mhz", 1728}, {"cpu.1.max_freq_mhz", 1728});
	throttle_detector_update(det, cpu);
	assert_only_reason(cpu, THROTTLE_FREQ_CAP);
	assert_string_equal(cpu->throttle.why[THROTTLE_FREQ_CAP], "cpu0 at 729 MHz under 100% load, ceiling 1728 MHz");
	free(s);
	free(idle);
	free(cpu);
	throttle_detector_destroy(det);
}

static void
test_power_mode_cap_is_context(void **state)
{
	(void)state;
	struct throttle_detector *det = throttle_detector_create();
	/* 25W mode: GPU ceiling 612 of 1020 MHz, running flat out at the ceiling */
	struct sample *s = SAMPLE({"gpu.load_pct", 99}, {"gpu.freq_mhz", 612}, {"gpu.max_freq_mhz", 612},
				  {"gpu.hw_max_freq_mhz", 1020}, {"cpu.0.online", 1}, {"cpu.0.load_pct", 100},
				  {"cpu.0.freq_mhz", 1190}, {"cpu.0.max_freq_mhz", 1190},
				  {"cpu.0.hw_max_freq_mhz", 1728}, {"cpu.1.online", 0}, {"temp.tj_c", 80},
				  {"nvpmodel.id", 1});
	strcpy(s->power_mode, "25W");
	throttle_detector_update(det, s);
	assert_not_throttled(s);
	assert_string_equal(s->throttle.context, "power mode 25W; gpu ceiling 612 of 1020 MHz; "
						 "cpu ceiling 1190 of 1728 MHz; 1 of 2 cores offline");
	free(s);
	throttle_detector_destroy(det);
}

static void
test_jetson_clocks_context(void **state)
{
	(void)state;
	struct throttle_detector *det = throttle_detector_create();
	struct sample *s = SAMPLE({"gpu.min_freq_mhz", 1020}, {"gpu.max_freq_mhz", 1020},
				  {"cpu.0.online", 1}, {"cpu.0.min_freq_mhz", 1728}, {"cpu.0.max_freq_mhz", 1728});
	throttle_detector_update(det, s);
	assert_not_throttled(s);
	assert_string_equal(s->throttle.context, "jetson_clocks active (clocks pinned at their ceiling)");
	free(s);
	throttle_detector_destroy(det);
}

/* With tegrastats alone: a > 20 % GPU drop under load while hot. */
static void
test_tegrastats_only_gpu_drop(void **state)
{
	(void)state;
	struct throttle_detector *det = throttle_detector_create();
	struct sample *peak = SAMPLE({"gpu.load_pct", 99}, {"gpu.freq_mhz", 1020}, {"temp.tj_c", 90});
	throttle_detector_update(det, peak);
	assert_not_throttled(peak);

	/* 816 MHz is exactly 20 % below: not more than 20 % */
	struct sample *edge = SAMPLE({"gpu.load_pct", 99}, {"gpu.freq_mhz", 816}, {"temp.tj_c", 90});
	throttle_detector_update(det, edge);
	assert_false(edge->throttle.reason[THROTTLE_THERMAL]);

	struct sample *hot = SAMPLE({"gpu.load_pct", 99}, {"gpu.freq_mhz", 612}, {"temp.tj_c", 96.5},
				    {"temp.cpu_c", 90});
	throttle_detector_update(det, hot);
	assert_only_reason(hot, THROTTLE_THERMAL);
	assert_string_equal(hot->throttle.why[THROTTLE_THERMAL],
			    "gpu at 612 MHz, 40% below 1020 MHz under 99% load while tj is 96.5 C");

	/* the same drop at 60 C is not thermal: it is an unexplained cap */
	struct sample *cool = SAMPLE({"gpu.load_pct", 99}, {"gpu.freq_mhz", 612}, {"temp.tj_c", 60});
	throttle_detector_update(det, cool);
	assert_only_reason(cool, THROTTLE_FREQ_CAP);

	/* a lower clock at light load is normal scaling */
	struct sample *light = SAMPLE({"gpu.load_pct", 30}, {"gpu.freq_mhz", 306}, {"temp.tj_c", 90});
	throttle_detector_update(det, light);
	assert_not_throttled(light);

	/* a power-mode change forgets the old peak */
	struct sample *m1 = SAMPLE({"nvpmodel.id", 0}, {"gpu.load_pct", 99}, {"gpu.freq_mhz", 1020}, {"temp.tj_c", 90});
	struct sample *m2 = SAMPLE({"nvpmodel.id", 1}, {"gpu.load_pct", 99}, {"gpu.freq_mhz", 612}, {"temp.tj_c", 90});
	throttle_detector_update(det, m1);
	throttle_detector_update(det, m2);
	assert_not_throttled(m2);
	free(peak);
	free(edge);
	free(hot);
	free(cool);
	free(light);
	free(m1);
	free(m2);
	throttle_detector_destroy(det);
}

static void
test_several_reasons(void **state)
{
	(void)state;
	struct throttle_detector *det = throttle_detector_create();
	struct sample *a = SAMPLE({"oc.2.events", 5});
	throttle_detector_update(det, a);
	struct sample *b = SAMPLE({"oc.2.events", 6}, {"temp.cpu_c", 100}, {"trip.cpu.passive_c", 95},
				  {"temp.gpu_c", 97}, {"trip.gpu.passive_c", 95}, {"gpu.load_pct", 99},
				  {"gpu.freq_mhz", 300}, {"gpu.max_freq_mhz", 1020});
	throttle_detector_update(det, b);
	assert_true(b->throttle.active);
	assert_true(b->throttle.reason[THROTTLE_THERMAL]);
	assert_true(b->throttle.reason[THROTTLE_OVERCURRENT]);
	/* the clock cap is explained by the other reasons */
	assert_false(b->throttle.reason[THROTTLE_FREQ_CAP]);
	assert_non_null(strstr(b->throttle.why[THROTTLE_THERMAL], "cpu at 100.0 C >= passive trip 95.0 C; "
								  "gpu at 97.0 C >= passive trip 95.0 C"));
	free(a);
	free(b);
	throttle_detector_destroy(det);
}

/*
 * A measured clock far below the request or the pinned floor is a throttle
 * at any load (Thor, forum 361188); a measured clock a little below it is
 * not; an OC count from before the first reading is told, never counted.
 */
static void
test_latched_clock(void **state)
{
	(void)state;
	struct throttle_detector *det = throttle_detector_create();
	struct sample *a = SAMPLE({"oc.3.events", 1}, {"cpu.0.online", 1}, {"cpu.0.freq_mhz", 649},
				  {"cpu.0.requested_freq_mhz", 2601}, {"cpu.0.load_pct", 1}, {"cpu.0.max_freq_mhz", 2601},
				  {"cpu.1.online", 1}, {"cpu.1.freq_mhz", 1497.6}, {"cpu.1.max_freq_mhz", 2601});
	throttle_detector_update(det, a);
	assert_only_reason(a, THROTTLE_FREQ_CAP);
	assert_string_equal(a->throttle.why[THROTTLE_FREQ_CAP],
			    "cpu0 measured at 649 MHz, asked for 2601 MHz: held down by the hardware whatever the load "
			    "(oc3 had counted 1 event before the first reading)");
	assert_int_equal(a->throttle.cause_count, 1);
	assert_string_equal(a->throttle.causes[0].kind, "clock_latched");

	/* a floor pinned above the request is the reference */
	struct sample *b = SAMPLE({"oc.3.events", 1}, {"cpu.0.online", 1}, {"cpu.1.online", 0}, {"cpu.2.online", 1},
				  {"cpu.2.freq_mhz", 1100}, {"cpu.2.requested_freq_mhz", 1200},
				  {"cpu.2.min_freq_mhz", 2201.6});
	throttle_detector_update(det, b);
	assert_only_reason(b, THROTTLE_FREQ_CAP);
	assert_true(b->throttle.causes[0].limit == 2201.6);
	assert_string_equal(b->throttle.causes[0].source, "cpu2");

	/* 85 % of the request: the measurement differs, nothing holds it down */
	struct sample *c = SAMPLE({"oc.3.events", 1}, {"cpu.0.online", 1}, {"cpu.0.freq_mhz", 2210},
				  {"cpu.0.requested_freq_mhz", 2601}, {"cpu.0.min_freq_mhz", 972});
	throttle_detector_update(det, c);
	assert_not_throttled(c);
	/* without a request next to it, a low clock at low load is just idle */
	struct sample *d = SAMPLE({"cpu.0.online", 1}, {"cpu.0.freq_mhz", 649}, {"cpu.0.min_freq_mhz", 972},
				  {"cpu.0.load_pct", 3});
	throttle_detector_update(det, d);
	assert_not_throttled(d);
	char history[96];
	assert_int_equal(throttle_detector_history(det, history, sizeof(history)), 1);
	assert_string_equal(history, "oc3 had counted 1 event before the first reading");
	free(a);
	free(b);
	free(c);
	free(d);
	throttle_detector_destroy(det);

	/* a counter at 0 at the start has no history */
	det = throttle_detector_create();
	struct sample *e = SAMPLE({"oc.1.events", 0});
	throttle_detector_update(det, e);
	assert_int_equal(throttle_detector_history(det, history, sizeof(history)), 0);
	assert_string_equal(history, "");
	free(e);
	throttle_detector_destroy(det);
}

/* An NVML GPU's clocks event reasons (nvml/) into the detector's reasons and context. */
static void
test_gpu_events(void **state)
{
	(void)state;
	struct throttle_detector *det = throttle_detector_create();
	struct sample *a = SAMPLE({"agent.nvml_gpus", 2}, {"gpu.0.event.thermal", 1}, {"gpu.0.temp_c", 88},
				  {"gpu.0.temp_slowdown_c", 89}, {"gpu.0.event.idle", 0}, {"gpu.1.event.power_cap", 1},
				  {"gpu.1.power_mw", 299000}, {"gpu.1.power_limit_mw", 300000}, {"gpu.1.event.idle", 1},
				  {"gpu.1.event.power_brake", 1}, {"gpu.1.event.hw_slowdown", 1});
	throttle_detector_update(det, a);
	assert_true(a->throttle.reason[THROTTLE_THERMAL] && a->throttle.reason[THROTTLE_FREQ_CAP] &&
		    a->throttle.reason[THROTTLE_OVERCURRENT] && !a->throttle.reason[THROTTLE_RAIL_ALARM]);
	assert_string_equal(a->throttle.why[THROTTLE_THERMAL], "gpu0 in thermal slowdown (NVML) at 88 C");
	assert_string_equal(a->throttle.why[THROTTLE_FREQ_CAP],
			    "gpu1 held at its power limit (NVML: software power cap), 299 of 300 W");
	assert_string_equal(a->throttle.why[THROTTLE_OVERCURRENT],
			    "gpu1 slowed down by the power brake (NVML: the power supply asked)");
	assert_string_equal(a->throttle.context, "gpu1 idle (NVML); gpu1 in hardware slowdown (NVML)");
	assert_string_equal(a->throttle.causes[0].kind, "gpu_event");
	assert_true(a->throttle.causes[0].value == 88 && a->throttle.causes[0].limit == 89);
	/* idle and HW slowdown alone: context, not throttling */
	struct sample *b = SAMPLE({"agent.nvml_gpus", 1}, {"gpu.0.event.idle", 1}, {"gpu.0.event.thermal", 0});
	throttle_detector_update(det, b);
	assert_not_throttled(b);
	assert_string_equal(b->throttle.context, "gpu0 idle (NVML)");
	free(a);
	free(b);
	throttle_detector_destroy(det);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_latched_clock),
		cmocka_unit_test(test_gpu_events),
		cmocka_unit_test(test_oc_counter_increment),
		cmocka_unit_test(test_trip_crossed),
		cmocka_unit_test(test_cooling_device),
		cmocka_unit_test(test_rail_alarm),
		cmocka_unit_test(test_clock_capped_under_load),
		cmocka_unit_test(test_power_mode_cap_is_context),
		cmocka_unit_test(test_jetson_clocks_context),
		cmocka_unit_test(test_tegrastats_only_gpu_drop),
		cmocka_unit_test(test_several_reasons),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
