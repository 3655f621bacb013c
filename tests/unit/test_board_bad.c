/*
 * The sysfs board source on a temporary copy of orin-nano-jp6 whose files a
 * test breaks (missing, empty, garbage, huge, a FIFO, a directory, -256):
 * exactly the metrics of the broken file go, nothing stalls, the failure is
 * counted; then the source's fallbacks and recoveries.
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
#include "emulator.h"
#include "core/sample.h"
#include "helpers.h"
#include "tegra/board.h"

/* ---- bad files on a copy of orin-nano-jp6 ----------------------------------------- */

static int64_t
wall_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * Samples a fresh copy, calls BREAK on it, samples again 6 s later (so the
 * slow group is re-read too) and checks that exactly the GONE metrics
 * disappeared, everything else kept its value, the sample returned (a read
 * that blocks, as on a FIFO without a writer, never would: the bound is for
 * that, not for a slow or emulated machine) and COUNTED says whether the failure was counted as a read error.
 */
static void
bad_case(void (*breakit)(const char *root), const char *const *gone, size_t ngone, bool counted)
{
	static struct sample before;
	static struct sample after;
	char *root = th_copytree(BOARDS "/orin-nano-jp6", "board");
	struct board *b = open_board(root);
	assert_int_equal(take(b, &before), 0);
	assert_int_equal(before.metrics.count, NANO6_METRICS - 7);
	uint64_t errors = board_read_errors(b);

	breakit(root);
	fake_ms += 6000;
	int64_t start = wall_us();
	assert_int_equal(take(b, &after), 0);
	int64_t took = wall_us() - start;
	assert_true(took < 2000000 * emulator_slowdown());

	for (size_t i = 0; i < ngone; i++) {
		assert_non_null(metric_set_find(&before.metrics, gone[i]));
		if (metric_set_find(&after.metrics, gone[i])) {
			fail_msg("%s still present", gone[i]);
		}
	}
	for (size_t i = 0; i < before.metrics.count; i++) {
		const struct metric *m = &before.metrics.items[i];
		bool is_gone = false;
		for (size_t k = 0; k < ngone; k++) {
			is_gone = is_gone || strcmp(m->name, gone[k]) == 0;
		}
		double v;
		if (!is_gone && (!metric_set_get(&after.metrics, m->name, &v) || v != m->value)) {
			fail_msg("%s changed or went missing", m->name);
		}
	}
	assert_int_equal(after.metrics.count, before.metrics.count - ngone);
	/* an unreadable status leaves the mode unknown */
	bool mode_gone = false;
	for (size_t k = 0; k < ngone; k++) {
		mode_gone = mode_gone || strcmp(gone[k], "nvpmodel.id") == 0;
	}
	assert_string_equal(after.power_mode, mode_gone ? "" : "MAXN_SUPER");
	if (counted) {
		assert_true(board_read_errors(b) > errors);
	} else {
		assert_int_equal(board_read_errors(b), errors);
	}
	board_destroy(b);
	th_rmtree(root);
}

static void
break_missing(const char *root)
{
	char path[4096];
	th_join(path, sizeof(path), root, "/sys/devices/virtual/thermal/thermal_zone1/temp");
	assert_int_equal(unlink(path), 0);
}

static void
test_bad_missing(void **state)
{
	(void)state;
	static const char *const gone[] = {"temp.gpu_c"};
	bad_case(break_missing, gone, 1, false); /* a missing file is normal, not an error */
}

static void
break_empty(const char *root)
{
	th_write_at(root, "/sys/devices/platform/17000000.gpu/devfreq/17000000.gpu/cur_freq", "");
}

static void
test_bad_empty(void **state)
{
	(void)state;
	static const char *const gone[] = {"gpu.freq_mhz"};
	bad_case(break_empty, gone, 1, true);
}

