/*
 * The memory limit of the cgroup this process runs in, wherever the cgroup
 * file systems are mounted: cgroup v2 (memory.max), v1 (the memory
 * controller's memory.limit_in_bytes) and hybrid hosts, where the v2 mount
 * has no memory controller and the limit that systemd's MemoryMax= enforces
 * is the v1 one.
 */
#ifndef TEGRAWATCH_CGROUP_MEMORY_H
#define TEGRAWATCH_CGROUP_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/**
 * Pure: from the text of /proc/self/cgroup and /proc/self/mountinfo, the
 * limit files to try in order (v2's memory.max first, then v1's
 * memory.limit_in_bytes), NUL-separated in PATHS. 0, or -ENOENT when the
 * process is in no cgroup with a memory controller mounted.
 */
int cgroup_memory_files(const char *proc_cgroup, const char *mountinfo, char *paths, size_t size);

/**
 * The limit in bytes (0: none, "max" or v1's "unlimited" page-counter
 * maximum) read below ROOT ("" for the real system), from the two /proc
 * files under ROOT too.
 */
uint64_t cgroup_memory_limit(const char *root);

#endif
