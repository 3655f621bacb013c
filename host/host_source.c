/* The host source (see host_source.h): the I/O around the pure parsers. */
#include "host_source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/metric_attrs.h"
#include "core/xalloc.h"
#include "diskstats.h"
#include "fill_trend.h"
#include "host_text.h"
#include "mounts.h"
#include "netdev.h"
#include "oom_log.h"
#include "procmem.h"

#define HOST_PATH_MAX 512
#define TEXT_MAX 16384 /* /proc/vmstat is the longest, about 5 KiB on 6.x */
#define FS_MAX 24      /* file systems watched: 9 metrics each */
#define DISK_MAX 16    /* disks: 5 metrics each, 3 more for an eMMC */
#define ZRAM_MAX 8
#define NET_MAX 16 /* interfaces: 12 metrics each */
/* kernel log records read a sample at most: an OOM kill prints one line a task of its cgroup before the kill */
#define KMSG_READS_MAX 4096

enum kept_file {
	F_MEMINFO,
	F_LOADAVG,
	F_UPTIME,
	F_VMSTAT,
	F_PSI_CPU,
	F_PSI_MEMORY,
	F_PSI_IO,
	F_DISKSTATS,
	F_NETDEV,
	F_WIRELESS,
	F_COUNT
};

static const char *const kept_paths[F_COUNT] = {"meminfo",      "loadavg",         "uptime",      "vmstat",
						"pressure/cpu", "pressure/memory", "pressure/io", "diskstats",
						"net/dev",      "net/wireless"};
static const char *const psi_names[] = {"cpu", "memory", "io"};

struct fs_state {
	char segment[MOUNT_SEGMENT_MAX];
	double size_mb, avail_mb, used_mb, used_pct, inodes, inodes_free, inodes_used_pct;
	double size_bytes, avail_bytes, used_bytes, full_eta_s;
	bool has_inodes, has_pct, readonly, has_eta;
};

/* the used bytes of a watched mount over host.filesystems.trend, kept from scan to scan */
struct fs_trend {
	char segment[MOUNT_SEGMENT_MAX]; /* "": a free slot */
	double size_bytes;               /* another size (a resize, another device mounted): a new trend */
	struct fill_trend fill;
};

struct emmc_state {
	char segment[DISK_NAME_MAX];
	int life_a, life_b, pre_eol; /* -1: absent */
};

enum link_file {
	L_CARRIER,
	L_OPERSTATE,
	L_CARRIER_CHANGES,
	L_COUNT
};
static const char *const link_files[L_COUNT] = {"carrier", "operstate", "carrier_changes"};

/* a watched interface, its metric segment and its link files (kept open; -1: not yet), kept from sample to sample */
struct net_state {
	char name[NETDEV_NAME_MAX];
	char segment[NETDEV_SEGMENT_MAX];
	int fd[L_COUNT];
	/* its link was up at a sample since the agent started (or the interface came back): a down link is lost */
	bool was_up;
};

struct host_source {
	struct source base;
	char proc[HOST_PATH_MAX / 2], sys[HOST_PATH_MAX / 2];
	int fd[F_COUNT]; /* kept open, read with pread(); -1: absent (never again) */
	bool gone[F_COUNT];
	char text[TEXT_MAX];
	/* zram devices found at start, their mm_stat kept open (-1: not yet) */
	int zram[ZRAM_MAX];
	int zram_fd[ZRAM_MAX];
	size_t zram_count;
	/* file systems */
	bool fs_on, disks_on;
	int64_t fs_interval_ms, next_scan_ms, fs_trend_ms;
	struct mounts_filter filter;
	char **include, **exclude; /* owned copies */
	struct fs_state fs[FS_MAX];
	size_t fs_count;
	struct fs_trend trend[FS_MAX];
	bool fs_full_said;
	struct emmc_state emmc[DISK_MAX];
	size_t emmc_count;
	/* network interfaces */
	bool net_on;
	struct netdev_filter net_filter;
	char **net_include, **net_exclude; /* owned copies */
	struct net_state net[NET_MAX];
	size_t net_count;
	bool net_full_said;
	/* the kernel log from where it stood at the start, for the OOM killer's victims; -1: not readable */
	int kmsg_fd;
};

