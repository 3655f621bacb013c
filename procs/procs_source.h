/*
 * The processes source: every name of the processes: section, at its own
 * pace (sources.processes_interval, 5 s): how many of its processes run
 * (process.NAME.up is 1 while one does), their CPU share, resident and
 * virtual memory, threads, open file descriptors, the oldest one's uptime,
 * restarts (its main process changed, or it came back), and the GPU memory
 * they hold where the platform tells it: NVML's answer through GPU_FEED
 * (a discrete GPU, Thor), else nvmap's clients file under SYS (Orin and
 * older; debugfs, root only); absent otherwise. Between scans
 * every sample repeats the last scan's values. Created only when the
 * section lists something: without it nothing here reads /proc.
 * docs/metrics.md#processes.
 */
#ifndef TEGRAWATCH_PROCS_SOURCE_H
#define TEGRAWATCH_PROCS_SOURCE_H

#include <stdint.h>

#include "core/gpu_procs.h"
#include "core/pipeline.h"
#include "proc_table.h"
#include "procs_config.h"

struct procs_source_options {
	const struct procs_config *cfg;  /* copied */
	int64_t interval_ms;             /* sources.processes_interval */
	const char *proc;                /* "/proc" unless a test says otherwise */
	const char *sys;                 /* "/sys": where the cgroups are (SYS/fs/cgroup...) */
	struct proc_table *table;        /* shared with the rules stage: the source takes a reference */
	struct gpu_procs_feed *gpu_feed; /* NVML's GPU memory per process, or NULL: the source takes a reference */
};

/** Creates the source. Returns 0 and *OUT, or -EINVAL for a regex that does not compile (checked at load). */
int procs_source_create(const struct procs_source_options *o, struct source **out);

#endif
