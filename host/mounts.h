/*
 * Mounts: the pure part. A /proc/self/mountinfo line parsed
 * (Documentation/filesystems/proc.rst, "/proc/<pid>/mountinfo"), which
 * mounts are watched, and the metric segment of a mount point. No I/O.
 */
#ifndef TEGRAWATCH_HOST_MOUNTS_H
#define TEGRAWATCH_HOST_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

#define MOUNT_PATH_MAX 256
#define MOUNT_FSTYPE_MAX 32
#define MOUNT_SOURCE_MAX 128
/* "filesystem." + SEGMENT + ".inodes_used_pct" fits a metric name (63 bytes) */
#define MOUNT_SEGMENT_MAX 37

struct mount_entry {
	char mountpoint[MOUNT_PATH_MAX]; /* unescaped: "\040" is a space again */
	char fstype[MOUNT_FSTYPE_MAX];   /* "ext4", "fuse.sshfs" */
	char source[MOUNT_SOURCE_MAX];   /* "/dev/mmcblk0p1", "tmpfs", "server:/export" */
	bool readonly;                   /* the mount's own options start with "ro" */
};

/**
 * Parses one mountinfo line (LEN bytes, no newline needed). Returns 0, or
 * -EINVAL for a line that is not one (too few fields, no " - " separator)
 * or whose mount point, type or source do not fit.
 */
int mounts_parse_line(const char *line, size_t len, struct mount_entry *out);

/** True for a network or user-space file system (nfs, cifs, fuse.sshfs...): statvfs() may block on it. */
bool mounts_fstype_network(const char *fstype);

/** True for a pseudo or in-memory file system left out by default (proc, sysfs, cgroup2, tmpfs, overlay...). */
bool mounts_fstype_pseudo(const char *fstype);

/* Which mounts are watched: globs on the mount point ('*' also matches '/'). */
struct mounts_filter {
	const char *const *include; /* none: every mount but the default exclusions */
	size_t include_count;
	const char *const *exclude; /* always applied */
	size_t exclude_count;
};

/**
 * True when M is watched under F: with includes, exactly the mounts an
 * include matches (of any type); without, every mount but pseudo and
 * network file systems and those under /dev, /proc, /sys,
 * /run/credentials, /var/lib/docker, /var/lib/containers/storage and
 * /var/lib/kubelet (node_exporter's default exclusions, tmpfs added). An
 * exclude always wins.
 */
bool mounts_selected(const struct mount_entry *m, const struct mounts_filter *f);

/**
 * The metric segment of MOUNTPOINT into BUF (MOUNT_SEGMENT_MAX bytes): "/"
 * is "root"; else the path without its first '/', lower-cased, every
 * character outside [a-z0-9] as '_' ("/var/lib/docker": "var_lib_docker").
 * A longer one, or with HASHED (a second mount with the segment of an
 * earlier one), keeps its start and ends in '_' and 8 hex digits of a hash
 * of the whole path.
 */
void mounts_segment(const char *mountpoint, bool hashed, char *buf);

#endif
