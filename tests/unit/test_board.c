/*
 * The sysfs board source on the hand-made fixture roots in
 * tests/fixtures/boards (see the README there): one snapshot per tree with
 * every metric written out. Bad files and the source's behaviour:
 * test_board_bad.c.
 *
 * Each test copies its tree to a temp dir, so it can rewrite /proc/stat
 * between samples without touching the committed trees.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "board_checks.h"
#include "core/sample.h"
#include "helpers.h"
#include "tegra/board.h"

/* ---- nano-jp4 ------------------------------------------------------------------ */


/*
 * Nano block A: CPU [5%@1224,4%@1224,3%@1224,6%@1224] GR3D_FREQ 0%@76 EMC 1600,
 * PLL@37C CPU@40C PMIC@50C GPU@40C AO@45C thermal@40C, POM_5V_IN 1750 ...
 * Loads: each core ran 200 ticks, busy 10/8/6/12 (cpu0 also had 2 ticks of
 * iowait, which count as idle).
 */
static const char nano_stat2[] = "cpu  123111 76 23068 1567108 2542 0 701 0 0 0\n"
				 "cpu0 30617 4 6238 403688 768 0 125 0 0 0\n"
				 "cpu1 37563 32 5774 396055 696 0 130 0 0 0\n"
				 "cpu2 27038 4 5309 322724 544 0 315 0 0 0\n"
				 "cpu3 27893 36 5747 444641 534 0 131 0 0 0\n"
				 "intr 48123471 0 0 0 0 0 0 0 0 0 0\n"
				 "ctxt 91234999\n";

static const struct expect nano_want[] = {
	/* PMIC-Die is a placeholder: no temp.pmic_c, no trip.pmic.* */
	{"temp.ao_c", 45},
	{"temp.cpu_c", 40},
	{"temp.gpu_c", 40},
	{"temp.pll_c", 37},
	{"temp.thermal_c", 40},
	{"trip.cpu.critical_c", 101},
	{"trip.cpu.hot_c", 97},
	{"trip.gpu.critical_c", 101},
	{"trip.gpu.hot_c", 97},
	{"trip.thermal.active_c", 51}, /* lowest of 51/61/71/82 */
	{"cooling.pwm_fan.state", 0},
	{"cooling.pwm_fan.max_state", 6},
	{"gpu.freq_mhz", 76.8},
	{"gpu.max_freq_mhz", 921.6},
	{"gpu.min_freq_mhz", 76.8},
	{"gpu.hw_max_freq_mhz", 998.4},
	{"gpu.load_pct", 0},
	CPU(0, 1224, 1479, 102, 1479, 5),
	CPU(1, 1224, 1479, 102, 1479, 4),
	CPU(2, 1224, 1479, 102, 1479, 3),
	CPU(3, 1224, 1479, 102, 1479, 6),
	{"cpu.load_pct", 4.5},
	{"ram.total_mb", 3964},
	{"ram.used_mb", 1923},
	{"swap.total_mb", 1982},
	{"swap.used_mb", 191},
	{"swap.cached_mb", 6},
	{"emc.freq_mhz", 1600},
	RAIL("pom_5v_in", 1750, 5000, 350, 4000),
	RAIL("pom_5v_gpu", 0, 5000, 0, 2000),
	RAIL("pom_5v_cpu", 366, 5000, 73, 2000), /* iio's own mW, not 5000 * 73 */
	{"fan.0.pwm", 0},
	{"fan.0.rpm", 0},
	{"nvpmodel.id", 0},
};

static void
test_nano_jp4(void **state)
{
	(void)state;
	struct board *b;
	char *root;
	snapshot(BOARDS "/nano-jp4", nano_stat2, nano_want, sizeof(nano_want) / sizeof(nano_want[0]),
		 "MAXN", &b, &root);
	assert_int_equal(sizeof(nano_want) / sizeof(nano_want[0]), 63);
	check_identity(b, "NVIDIA Jetson Nano Developer Kit", "tegra210", "p3448-0000", "32.7.1",
		       "4.6.1");
	board_destroy(b);
	th_rmtree(root);
}

/* ---- agx-xavier-jp4 ------------------------------------------------------------- */

