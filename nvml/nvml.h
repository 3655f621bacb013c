/*
 * NVIDIA GPUs through NVML (nvidia-ml), as a pipeline source: gpu.N.* per
 * GPU (docs/metrics.md). For the GPUs sysfs says too little about: Thor's
 * GPU has no load file, a discrete card (IGX Orin with an RTX card, an x86
 * edge server) none of the Jetson files at all.
 *
 * libnvidia-ml.so.1 is loaded with dlopen(), never linked and never
 * required. NVML is called from a worker thread of its own, never from the
 * sampling loop: a driver call can take milliseconds (the total energy:
 * 2.8 ms, up to 16 ms on an H200) or hang (a GPU falling off the bus), and
 * the loop must stay on time. Each sample takes the worker's last complete
 * poll; one older than three intervals and a second is left out
 * (agent.nvml_stale = 1) until NVML answers again.
 */
#ifndef TEGRAWATCH_NVML_H
#define TEGRAWATCH_NVML_H

#include "core/gpu_procs.h"
#include "core/pipeline.h"

struct nvml_options {
	const char *library;             /* NULL: "libnvidia-ml.so.1" */
	int interval_ms;                 /* how often the worker polls: the agent's interval */
	int energy_ms;                   /* how often the total energy is read (0: every 10 s): it costs ~3 ms */
	int stale_ms;                    /* a poll older than this is left out (0: 3 intervals + 1 s) */
	struct gpu_procs_feed *gpu_feed; /* NULL, or where each poll's GPU memory per process goes (a reference) */
};

/**
 * Loads the library (not NVML itself: the worker initialises it) and
 * starts the worker. Returns 0 and *OUT, or -ENOENT when the library is
 * not there (WHY says why; nothing is logged), or -errno.
 */
int nvml_source_create(const struct nvml_options *opts, struct source **out, char *why, size_t why_size);

#endif
