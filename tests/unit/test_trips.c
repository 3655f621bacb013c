/*
 * Which trips throttle (docs/throttling.md): a trip counts as a throttle only
 * when a device bound to it lowers a clock. Orin's 70 C trip drives only the
 * hot-surface alert; its 99 C trip drives cpufreq, devfreq and the throttle
 * alerts. The trees orin-nano-jp6-warm (77 C under load, clocks at their
 * ceiling) and orin-nano-jp6-hot (99.5 C, clocks lowered) hold both cases;
 * agx-orin-jp7 is an AGX Orin on JetPack 7.2; orin-nx-jp6 an Orin NX 16GB on
 * JetPack 6.2, the module whose zone 0 bindings were read (L4T R36.3.0).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "board_checks.h"
#include "helpers.h"
#include "tegra/throttle.h"

/* One sample of TREE (a copy of it when COPY), judged by a fresh detector. */
static void
judge(const char *root, struct sample *s)
{
	struct board *b = open_board(root);
	struct throttle_detector *det = throttle_detector_create();
	assert_int_equal(take(b, s), 0);
	throttle_detector_update(det, s);
	throttle_detector_destroy(det);
	board_destroy(b);
}

static double
get(const struct sample *s, const char *name)
{
	double v = -1;
	if (!metric_set_get(&s->metrics, name, &v)) {
		fail_msg("%s missing", name);
	}
	return v;
}

static void
test_cooling_kinds(void **state)
{
	(void)state;
	static const struct {
		const char *type;
		enum cooling_kind kind;
	} cases[] = {
		{"hot-surface-alert", COOLING_WARNING},   {"hot_surface_alert", COOLING_WARNING},
		{"pwm-fan", COOLING_FAN},                 {"pwmfan", COOLING_FAN},
		{"cpufreq-cpu0", COOLING_CLOCK},          {"devfreq-17000000.gpu", COOLING_CLOCK},
		{"cpu-throttle-alert", COOLING_CLOCK},    {"skin-balanced", COOLING_CLOCK},
		{"soc012-throttle-alert", COOLING_CLOCK}, {"something-new", COOLING_CLOCK},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(cooling_kind_of(cases[i].type, strlen(cases[i].type)), cases[i].kind);
	}
	/* only LEN bytes count */
	assert_int_equal(cooling_kind_of("cpu-fan", 3), COOLING_CLOCK);
}

/* The idle board: the throttle trip is 99 C, the 70 C trip is the hot-surface one; no warning below it. */
static void
test_trips_from_bindings(void **state)
{
	(void)state;
	static struct sample s;
	judge(BOARDS "/orin-nano-jp6", &s);
	assert_true(get(&s, "trip.cpu.passive_c") == 99);
	assert_true(get(&s, "trip.gpu.passive_c") == 99);
	assert_true(get(&s, "trip.gpu.hot_surface_c") == 70);
	assert_true(get(&s, "trip.gpu.critical_c") == 104.5);
	assert_true(get(&s, "trip.tj.active_c") == 74);
	assert_true(get(&s, "thermal.hot_surface") == 0);
	assert_false(s.throttle.active);
	char text[256];
	struct board *b = open_board(BOARDS "/orin-nano-jp6");
	assert_int_equal(board_trip_bindings(b, text, sizeof(text)), 2);
	assert_non_null(strstr(text, "classified by their cooling devices in 2 zones (2 hot-surface warning trips)"));
	board_destroy(b);
}

/* 77 C under full load, every clock at its ceiling: a hot-surface warning, not a throttle. */
static void
test_warm_board_is_not_throttled(void **state)
{
	(void)state;
	static struct sample s;
	judge(BOARDS "/orin-nano-jp6-warm", &s);
	assert_true(get(&s, "temp.gpu_c") == 77);
	assert_true(get(&s, "gpu.freq_mhz") == get(&s, "gpu.hw_max_freq_mhz"));
	assert_true(get(&s, "cooling.hot_surface_alert.state") == 1);
	assert_true(get(&s, "thermal.hot_surface") == 1);
	assert_false(s.throttle.active);
	assert_true(get(&s, "throttle.thermal") == 0);
	assert_int_equal(s.throttle.cause_count, 0);
	assert_non_null(strstr(s.throttle.context, "hot surface, do not touch (a warning, not a throttle)"));
	assert_non_null(strstr(s.throttle.context, "over its 70.0 C hot-surface trip"));
}

/* 99.5 C with the clocks lowered: throttled, reason thermal, at the 99 C trip and by the clock devices only. */
static void
test_hot_board_is_throttled(void **state)
{
	(void)state;
	static struct sample s;
	judge(BOARDS "/orin-nano-jp6-hot", &s);
	assert_true(s.throttle.active);
	assert_true(get(&s, "throttle.thermal") == 1);
	assert_true(get(&s, "thermal.hot_surface") == 1);
	assert_non_null(strstr(s.throttle.why[THROTTLE_THERMAL], "gpu at 99.5 C >= passive trip 99.0 C"));
	bool trip = false;
	for (int i = 0; i < s.throttle.cause_count; i++) {
		const struct throttle_cause *c = &s.throttle.causes[i];
		assert_null(strstr(c->source, "hot_surface"));
		assert_null(strstr(c->source, "fan"));
		trip = trip || (strcmp(c->kind, "trip") == 0 && strcmp(c->source, "gpu") == 0 && c->limit == 99);
	}
	assert_true(trip);
	assert_null(strstr(s.throttle.why[THROTTLE_THERMAL], "hot_surface"));
}

