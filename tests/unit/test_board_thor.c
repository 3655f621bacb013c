/*
 * The board reader on Jetson AGX Thor (tests/fixtures/boards/agx-thor-jp7,
 * issue 22): JetPack from L4T, the INA238 board input and the INA3221's
 * three rails, the GPU clock chosen by its name (in kHz), the GPU zone
 * that answers EAGAIN while the GPU is rail-gated, and the latched
 * throttle of forum thread 361188 (every core at 649 MHz for a request of
 * 2601 MHz after an oc3 event at boot).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "board_checks.h"
#include "helpers.h"
#include "fake_eagain.h"
#include "tegra/throttle.h"

#define THOR BOARDS "/agx-thor-jp7"
#define GPU_ZONE_TEMP "/sys/devices/virtual/thermal/thermal_zone1/temp"
#define GPU_PCI_DEV "pci0000:00/0000:00:00.0/0000:01:00.0"
#define GPU_PCI "/sys/devices/" GPU_PCI_DEV
#define POLICY "/sys/devices/system/cpu/cpufreq/policy0"
#define INA3221 "/sys/devices/platform/bus@0/c240000.i2c/i2c-1/1-0040/hwmon/hwmon1"
#define INA238 "/sys/devices/platform/bus@0/c250000.i2c/i2c-2/2-0044/hwmon/hwmon0"

/* 200 ticks per core: 2 % busy on cpu0-12, 10 % on cpu13 */
static const char thor_stat2[] = "cpu  300700 140 90700 5600000 7000 0 4200 0 0 0\n"
				 "cpu0 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu1 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu2 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu3 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu4 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu5 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu6 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu7 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu8 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu9 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu10 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu11 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu12 21503 10 6501 400196 500 0 300 0 0 0\n"
				 "cpu13 20215 10 6205 400180 500 0 300 0 0 0\n"
				 "intr 98123471 0 0 0 0 0 0 0 0 0 0\n"
				 "ctxt 231234999\n";

#define THOR_CPU(n, load) CPU(n, 1497.6, 2601, 972, 2601, load)

static const struct expect thor_want[] = {
	{"temp.cpu_c", 45.5},
	{"temp.gpu_c", 41},
	{"temp.soc0_c", 43.25},
	{"temp.tj_c", 46},
	{"trip.cpu.critical_c", 105},
	{"trip.cpu.passive_c", 99},
	{"trip.tj.critical_c", 105},
	{"trip.tj.passive_c", 99},
	{"cooling.pwm_fan.state", 1},
	{"cooling.pwm_fan.max_state", 4},
	/* gpu-gpc-0 counts in kHz; no load file: no gpu.load_pct from sysfs */
	{"gpu.freq_mhz", 1049},
	{"gpu.max_freq_mhz", 1575},
	{"gpu.min_freq_mhz", 390},
	{"gpu.hw_max_freq_mhz", 1575},
	THOR_CPU(0, 2),
	THOR_CPU(1, 2),
	THOR_CPU(2, 2),
	THOR_CPU(3, 2),
	THOR_CPU(4, 2),
	THOR_CPU(5, 2),
	THOR_CPU(6, 2),
	THOR_CPU(7, 2),
	THOR_CPU(8, 2),
	THOR_CPU(9, 2),
	THOR_CPU(10, 2),
	THOR_CPU(11, 2),
	THOR_CPU(12, 2),
	THOR_CPU(13, 10),
	{"cpu.load_pct", 36.0 / 14},
	{"ram.total_mb", 125455},
	{"ram.used_mb", 6479},
	{"swap.total_mb", 0},
	{"swap.used_mb", 0},
	{"swap.cached_mb", 0},
	/* the INA238: 38 240 000 uW; no limit, no alarms */
	{"power.vin.mw", 38240},
	{"power.vin.mv", 20000},
	{"power.vin.ma", 1912},
	/* the INA3221's three rails, nothing of channels 4-7 */
	RAIL("vdd_gpu", 6600, 5000, 1320, 12000),
	ALARMS("vdd_gpu"),
	RAIL("vdd_cpu_soc_mss", 12050, 5000, 2410, 12000),
	ALARMS("vdd_cpu_soc_mss"),
	RAIL("vin_sys_5v0", 4525, 5000, 905, 6000),
	ALARMS("vin_sys_5v0"),
	{"oc.1.events", 0},
	{"oc.1.throttle_enabled", 0},
	{"oc.2.events", 0},
	{"oc.2.throttle_enabled", 1},
	{"oc.3.events", 1},
	{"oc.3.throttle_enabled", 1},
	{"fan.0.pwm", 80},
	{"fan.0.rpm", 1980},
	{"nvpmodel.id", 1},
};
#define THOR_COUNT (sizeof(thor_want) / sizeof(thor_want[0]))

static void
test_thor_snapshot(void **state)
{
	(void)state;
	struct board *b;
	char *root;
	snapshot(THOR, thor_stat2, thor_want, THOR_COUNT, "120W", &b, &root);
	check_identity(b, "NVIDIA Jetson AGX Thor Developer Kit", "tegra264", "p3834-0008", "38.4.0", "7.1");
	char clock[128];
	assert_true(board_gpu_clock(b, clock, sizeof(clock)));
	assert_string_equal(clock, "devfreq gpu-gpc-0 (the name its generation gives it, in kHz)");
	board_destroy(b);
	th_rmtree(root);
}