/* Block C: CPU [57%@2188,56%@2188,57%@2188,63%@2188,off,off,off,off] GR3D_FREQ 39% */
static const char xavier_stat2[] = "cpu  122487 69 32332 1654204 1705 0 1701 0 0 0\n"
				   "cpu0 24124 3 6873 465398 744 0 399 0 0 0\n"
				   "cpu1 38977 14 9840 404075 150 0 600 0 0 0\n"
				   "cpu2 21594 9 9605 334996 396 0 315 0 0 0\n"
				   "cpu3 37792 43 6014 449735 415 0 387 0 0 0\n"
				   "intr 73123999 0 0 0 0 0 0 0 0 0 0\n";

static const struct expect xavier_want[] = {
	{"temp.cpu_c", 37.5},
	{"temp.gpu_c", 35},
	{"temp.aux_c", 34.5},
	{"temp.ao_c", 35},
	{"temp.tboard_c", 35},
	{"temp.tdiode_c", 37.75},
	{"temp.thermal_c", 35.55},
	{"trip.cpu.critical_c", 96.5},
	{"trip.cpu.passive_c", 95.5},
	{"trip.gpu.critical_c", 96.5},
	{"trip.gpu.passive_c", 95.5},
	{"trip.aux.critical_c", 96.5},
	{"trip.aux.passive_c", 95.5},
	{"trip.thermal.active_c", 35},
	{"cooling.cpu_balanced.state", 0},
	{"cooling.cpu_balanced.max_state", 28},
	{"cooling.gpu_balanced.state", 0},
	{"cooling.gpu_balanced.max_state", 13},
	{"cooling.skin_balanced.state", 0},
	{"cooling.skin_balanced.max_state", 56},
	{"gpu.freq_mhz", 675.75},
	{"gpu.max_freq_mhz", 675.75},
	{"gpu.min_freq_mhz", 318.75},
	{"gpu.hw_max_freq_mhz", 1377},
	{"gpu.load_pct", 39},
	CPU(0, 2188.8, 2188.8, 115.2, 2265.6, 57),
	CPU(1, 2188.8, 2188.8, 115.2, 2265.6, 56),
	CPU(2, 2188.8, 2188.8, 115.2, 2265.6, 57),
	CPU(3, 2188.8, 2188.8, 115.2, 2265.6, 63),
	/* off: only the online flag, as tegrastats prints "off" */
	{"cpu.4.online", 0},
	{"cpu.5.online", 0},
	{"cpu.6.online", 0},
	{"cpu.7.online", 0},
	{"cpu.load_pct", 58.25},
	{"ram.total_mb", 31920},
	{"ram.used_mb", 3149},
	{"swap.total_mb", 15960},
	{"swap.used_mb", 0},
	{"swap.cached_mb", 0},
	RAIL("gpu", 466, 5008, 93, 6000),
	RAIL("cpu", 466, 5008, 93, 6000),
	RAIL("soc", 932, 5008, 186, 6000),
	RAIL("cv", 0, 5008, 0, 6000),
	RAIL("vddrq", 0, 5008, 0, 6000),
	RAIL("sys5v", 1854, 5008, 370, 6000),
	{"fan.0.pwm", 56},
	{"fan.0.rpm", 1170},
	{"nvpmodel.id", 7},
};

static void
test_agx_xavier_jp4(void **state)
{
	(void)state;
	struct board *b;
	char *root;
	snapshot(BOARDS "/agx-xavier-jp4", xavier_stat2, xavier_want,
		 sizeof(xavier_want) / sizeof(xavier_want[0]), "MODE_15W_DESKTOP", &b, &root);
	assert_int_equal(sizeof(xavier_want) / sizeof(xavier_want[0]), 86);
	/* /proc/device-tree and /etc/nvpmodel.conf are absolute links here */
	check_identity(b, "Jetson-AGX", "tegra194", "p2972-0000", "32.6.1", "4.6");
	board_destroy(b);
	th_rmtree(root);
}

/* ---- agx-orin-jp5 ---------------------------------------------------------------- */

