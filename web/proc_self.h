/*
 * The agent's own figures from /proc for /metrics: CPU time, memory,
 * start time and file descriptors of this process. Best effort: what
 * cannot be read stays unknown.
 */
#ifndef TEGRAWATCH_WEB_PROC_SELF_H
#define TEGRAWATCH_WEB_PROC_SELF_H

#include <stdint.h>

#include "prom_format.h"

/**
 * Fills P from /proc/self/stat, /proc/self/fd and RLIMIT_NOFILE; unknown
 * figures are negative. BOOT_TIME_S (proc_boot_time_s) dates the start
 * time; 0 leaves it unknown.
 */
void proc_self_read(int64_t boot_time_s, struct prom_process *p);

/** The boot time in seconds since the epoch (btime in /proc/stat), 0 when unknown. */
int64_t proc_boot_time_s(void);

#endif