/* A zone that shows no bindings keeps the old rule: its lowest passive trip throttles, and -v says so. */
static void
test_no_bindings_fall_back(void **state)
{
	(void)state;
	char *root = th_copytree(BOARDS "/orin-nano-jp6-warm", "trips");
	char path[4096];
	const char *zone = "/sys/devices/virtual/thermal/thermal_zone1";
	for (unsigned k = 0; k < 16; k++) {
		char name[64];
		snprintf(name, sizeof(name), "%s/cdev%u", zone, k);
		th_join(path, sizeof(path), root, name);
		unlink(path);
		snprintf(name, sizeof(name), "%s/cdev%u_trip_point", zone, k);
		th_join(path, sizeof(path), root, name);
		unlink(path);
	}
	static struct sample s;
	judge(root, &s);
	/* gpu-thermal: no bindings, the 70 C passive trip is taken for a throttle as before */
	assert_true(get(&s, "trip.gpu.passive_c") == 70);
	assert_null(metric_set_find(&s.metrics, "trip.gpu.hot_surface_c"));
	assert_true(s.throttle.active);
	assert_non_null(strstr(s.throttle.why[THROTTLE_THERMAL], "gpu at 77.0 C >= passive trip 70.0 C"));
	/* the hot-surface alert device is still no throttle: it is judged by its type */
	assert_null(strstr(s.throttle.why[THROTTLE_THERMAL], "hot_surface_alert"));
	/* cpu-thermal keeps its bindings */
	assert_true(get(&s, "trip.cpu.passive_c") == 99);
	struct board *b = open_board(root);
	char text[256];
	assert_int_equal(board_trip_bindings(b, text, sizeof(text)), 1);
	assert_non_null(strstr(text, "no trip-to-cooling-device bindings readable in 1 of 2 zones with passive or hot trips"));
	board_destroy(b);
	th_rmtree(root);
}

/* JetPack 7.2 on an AGX Orin (L4T R39.2.0): the same trips and bindings, the GPU on 17000000.gpu. */
static void
test_agx_orin_jetpack_72(void **state)
{
	(void)state;
	static struct sample s;
	judge(BOARDS "/agx-orin-jp7", &s);
	assert_true(get(&s, "trip.cpu.passive_c") == 99);
	assert_true(get(&s, "trip.gpu.hot_surface_c") == 70);
	assert_true(get(&s, "temp.cpu_c") == 50.718);
	assert_true(get(&s, "gpu.max_freq_mhz") == 1300.5);
	assert_true(get(&s, "thermal.hot_surface") == 0);
	assert_false(s.throttle.active);
	struct board *b = open_board(BOARDS "/agx-orin-jp7");
	check_identity(b, "NVIDIA Jetson AGX Orin Developer Kit", "tegra234", "p3701-0005", "39.2.0", "7.2");
	char text[256];
	assert_true(board_gpu_clock(b, text, sizeof(text)));
	assert_non_null(strstr(text, "17000000.gpu"));
	assert_int_equal(board_trip_bindings(b, text, sizeof(text)), 2);
	board_destroy(b);
}

/* The Orin NX 16GB on JetPack 6.2 (MAXN_SUPER): idle, the 99 C trip throttles, the 70 C one is the touch warning. */
static void
test_orin_nx_trips(void **state)
{
	(void)state;
	static struct sample s;
	judge(BOARDS "/orin-nx-jp6", &s);
	assert_true(get(&s, "trip.cpu.passive_c") == 99);
	assert_true(get(&s, "trip.gpu.passive_c") == 99);
	assert_true(get(&s, "trip.cpu.hot_surface_c") == 70);
	assert_true(get(&s, "trip.gpu.hot_surface_c") == 70);
	assert_true(get(&s, "trip.cpu.critical_c") == 104.5);
	assert_true(get(&s, "temp.gpu_c") == 43.406);
	assert_true(get(&s, "thermal.hot_surface") == 0);
	assert_false(s.throttle.active);
	struct board *b = open_board(BOARDS "/orin-nx-jp6");
	check_identity(b, "NVIDIA Jetson Orin NX Engineering Reference Developer Kit Super", "tegra234", "p3767-0000",
		       "36.4.3", "6.2");
	char text[256];
	assert_int_equal(board_trip_bindings(b, text, sizeof(text)), 2);
	assert_non_null(strstr(text, "classified by their cooling devices in 2 zones (2 hot-surface warning trips)"));
	board_destroy(b);
}

/*
 * orin-nx-jp6 at ROOT under a full GPU load: the cpu and gpu zones at CPU_MC and GPU_MC (m°C), the cpufreq
 * devices (cooling_device0, 1) at CPUFREQ, the GPU's devfreq device (2) at DEVFREQ, the cpu and gpu throttle
 * alerts (3, 4) at ALERT, the hot-surface alert (11) at 1, and the clocks at their ceilings GPU_HZ and CPU_KHZ.
 */