static char **
copy_list(char *const *list, size_t n)
{
	if (!n) {
		return NULL;
	}
	char **c = xcalloc(n + 1, sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		c[i] = xstrdup(list[i]);
	}
	return c;
}

static void
free_list(char **list)
{
	for (size_t i = 0; list && list[i]; i++) {
		free(list[i]);
	}
	free(list);
}

/* reads a kept file whole into h->text; false when it is not there */
static bool
read_kept(struct host_source *h, enum kept_file f)
{
	if (h->gone[f]) {
		return false;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		if (h->fd[f] < 0) {
			char path[HOST_PATH_MAX];
			snprintf(path, sizeof(path), "%s/%s", h->proc, kept_paths[f]);
			h->fd[f] = open(path, O_RDONLY | O_CLOEXEC);
			if (h->fd[f] < 0) {
				h->gone[f] = errno == ENOENT || errno == ENOTDIR || errno == EOPNOTSUPP;
				return false;
			}
		}
		ssize_t n = pread(h->fd[f], h->text, sizeof(h->text) - 1, 0);
		if (n >= 0) {
			h->text[n] = '\0';
			return true;
		}
		close(h->fd[f]); /* reopened once: a file replaced under us */
		h->fd[f] = -1;
	}
	return false;
}

/*
 * Reads a small sysfs attribute into BUF through *FD, kept open and read
 * again with pread(): one system call a sample instead of three. The path
 * (FMT) is made only to open it: the first time, and once more when a read
 * fails (a device that went away and came back under the same name).
 * EINVAL is an answer, not a broken file: carrier while a link is down.
 */
static bool read_attr(int *fd, char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool
read_attr(int *fd, char *buf, size_t size, const char *fmt, ...)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		if (*fd < 0) {
			char path[HOST_PATH_MAX];
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(path, sizeof(path), fmt, ap);
			va_end(ap);
			*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			if (*fd < 0) {
				return false;
			}
		}
		ssize_t n = pread(*fd, buf, size - 1, 0);
		if (n >= 0) {
			buf[n] = '\0';
			return true;
		}
		if (errno == EINVAL) {
			return false;
		}
		close(*fd);
		*fd = -1;
	}
	return false;
}

static void
close_fds(int *fd, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (fd[i] >= 0) {
			close(fd[i]);
			fd[i] = -1;
		}
	}
}

/* reads a small file whole into BUF; false when absent or unreadable */
static bool
read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		return false;
	}
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0) {
		return false;
	}
	buf[n] = '\0';
	return true;
}

static void
read_memory(struct host_source *h, struct metric_set *m)
{
	struct procmem_meminfo mi;
	if (read_kept(h, F_MEMINFO) && procmem_parse_meminfo(h->text, &mi) == 0) {
		if (mi.mem_available_kb >= 0 && mi.mem_available_kb <= mi.mem_total_kb) {
			metric_set_put(m, "ram.available_mb", (double)mi.mem_available_kb / 1024.0);
			metric_set_put(m, "ram.used_pct",
				       100.0 * (double)(mi.mem_total_kb - mi.mem_available_kb) /
					       (double)mi.mem_total_kb);
		}
		if (mi.swap_total_kb > 0 && mi.swap_free_kb >= 0 && mi.swap_free_kb <= mi.swap_total_kb) {
			metric_set_put(m, "swap.used_pct",
				       100.0 * (double)(mi.swap_total_kb - mi.swap_free_kb) / (double)mi.swap_total_kb);
		}
	}
	for (size_t i = 0; i < h->zram_count; i++) {
		char buf[256], name[METRIC_NAME_MAX];
		struct procmem_zram z;
		if (read_attr(&h->zram_fd[i], buf, sizeof(buf), "%s/block/zram%d/mm_stat", h->sys, h->zram[i]) &&
		    procmem_parse_zram(buf, &z) == 0) {
			metric_name_num(name, "zram.", h->zram[i], ".data_mb");
			metric_set_put(m, name, (double)z.orig_data_size / 1048576.0);
			metric_name_num(name, "zram.", h->zram[i], ".compressed_mb");
			metric_set_put(m, name, (double)z.compr_data_size / 1048576.0);
			metric_name_num(name, "zram.", h->zram[i], ".used_mb");
			metric_set_put(m, name, (double)z.mem_used_total / 1048576.0);
		}
	}
}