/*
 * Item 3: while the GPU is rail-gated its zone answers EAGAIN on every
 * read. The temperature is absent, zone.gpu.gated says why, and nothing is
 * counted as a read error; the value is back on the sample the GPU wakes.
 * One EAGAIN under load is asked again at once and costs nothing.
 */
static void
test_thor_gated_gpu_zone(void **state)
{
	(void)state;
	static struct sample s;
	char *root = th_copytree(THOR, "board");
	struct board *b = open_board(root);
	double v;
	assert_int_equal(take(b, &s), 0);
	assert_true(metric_set_get(&s.metrics, "temp.gpu_c", &v) && v == 41);
	assert_null(metric_set_find(&s.metrics, "zone.gpu.gated")); /* never gated: nothing new */
	size_t count = s.metrics.count;

	fake_eagain(GPU_ZONE_TEMP, -1);
	for (int i = 0; i < 3; i++) {
		fake_ms += 1000;
		assert_int_equal(take(b, &s), 0);
		assert_null(metric_set_find(&s.metrics, "temp.gpu_c"));
		assert_true(metric_set_get(&s.metrics, "zone.gpu.gated", &v) && v == 1);
		assert_true(metric_set_get(&s.metrics, "temp.cpu_c", &v) && v == 45.5);
	}
	assert_int_equal(fake_eagain_calls, 6); /* read every sample, asked twice each time */
	assert_int_equal(board_read_errors(b), 0);

	/* the GPU wakes: the temperature is back at once, and the state says 0 from now on */
	fake_eagain(NULL, 0);
	fake_ms += 1000;
	assert_int_equal(take(b, &s), 0);
	assert_true(metric_set_get(&s.metrics, "temp.gpu_c", &v) && v == 41);
	assert_true(metric_set_get(&s.metrics, "zone.gpu.gated", &v) && v == 0);
	assert_int_equal(s.metrics.count, count + 1);

	/* one EAGAIN (a busy sensor): read on the second try */
	fake_eagain(GPU_ZONE_TEMP, 1);
	fake_ms += 1000;
	assert_int_equal(take(b, &s), 0);
	assert_true(metric_set_get(&s.metrics, "temp.gpu_c", &v) && v == 41);
	assert_true(metric_set_get(&s.metrics, "zone.gpu.gated", &v) && v == 0);
	assert_int_equal(fake_eagain_calls, 1);
	assert_int_equal(board_read_errors(b), 0);
	fake_eagain(NULL, 0);
	board_destroy(b);
	th_rmtree(root);
}

/*
 * Item 2: channels 4-7 of the INA3221 are shunt voltages and their sum,
 * never rails, even with a label and a current file there (a kernel that
 * labels the shunt channels after their rail). An INA238 without a label
 * is still the board's input, named after the chip.
 */
static void
test_thor_power_channels(void **state)
{
	(void)state;
	static struct sample s;
	char *root = th_copytree(THOR, "board");
	th_write_at(root, INA3221 "/in4_label", "VDD_GPU\n");
	th_write_at(root, INA3221 "/in5_label", "VDD_CPU_SOC_MSS\n");
	th_write_at(root, INA3221 "/curr5_input", "2410\n");
	char path[4096];
	th_join(path, sizeof(path), root, INA238 "/label");
	assert_int_equal(unlink(path), 0);
	struct board *b = open_board(root);
	assert_int_equal(take(b, &s), 0);
	double v;
	assert_true(metric_set_get(&s.metrics, "power.vdd_gpu.mw", &v) && v == 6600);
	for (size_t i = 0; i < s.metrics.count; i++) {
		const char *name = s.metrics.items[i].name;
		if (strncmp(name, "power.", 6) == 0 && strstr(name, "_4.") != NULL) {
			fail_msg("%s: a shunt channel taken for a rail", name);
		}
	}
	assert_null(metric_set_find(&s.metrics, "power.vin.mw"));
	assert_true(metric_set_get(&s.metrics, "power.ina238.mw", &v) && v == 38240);
	assert_true(metric_set_get(&s.metrics, "power.ina238.mv", &v) && v == 20000);
	/* 3 labelled INA3221 rails x 6 metrics, the INA238's 3 */
	size_t rails = 0;
	for (size_t i = 0; i < s.metrics.count; i++) {
		rails += strncmp(s.metrics.items[i].name, "power.", 6) == 0;
	}
	assert_int_equal(rails, 3 * 6 + 3);
	assert_int_equal(board_read_errors(b), 0);
	board_destroy(b);
	th_rmtree(root);
}

/*
 * Item 5: the GPU clock is chosen by the name each generation gives it,
 * not by the order of /sys/class/devfreq: an entry that sorts first and
 * has "gpu" in its name (here gpu-dla-0) is not taken for the GPU.
 */
