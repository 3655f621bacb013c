/*
 * host/: the pure parsers (procmem.c, mounts.c, diskstats.c) and the
 * metric_attrs labels of /metrics. Fixture text: the kernel's documented
 * formats (proc.rst, iostats.rst, psi.rst, zram.rst, the mmc driver's
 * life_time/pre_eol_info), laid out as this machine's kernel prints them;
 * no capture of a Jetson's /proc/diskstats or eMMC life_time was found to
 * cite (searched public code and pages), so the mmcblk lines are built from
 * the documented format and marked so.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/metric_dict.h"
#include "host/diskstats.h"
#include "host/mounts.h"
#include "host/procmem.h"

static const char meminfo[] = "MemTotal:        7999148 kB\n"
			      "MemFree:          512000 kB\n"
			      "MemAvailable:    6100200 kB\n"
			      "Buffers:           10240 kB\n"
			      "SwapCached:            0 kB\n"
			      "SwapTotal:       3999572 kB\n"
			      "SwapFree:        3900000 kB\n";

static void
test_meminfo(void **state)
{
	(void)state;
	struct procmem_meminfo m;
	assert_int_equal(procmem_parse_meminfo(meminfo, &m), 0);
	assert_int_equal(m.mem_total_kb, 7999148);
	assert_int_equal(m.mem_available_kb, 6100200);
	assert_int_equal(m.swap_total_kb, 3999572);
	assert_int_equal(m.swap_free_kb, 3900000);
	/* a kernel before 3.14 has no MemAvailable: absent, not 0 */
	assert_int_equal(procmem_parse_meminfo("MemTotal: 100 kB\nMemFree: 50 kB\n", &m), 0);
	assert_int_equal(m.mem_available_kb, -1);
	/* garbage, cut lines, a huge value */
	assert_int_equal(procmem_parse_meminfo("", &m), -EINVAL);
	assert_int_equal(procmem_parse_meminfo("MemTotal: 12", &m), -EINVAL);
	assert_int_equal(procmem_parse_meminfo("MemTotal: x kB\n", &m), -EINVAL);
	assert_int_equal(procmem_parse_meminfo("MemTotal: 99999999999999999999 kB\n", &m), -EINVAL);
	assert_int_equal(procmem_parse_meminfo("MemTotal: 10 kB\nMemAvailable: 5 MB\n", &m), 0);
	assert_int_equal(m.mem_available_kb, -1);
}