static void
read_system(struct host_source *h, struct metric_set *m)
{
	for (size_t r = 0; r < 3; r++) {
		struct procmem_psi psi;
		if (!read_kept(h, (enum kept_file)(F_PSI_CPU + r)) || procmem_parse_psi(h->text, &psi) < 0) {
			continue;
		}
		metric_set_put3(m, psi.some_avg10, "pressure.", psi_names[r], ".some_avg10_pct");
		metric_set_put3(m, (double)psi.some_total_us / 1e6, "pressure.", psi_names[r], ".some_seconds_total");
		if (psi.full) {
			metric_set_put3(m, psi.full_avg10, "pressure.", psi_names[r], ".full_avg10_pct");
			metric_set_put3(m, (double)psi.full_total_us / 1e6, "pressure.", psi_names[r],
					".full_seconds_total");
		}
	}
	uint64_t kills;
	if (read_kept(h, F_VMSTAT) && procmem_parse_vmstat_oom(h->text, &kills) == 0) {
		metric_set_put(m, "oom.kills_total", (double)kills);
	}
	struct procmem_loadavg la;
	if (read_kept(h, F_LOADAVG) && procmem_parse_loadavg(h->text, &la) == 0) {
		metric_set_put(m, "load.avg_1m", la.avg1);
		metric_set_put(m, "load.avg_5m", la.avg5);
		metric_set_put(m, "load.avg_15m", la.avg15);
		metric_set_put(m, "tasks.running", (double)la.running);
		metric_set_put(m, "tasks.count", (double)la.tasks);
	}
	double up;
	if (read_kept(h, F_UPTIME) && procmem_parse_uptime(h->text, &up) == 0) {
		metric_set_put(m, "system.uptime_s", up);
	}
}

static void
read_disks(struct host_source *h, struct metric_set *m)
{
	if (!read_kept(h, F_DISKSTATS)) {
		return;
	}
	size_t disks = 0;
	for (const char *line = h->text; *line && disks < DISK_MAX;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		struct disk_stat d;
		if (diskstats_parse_line(line, len, &d) == 0 && diskstats_default_device(d.name)) {
			char seg[DISK_NAME_MAX];
			diskstats_segment(d.name, seg);
			metric_set_put3(m, (double)d.sectors_read * 512.0, "disk.", seg, ".read_bytes_total");
			metric_set_put3(m, (double)d.sectors_written * 512.0, "disk.", seg, ".written_bytes_total");
			metric_set_put3(m, (double)d.reads, "disk.", seg, ".reads_total");
			metric_set_put3(m, (double)d.writes, "disk.", seg, ".writes_total");
			metric_set_put3(m, (double)d.io_ms, "disk.", seg, ".busy_ms_total");
			disks++;
		}
		line = nl ? nl + 1 : line + len;
	}
}

/* eMMC health of every mmcblkN disk (JEDEC eMMC 5.0 EXT_CSD through the mmc driver's sysfs attributes) */
static void
scan_emmc(struct host_source *h)
{
	h->emmc_count = 0;
	char path[HOST_PATH_MAX];
	snprintf(path, sizeof(path), "%s/block", h->sys);
	DIR *dir = opendir(path);
	if (!dir) {
		return;
	}
	for (struct dirent *e; (e = readdir(dir)) && h->emmc_count < DISK_MAX;) {
		if (strncmp(e->d_name, "mmcblk", 6) != 0 || !diskstats_default_device(e->d_name) ||
		    strlen(e->d_name) >= DISK_NAME_MAX) {
			continue;
		}
		struct emmc_state *s = &h->emmc[h->emmc_count];
		char buf[64];
		s->life_a = s->life_b = s->pre_eol = -1;
		int n = snprintf(path, sizeof(path), "%s/block/%s/device/life_time", h->sys, e->d_name);
		if (n > 0 && (size_t)n < sizeof(path) && read_small(path, buf, sizeof(buf))) {
			emmc_parse_life_time(buf, &s->life_a, &s->life_b);
		}
		n = snprintf(path, sizeof(path), "%s/block/%s/device/pre_eol_info", h->sys, e->d_name);
		if (n > 0 && (size_t)n < sizeof(path) && read_small(path, buf, sizeof(buf))) {
			emmc_parse_pre_eol(buf, &s->pre_eol);
		}
		if (s->life_a >= 0 || s->life_b >= 0 || s->pre_eol >= 0) {
			diskstats_segment(e->d_name, s->segment);
			h->emmc_count++;
		}
	}
	closedir(dir);
}