/* Block A: CPU [0%@729 x 12]; 200 idle ticks per core (cpu0: 198 idle + 2 iowait) */
static const char orin_stat2[] = "cpu  342673 359 102898 4850932 5962 0 4921 0 0 0\n"
				 "cpu0 25922 12 5844 452660 686 0 427 0 0 0\n"
				 "cpu1 32202 36 5798 443787 829 0 132 0 0 0\n"
				 "cpu2 21953 34 10070 354190 608 0 448 0 0 0\n"
				 "cpu3 34011 29 11367 382551 576 0 399 0 0 0\n"
				 "cpu4 31848 49 7455 365323 284 0 457 0 0 0\n"
				 "cpu5 27998 31 5670 450781 407 0 368 0 0 0\n"
				 "cpu6 31255 4 10975 417859 394 0 411 0 0 0\n"
				 "cpu7 23868 21 9193 409808 268 0 487 0 0 0\n"
				 "cpu8 24980 42 9005 410745 140 0 592 0 0 0\n"
				 "cpu9 22543 20 11263 446496 686 0 504 0 0 0\n"
				 "cpu10 31145 37 10695 391997 708 0 354 0 0 0\n"
				 "cpu11 34948 44 5563 324735 376 0 342 0 0 0\n";

static const struct expect orin_want[] = {
	/* GPU-therm and CV0-2 read -256000: absent */
	{"temp.cpu_c", 44.562},
	{"temp.soc0_c", 41.093},
	{"temp.soc1_c", 41.25},
	{"temp.soc2_c", 40.093},
	{"temp.tj_c", 44.343},
	{"temp.tdiode_c", 33},
	{"temp.tboard_c", 32},
	/* trips stay even when the zone reads -256 */
	ORIN_TRIPS("cpu"),
	ORIN_TRIPS("gpu"),
	{"trip.tj.critical_c", 105},
	{"trip.tj.active_c", 74},
	COOL("cpufreq_cpu0", 0, 9),
	COOL("cpufreq_cpu4", 0, 9),
	COOL("cpufreq_cpu8", 0, 9),
	ORIN_ALERTS(0, 0, 0),
	COOL("pwm_fan", 0, 3),
	{"gpu.freq_mhz", 306},
	{"gpu.max_freq_mhz", 1300.5},
	{"gpu.min_freq_mhz", 306},
	{"gpu.hw_max_freq_mhz", 1300.5},
	{"gpu.load_pct", 0},
	CPU(0, 729.6, 2201.6, 729.6, 2201.6, 0),
	CPU(1, 729.6, 2201.6, 729.6, 2201.6, 0),
	CPU(2, 729.6, 2201.6, 729.6, 2201.6, 0),
	CPU(3, 729.6, 2201.6, 729.6, 2201.6, 0),
	CPU(4, 729.6, 2201.6, 729.6, 2201.6, 0),
	CPU(5, 729.6, 2201.6, 729.6, 2201.6, 0),
	CPU(6, 729.6, 2201.6, 729.6, 2201.6, 0),
	CPU(7, 729.6, 2201.6, 729.6, 2201.6, 0),
	CPU(8, 729.6, 2201.6, 729.6, 2201.6, 0),
	CPU(9, 729.6, 2201.6, 729.6, 2201.6, 0),
	CPU(10, 729.6, 2201.6, 729.6, 2201.6, 0),
	CPU(11, 729.6, 2201.6, 729.6, 2201.6, 0),
	{"cpu.load_pct", 0},
	{"ram.total_mb", 62801},
	{"ram.used_mb", 4321},
	{"swap.total_mb", 31400},
	{"swap.used_mb", 19},
	{"swap.cached_mb", 0},
	{"emc.freq_mhz", 2133},
	/* two NC channels and the sum channel are skipped */
	RAIL("vdd_gpu_soc", 2340, 5000, 468, 9000),
	ALARMS("vdd_gpu_soc"),
	RAIL("vdd_cpu_cv", 390, 5000, 78, 9000),
	ALARMS("vdd_cpu_cv"),
	RAIL("vin_sys_5v0", 4025, 5000, 805, 9000),
	ALARMS("vin_sys_5v0"),
	RAIL("vddq_vdd2_1v8ao", 300, 5000, 60, 4000),
	ALARMS("vddq_vdd2_1v8ao"),
	{"oc.1.events", 0},
	{"oc.1.throttle_enabled", 1},
	{"oc.2.events", 0},
	{"oc.2.throttle_enabled", 1},
	{"oc.3.events", 0},
	{"oc.3.throttle_enabled", 1},
	{"fan.0.pwm", 55},
	{"fan.0.rpm", 1240},
	{"nvpmodel.id", 0},
};

