/*
 * The host source: what a board owner checks first, read where the kernel
 * keeps it (docs/metrics.md#the-host). Every sample: zram, pressure stall
 * information, OOM kills, load, tasks, uptime, disk I/O, network
 * interfaces (/proc/net/dev, sysfs link state, /proc/net/wireless), and the
 * processes the OOM killer killed as the kernel log names them (/dev/kmsg
 * where readable, never waited for). At the file systems' pace
 * (host.filesystems.interval): every watched mount's statvfs(), and eMMC
 * health. The memory shares (MemAvailable, swap in use) come from the
 * board's one reading of /proc/meminfo (board_set_memory_shares()). A file
 * the kernel does not have (PSI before 4.20, oom_kill before 4.13) leaves
 * its metrics absent.
 */
#ifndef TEGRAWATCH_HOST_SOURCE_H
#define TEGRAWATCH_HOST_SOURCE_H

#include "core/pipeline.h"
#include "host_config.h"

struct host_source_options {
	const struct host_config *cfg; /* copied what is needed */
	const char *proc;              /* "/proc" unless a test says otherwise */
	const char *sys;               /* "/sys" */
	const char *kmsg;              /* the kernel log: "/dev/kmsg" unless a test says otherwise; "": none */
};

/** Creates the source. Returns 0 and *OUT, or -ENOMEM. */
int host_source_create(const struct host_source_options *o, struct source **out);

#endif