static bool
segment_taken(const struct host_source *h, size_t n, const char *seg)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(h->fs[i].segment, seg) == 0) {
			return true;
		}
	}
	return false;
}

/* statvfs() of one mount into S; false when it cannot be read */
static bool
stat_mount(const struct mount_entry *me, struct fs_state *s)
{
	struct statvfs v;
	if (statvfs(me->mountpoint, &v) != 0 || v.f_blocks == 0) {
		return false; /* gone, no permission, or a file system without blocks (none to watch) */
	}
	double block = (double)(v.f_frsize ? v.f_frsize : v.f_bsize);
	double used = (double)(v.f_blocks - (v.f_bfree < v.f_blocks ? v.f_bfree : v.f_blocks));
	s->size_bytes = (double)v.f_blocks * block;
	s->avail_bytes = (double)v.f_bavail * block;
	s->used_bytes = used * block;
	s->size_mb = s->size_bytes / 1048576.0;
	s->avail_mb = s->avail_bytes / 1048576.0;
	s->used_mb = s->used_bytes / 1048576.0;
	s->has_pct = used + (double)v.f_bavail > 0;
	s->used_pct = s->has_pct ? 100.0 * used / (used + (double)v.f_bavail) : 0;
	s->has_inodes = v.f_files > 0; /* btrfs and some others say 0: no inode limit */
	s->inodes = (double)v.f_files;
	s->inodes_free = (double)v.f_ffree;
	s->inodes_used_pct = s->has_inodes
				     ? 100.0 * (double)(v.f_files - (v.f_ffree < v.f_files ? v.f_ffree : v.f_files)) /
					       (double)v.f_files
				     : 0;
	s->readonly = (v.f_flag & ST_RDONLY) != 0 || me->readonly;
	return true;
}

/* S's scan at NOW_MS into its trend, and its time to full from it */
static void
track_fill(struct host_source *h, struct fs_state *s, int64_t now_ms)
{
	struct fs_trend *tr = NULL, *free_slot = NULL;
	for (size_t i = 0; i < FS_MAX && !tr; i++) {
		if (strcmp(h->trend[i].segment, s->segment) == 0) {
			tr = &h->trend[i];
		} else if (!free_slot && !h->trend[i].segment[0]) {
			free_slot = &h->trend[i];
		}
	}
	if (!tr && !free_slot) {
		s->has_eta = false; /* the slots of mounts gone in this very scan come back at its end */
		return;
	}
	if (!tr) {
		tr = free_slot;
		memcpy(tr->segment, s->segment, sizeof(tr->segment));
		tr->size_bytes = -1;
	}
	if (tr->size_bytes != s->size_bytes) {
		fill_trend_init(&tr->fill, h->fs_trend_ms);
		tr->size_bytes = s->size_bytes;
	}
	fill_trend_add(&tr->fill, now_ms, s->used_bytes);
	s->has_eta = fill_trend_eta_s(&tr->fill, s->avail_bytes, &s->full_eta_s) == 0;
}

/* gives back the trends of mounts no longer watched */
static void
drop_trends(struct host_source *h)
{
	for (size_t i = 0; i < FS_MAX; i++) {
		if (h->trend[i].segment[0] && !segment_taken(h, h->fs_count, h->trend[i].segment)) {
			h->trend[i].segment[0] = '\0';
		}
	}
}