static void
test_agx_orin_jp5(void **state)
{
	(void)state;
	struct board *b;
	char *root;
	snapshot(BOARDS "/agx-orin-jp5", orin_stat2, orin_want,
		 sizeof(orin_want) / sizeof(orin_want[0]), "MAXN", &b, &root);
	assert_int_equal(sizeof(orin_want) / sizeof(orin_want[0]), 160);
	check_identity(b, "Jetson AGX Orin", "tegra234", "p3701-0005", "35.4.1", "5.1.2");
	board_destroy(b);
	th_rmtree(root);
}

/* ---- orin-nano-jp6 --------------------------------------------------------------- */

/* Block C: CPU [0%@1036,0%@1036,1%@1036,1%@1036,0%@729,0%@729] */
static const char nano6_stat2[] = "cpu  163153 170 47717 2428830 3015 0 2084 0 0 0\n"
				  "cpu0 22129 41 5497 491867 820 0 258 0 0 0\n"
				  "cpu1 38938 24 10580 417022 391 0 466 0 0 0\n"
				  "cpu2 31371 39 5185 421228 463 0 186 0 0 0\n"
				  "cpu3 23837 18 9045 315652 323 0 493 0 0 0\n"
				  "cpu4 24238 31 11048 365110 507 0 300 0 0 0\n"
				  "cpu5 22640 17 6362 417951 511 0 381 0 0 0\n";

static const struct expect nano6_want[] = {
	/* cv0-2 read -256000: absent */
	{"temp.cpu_c", 47.875},
	{"temp.gpu_c", 50.218},
	{"temp.soc0_c", 47.281},
	{"temp.soc1_c", 48.281},
	{"temp.soc2_c", 46.75},
	{"temp.tj_c", 50.218},
	/* L4T's trips, classified by their bindings (test_trips.c) */
	P3767_THERMAL(0, 0, 0, 0, 1),
	GPU(306, 1020, 306, 1020, 0),
	CPU(0, 1036.8, 1728, 729.6, 1728, 0),
	CPU(1, 1036.8, 1728, 729.6, 1728, 0),
	CPU(2, 1036.8, 1728, 729.6, 1728, 1),
	CPU(3, 1036.8, 1728, 729.6, 1728, 1),
	CPU(4, 729.6, 1728, 729.6, 1728, 0),
	CPU(5, 729.6, 1728, 729.6, 1728, 0),
	{"cpu.load_pct", 2.0 / 6.0},
	MEMORY(7620, 1488, 12002, 253, 2),
	HWMON_RAIL("vdd_in", 4654, 5200, 895, 7784),
	HWMON_RAIL("vdd_cpu_gpu_cv", 560, 5000, 112, 5000),
	HWMON_RAIL("vdd_soc", 1485, 5000, 297, 4000),
	OC(1, 0, 1),
	OC(2, 0, 1),
	OC(3, 2, 1),
	{"fan.0.pwm", 88},
	{"fan.0.rpm", 2153},
	{"nvpmodel.id", 2},
};

#define NANO6_COUNT (sizeof(nano6_want) / sizeof(nano6_want[0]))

static void
test_orin_nano_jp6(void **state)
{
	(void)state;
	struct board *b;
	char *root;
	snapshot(BOARDS "/orin-nano-jp6", nano6_stat2, nano6_want, NANO6_COUNT, "MAXN_SUPER", &b,
		 &root);
	assert_int_equal(NANO6_COUNT, NANO6_METRICS);
	check_identity(b, "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super",
		       "tegra234", "p3767-0005", "36.4.3", "6.2");
	board_destroy(b);
	th_rmtree(root);
}

/* ---- orin-nx-jp6 ----------------------------------------------------------------- */

/* The JetPack 6.2 NX line: CPU [1%@729,0%@729 x 7]; cpu1 had 2 ticks of iowait (idle) */
static const char nx6_stat2[] = "cpu  243300 179 63049 3180229 3926 0 3198 0 0 0\n"
				"cpu0 37665 23 10006 308071 736 0 434 0 0 0\n"
				"cpu1 26881 21 5397 404321 487 0 428 0 0 0\n"
				"cpu2 24393 10 8780 302194 634 0 577 0 0 0\n"
				"cpu3 27951 6 5595 342117 713 0 371 0 0 0\n"
				"cpu4 33165 46 7854 440500 169 0 305 0 0 0\n"
				"cpu5 20770 20 9610 476352 386 0 490 0 0 0\n"
				"cpu6 34051 41 5782 476857 385 0 427 0 0 0\n"
				"cpu7 38424 12 10025 429817 416 0 166 0 0 0\n";

