/*
 * host/: the pure parsers (procmem.c, mounts.c, diskstats.c, netdev.c) and the
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
#include "host/netdev.h"
#include "host/procmem.h"

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

/*
 * /proc/net/dev as statistics.rst shows it and net-procfs.c prints it
 * (this machine's kernel lays it out the same way); /proc/net/wireless as
 * wext-proc.c prints it. No capture of a Jetson's files was at hand: the
 * names (eth0, wlan0, l4tbr0, usb0) are those L4T boards have.
 */
static const char netdev_text[] =
	"Inter-|   Receive                                                |  Transmit\n"
	" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
	"carrier compressed\n"
	"    lo:  104316     932    0    0    0     0          0         0   104316     932    0    0    0     0"
	"       0          0\n"
	"  eth0: 1215645    2751    3    7    0     0          0        12  1782404    4324    1    2    0     0"
	"       0          0\n"
	"eth0.100:12345678 9 0 0 0 0 0 0 1 2 0 0 0 0 0 0\n";

static void
test_netdev(void **state)
{
	(void)state;
	struct netdev_stat d;
	const char *line = strchr(netdev_text, '\n') + 1;
	/* the two header lines are no interfaces */
	assert_int_equal(netdev_parse_line(netdev_text, (size_t)(line - netdev_text - 1), &d), -EINVAL);
	const char *nl = strchr(line, '\n');
	assert_int_equal(netdev_parse_line(line, (size_t)(nl - line), &d), -EINVAL);
	line = nl + 1;
	nl = strchr(line, '\n');
	assert_int_equal(netdev_parse_line(line, (size_t)(nl - line), &d), 0);
	assert_string_equal(d.name, "lo");
	assert_int_equal(d.rx_bytes, 104316);
	line = nl + 1;
	nl = strchr(line, '\n');
	assert_int_equal(netdev_parse_line(line, (size_t)(nl - line), &d), 0);
	assert_string_equal(d.name, "eth0");
	assert_int_equal(d.rx_bytes, 1215645);
	assert_int_equal(d.rx_packets, 2751);
	assert_int_equal(d.rx_errors, 3);
	assert_int_equal(d.rx_drop, 7);
	assert_int_equal(d.tx_bytes, 1782404);
	assert_int_equal(d.tx_packets, 4324);
	assert_int_equal(d.tx_errors, 1);
	assert_int_equal(d.tx_drop, 2);
	/* an old kernel's layout: no blank after ':' */
	line = nl + 1;
	nl = strchr(line, '\n');
	assert_int_equal(netdev_parse_line(line, (size_t)(nl - line), &d), 0);
	assert_string_equal(d.name, "eth0.100");
	assert_int_equal(d.rx_bytes, 12345678);
	assert_int_equal(d.tx_bytes, 1);
	/* huge counters: the kernel's u64 whole; one past it refused */
	const char *huge = "wlan0: 18446744073709551615 1 0 0 0 0 0 0 9007199254740993 1 0 0 0 0 0 0";
	assert_int_equal(netdev_parse_line(huge, strlen(huge), &d), 0);
	assert_true(d.rx_bytes == UINT64_MAX);
	assert_true(d.tx_bytes == 9007199254740993ULL);
	const char *over = "wlan0: 18446744073709551616 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0";
	assert_int_equal(netdev_parse_line(over, strlen(over), &d), -EINVAL);
	/* garbage and cut lines */
	static const char *const bad[] = {
		"",
		":",
		"eth0:",
		"eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15",       /* cut: 15 counters */
		"eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", /* one too many */
		"eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 -16",
		"eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 1x",
		"eth 0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16",
		"a/b: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16",
		"..: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16",
		"a_name_too_long0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(netdev_parse_line(bad[i], strlen(bad[i]), &d), -EINVAL);
	}
	/* LEN is the line's end: a line cut short by it */
	const char *full = "eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16";
	assert_int_equal(netdev_parse_line(full, strlen(full) - 3, &d), -EINVAL);
	assert_int_equal(netdev_parse_line(full, strlen(full), &d), 0);
	assert_string_equal(d.name, "eth0");
}

static void
test_wireless(void **state)
{
	(void)state;
	char name[NETDEV_NAME_MAX];
	int dbm = 0;
	static const char *const header[] = {
		"Inter-| sta-|   Quality        |   Discarded packets               | Missed | WE",
		" face | tus | link level noise |  nwid  crypt   frag  retry   misc | beacon | 22",
	};
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(netdev_parse_wireless(header[i], strlen(header[i]), name, &dbm), -EINVAL);
	}
	const char *l = " wlan0: 0000   70.  -39.  -256        0      0      0      0      0        0";
	assert_int_equal(netdev_parse_wireless(l, strlen(l), name, &dbm), 0);
	assert_string_equal(name, "wlan0");
	assert_int_equal(dbm, -39);
	l = "wlp1s0: 0000   45   -65   -256        0      0      0      0      0        0"; /* not updated: blanks */
	assert_int_equal(netdev_parse_wireless(l, strlen(l), name, &dbm), 0);
	assert_int_equal(dbm, -65);
	/* a relative level, or none (0 - 0x100): no dBm to report */
	l = " wlan1: 0000   70.   180.    0        0      0      0      0      0        0";
	assert_int_equal(netdev_parse_wireless(l, strlen(l), name, &dbm), -ENODATA);
	l = " wlan1: 0000    0  -256   -256        0      0      0      0      0        0";
	assert_int_equal(netdev_parse_wireless(l, strlen(l), name, &dbm), -ENODATA);
	static const char *const bad[] = {"", "wlan0:", "wlan0: 0000", "wlan0: 0000 70.", "wlan0: zz 70. -39.",
					  "wlan0: 0000 70. -39x", "wlan0: 0000 70. --39.",
					  "wlan0: 0000 70. -99999999999999999999."};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(netdev_parse_wireless(bad[i], strlen(bad[i]), name, &dbm), -EINVAL);
	}
}