/* /proc/self/mountinfo: the last line of a mount point is the one on top */
static void
scan_filesystems(struct host_source *h, int64_t now_ms)
{
	char path[HOST_PATH_MAX];
	snprintf(path, sizeof(path), "%s/self/mountinfo", h->proc);
	FILE *f = fopen(path, "re");
	if (!f) {
		return;
	}
	struct mount_entry *mounts = xcalloc(FS_MAX * 4, sizeof(*mounts));
	size_t n = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		struct mount_entry me;
		if (mounts_parse_line(line, (size_t)len, &me) < 0 || !mounts_selected(&me, &h->filter)) {
			continue;
		}
		size_t k = 0;
		while (k < n && strcmp(mounts[k].mountpoint, me.mountpoint) != 0) {
			k++;
		}
		if (k == n && n == FS_MAX * 4) {
			continue;
		}
		mounts[k] = me;
		n += k == n;
	}
	free(line);
	fclose(f);
	char old[FS_MAX][MOUNT_SEGMENT_MAX];
	size_t old_count = h->fs_count;
	for (size_t i = 0; i < old_count; i++) {
		memcpy(old[i], h->fs[i].segment, MOUNT_SEGMENT_MAX);
	}
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		if (count == FS_MAX) {
			if (!h->fs_full_said) {
				log_warn("host: more than %d file systems to watch: %s and later ones left out "
					 "(host.filesystems.include or exclude chooses)",
					 FS_MAX, mounts[i].mountpoint);
				h->fs_full_said = true;
			}
			break;
		}
		struct fs_state *s = &h->fs[count];
		mounts_segment(mounts[i].mountpoint, false, s->segment);
		if (segment_taken(h, count, s->segment)) {
			mounts_segment(mounts[i].mountpoint, true, s->segment);
		}
		if (!stat_mount(&mounts[i], s)) {
			continue;
		}
		track_fill(h, s, now_ms);
		static const char *const names[] = {"mountpoint", "fstype", "device"};
		const char *values[] = {mounts[i].mountpoint, mounts[i].fstype, mounts[i].source};
		metric_attrs_set("mountpoint", s->segment, 3, names, values);
		count++;
	}
	h->fs_count = count;
	drop_trends(h);
	for (size_t i = 0; i < old_count; i++) {
		if (!segment_taken(h, count, old[i])) {
			metric_attrs_forget("mountpoint", old[i]); /* unmounted */
		}
	}
	free(mounts);
}

static void
put_filesystems(const struct host_source *h, struct metric_set *m)
{
	for (size_t i = 0; i < h->fs_count; i++) {
		const struct fs_state *s = &h->fs[i];
		metric_set_put3(m, s->size_mb, "filesystem.", s->segment, ".size_mb");
		metric_set_put3(m, s->avail_mb, "filesystem.", s->segment, ".avail_mb");
		metric_set_put3(m, s->used_mb, "filesystem.", s->segment, ".used_mb");
		if (s->has_pct) {
			metric_set_put3(m, s->used_pct, "filesystem.", s->segment, ".used_pct");
		}
		if (s->has_inodes) {
			metric_set_put3(m, s->inodes, "filesystem.", s->segment, ".inodes");
			metric_set_put3(m, s->inodes_free, "filesystem.", s->segment, ".inodes_free");
			metric_set_put3(m, s->inodes_used_pct, "filesystem.", s->segment, ".inodes_used_pct");
		}
		metric_set_put3(m, s->readonly ? 1 : 0, "filesystem.", s->segment, ".readonly");
		if (s->has_eta) {
			metric_set_put3(m, s->full_eta_s, "filesystem.", s->segment, ".full_eta_s");
		}
	}
	for (size_t i = 0; i < h->emmc_count; i++) {
		const struct emmc_state *e = &h->emmc[i];
		if (e->life_a >= 0) {
			metric_set_put3(m, e->life_a, "emmc.", e->segment, ".life_time_a_pct");
		}
		if (e->life_b >= 0) {
			metric_set_put3(m, e->life_b, "emmc.", e->segment, ".life_time_b_pct");
		}
		if (e->pre_eol >= 0) {
			metric_set_put3(m, e->pre_eol, "emmc.", e->segment, ".pre_eol");
		}
	}
}