static void
break_garbage(const char *root)
{
	th_write_at(root, "/sys/devices/virtual/thermal/thermal_zone5/temp", "hot\n");
	th_write_at(root, "/sys/devices/platform/bus@0/c240000.i2c/i2c-1/1-0040/hwmon/hwmon1/curr1_input",
		   "12ab\n");
	th_write_at(root, "/var/lib/nvpmodel/status", "pmode:banana\n");
}

static void
test_bad_garbage(void **state)
{
	(void)state;
	/* no current: no .ma and no computed .mw; the nvpmodel id is unknown */
	static const char *const gone[] = {"temp.soc0_c", "power.vdd_in.ma", "power.vdd_in.mw",
					   "nvpmodel.id"};
	bad_case(break_garbage, gone, 4, true);
}

static void
write_big(const char *root, const char *rel)
{
	char path[4096];
	th_join(path, sizeof(path), root, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 1024 * 1024 / 8; i++) {
		fputs("4787500\n", f);
	}
	assert_int_equal(fclose(f), 0);
}

static void
break_huge(const char *root)
{
	write_big(root, "/sys/devices/virtual/thermal/thermal_zone8/temp");
	write_big(root, "/proc/meminfo");
}

static void
test_bad_huge(void **state)
{
	(void)state;
	static const char *const gone[] = {"temp.tj_c",     "ram.total_mb",  "ram.used_mb",
					   "swap.total_mb", "swap.used_mb",  "swap.cached_mb"};
	bad_case(break_huge, gone, 6, true);
}

static void
make_fifo(const char *root, const char *rel)
{
	char path[4096];
	th_join(path, sizeof(path), root, rel);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0644), 0);
}

static void
break_fifo_cv(const char *root)
{
	make_fifo(root, "/sys/devices/virtual/thermal/thermal_zone2/temp");
}

static void
test_bad_fifo_cv(void **state)
{
	(void)state;
	/* cv0 is absent (-256) already; the sample must not block on the FIFO */
	bad_case(break_fifo_cv, NULL, 0, true);
}

static void
break_fifo_soc(const char *root)
{
	make_fifo(root, "/sys/devices/virtual/thermal/thermal_zone6/temp");
}

static void
test_bad_fifo_present_zone(void **state)
{
	(void)state;
	static const char *const gone[] = {"temp.soc1_c"};
	bad_case(break_fifo_soc, gone, 1, true);
}

