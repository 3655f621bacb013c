/*
 * Pure parsers for the kernel's text about memory and the system: no I/O,
 * the source (host_source.c) reads the files and hands the text in.
 *
 *   /proc/loadavg, /proc/uptime, /proc/vmstat:
 *       Documentation/filesystems/proc.rst
 *   /proc/pressure/{cpu,memory,io}: Documentation/accounting/psi.rst
 *   /sys/block/zramN/mm_stat: Documentation/admin-guide/blockdev/zram.rst
 *
 * Every number is checked: garbage, a cut line or a value beyond 2^53
 * (which a double would round) makes the field absent (-1 or false), never 0.
 */
#ifndef TEGRAWATCH_HOST_PROCMEM_H
#define TEGRAWATCH_HOST_PROCMEM_H

#include <stdbool.h>
#include <stdint.h>

/* One /proc/pressure file: "some avg10=.. avg60=.. avg300=.. total=US" and (not for cpu before 5.13) "full ..." */
struct procmem_psi {
	bool some, full;               /* the line was there and whole */
	double some_avg10, full_avg10; /* percent */
	uint64_t some_total_us, full_total_us;
};

/** Parses a /proc/pressure/RESOURCE text. Returns 0, or -EINVAL without a whole "some" line. */
int procmem_parse_psi(const char *text, struct procmem_psi *out);

/** The oom_kill counter of /proc/vmstat text (4.13 on). Returns 0, or -ENOENT when absent or unreadable. */
int procmem_parse_vmstat_oom(const char *text, uint64_t *kills);

/* /proc/loadavg: "0.52 0.58 0.59 2/1037 12345" */
struct procmem_loadavg {
	double avg1, avg5, avg15;
	uint64_t running, tasks;
};

/** Parses /proc/loadavg text. Returns 0 or -EINVAL. */
int procmem_parse_loadavg(const char *text, struct procmem_loadavg *out);

/** The first number of /proc/uptime text, in seconds. Returns 0 or -EINVAL. */
int procmem_parse_uptime(const char *text, double *seconds);

/* /sys/block/zramN/mm_stat: bytes; the first three of its fields */
struct procmem_zram {
	uint64_t orig_data_size, compr_data_size, mem_used_total;
};

/** Parses a zram mm_stat text. Returns 0 or -EINVAL. */
int procmem_parse_zram(const char *text, struct procmem_zram *out);

#endif
