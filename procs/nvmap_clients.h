/*
 * nvmap's clients file (debugfs, root only: /sys/kernel/debug/nvmap/iovmm/clients),
 * which says how much memory each process holds through nvmap, the
 * allocator of the GPU and the multimedia engines on Jetson Orin and older.
 * Pure: text in, pids and bytes out. The layout (nvmap_debug_clients_show()
 * of NVIDIA's nvmap driver, and a real capture: tests/fixtures/nvmap/):
 *
 *   CLIENT                        PROCESS      PID        SIZE
 *   user                              gem     4481     118372K
 *   ...
 *   total                                              141896K
 *
 * one line per client ("%-18s %18s %8u %10lluK": a process may have
 * several, a kernel client has pid 0), sizes in KiB.
 */
#ifndef TEGRAWATCH_NVMAP_CLIENTS_H
#define TEGRAWATCH_NVMAP_CLIENTS_H

#include <stddef.h>

#include "core/gpu_procs.h"

/**
 * Parses the LEN bytes of TEXT (no NUL needed) into OUT (emptied first,
 * then merged: one entry per pid, its clients summed; kernel clients left
 * out). A size may end in K, M or G (KiB, MiB, GiB; the driver writes K).
 * Returns 0, or -EINVAL when TEXT does not start with the header (not that
 * file): OUT is then left as it was. *BAD gets the number of lines that
 * are neither a client, the header, the total nor blank.
 */
int nvmap_clients_parse(const char *text, size_t len, struct gpu_procs *out, size_t *bad);

#endif