static void
break_dir(const char *root)
{
	char path[4096];
	th_join(path, sizeof(path), root, "/sys/devices/virtual/thermal/cooling_device0/cur_state");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void
test_bad_dir(void **state)
{
	(void)state;
	static const char *const gone[] = {"cooling.cpufreq_cpu0.state"};
	bad_case(break_dir, gone, 1, true);
}

static void
break_offline(const char *root)
{
	th_write_at(root, "/sys/devices/virtual/thermal/thermal_zone1/temp", "-256000\n");
	th_write_at(root, "/sys/devices/virtual/thermal/thermal_zone7/temp", "-273150\n");
}

static void
test_bad_minus_256(void **state)
{
	(void)state;
	static const char *const gone[] = {"temp.gpu_c", "temp.soc2_c"};
	bad_case(break_offline, gone, 2, false);
}

/* ---- behaviour ---------------------------------------------------------------------- */

/* The status file is read at most every 5 s; without it the conf default applies. */
static void
test_nvpmodel_status(void **state)
{
	(void)state;
	static struct sample s;
	char *root = th_copytree(BOARDS "/orin-nano-jp6", "board");
	struct board *b = open_board(root);
	double id;

	assert_int_equal(take(b, &s), 0);
	assert_string_equal(s.power_mode, "MAXN_SUPER");

	th_write_at(root, "/var/lib/nvpmodel/status", "pmode:0000\n");
	fake_ms += 4999;
	assert_int_equal(take(b, &s), 0);
	assert_string_equal(s.power_mode, "MAXN_SUPER");
	assert_true(metric_set_get(&s.metrics, "nvpmodel.id", &id) && id == 2);

	fake_ms += 1;
	assert_int_equal(take(b, &s), 0);
	assert_string_equal(s.power_mode, "15W");
	assert_true(metric_set_get(&s.metrics, "nvpmodel.id", &id) && id == 0);

	char path[4096];
	th_join(path, sizeof(path), root, "/var/lib/nvpmodel/status");
	assert_int_equal(unlink(path), 0);
	fake_ms += 5000;
	assert_int_equal(take(b, &s), 0);
	assert_string_equal(s.power_mode, "25W"); /* PM_CONFIG DEFAULT=1 */
	assert_true(metric_set_get(&s.metrics, "nvpmodel.id", &id) && id == 1);
	assert_int_equal(board_read_errors(b), 0);
	board_destroy(b);
	th_rmtree(root);
}

/* Without /sys/class/devfreq the GPU is found at its known JetPack 6 path. */
static void
test_gpu_fallback(void **state)
{
	(void)state;
	static struct sample s;
	char *root = th_copytree(BOARDS "/orin-nano-jp6", "board");
	char path[4096];
	th_join(path, sizeof(path), root, "/sys/class/devfreq/17000000.gpu");
	assert_int_equal(unlink(path), 0);
	th_join(path, sizeof(path), root, "/sys/class/devfreq");
	assert_int_equal(rmdir(path), 0);

	struct board *b = open_board(root);
	assert_int_equal(take(b, &s), 0);
	double v;
	assert_true(metric_set_get(&s.metrics, "gpu.freq_mhz", &v) && v == 306);
	assert_true(metric_set_get(&s.metrics, "gpu.max_freq_mhz", &v) && v == 1020);
	assert_true(metric_set_get(&s.metrics, "gpu.hw_max_freq_mhz", &v) && v == 1020);
	assert_true(metric_set_get(&s.metrics, "gpu.load_pct", &v) && v == 0);
	assert_int_equal(s.metrics.count, NANO6_METRICS - 7);
	board_destroy(b);
	th_rmtree(root);
}

/*
 * A readable cpuinfo_cur_freq wins over scaling_cur_freq (Thor: the
 * scaling value can be the request while the hardware runs slower).
 */
static void
test_cpuinfo_cur_preferred(void **state)
{
	(void)state;
	static struct sample s;
	char *root = th_copytree(BOARDS "/orin-nano-jp6", "board");
	th_write_at(root, "/sys/devices/system/cpu/cpufreq/policy4/cpuinfo_cur_freq", "649000\n");
	struct board *b = open_board(root);
	assert_int_equal(take(b, &s), 0);
	double v;
	assert_true(metric_set_get(&s.metrics, "cpu.4.freq_mhz", &v) && v == 649);
	assert_true(metric_set_get(&s.metrics, "cpu.5.freq_mhz", &v) && v == 649);
	assert_true(metric_set_get(&s.metrics, "cpu.0.freq_mhz", &v) && v == 1036.8);
	/*
	 * Measuring it costs the driver a busy wait (tegra194/234), so it is read
	 * with the slow group only: a change shows after BOARD_SLOW_MS, not at once.
	 */
	th_write_at(root, "/sys/devices/system/cpu/cpufreq/policy4/cpuinfo_cur_freq", "100000\n");
	sample_clear(&s);
	assert_int_equal(take(b, &s), 0);
	assert_true(metric_set_get(&s.metrics, "cpu.4.freq_mhz", &v) && v == 649);
	board_destroy(b);
	th_rmtree(root);
}

/* Two zones with one name after normalisation: the later gets its index. */
static void
test_duplicate_zone_names(void **state)
{
	(void)state;
	static struct sample s;
	char *root = th_copytree(BOARDS "/orin-nano-jp6", "board");
	char path[4096];
	th_join(path, sizeof(path), root, "/sys/devices/virtual/thermal/thermal_zone9");
	assert_int_equal(mkdir(path, 0755), 0);
	th_write_at(root, "/sys/devices/virtual/thermal/thermal_zone9/type", "CPU-therm\n");
	th_write_at(root, "/sys/devices/virtual/thermal/thermal_zone9/temp", "61500\n");
	th_write_at(root, "/sys/devices/virtual/thermal/thermal_zone9/trip_point_0_type", "hot\n");
	th_write_at(root, "/sys/devices/virtual/thermal/thermal_zone9/trip_point_0_temp", "90000\n");
	th_join(path, sizeof(path), root, "/sys/class/thermal/thermal_zone9");
	assert_int_equal(symlink("../../devices/virtual/thermal/thermal_zone9", path), 0);

	struct board *b = open_board(root);
	assert_int_equal(take(b, &s), 0);
	double v;
	assert_true(metric_set_get(&s.metrics, "temp.cpu_c", &v) && v == 47.875);
	assert_true(metric_set_get(&s.metrics, "temp.cpu_9_c", &v) && v == 61.5);
	assert_true(metric_set_get(&s.metrics, "trip.cpu_9.hot_c", &v) && v == 90);
	assert_true(metric_set_get(&s.metrics, "trip.cpu.passive_c", &v) && v == 99);
	assert_int_equal(s.metrics.count, NANO6_METRICS - 7 + 2);
	board_destroy(b);
	th_rmtree(root);
}

/* Without the system-wide online list, each cpuN/online is read (cpu0 has none: on). */
static void
test_cpu_online_fallback(void **state)
{
	(void)state;
	static struct sample s;
	char *root = th_copytree(BOARDS "/agx-xavier-jp4", "board");
	char path[4096];
	th_join(path, sizeof(path), root, "/sys/devices/system/cpu/online");
	assert_int_equal(unlink(path), 0);
	struct board *b = open_board(root);
	assert_int_equal(take(b, &s), 0);
	double v;
	assert_true(metric_set_get(&s.metrics, "cpu.0.online", &v) && v == 1);
	assert_true(metric_set_get(&s.metrics, "cpu.3.online", &v) && v == 1);
	assert_true(metric_set_get(&s.metrics, "cpu.3.freq_mhz", &v) && v == 2188.8);
	assert_true(metric_set_get(&s.metrics, "cpu.7.online", &v) && v == 0);
	assert_null(metric_set_find(&s.metrics, "cpu.7.freq_mhz"));
	assert_int_equal(s.metrics.count, 81);
	board_destroy(b);
	th_rmtree(root);
}

/* A zone reading -256 is looked at again with the slow group (5 s), not every sample. */
static void
test_offline_zone_returns(void **state)
{
	(void)state;
	static struct sample s;
	char *root = th_copytree(BOARDS "/agx-orin-jp5", "board");
	struct board *b = open_board(root);
	assert_int_equal(take(b, &s), 0);
	assert_null(metric_set_find(&s.metrics, "temp.gpu_c"));

	th_write_at(root, "/sys/devices/virtual/thermal/thermal_zone1/temp", "38156\n");
	fake_ms += 4000;
	assert_int_equal(take(b, &s), 0);
	assert_null(metric_set_find(&s.metrics, "temp.gpu_c"));

	fake_ms += 1000;
	assert_int_equal(take(b, &s), 0);
	double v;
	assert_true(metric_set_get(&s.metrics, "temp.gpu_c", &v) && v == 38.156);

	/* once back, it is read on every sample again */
	th_write_at(root, "/sys/devices/virtual/thermal/thermal_zone1/temp", "39000\n");
	fake_ms += 1000;
	assert_int_equal(take(b, &s), 0);
	assert_true(metric_set_get(&s.metrics, "temp.gpu_c", &v) && v == 39);
	board_destroy(b);
	th_rmtree(root);
}

/*
 * The host section's memory shares come from the board's one reading of
 * /proc/meminfo, only when asked for (the composition root asks when the
 * host source runs): never in a fixture's golden output. Xavier fixture:
 * MemTotal 32686080, MemAvailable 29461504, SwapTotal = SwapFree 16343040.
 */
static void
test_memory_shares(void **state)
{
	(void)state;
	static struct sample s;
	char *root = th_copytree(BOARDS "/agx-xavier-jp4", "board");
	struct board *b = open_board(root);
	assert_int_equal(take(b, &s), 0);
	assert_null(metric_set_find(&s.metrics, "ram.available_mb"));
	assert_null(metric_set_find(&s.metrics, "ram.used_pct"));
	assert_null(metric_set_find(&s.metrics, "swap.used_pct"));

	board_set_memory_shares(b, true);
	fake_ms += 1000;
	assert_int_equal(take(b, &s), 0);
	double v = 0, total = 0, used = 0;
	assert_true(metric_set_get(&s.metrics, "ram.available_mb", &v) && v == 29461504 / 1024.0);
	assert_true(metric_set_get(&s.metrics, "ram.used_pct", &v));
	assert_true(fabs(v - 100.0 * (32686080 - 29461504) / 32686080.0) < 1e-9);
	/* the same reading as the board's own: used / total is the share */
	assert_true(metric_set_get(&s.metrics, "ram.total_mb", &total) && metric_set_get(&s.metrics, "ram.used_mb", &used));
	assert_true(fabs(v - 100.0 * used / total) < 1e-9);
	assert_true(metric_set_get(&s.metrics, "swap.used_pct", &v) && v == 0);

	/* no MemAvailable (before 3.14), no swap: the shares are absent, never guessed from MemFree */
	th_write_at(root, "/proc/meminfo", "MemTotal: 4059712 kB\nMemFree: 100 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n");
	fake_ms += 1000;
	assert_int_equal(take(b, &s), 0);
	assert_true(metric_set_get(&s.metrics, "ram.used_mb", &v)); /* the board's own estimate stays */
	assert_null(metric_set_find(&s.metrics, "ram.available_mb"));
	assert_null(metric_set_find(&s.metrics, "ram.used_pct"));
	assert_null(metric_set_find(&s.metrics, "swap.used_pct"));

	/* MemAvailable above MemTotal is nonsense: no share */
	th_write_at(root, "/proc/meminfo", "MemTotal: 100 kB\nMemAvailable: 200 kB\n");
	fake_ms += 1000;
	assert_int_equal(take(b, &s), 0);
	assert_null(metric_set_find(&s.metrics, "ram.used_pct"));
	board_destroy(b);
	th_rmtree(root);
}

/* An empty root opens but has nothing to sample; a missing root fails. */
static void
test_empty_and_missing_root(void **state)
{
	(void)state;
	static struct sample s;
	char dir[] = "/tmp/test_board_empty.XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct board *b = open_board(dir);
	assert_false(board_is_jetson(b));
	assert_string_equal(board_identity(b)->model, "");
	assert_true(take(b, &s) < 0);
	assert_int_equal(s.metrics.count, 0);
	board_destroy(b);
	assert_int_equal(rmdir(dir), 0);

	struct board *none = NULL;
	assert_int_equal(board_open("/nonexistent/tegrawatch-root", &none), -ENOENT);
	assert_null(none);
	board_destroy(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_missing),
		cmocka_unit_test(test_bad_empty),
		cmocka_unit_test(test_bad_garbage),
		cmocka_unit_test(test_bad_huge),
		cmocka_unit_test(test_bad_fifo_cv),
		cmocka_unit_test(test_bad_fifo_present_zone),
		cmocka_unit_test(test_bad_dir),
		cmocka_unit_test(test_bad_minus_256),
		cmocka_unit_test(test_nvpmodel_status),
		cmocka_unit_test(test_gpu_fallback),
		cmocka_unit_test(test_cpuinfo_cur_preferred),
		cmocka_unit_test(test_duplicate_zone_names),
		cmocka_unit_test(test_offline_zone_returns),
		cmocka_unit_test(test_cpu_online_fallback),
		cmocka_unit_test(test_memory_shares),
		cmocka_unit_test(test_empty_and_missing_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
