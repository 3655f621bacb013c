/*
 * What the host source's files share (host_source.c, host_fs.c): its state
 * and the file systems' part of it. Not for other modules.
 */
#ifndef TEGRAWATCH_HOST_PRIV_H
#define TEGRAWATCH_HOST_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/metrics.h"
#include "core/pipeline.h"
#include "diskstats.h"
#include "fill_trend.h"
#include "mounts.h"
#include "netdev.h"

#define HOST_PATH_MAX 512
#define TEXT_MAX 16384 /* /proc/vmstat is the longest, about 5 KiB on 6.x */
#define FS_MAX 24      /* file systems watched: 9 metrics each */
#define DISK_MAX 16    /* disks: 5 metrics each, 3 more for an eMMC */
#define ZRAM_MAX 8
#define NET_MAX 16 /* interfaces: 12 metrics each */
/* kernel log records read a sample at most: an OOM kill prints one line a task of its cgroup before the kill */
#define KMSG_READS_MAX 4096

enum kept_file {
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

/** Reads every watched mount's statvfs (at the file systems' pace; a dead network mount is never one). */
void host_fs_scan(struct host_source *h, int64_t now_ms);
/** Puts the last scan's values (repeated between scans) into M. */
void host_fs_put(const struct host_source *h, struct metric_set *m);

#endif
