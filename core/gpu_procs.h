/*
 * GPU memory per process, as a GPU driver tells it: a list of pids and
 * the bytes each holds, and a feed that carries one from the thread that
 * asks the driver (the NVML worker) to the processes source, so that
 * neither module knows the other. The composition root (agent/setup.c)
 * makes the feed and hands it to both. docs/metrics.md#processes.
 */
#ifndef TEGRAWATCH_GPU_PROCS_H
#define TEGRAWATCH_GPU_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The driver lists the process but cannot say its memory (NVML's NVML_VALUE_NOT_AVAILABLE). */
#define GPU_PROC_UNKNOWN UINT64_MAX

/* One process and the GPU memory it holds. */
struct gpu_proc {
	int32_t pid;
	uint64_t bytes; /* or GPU_PROC_UNKNOWN */
};

/* Processes by pid, each once after gpu_procs_merge(). */
struct gpu_procs {
	struct gpu_proc *items;
	size_t count, cap;
};

/* How gpu_procs_merge() joins two entries of one pid. */
enum gpu_procs_join {
	GPU_PROCS_SUM, /* two clients or two GPUs of one process: their memory adds up */
	GPU_PROCS_MAX, /* one GPU's compute and graphics lists: the same memory, told twice */
};

/** Appends PID holding BYTES (or GPU_PROC_UNKNOWN). */
void gpu_procs_add(struct gpu_procs *l, int32_t pid, uint64_t bytes);

/** Sorts L by pid and joins the entries of each pid into one as JOIN says; an unknown one makes it unknown. */
void gpu_procs_merge(struct gpu_procs *l, enum gpu_procs_join join);

/** The bytes PID holds in a merged L into *BYTES (maybe GPU_PROC_UNKNOWN); false when L does not list it. */
bool gpu_procs_find(const struct gpu_procs *l, int32_t pid, uint64_t *bytes);

/** Empties L, keeping its memory. */
void gpu_procs_clear(struct gpu_procs *l);

/** Frees L's memory; L is empty after. */
void gpu_procs_free(struct gpu_procs *l);

/* The feed: one writer thread, one reader, a reference each. */
struct gpu_procs_feed;

/** A feed with nothing published yet; one reference. */
struct gpu_procs_feed *gpu_procs_feed_create(void);

/** Another reference to F. */
struct gpu_procs_feed *gpu_procs_feed_ref(struct gpu_procs_feed *f);

/** Drops a reference; the last one frees F. NULL is a no-op. */
void gpu_procs_feed_unref(struct gpu_procs_feed *f);

/**
 * Publishes a copy of L (merged, entries of one pid adding up), the
 * complete answer of every GPU, good until
 * VALID_UNTIL_MS on the monotonic clock (a writer that stops answering
 * leaves nothing behind). L NULL withdraws the last one (the driver could
 * not tell this time).
 */
void gpu_procs_feed_publish(struct gpu_procs_feed *f, const struct gpu_procs *l, int64_t valid_until_ms);

/** Copies the last publication into OUT when it is still good at NOW_MS: true; false leaves OUT as it was. */
bool gpu_procs_feed_take(struct gpu_procs_feed *f, int64_t now_ms, struct gpu_procs *out);

#endif