/* the entry of interface NAME in LIST, or NULL */
static const struct net_state *
net_find(const struct net_state *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i].name, name) == 0) {
			return &list[i];
		}
	}
	return NULL;
}

/* true when SEG is the segment of an interface other than NAME in LIST */
static bool
net_segment_taken(const struct net_state *list, size_t n, const char *name, const char *seg)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i].segment, seg) == 0 && strcmp(list[i].name, name) != 0) {
			return true;
		}
	}
	return false;
}

/* operstate, carrier and carrier_changes of one interface (sysfs-class-net) */
static void
read_link(const struct host_source *h, struct net_state *s, struct metric_set *m)
{
	char state[64], buf[64];
	int carrier = -1; /* the kernel answers EINVAL while the interface is down */
	const char *dir = "%s/class/net/%s/%s";
	if (read_attr(&s->fd[L_CARRIER], buf, sizeof(buf), dir, h->sys, s->name, link_files[L_CARRIER])) {
		carrier = buf[0] == '1' ? 1 : buf[0] == '0' ? 0 : -1;
	}
	int up = read_attr(&s->fd[L_OPERSTATE], state, sizeof(state), dir, h->sys, s->name, link_files[L_OPERSTATE])
			 ? netdev_link_up(state, carrier)
			 : -1;
	if (up >= 0) {
		/* links never up since the start (a USB gadget without a host, an unused CAN bus) are not lost */
		s->was_up = s->was_up || up == 1;
		metric_set_put3(m, up, "network.", s->segment, ".up");
		metric_set_put3(m, up == 0 && s->was_up, "network.", s->segment, ".link_lost");
	}
	const char *p = buf;
	uint64_t changes;
	if (read_attr(&s->fd[L_CARRIER_CHANGES], buf, sizeof(buf), dir, h->sys, s->name,
		      link_files[L_CARRIER_CHANGES]) &&
	    host_read_counter(&p, &changes) && host_at_end(p)) {
		metric_set_put3(m, (double)changes, "network.", s->segment, ".carrier_changes_total");
	}
}

static void
put_netdev(const struct net_state *s, const struct netdev_stat *d, struct metric_set *m)
{
	metric_set_put3(m, (double)d->rx_bytes, "network.", s->segment, ".receive_bytes_total");
	metric_set_put3(m, (double)d->tx_bytes, "network.", s->segment, ".transmit_bytes_total");
	metric_set_put3(m, (double)d->rx_packets, "network.", s->segment, ".receive_packets_total");
	metric_set_put3(m, (double)d->tx_packets, "network.", s->segment, ".transmit_packets_total");
	metric_set_put3(m, (double)d->rx_errors, "network.", s->segment, ".receive_errors_total");
	metric_set_put3(m, (double)d->tx_errors, "network.", s->segment, ".transmit_errors_total");
	metric_set_put3(m, (double)d->rx_drop, "network.", s->segment, ".receive_drop_total");
	metric_set_put3(m, (double)d->tx_drop, "network.", s->segment, ".transmit_drop_total");
}

/* the signal level of the watched interfaces /proc/net/wireless names */
static void
read_wireless(struct host_source *h, struct metric_set *m)
{
	if (!read_kept(h, F_WIRELESS)) {
		return;
	}
	for (const char *line = h->text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char name[NETDEV_NAME_MAX];
		int dbm;
		const struct net_state *s;
		if (netdev_parse_wireless(line, len, name, &dbm) == 0 && (s = net_find(h->net, h->net_count, name))) {
			metric_set_put3(m, dbm, "network.", s->segment, ".wifi_signal_dbm");
		}
		line = nl ? nl + 1 : line + len;
	}
}

