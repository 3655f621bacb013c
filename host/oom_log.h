/*
 * Which process the kernel's OOM killer killed, from the kernel log: a pure
 * parser of /dev/kmsg records (Documentation/ABI/testing/dev-kmsg), no I/O.
 * host_source.c reads the records and hands each one in.
 *
 * The kill is the line mm/oom_kill.c prints as it sends SIGKILL, right
 * after it counts oom_kill in /proc/vmstat (tests/fixtures/oom_log has
 * real ones):
 *   "Out of memory: Killed process 360 (polkitd) total-vm:..."             (newer kernels)
 *   "Memory cgroup out of memory: Killed process 6007 (python3) total-vm:..."
 *   "Killed process 2700 (DeviceMemory) total-vm:..."                       (older ones)
 *   "Killed process 42452 (memcg_test_1), UID 0, total-vm:..."              (a distribution's)
 * The choice the older kernels print before it ("Kill process N (x) score
 * S or sacrifice child") and the reaper's "reaped process N (x)" are no kill.
 */
#ifndef TEGRAWATCH_HOST_OOM_LOG_H
#define TEGRAWATCH_HOST_OOM_LOG_H

#include <stddef.h>

#include "core/sample.h"

/**
 * Parses one message of the kernel log, LEN bytes of MSG without the
 * record's prefix. Returns 0 and *OUT (the pid, the name with /dev/kmsg's
 * \xNN escapes decoded and control characters as '?') for a kill, or
 * -ENOENT for any other message.
 */
int oom_log_parse_message(const char *msg, size_t len, struct oom_victim *out);

/**
 * Parses one /dev/kmsg record of LEN bytes at REC ("PRI,SEQ,USEC,FLAGS;
 * MESSAGE\n" and continuation lines): 0 and *OUT for the kernel's kill
 * line; -ENOENT for another message, or one user space wrote (its facility
 * is not the kernel's, 0); -EINVAL for no record.
 */
int oom_log_parse_record(const char *rec, size_t len, struct oom_victim *out);

#endif