static void
test_netdev_link_select_segment(void **state)
{
	(void)state;
	assert_int_equal(netdev_link_up("up\n", 1), 1);
	assert_int_equal(netdev_link_up("up\n", -1), 1);
	assert_int_equal(netdev_link_up("down\n", -1), 0);
	assert_int_equal(netdev_link_up("lowerlayerdown\n", 0), 0);
	assert_int_equal(netdev_link_up("dormant\n", 1), 0);
	assert_int_equal(netdev_link_up("unknown\n", 1), 1); /* tun, ppp */
	assert_int_equal(netdev_link_up("unknown\n", 0), 0);
	assert_int_equal(netdev_link_up("unknown\n", -1), 0);
	assert_int_equal(netdev_link_up("upx\n", 1), -1);
	assert_int_equal(netdev_link_up("", 1), -1);
	assert_int_equal(netdev_link_up("up\nup\n", 1), -1);

	struct netdev_filter none = {0};
	assert_true(netdev_selected("eth0", &none));
	assert_true(netdev_selected("wlan0", &none));
	assert_true(netdev_selected("l4tbr0", &none));
	assert_true(netdev_selected("usb0", &none));
	assert_true(netdev_selected("eth0.100", &none));
	assert_false(netdev_selected("lo", &none));
	assert_false(netdev_selected("veth1a2b3c", &none));
	assert_false(netdev_selected("docker0", &none));
	assert_false(netdev_selected("br-0123abcd", &none));
	/* ifb mirrors another interface's packets; the tunnel modules' fallback devices are always down */
	assert_false(netdev_selected("ifb0", &none));
	assert_false(netdev_selected("ifb4eth0", &none));
	static const char *const fallback[] = {"sit0",	  "ip6tnl0",  "gre0",	 "gretap0", "erspan0",
					       "ip_vti0", "ip6_vti0", "ip6gre0", "tunl0"};
	for (size_t i = 0; i < sizeof(fallback) / sizeof(fallback[0]); i++) {
		assert_false(netdev_selected(fallback[i], &none));
	}
	/* a tunnel the owner made is watched (a VPN, a GRE link to another board) */
	assert_true(netdev_selected("gre1", &none));
	assert_true(netdev_selected("sit1", &none));
	assert_true(netdev_selected("wg0", &none));
	assert_true(netdev_selected("tun0", &none));
	static const char *const inc[] = {"lo", "veth*"};
	static const char *const exc[] = {"veth9"};
	struct netdev_filter f = {inc, 2, exc, 1};
	assert_true(netdev_selected("lo", &f)); /* an include names exactly what is watched */
	assert_true(netdev_selected("veth0", &f));
	assert_false(netdev_selected("veth9", &f)); /* an exclude wins */
	assert_false(netdev_selected("eth0", &f));
	struct netdev_filter only_exc = {NULL, 0, exc, 1};
	assert_false(netdev_selected("veth9", &only_exc));
	assert_true(netdev_selected("eth1", &only_exc));

	char seg[NETDEV_SEGMENT_MAX];
	netdev_segment("wlan0", false, seg);
	assert_string_equal(seg, "wlan0");
	netdev_segment("enp1s0f0", false, seg);
	assert_string_equal(seg, "enp1s0f0");
	netdev_segment("eth0.100", false, seg);
	assert_string_equal(seg, "eth0_100");
	netdev_segment("br-1A2b", false, seg);
	assert_string_equal(seg, "br_1a2b");
	netdev_segment("br-a", true, seg);
	assert_int_equal(strlen(seg), 4 + 9);
	assert_memory_equal(seg, "br_a_", 5);
	netdev_segment("abcdefghijklmno", true, seg); /* the longest name, hashed */
	assert_int_equal(strlen(seg), 15 + 9);
	char metric[96];
	snprintf(metric, sizeof(metric), "network.%s.carrier_changes_total", seg);
	assert_true(strlen(metric) <= 63);

	/* the real name as the device label */
	struct metric_series s;
	assert_true(metric_dict_series("network.eth0_100.receive_bytes_total", &s));
	assert_string_equal(s.family, "tegrawatch_network_receive_bytes_total");
	assert_int_equal(s.label_count, 1);
	assert_string_equal(s.label_values[0], "eth0_100");
	static const char *const names[] = {"device"};
	const char *values[] = {"eth0.100"};
	assert_int_equal(metric_attrs_set("device", "eth0_100", 1, names, values), 0);
	assert_true(metric_dict_series("network.eth0_100.up", &s));
	assert_string_equal(s.family, "tegrawatch_network_up");
	assert_string_equal(s.label_names[0], "device");
	assert_string_equal(s.label_values[0], "eth0.100");
	metric_attrs_forget("device", "eth0_100");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_psi),
		cmocka_unit_test(test_vmstat_loadavg_uptime_zram), cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_selection),     cmocka_unit_test(test_segment),
		cmocka_unit_test(test_diskstats),     cmocka_unit_test(test_emmc),
		cmocka_unit_test(test_attrs_labels),  cmocka_unit_test(test_netdev),
		cmocka_unit_test(test_wireless),      cmocka_unit_test(test_netdev_link_select_segment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