static void
nx_loaded(const char *root, const char *cpu_mc, const char *gpu_mc, const char *cpufreq, const char *devfreq,
	  const char *alert, const char *gpu_hz, const char *cpu_khz)
{
	static const char *const files[] = {
		"thermal_zone0/temp",	     "thermal_zone1/temp",	    "cooling_device0/cur_state",
		"cooling_device1/cur_state", "cooling_device2/cur_state",  "cooling_device3/cur_state",
		"cooling_device4/cur_state", "cooling_device11/cur_state",
	};
	const char *const values[] = {cpu_mc, gpu_mc, cpufreq, cpufreq, devfreq, alert, alert, "1\n"};
	char rel[128];
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(rel, sizeof(rel), "/sys/devices/virtual/thermal/%s", files[i]);
		th_write_at(root, rel, values[i]);
	}
	const char *gpu = "/sys/devices/platform/17000000.gpu";
	snprintf(rel, sizeof(rel), "%s/load", gpu);
	th_write_at(root, rel, "990\n");
	snprintf(rel, sizeof(rel), "%s/devfreq/17000000.gpu/cur_freq", gpu);
	th_write_at(root, rel, gpu_hz);
	snprintf(rel, sizeof(rel), "%s/devfreq/17000000.gpu/max_freq", gpu);
	th_write_at(root, rel, gpu_hz);
	for (int p = 0; p <= 4; p += 4) {
		snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpufreq/policy%d/scaling_cur_freq", p);
		th_write_at(root, rel, cpu_khz);
		snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpufreq/policy%d/scaling_max_freq", p);
		th_write_at(root, rel, cpu_khz);
	}
}

/*
 * The NX under load, as the Nano's warm and hot trees: at 77 C with its clocks at the MAXN_SUPER ceilings (1173 and
 * 1984 MHz) a hot-surface warning and no throttle; at 99.5 C with the clock devices engaged and the ceilings lowered
 * (918 and 1497.6 MHz, steps of its tables) a thermal throttle at the 99 C trip. The temperatures and states are
 * invented to fit the bindings.
 */
static void
test_orin_nx_under_load(void **state)
{
	(void)state;
	static struct sample s;
	char *root = th_copytree(BOARDS "/orin-nx-jp6", "trips");
	nx_loaded(root, "75406\n", "77000\n", "0\n", "0\n", "0\n", "1173000000\n", "1984000\n");
	judge(root, &s);
	assert_true(get(&s, "gpu.freq_mhz") == 1173);
	assert_true(get(&s, "gpu.freq_mhz") == get(&s, "gpu.hw_max_freq_mhz"));
	assert_true(get(&s, "cpu.0.max_freq_mhz") == get(&s, "cpu.0.hw_max_freq_mhz"));
	assert_true(get(&s, "thermal.hot_surface") == 1);
	assert_false(s.throttle.active);
	assert_true(get(&s, "throttle.thermal") == 0);
	assert_non_null(strstr(s.throttle.context, "over its 70.0 C hot-surface trip"));

	nx_loaded(root, "97562\n", "99500\n", "4\n", "3\n", "1\n", "918000000\n", "1497600\n");
	judge(root, &s);
	assert_true(s.throttle.active);
	assert_true(get(&s, "throttle.thermal") == 1);
	assert_non_null(strstr(s.throttle.why[THROTTLE_THERMAL], "gpu at 99.5 C >= passive trip 99.0 C"));
	assert_null(strstr(s.throttle.why[THROTTLE_THERMAL], "hot_surface"));
	th_rmtree(root);
}

/* A binding to a trip that does not exist, or a garbage trip number, changes nothing. */
static void
test_bad_bindings(void **state)
{
	(void)state;
	char *root = th_copytree(BOARDS "/orin-nano-jp6", "trips");
	char path[4096];
	th_join(path, sizeof(path), root, "/sys/devices/virtual/thermal/thermal_zone0/cdev0_trip_point");
	th_write_text(path, "garbage\n");
	th_join(path, sizeof(path), root, "/sys/devices/virtual/thermal/thermal_zone0/cdev1_trip_point");
	th_write_text(path, "42\n");
	static struct sample s;
	judge(root, &s);
	/* the throttle alert and devfreq still bind trip 0: it throttles */
	assert_true(get(&s, "trip.cpu.passive_c") == 99);
	assert_true(get(&s, "trip.cpu.hot_surface_c") == 70);
	th_rmtree(root);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cooling_kinds),
		cmocka_unit_test(test_trips_from_bindings),
		cmocka_unit_test(test_warm_board_is_not_throttled),
		cmocka_unit_test(test_hot_board_is_throttled),
		cmocka_unit_test(test_no_bindings_fall_back),
		cmocka_unit_test(test_bad_bindings),
		cmocka_unit_test(test_agx_orin_jetpack_72),
		cmocka_unit_test(test_orin_nx_trips),
		cmocka_unit_test(test_orin_nx_under_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
