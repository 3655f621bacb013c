/*
 * Pure parsers for /proc/stat and /proc/meminfo text. No I/O: the caller
 * reads the files (tegra/sysfs.c) and hands the text in.
 */
#ifndef TEGRAWATCH_PROCFS_H
#define TEGRAWATCH_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROCFS_CPU_MAX 64

struct cpu_times {
	uint64_t busy;  /* user+nice+system+irq+softirq+steal, in ticks */
	uint64_t total; /* busy + idle + iowait */
	bool present;   /* a "cpuN" line existed */
};

struct proc_stat {
	unsigned cpu_count; /* highest N seen in "cpuN" lines, plus one */
	struct cpu_times cpu[PROCFS_CPU_MAX];
};

/** Parses /proc/stat text. Returns 0 and *OUT, or -EINVAL. */
int procfs_parse_stat(const char *text, struct proc_stat *out);

/**
 * Load of one CPU between two readings, in percent (0..100). Returns true
 * and *PCT when both readings have the CPU and time passed.
 */
bool procfs_cpu_load(const struct cpu_times *prev, const struct cpu_times *cur, double *pct);

struct meminfo {
	/* kB as printed; -1 when the line is missing */
	int64_t mem_total_kb, mem_available_kb, mem_free_kb, buffers_kb, cached_kb;
	int64_t swap_total_kb, swap_free_kb, swap_cached_kb;
};

/** Parses /proc/meminfo text. Returns 0 and *OUT, or -EINVAL (no MemTotal). */
int procfs_parse_meminfo(const char *text, struct meminfo *out);

/**
 * Parses a CPU range list as in /sys/devices/system/cpu/online ("0-3,5").
 * Sets bit N of *MASK for each listed CPU (N < 64). Returns 0, or -EINVAL.
 */
int procfs_parse_cpulist(const char *text, uint64_t *mask);

#endif
