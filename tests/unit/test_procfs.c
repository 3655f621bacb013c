/* tegra/procfs.c: /proc/stat, /proc/meminfo and CPU range lists. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tegra/procfs.h"

/* An Orin Nano (6 cores) with cpu4 taken offline: its line is missing. */
static const char stat_a[] =
	"cpu  40010 120 15030 900100 2200 0 310 0 0 0\n"
	"cpu0 10000 100 5000 150000 1000 0 300 0 0 0\n"
	"cpu1 8000 20 3000 160000 500 0 10 0 0 0\n"
	"cpu2 7000 0 2500 170000 300 0 0 0 0 0\n"
	"cpu3 6000 0 2000 180000 200 0 0 0 0 0\n"
	"cpu5 9010 0 2530 240100 200 0 0 0 0 0\n"
	"intr 1234567 0 0 0\n"
	"ctxt 98765432\n"
	"btime 1700000000\n"
	"processes 12345\n"
	"procs_running 2\n"
	"procs_blocked 0\n"
	"softirq 555 1 2 3 4 5 6 7 8 9 10\n";

static const char stat_b[] =
	"cpu  41000 120 15500 901000 2200 0 310 0 0 0\n"
	"cpu0 10300 100 5100 150100 1000 0 300 0 0 0\n" /* busy +400, idle +100 */
	"cpu1 8000 20 3000 160500 500 0 10 0 0 0\n"    /* idle only */
	"cpu2 7050 0 2550 170000 300 0 0 0 0 0\n"      /* busy only */
	"cpu3 6000 0 2000 180000 200 0 0 0 0 0\n"      /* no time passed */
	"cpu5 9010 0 2530 240100 200 0 0 0 0 0\n";

static void
test_stat(void **state)
{
	(void)state;
	struct proc_stat a;
	struct proc_stat b;
	assert_int_equal(procfs_parse_stat(stat_a, &a), 0);
	assert_int_equal(procfs_parse_stat(stat_b, &b), 0);
	assert_int_equal(a.cpu_count, 6);
	assert_true(a.cpu[0].present);
	assert_false(a.cpu[4].present);
	assert_true(a.cpu[5].present);
	/* busy = user+nice+system+irq+softirq+steal; total adds idle+iowait */
	assert_int_equal(a.cpu[0].busy, 10000 + 100 + 5000 + 300);
	assert_int_equal(a.cpu[0].total, 15400 + 150000 + 1000);

	double pct = -1;
	assert_true(procfs_cpu_load(&a.cpu[0], &b.cpu[0], &pct));
	assert_float_equal(pct, 80.0, 1e-9);
	assert_true(procfs_cpu_load(&a.cpu[1], &b.cpu[1], &pct));
	assert_float_equal(pct, 0.0, 1e-9);
	assert_true(procfs_cpu_load(&a.cpu[2], &b.cpu[2], &pct));
	assert_float_equal(pct, 100.0, 1e-9);
	pct = -1;
	assert_false(procfs_cpu_load(&a.cpu[3], &b.cpu[3], &pct));
	assert_false(procfs_cpu_load(&a.cpu[4], &b.cpu[4], &pct));
	/* counters that went backwards (core re-plugged) give no load */
	assert_false(procfs_cpu_load(&b.cpu[0], &a.cpu[0], &pct));
	assert_float_equal(pct, -1, 0);
}