/* /proc/net/dev every sample: interfaces come and go (USB gadgets, Wi-Fi dongles, VPNs) */
static void
read_network(struct host_source *h, struct metric_set *m)
{
	if (!read_kept(h, F_NETDEV)) {
		return;
	}
	struct net_state now[NET_MAX];
	struct netdev_stat stats[NET_MAX];
	size_t n = 0;
	for (const char *line = h->text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		struct netdev_stat d;
		if (netdev_parse_line(line, len, &d) == 0 && netdev_selected(d.name, &h->net_filter)) {
			if (n == NET_MAX) {
				if (!h->net_full_said) {
					log_warn(
						"host: more than %d network interfaces to watch: %s and later ones left "
						"out (host.network.include or exclude chooses)",
						NET_MAX, d.name);
					h->net_full_said = true;
				}
				break;
			}
			struct net_state *s = &now[n];
			memcpy(s->name, d.name, sizeof(s->name));
			const struct net_state *old = net_find(h->net, h->net_count, d.name);
			s->was_up = old && old->was_up; /* one that went and came back starts again */
			if (old) {
				memcpy(s->segment, old->segment, sizeof(s->segment));
				memcpy(s->fd, old->fd, sizeof(s->fd));
			} else {
				for (size_t f = 0; f < L_COUNT; f++) {
					s->fd[f] = -1;
				}
				netdev_segment(d.name, false, s->segment);
				if (net_segment_taken(now, n, d.name, s->segment) ||
				    net_segment_taken(h->net, h->net_count, d.name, s->segment)) {
					netdev_segment(d.name, true, s->segment);
				}
				static const char *const names[] = {"device"};
				const char *values[] = {d.name};
				metric_attrs_set("device", s->segment, 1, names, values);
			}
			stats[n++] = d;
		}
		line = nl ? nl + 1 : line + len;
	}
	for (size_t i = 0; i < h->net_count; i++) {
		if (!net_find(now, n, h->net[i].name)) {
			metric_attrs_forget("device", h->net[i].segment); /* gone */
			close_fds(h->net[i].fd, L_COUNT);
		}
	}
	memcpy(h->net, now, n * sizeof(now[0]));
	h->net_count = n;
	for (size_t i = 0; i < n; i++) {
		put_netdev(&h->net[i], &stats[i], m);
		read_link(h, &h->net[i], m);
	}
	read_wireless(h, m);
}

/*
 * The OOM killer's victims since the last sample, from /dev/kmsg: one
 * record a read(), non-blocking, so a quiet log costs one EAGAIN.
 */
static void
read_oom_victims(struct host_source *h, struct oom_victims *v)
{
	for (int i = 0; h->kmsg_fd >= 0 && i < KMSG_READS_MAX; i++) {
		ssize_t n = read(h->kmsg_fd, h->text, sizeof(h->text));
		if (n < 0 && (errno == EPIPE || errno == EINTR)) {
			continue; /* EPIPE: records overwritten before they were read; the next read goes on after them */
		}
		if (n <= 0) {
			return; /* EAGAIN: read to the end */
		}
		struct oom_victim victim;
		if (oom_log_parse_record(h->text, (size_t)n, &victim) == 0) {
			if (v->count < OOM_VICTIMS_MAX) {
				v->list[v->count++] = victim;
			} else {
				v->more++;
			}
		}
	}
}

static int
host_read(struct source *src, struct sample *sample)
{
	struct host_source *h = (struct host_source *)src;
	struct metric_set *m = &sample->metrics;
	read_memory(h, m);
	read_system(h, m);
	if (h->disks_on) {
		read_disks(h, m);
	}
	if (h->net_on) {
		read_network(h, m);
	}
	int64_t now = monotonic_ms();
	if (now >= h->next_scan_ms) {
		if (h->fs_on) {
			scan_filesystems(h, now);
		}
		if (h->disks_on) {
			scan_emmc(h);
		}
		h->next_scan_ms = now + h->fs_interval_ms;
	}
	put_filesystems(h, m);
	/* last: the kill line follows the oom_kill count read above by a few microseconds */
	read_oom_victims(h, &sample->oom_killed);
	return 0;
}