static void
test_thor_gpu_by_name(void **state)
{
	(void)state;
	static struct sample s;
	char *root = th_copytree(THOR, "board");
	char path[4096];
	/* gpu-nvd-0 (600 MHz) once more under a name that sorts before gpu-gpc-0 */
	th_join(path, sizeof(path), root, "/sys/class/devfreq/gpu-dla-0");
	assert_int_equal(symlink("../../devices/" GPU_PCI_DEV "/devfreq/gpu-nvd-0", path), 0);
	struct board *b = open_board(root);
	assert_int_equal(take(b, &s), 0);
	double v;
	assert_true(metric_set_get(&s.metrics, "gpu.freq_mhz", &v) && v == 1049);
	assert_true(metric_set_get(&s.metrics, "gpu.max_freq_mhz", &v) && v == 1575);
	char clock[128];
	assert_true(board_gpu_clock(b, clock, sizeof(clock)));
	assert_non_null(strstr(clock, "gpu-gpc-0"));
	board_destroy(b);
	th_rmtree(root);

	/* without gpu-gpc-0 the generic rule still finds a GPU, and says so */
	root = th_copytree(THOR, "board");
	th_join(path, sizeof(path), root, "/sys/class/devfreq/gpu-gpc-0");
	assert_int_equal(unlink(path), 0);
	b = open_board(root);
	assert_true(board_gpu_clock(b, clock, sizeof(clock)));
	assert_string_equal(clock, "devfreq gpu-nvd-0 (a name or device-tree node with \"gpu\", in kHz)");
	board_destroy(b);
	th_rmtree(root);
}

/*
 * Item 4, forum thread 361188: after an oc3 event at boot every core ran at
 * 649 MHz (cpuinfo_cur_freq) while scaling_cur_freq said the requested
 * 2601 MHz, jetson_clocks pinning the floor there, no load, no counter
 * moving. That is a throttle, and the oc3 count from before is said.
 */
static void
test_thor_latched_throttle(void **state)
{
	(void)state;
	static struct sample s;
	char *root = th_copytree(THOR, "board");
	th_write_at(root, POLICY "/cpuinfo_cur_freq", "649000\n");
	th_write_at(root, POLICY "/scaling_cur_freq", "2601000\n");
	th_write_at(root, POLICY "/scaling_min_freq", "2601000\n");
	th_write_at(root, GPU_PCI "/devfreq/gpu-gpc-0/min_freq", "1575000\n");
	struct board *b = open_board(root);
	struct throttle_detector *det = throttle_detector_create();
	for (int i = 0; i < 2; i++) {
		fake_ms += 1000;
		assert_int_equal(take(b, &s), 0);
		throttle_detector_update(det, &s);
	}
	double v;
	assert_true(metric_set_get(&s.metrics, "cpu.0.freq_mhz", &v) && v == 649);
	assert_true(metric_set_get(&s.metrics, "cpu.0.requested_freq_mhz", &v) && v == 2601);
	assert_true(metric_set_get(&s.metrics, "cpu.13.requested_freq_mhz", &v) && v == 2601);
	assert_true(s.throttle.active);
	assert_true(s.throttle.reason[THROTTLE_FREQ_CAP]);
	assert_false(s.throttle.reason[THROTTLE_OVERCURRENT]); /* the counter never moved */
	assert_string_equal(s.throttle.why[THROTTLE_FREQ_CAP],
			    "cpu0 (and 13 more cores) measured at 649 MHz, asked for 2601 MHz: held down by the "
			    "hardware whatever the load (oc3 had counted 1 event before the first reading)");
	assert_int_equal(s.throttle.cause_count, 14);
	assert_string_equal(s.throttle.causes[0].kind, "clock_latched");
	assert_string_equal(s.throttle.causes[0].source, "cpu0");
	assert_true(s.throttle.causes[0].value == 649 && s.throttle.causes[0].limit == 2601);
	assert_non_null(strstr(s.throttle.context, "jetson_clocks active (clocks pinned at their ceiling, but held below it)"));
	char history[128];
	assert_int_equal(throttle_detector_history(det, history, sizeof(history)), 1);
	assert_string_equal(history, "oc3 had counted 1 event before the first reading");
	throttle_detector_destroy(det);
	board_destroy(b);

	/* the same board as a user other than root: no measured clock, nothing to tell */
	char path[4096];
	th_join(path, sizeof(path), root, POLICY "/cpuinfo_cur_freq");
	assert_int_equal(unlink(path), 0);
	b = open_board(root);
	det = throttle_detector_create();
	assert_int_equal(take(b, &s), 0);
	throttle_detector_update(det, &s);
	assert_true(metric_set_get(&s.metrics, "cpu.0.freq_mhz", &v) && v == 2601);
	assert_null(metric_set_find(&s.metrics, "cpu.0.requested_freq_mhz"));
	assert_false(s.throttle.active);
	throttle_detector_destroy(det);
	board_destroy(b);
	th_rmtree(root);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thor_snapshot),
		cmocka_unit_test(test_thor_gated_gpu_zone),
		cmocka_unit_test(test_thor_power_channels),
		cmocka_unit_test(test_thor_gpu_by_name),
		cmocka_unit_test(test_thor_latched_throttle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
