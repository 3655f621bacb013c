/*
 * Every process of the host, as one scan of /proc sees it: name, start,
 * CPU time, threads, memory, and the CPU share each took since the scan
 * before (over its life when it was not in that scan). The processes
 * source scans it at its pace for comm: and cmdline: watches; the rules
 * stage scans it when an alert starts pending or fires, for the top
 * processes the event carries. Nothing else reads /proc for it, so it
 * costs nothing while neither asks. Shared by the two (a reference count),
 * used by the loop's thread only.
 */
#ifndef TEGRAWATCH_PROCS_PROC_TABLE_H
#define TEGRAWATCH_PROCS_PROC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sample.h"
#include "proc_parse.h"

#define PROC_TABLE_FRESH_MS 1000 /* a scan younger than this is reused instead of scanning again */

struct proc_entry {
	int32_t pid;
	char comm[PROC_COMM_MAX];
	char state;
	uint64_t start_ticks; /* with pid, who it is: a pid taken again has another start */
	uint64_t cpu_ticks;   /* utime + stime */
	int64_t threads;
	uint64_t vsize_bytes, rss_bytes;
	double cpu_pct; /* of one core since the scan before, or over its life when new; NAN when unknown */
};

struct proc_table;

/** A table reading PROC ("/proc" unless a test says otherwise); one reference. Nothing is read yet. */
struct proc_table *proc_table_create(const char *proc);

/** Another reference to T. */
struct proc_table *proc_table_ref(struct proc_table *t);

/** Drops a reference; the last one frees T. NULL is a no-op. */
void proc_table_unref(struct proc_table *t);

/**
 * Scans every process now. A process that exits between the listing and
 * its read is left out. Returns 0, or
 * -errno when /proc cannot be listed or /proc/uptime read (the table then
 * keeps its last scan).
 */
int proc_table_scan(struct proc_table *t);

/** As proc_table_scan() unless the last scan is younger than PROC_TABLE_FRESH_MS (monotonic). */
int proc_table_refresh(struct proc_table *t);

/** The processes of the last scan, by pid; *N of them (0 before the first scan). */
const struct proc_entry *proc_table_entries(const struct proc_table *t, size_t *n);

/** The process PID of the last scan, or NULL. */
const struct proc_entry *proc_table_find(const struct proc_table *t, int32_t pid);

/** Seconds since boot at the last scan (/proc/uptime); 0 before the first. */
double proc_table_uptime_s(const struct proc_table *t);

/** Clock ticks a second (USER_HZ) and the page size, as the kernel says them to this process. */
long proc_table_hz(const struct proc_table *t);
long proc_table_page_bytes(const struct proc_table *t);

/**
 * The TOP_PROCESSES_MAX processes of the last scan that took the most CPU
 * and the most resident memory into *OUT; cpu_window_s is the time since
 * the scan before it (0 when there was none: each process's share over its
 * life).
 */
void proc_table_top(const struct proc_table *t, struct top_processes *out);

/**
 * CPU share in percent of one core of a process that used TICKS by now
 * (UPTIME_S after boot), started START_TICKS after boot: over the window
 * since PREV_TICKS at PREV_UPTIME_S when HAVE_PREV, else over its life.
 * NAN when the time is too short to say. Pure; shared with the source.
 */
double proc_cpu_pct(uint64_t ticks, uint64_t start_ticks, double uptime_s, bool have_prev, uint64_t prev_ticks,
		    double prev_uptime_s, long hz);

#endif
