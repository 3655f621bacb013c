/*
 * Pure parsers of what the kernel says about one process: no I/O, the
 * readers (proc_table.c, procs_source.c) hand the text in.
 *
 *   /proc/PID/stat:   proc_pid_stat(5); Documentation/filesystems/proc.rst, table 1-4.
 *                     The name (field 2) is not escaped: it may hold blanks and
 *                     parentheses, "1234 (my (odd) app) S 1 ...", so it ends at the
 *                     last ')' of the line.
 *   /proc/PID/status: proc_pid_status(5); Name, Threads, VmSize and VmRSS
 *                     (kB; kernel threads have no Vm lines).
 *   a pid file, one line of cgroup.procs: a decimal pid and nothing else.
 *   /proc/uptime:     seconds since boot.
 *
 * Garbage, a cut line or an out-of-range number makes a parser refuse the
 * text (-EINVAL); the output is written only on success.
 */
#ifndef TEGRAWATCH_PROCS_PROC_PARSE_H
#define TEGRAWATCH_PROCS_PROC_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROC_COMM_MAX 64     /* a kernel worker's name passes TASK_COMM_LEN (16) in stat */
#define PROC_PID_MAX 4194304 /* PID_MAX_LIMIT on 64-bit kernels (2^22) */
#define PROC_COMM_VISIBLE 15 /* what the kernel keeps of a process's own name (TASK_COMM_LEN - 1) */

/* The fields of /proc/PID/stat a watcher needs. */
struct proc_stat {
	int32_t pid;
	char comm[PROC_COMM_MAX]; /* cut to fit */
	char state;               /* R, S, D, Z, T, t, X, I, ... */
	int32_t ppid;
	uint64_t utime_ticks, stime_ticks; /* clock ticks (USER_HZ) */
	int64_t threads;
	uint64_t start_ticks; /* clock ticks after boot */
	uint64_t vsize_bytes;
	int64_t rss_pages;
};

/** Parses LEN bytes of /proc/PID/stat. Returns 0, or -EINVAL (fewer than 24 fields, a bad number). */
int proc_parse_stat(const char *text, size_t len, struct proc_stat *out);

/* The fields of /proc/PID/status it needs; -1 when the line is missing. */
struct proc_status {
	char name[PROC_COMM_MAX]; /* escaped as the kernel writes it ("\n" as two characters) */
	int64_t threads;
	int64_t vm_size_kb, vm_rss_kb;
};

/** Parses /proc/PID/status text. Returns 0, or -EINVAL without a Name line or with a bad number. */
int proc_parse_status(const char *text, struct proc_status *out);

/**
 * Parses LEN bytes holding one pid: blanks and newlines around it
 * allowed, nothing else (a pid file, a line of cgroup.procs). Returns 0
 * and *PID in 1..PROC_PID_MAX, or -EINVAL.
 */
int proc_parse_pid(const char *text, size_t len, int32_t *pid);

/** The first number of /proc/uptime ("350735.47 234388.90"), seconds. Returns 0 or -EINVAL. */
int proc_parse_uptime(const char *text, double *seconds);

/**
 * Turns LEN bytes of /proc/PID/cmdline (arguments separated by NULs) into
 * one line in place: the separators become spaces, the trailing ones go.
 * BUF must have room for LEN + 1 bytes; it is NUL-terminated. Returns the
 * new length (0 for a kernel thread).
 */
size_t proc_cmdline_text(char *buf, size_t len);

#endif