static void
host_destroy(struct source *src)
{
	struct host_source *h = (struct host_source *)src;
	close_fds(h->fd, F_COUNT);
	close_fds(h->zram_fd, h->zram_count);
	if (h->kmsg_fd >= 0) {
		close(h->kmsg_fd);
	}
	for (size_t i = 0; i < h->fs_count; i++) {
		metric_attrs_forget("mountpoint", h->fs[i].segment);
	}
	for (size_t i = 0; i < h->net_count; i++) {
		metric_attrs_forget("device", h->net[i].segment);
		close_fds(h->net[i].fd, L_COUNT);
	}
	free_list(h->include);
	free_list(h->exclude);
	free_list(h->net_include);
	free_list(h->net_exclude);
	free(h);
}

static const struct source_ops host_ops = {
	.name = "host",
	.read = host_read,
	.destroy = host_destroy,
};

/* zramN devices under SYS/block */
static void
find_zram(struct host_source *h)
{
	char path[HOST_PATH_MAX];
	snprintf(path, sizeof(path), "%s/block", h->sys);
	DIR *dir = opendir(path);
	if (!dir) {
		return;
	}
	for (struct dirent *e; (e = readdir(dir)) && h->zram_count < ZRAM_MAX;) {
		int n, end = 0;
		if (sscanf(e->d_name, "zram%d%n", &n, &end) == 1 && e->d_name[end] == '\0' && n >= 0) {
			h->zram_fd[h->zram_count] = -1;
			h->zram[h->zram_count++] = n;
		}
	}
	closedir(dir);
}

/* the kernel log, read from its end on: root, or CAP_SYSLOG where kernel.dmesg_restrict is 1 */
static void
open_kmsg(struct host_source *h, const char *path)
{
	h->kmsg_fd = path[0] ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	if (h->kmsg_fd < 0) {
		if (path[0]) {
			log_info("host: the kernel log (%s) is not readable (%s): the oom-kill alert will not name the "
				 "process the OOM killer killed",
				 path, strerror(errno));
		}
		return;
	}
	if (lseek(h->kmsg_fd, 0, SEEK_END) < 0) {
		close(h->kmsg_fd); /* a kernel before 3.5, or no kmsg: its whole history would be read as new */
		h->kmsg_fd = -1;
	}
}

int
host_source_create(const struct host_source_options *o, struct source **out)
{
	struct host_source *h = xcalloc(1, sizeof(*h));
	h->base.ops = &host_ops;
	snprintf(h->proc, sizeof(h->proc), "%s", o->proc ? o->proc : "/proc");
	snprintf(h->sys, sizeof(h->sys), "%s", o->sys ? o->sys : "/sys");
	for (size_t f = 0; f < F_COUNT; f++) {
		h->fd[f] = -1;
	}
	const struct host_config *cfg = o->cfg;
	h->fs_on = !cfg->fs.off;
	h->disks_on = cfg->disks != 0;
	h->fs_interval_ms = host_config_fs_interval_ms(cfg);
	h->fs_trend_ms = host_config_fs_trend_ms(cfg);
	h->include = copy_list(cfg->fs.include, cfg->fs.include_count);
	h->exclude = copy_list(cfg->fs.exclude, cfg->fs.exclude_count);
	h->filter.include = (const char *const *)h->include;
	h->filter.include_count = cfg->fs.include_count;
	h->filter.exclude = (const char *const *)h->exclude;
	h->filter.exclude_count = cfg->fs.exclude_count;
	h->gone[F_DISKSTATS] = !h->disks_on;
	h->net_on = !cfg->net.off;
	h->net_include = copy_list(cfg->net.include, cfg->net.include_count);
	h->net_exclude = copy_list(cfg->net.exclude, cfg->net.exclude_count);
	h->net_filter.include = (const char *const *)h->net_include;
	h->net_filter.include_count = cfg->net.include_count;
	h->net_filter.exclude = (const char *const *)h->net_exclude;
	h->net_filter.exclude_count = cfg->net.exclude_count;
	h->gone[F_NETDEV] = h->gone[F_WIRELESS] = !h->net_on;
	find_zram(h);
	open_kmsg(h, o->kmsg ? o->kmsg : "/dev/kmsg");
	h->next_scan_ms = 0;
	*out = &h->base;
	return 0;
}