static void
test_psi(void **state)
{
	(void)state;
	struct procmem_psi p;
	assert_int_equal(procmem_parse_psi("some avg10=1.52 avg60=0.80 avg300=0.20 total=12345678\n"
					   "full avg10=0.50 avg60=0.10 avg300=0.00 total=2345678\n",
					   &p),
			 0);
	assert_true(p.some && p.full);
	assert_true(fabs(p.some_avg10 - 1.52) < 1e-9);
	assert_int_equal(p.some_total_us, 12345678);
	assert_true(fabs(p.full_avg10 - 0.5) < 1e-9);
	assert_int_equal(p.full_total_us, 2345678);
	/* cpu before 5.13: no full line */
	assert_int_equal(procmem_parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", &p), 0);
	assert_false(p.full);
	assert_int_equal(procmem_parse_psi("", &p), -EINVAL);
	assert_int_equal(procmem_parse_psi("some avg10=0.00 avg60=0.00", &p), -EINVAL);
	assert_int_equal(procmem_parse_psi("some avg10=500.00 avg60=0.00 avg300=0.00 total=0\n", &p), -EINVAL);
	assert_int_equal(procmem_parse_psi("some avg10=1.0 avg60=1.0 avg300=1.0 total=-1\n", &p), -EINVAL);
}

static void
test_vmstat_loadavg_uptime_zram(void **state)
{
	(void)state;
	uint64_t kills = 99;
	assert_int_equal(procmem_parse_vmstat_oom("nr_free_pages 1000\noom_kill 3\nnr_zone_x 5\n", &kills), 0);
	assert_int_equal(kills, 3);
	/* before 4.13: no oom_kill line, absent */
	assert_int_equal(procmem_parse_vmstat_oom("nr_free_pages 1000\noom_killer 4\n", &kills), -ENOENT);
	assert_int_equal(procmem_parse_vmstat_oom("oom_kill 3x\n", &kills), -ENOENT);
	assert_int_equal(procmem_parse_vmstat_oom("oom_kill 18446744073709551616\n", &kills), -ENOENT);

	struct procmem_loadavg la;
	assert_int_equal(procmem_parse_loadavg("0.52 0.58 1.59 2/1037 12345\n", &la), 0);
	assert_true(fabs(la.avg15 - 1.59) < 1e-9);
	assert_int_equal(la.running, 2);
	assert_int_equal(la.tasks, 1037);
	assert_int_equal(procmem_parse_loadavg("0.52 0.58 1.59 2-1037 1\n", &la), -EINVAL);
	assert_int_equal(procmem_parse_loadavg("0.52 0.58", &la), -EINVAL);

	double up;
	assert_int_equal(procmem_parse_uptime("350735.47 234388.90\n", &up), 0);
	assert_true(fabs(up - 350735.47) < 1e-6);
	assert_int_equal(procmem_parse_uptime("-1 0\n", &up), -EINVAL);
	assert_int_equal(procmem_parse_uptime("nan\n", &up), -EINVAL);

	struct procmem_zram z;
	assert_int_equal(procmem_parse_zram("  4096000  1024000  1200000        0  1300000      12      0      0      0\n", &z), 0);
	assert_int_equal(z.orig_data_size, 4096000);
	assert_int_equal(z.compr_data_size, 1024000);
	assert_int_equal(z.mem_used_total, 1200000);
	assert_int_equal(procmem_parse_zram("4096000 1024000\n", &z), -EINVAL);
}

static void
test_mountinfo(void **state)
{
	(void)state;
	struct mount_entry m;
	const char *root = "29 1 179:1 / / rw,relatime shared:1 - ext4 /dev/mmcblk0p1 rw\n";
	assert_int_equal(mounts_parse_line(root, strlen(root), &m), 0);
	assert_string_equal(m.mountpoint, "/");
	assert_string_equal(m.fstype, "ext4");
	assert_string_equal(m.source, "/dev/mmcblk0p1");
	assert_false(m.readonly);
	/* no optional field; a space in the mount point; read-only */
	const char *usb = "40 29 8:1 / /media/USB\\040Stick ro,nosuid - vfat /dev/sda1 ro,fmask=0022";
	assert_int_equal(mounts_parse_line(usb, strlen(usb), &m), 0);
	assert_string_equal(m.mountpoint, "/media/USB Stick");
	assert_true(m.readonly);
	/* several optional fields */
	const char *nfs = "50 29 0:45 / /mnt/data rw master:3 propagate_from:2 - nfs4 srv:/export rw,vers=4.2";
	assert_int_equal(mounts_parse_line(nfs, strlen(nfs), &m), 0);
	assert_string_equal(m.fstype, "nfs4");
	assert_true(mounts_fstype_network(m.fstype));
	/* cut lines and garbage */
	const char *bad[] = {"", "29 1 179:1 / / rw,relatime shared:1", "29 1 179:1 / / rw - ext4",
			     "29 1 179:1 / relative rw - ext4 /dev/x rw", "x\n", "29 1 179:1 / /a\\000b rw - ext4 d o"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(mounts_parse_line(bad[i], strlen(bad[i]), &m), -EINVAL);
	}
}

static struct mount_entry
mount_of(const char *mp, const char *type)
{
	struct mount_entry m = {.readonly = false};
	strcpy(m.mountpoint, mp);
	strcpy(m.fstype, type);
	strcpy(m.source, "dev");
	return m;
}

static void
test_selection(void **state)
{
	(void)state;
	struct mounts_filter none = {0};
	struct mount_entry m = mount_of("/", "ext4");
	assert_true(mounts_selected(&m, &none));
	m = mount_of("/sys/fs/cgroup", "cgroup2");
	assert_false(mounts_selected(&m, &none));
	m = mount_of("/dev/shm", "tmpfs");
	assert_false(mounts_selected(&m, &none));
	m = mount_of("/mnt/backup", "fuse.sshfs");
	assert_false(mounts_selected(&m, &none));
	m = mount_of("/var/lib/docker/overlay2/abc/merged", "ext4");
	assert_false(mounts_selected(&m, &none));
	m = mount_of("/data", "xfs");
	assert_true(mounts_selected(&m, &none));
	/* an include names exactly what is watched, a tmpfs too; an exclude wins */
	const char *inc[] = {"/tmp/tw*", "/data"};
	const char *exc[] = {"/tmp/tw-no*"};
	struct mounts_filter f = {inc, 2, exc, 1};
	m = mount_of("/tmp/tw-fs", "tmpfs");
	assert_true(mounts_selected(&m, &f));
	m = mount_of("/tmp/tw-no", "tmpfs");
	assert_false(mounts_selected(&m, &f));
	m = mount_of("/", "ext4");
	assert_false(mounts_selected(&m, &f));
}

static void
test_segment(void **state)
{
	(void)state;
	char seg[MOUNT_SEGMENT_MAX];
	mounts_segment("/", false, seg);
	assert_string_equal(seg, "root");
	mounts_segment("/var/lib/docker", false, seg);
	assert_string_equal(seg, "var_lib_docker");
	mounts_segment("/media/USB Stick-2", false, seg);
	assert_string_equal(seg, "media_usb_stick_2");
	mounts_segment("/a/very/long/mount/point/that/goes/on/and/on", false, seg);
	assert_int_equal(strlen(seg), MOUNT_SEGMENT_MAX - 1);
	char again[MOUNT_SEGMENT_MAX];
	mounts_segment("/a/very/long/mount/point/that/goes/on/and/on/2", false, again);
	assert_string_not_equal(seg, again);
	mounts_segment("/root", true, seg);
	assert_int_equal(strncmp(seg, "root_", 5), 0);
	/* every segment makes valid names that the dictionary knows */
	char name[METRIC_NAME_MAX];
	snprintf(name, sizeof(name), "filesystem.%s.inodes_used_pct", again);
	assert_true(metric_name_valid(name));
	assert_non_null(metric_dict_find(name));
}

/*
 * /proc/diskstats as kernel 5.10 prints it (20 fields: discards and
 * flushes). Built from Documentation/admin-guide/iostats.rst's format for
 * a Jetson's devices (mmcblk0 and its partitions, nvme0n1, loop, zram):
 * no real capture was found.
 */
static const char diskstats[] =
	"   7       0 loop0 12 0 34 1 0 0 0 0 0 4 1 0 0 0 0 0 0\n"
	" 179       0 mmcblk0 6403 1921 551410 3932 1640 1952 54296 6132 0 7900 10232 0 0 0 0 120 168\n"
	" 179       1 mmcblk0p1 6300 1921 550000 3900 1640 1952 54296 6132 0 7800 10100 0 0 0 0 0 0\n"
	" 179      32 mmcblk0boot0 10 0 80 1 0 0 0 0 0 2 1 0 0 0 0 0 0\n"
	" 259       0 nvme0n1 1000 0 2000 300 500 0 8000 200 1 400 500\n"
	" 252       0 zram0 300 0 2400 5 900 0 7200 10 0 20 15 0 0 0 0 0 0\n";

static void
test_diskstats(void **state)
{
	(void)state;
	const char *want[] = {"mmcblk0", "nvme0n1"};
	size_t got = 0;
	for (const char *line = diskstats; *line;) {
		const char *nl = strchr(line, '\n');
		struct disk_stat d;
		assert_int_equal(diskstats_parse_line(line, (size_t)(nl - line), &d), 0);
		if (diskstats_default_device(d.name)) {
			assert_true(got < 2);
			assert_string_equal(d.name, want[got]);
			if (got == 0) {
				assert_int_equal(d.reads, 6403);
				assert_int_equal(d.sectors_read, 551410);
				assert_int_equal(d.writes, 1640);
				assert_int_equal(d.sectors_written, 54296);
				assert_int_equal(d.io_ms, 7900);
			}
			got++;
		}
		line = nl + 1;
	}
	assert_int_equal(got, 2);
	assert_false(diskstats_default_device("sda1"));
	assert_true(diskstats_default_device("sda"));
	assert_false(diskstats_default_device("nvme0n1p3"));
	assert_false(diskstats_default_device("mmcblk0rpmb"));
	assert_true(diskstats_default_device("dm-0"));
	char seg[DISK_NAME_MAX];
	diskstats_segment("dm-0", seg);
	assert_string_equal(seg, "dm_0");
	struct disk_stat d;
	const char *cut = " 179 0 mmcblk0 6403 1921 551410";
	assert_int_equal(diskstats_parse_line(cut, strlen(cut), &d), -EINVAL);
	const char *huge = " 8 0 sda 99999999999999999999 0 0 0 0 0 0 0 0 0 0";
	assert_int_equal(diskstats_parse_line(huge, strlen(huge), &d), -EINVAL);
	assert_int_equal(diskstats_parse_line("", 0, &d), -EINVAL);
}

/* the mmc driver's attributes (JEDEC eMMC 5.0 EXT_CSD[268], [269], [267]); values built from the standard's bands */
static void
test_emmc(void **state)
{
	(void)state;
	int a, b, eol;
	assert_int_equal(emmc_parse_life_time("0x01 0x02\n", &a, &b), 0);
	assert_int_equal(a, 10);
	assert_int_equal(b, 20);
	assert_int_equal(emmc_parse_life_time("0x0B 0x00\n", &a, &b), 0);
	assert_int_equal(a, 110);
	assert_int_equal(b, -1);
	assert_int_equal(emmc_parse_life_time("0x0c 0x01\n", &a, &b), -EINVAL);
	assert_int_equal(emmc_parse_life_time("0x01\n", &a, &b), -EINVAL);
	assert_int_equal(emmc_parse_life_time("1 2\n", &a, &b), -EINVAL);
	assert_int_equal(emmc_parse_pre_eol("0x01\n", &eol), 0);
	assert_int_equal(eol, 1);
	assert_int_equal(emmc_parse_pre_eol("0x03\n", &eol), 0);
	assert_int_equal(eol, 3);
	assert_int_equal(emmc_parse_pre_eol("0x00\n", &eol), -EINVAL);
	assert_int_equal(emmc_parse_pre_eol("0x04\n", &eol), -EINVAL);
	assert_int_equal(emmc_parse_pre_eol("", &eol), -EINVAL);
}

/* the real mount point, type and device as labels, once the source said them */
static void
test_attrs_labels(void **state)
{
	(void)state;
	struct metric_series s;
	assert_true(metric_dict_series("filesystem.var_lib_docker.avail_mb", &s));
	assert_string_equal(s.family, "tegrawatch_filesystem_avail_bytes");
	assert_int_equal(s.label_count, 1);
	assert_string_equal(s.label_values[0], "var_lib_docker");
	static const char *const names[] = {"mountpoint", "fstype", "device"};
	const char *values[] = {"/var/lib/docker", "ext4", "/dev/nvme0n1p1"};
	assert_int_equal(metric_attrs_set("mountpoint", "var_lib_docker", 3, names, values), 0);
	assert_true(metric_dict_series("filesystem.var_lib_docker.avail_mb", &s));
	assert_int_equal(s.label_count, 3);
	assert_string_equal(s.label_names[0], "mountpoint");
	assert_string_equal(s.label_values[0], "/var/lib/docker");
	assert_string_equal(s.label_names[1], "fstype");
	assert_string_equal(s.label_values[1], "ext4");
	assert_string_equal(s.label_names[2], "device");
	assert_string_equal(s.label_values[2], "/dev/nvme0n1p1");
	assert_int_equal(metric_attrs_set("other", "x", 3, names, values), -EINVAL);
	metric_attrs_forget("mountpoint", "var_lib_docker");
	assert_true(metric_dict_series("filesystem.var_lib_docker.readonly", &s));
	assert_int_equal(s.label_count, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_meminfo),	       cmocka_unit_test(test_psi),
		cmocka_unit_test(test_vmstat_loadavg_uptime_zram), cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_selection),     cmocka_unit_test(test_segment),
		cmocka_unit_test(test_diskstats),     cmocka_unit_test(test_emmc),
		cmocka_unit_test(test_attrs_labels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