static void
test_stat_shapes(void **state)
{
	(void)state;
	struct proc_stat st;
	/* an old kernel prints only four fields */
	assert_int_equal(procfs_parse_stat("cpu 4 0 4 8\ncpu0 1 0 2 3\n", &st), 0);
	assert_int_equal(st.cpu_count, 1);
	assert_int_equal(st.cpu[0].busy, 3);
	assert_int_equal(st.cpu[0].total, 6);
	/* no trailing newline, steal counted */
	assert_int_equal(procfs_parse_stat("cpu1 1 1 1 1 1 1 1 5", &st), 0);
	assert_int_equal(st.cpu_count, 2);
	assert_false(st.cpu[0].present);
	assert_int_equal(st.cpu[1].busy, 10);
	assert_int_equal(st.cpu[1].total, 12);
	/* cores beyond PROCFS_CPU_MAX are ignored, not an error */
	assert_int_equal(procfs_parse_stat("cpu0 1 0 0 1\ncpu64 1 0 0 1\n", &st), 0);
	assert_int_equal(st.cpu_count, 1);

	st.cpu_count = 99;
	assert_int_equal(procfs_parse_stat("", &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("cpu 1 2 3 4\nintr 5\n", &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("cpu0 1 2 x 4\n", &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("cpu0 1 2 3\n", &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("cpu0 99999999999999999999 0 0 1\n", &st), -EINVAL);
	/* found by fuzz_board: only a core past PROCFS_CPU_MAX is no stat; sums that wrap are garbage */
	assert_int_equal(procfs_parse_stat("cpu64 1 0 0 1\n", &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("cpu0 18446744073709551615 1 0 1\n", &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("cpu0 1 0 0 18446744073709551615 1\n", &st), -EINVAL);
	assert_int_equal(st.cpu_count, 99); /* untouched on failure */
}

static void
test_meminfo(void **state)
{
	(void)state;
	/* the head of /proc/meminfo on an 8 GB Orin Nano */
	static const char text[] =
		"MemTotal:        7802100 kB\n"
		"MemFree:         4512340 kB\n"
		"MemAvailable:    6123456 kB\n"
		"Buffers:           45678 kB\n"
		"Cached:          1434567 kB\n"
		"SwapCached:          12 kB\n"
		"Active:           987654 kB\n"
		"SwapTotal:       3901048 kB\n"
		"SwapFree:        3900000 kB\n"
		"HugePages_Total:       0\n"
		"Hugepagesize:       2048 kB\n";
	struct meminfo mi;
	assert_int_equal(procfs_parse_meminfo(text, &mi), 0);
	assert_int_equal(mi.mem_total_kb, 7802100);
	assert_int_equal(mi.mem_free_kb, 4512340);
	assert_int_equal(mi.mem_available_kb, 6123456);
	assert_int_equal(mi.buffers_kb, 45678);
	assert_int_equal(mi.cached_kb, 1434567);
	assert_int_equal(mi.swap_cached_kb, 12);
	assert_int_equal(mi.swap_total_kb, 3901048);
	assert_int_equal(mi.swap_free_kb, 3900000);

	/* an old kernel without MemAvailable, and no swap lines */
	assert_int_equal(procfs_parse_meminfo("MemTotal: 4059712 kB\nMemFree: 100 kB\n", &mi), 0);
	assert_int_equal(mi.mem_total_kb, 4059712);
	assert_int_equal(mi.mem_free_kb, 100);
	assert_int_equal(mi.mem_available_kb, -1);
	assert_int_equal(mi.swap_total_kb, -1);
	assert_int_equal(mi.cached_kb, -1);

	mi.mem_total_kb = 5;
	assert_int_equal(procfs_parse_meminfo("MemFree: 100 kB\n", &mi), -EINVAL);
	assert_int_equal(procfs_parse_meminfo("MemTotal: lots kB\n", &mi), -EINVAL);
	assert_int_equal(procfs_parse_meminfo("MemTotal: 100 MB\n", &mi), -EINVAL);
	assert_int_equal(procfs_parse_meminfo("", &mi), -EINVAL);
	assert_int_equal(procfs_parse_meminfo("MemTotal: 99999999999999999999 kB\n", &mi), -EINVAL);
	assert_int_equal(procfs_parse_meminfo("MemTotal: 10 kB\nMemAvailable: 5 MB\n", &mi), -EINVAL);
	assert_int_equal(procfs_parse_meminfo("MemTotal: 10 kB\nSwapFree: -3 kB\n", &mi), -EINVAL);
	assert_int_equal(mi.mem_total_kb, 5);
}

static void
test_cpulist(void **state)
{
	(void)state;
	uint64_t m = 0;
	assert_int_equal(procfs_parse_cpulist("0-3,5", &m), 0);
	assert_int_equal(m, 0x2f);
	assert_int_equal(procfs_parse_cpulist("0", &m), 0);
	assert_int_equal(m, 0x1);
	assert_int_equal(procfs_parse_cpulist("0-11\n", &m), 0);
	assert_int_equal(m, 0xfff);
	assert_int_equal(procfs_parse_cpulist("4-5,7,9-10", &m), 0);
	assert_int_equal(m, 0x6b0);
	assert_int_equal(procfs_parse_cpulist("63", &m), 0);
	assert_true(m == UINT64_C(0x8000000000000000));
	/* CPUs past 63 do not fit the mask but are not garbage */
	assert_int_equal(procfs_parse_cpulist("62-65", &m), 0);
	assert_true(m == UINT64_C(0xc000000000000000));
	/* empty list: "offline" when every CPU is online */
	m = 7;
	assert_int_equal(procfs_parse_cpulist("", &m), 0);
	assert_int_equal(m, 0);
	m = 7;
	assert_int_equal(procfs_parse_cpulist("\n", &m), 0);
	assert_int_equal(m, 0);

	m = 42;
	assert_int_equal(procfs_parse_cpulist("abc", &m), -EINVAL);
	assert_int_equal(procfs_parse_cpulist("3-1", &m), -EINVAL);
	assert_int_equal(procfs_parse_cpulist("0-", &m), -EINVAL);
	assert_int_equal(procfs_parse_cpulist("-1", &m), -EINVAL);
	assert_int_equal(procfs_parse_cpulist("0,,1", &m), -EINVAL);
	assert_int_equal(procfs_parse_cpulist("0,", &m), -EINVAL);
	assert_int_equal(procfs_parse_cpulist("0 1", &m), -EINVAL);
	assert_int_equal(procfs_parse_cpulist("0-7:2/4", &m), -EINVAL);
	assert_int_equal(m, 42);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_stat_shapes),
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_cpulist),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