static const struct expect nx6_want[] = {
	/* every zone of the line, the CV ones included */
	{"temp.cpu_c", 45.843},
	{"temp.gpu_c", 43.406},
	{"temp.cv0_c", 41.156},
	{"temp.cv1_c", 42.156},
	{"temp.cv2_c", 38.593},
	{"temp.soc0_c", 42.562},
	{"temp.soc1_c", 40.25},
	{"temp.soc2_c", 39.593},
	{"temp.tj_c", 45.843},
	/* the R36.3.0 NX reading of zone 0's bindings (test_trips.c) */
	P3767_THERMAL(0, 0, 0, 0, 0),
	/* MAXN_SUPER: the GPU up to 1173 MHz, the CPU up to 1984 MHz */
	GPU(306, 1173, 306, 1173, 0),
	CPU(0, 729.6, 1984, 729.6, 1984, 1),
	CPU(1, 729.6, 1984, 729.6, 1984, 0),
	CPU(2, 729.6, 1984, 729.6, 1984, 0),
	CPU(3, 729.6, 1984, 729.6, 1984, 0),
	CPU(4, 729.6, 1984, 729.6, 1984, 0),
	CPU(5, 729.6, 1984, 729.6, 1984, 0),
	CPU(6, 729.6, 1984, 729.6, 1984, 0),
	CPU(7, 729.6, 1984, 729.6, 1984, 0),
	{"cpu.load_pct", 1.0 / 8.0},
	MEMORY(15656, 1224, 7828, 0, 0),
	HWMON_RAIL("vdd_in", 4303.44, 5160, 834, 7784),
	HWMON_RAIL("vdd_cpu_gpu_cv", 575, 5000, 115, 5000),
	HWMON_RAIL("vdd_soc", 1220, 5000, 244, 4000),
	OC(1, 0, 1),
	OC(2, 0, 1),
	OC(3, 0, 1),
	/* pwm-fan's hwmon has no rpm file on this board */
	{"fan.0.pwm", 1},
	{"nvpmodel.id", 0},
};

static void
test_orin_nx_jp6(void **state)
{
	(void)state;
	struct board *b;
	char *root;
	snapshot(BOARDS "/orin-nx-jp6", nx6_stat2, nx6_want, sizeof(nx6_want) / sizeof(nx6_want[0]), "MAXN_SUPER",
		 &b, &root);
	assert_int_equal(sizeof(nx6_want) / sizeof(nx6_want[0]), 127);
	check_identity(b, "NVIDIA Jetson Orin NX Engineering Reference Developer Kit Super", "tegra234",
		       "p3767-0000", "36.4.3", "6.2");
	board_destroy(b);
	th_rmtree(root);
}

/* The demo root is orin-nano-jp6: its throttle trip is gpu-thermal's 99 C. */
static void
test_demo_root(void **state)
{
	(void)state;
	static struct sample s;
	struct board *b = open_board(DEMO_ROOT);
	check_identity(b, "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super",
		       "tegra234", "p3767-0005", "36.4.3", "6.2");
	assert_int_equal(take(b, &s), 0);
	assert_string_equal(s.power_mode, "MAXN_SUPER");
	double v;
	assert_true(metric_set_get(&s.metrics, "trip.gpu.passive_c", &v));
	assert_true(v == 99);
	assert_null(metric_set_find(&s.metrics, "trip.tj.passive_c"));
	assert_true(metric_set_get(&s.metrics, "gpu.max_freq_mhz", &v));
	assert_true(v == 1020);
	assert_int_equal(s.metrics.count, NANO6_COUNT - 7);
	board_destroy(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nano_jp4),
		cmocka_unit_test(test_agx_xavier_jp4),
		cmocka_unit_test(test_agx_orin_jp5),
		cmocka_unit_test(test_orin_nano_jp6),
		cmocka_unit_test(test_orin_nx_jp6),
		cmocka_unit_test(test_demo_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
