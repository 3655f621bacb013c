/*
 * The board read through sysfs/procfs below a root: capabilities are
 * probed once at open (thermal zones, cooling devices, GPU devfreq,
 * cpufreq, INA3221 rails, OC counters, fans, nvpmodel, identity), then
 * each board_sample() reads the discovered files and emits canonical
 * metrics. Never gates on a hard-coded model table.
 */
#ifndef TEGRAWATCH_BOARD_H
#define TEGRAWATCH_BOARD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/sample.h"
#include "identity.h"
#include "nvpmodel.h"

struct board;

/** Probes the board below ROOT ("" or "/" = this machine). Returns 0 and *OUT, or -errno. */
int board_open(const char *root, struct board **out);

/** Frees B; NULL is a no-op. */
void board_destroy(struct board *b);

/** Identity read at open. */
const struct board_identity *board_identity(const struct board *b);

/** The power modes from ROOT/etc/nvpmodel.conf, or NULL when it could not be read. */
const struct nvpmodel_conf *board_power_modes(const struct board *b);

/** True when any Jetson signal was found (Tegra SoC, nv_tegra_release, GPU devfreq, tegra zones). */
bool board_is_jetson(const struct board *b);

/**
 * Reads every discovered quantity once and adds its metrics to S->metrics
 * (temperatures, trips, cooling states, clocks and ceilings, loads since
 * the previous call, memory, rails, OC counters, fans, nvpmodel id) and
 * sets S->power_mode. Files that fail are left out and counted; this only
 * fails (-errno) when nothing at all could be read.
 */
int board_sample(struct board *b, struct sample *s);

/**
 * Sets the monotonic clock (ms) used for the slow refresh and the sysfs
 * back-off (tests). NULL restores CLOCK_MONOTONIC.
 */
void board_set_clock(struct board *b, int64_t (*now_ms)(void *data), void *data);

/**
 * Names what exists on the board but this process may not read (root-only
 * files: the measured CPU clock, the EMC clock in debugfs), with why, as
 * "EMC clock (debugfs is root only), ..." in BUF. Returns how many; 0 and ""
 * when nothing is closed to it.
 */
size_t board_unreadable(const struct board *b, char *buf, size_t size);

/**
 * The GPU clock's devfreq entry ("gpu-gpc-0") and how it was chosen, as
 * "devfreq gpu-gpc-0 (a known name)" in BUF; false when there is no GPU
 * clock.
 */
bool board_gpu_clock(const struct board *b, char *buf, size_t size);

/**
 * What the board says of its NVIDIA GPUs, for the choice of the NVML
 * source: *PCI the NVIDIA display controllers on PCI (a discrete card,
 * Thor's GPU), *IGPU_WITHOUT_LOAD true when the devfreq GPU has no load
 * file (Thor: only NVML knows its load).
 */
void board_nvidia_gpus(const struct board *b, unsigned *pci, bool *igpu_without_load);

/**
 * How the thermal trips were classified, as one sentence in BUF: by their
 * cooling-device bindings, or (zones without readable bindings) by their
 * type alone. Returns how many zones showed bindings.
 */
size_t board_trip_bindings(const struct board *b, char *buf, size_t size);

/**
 * Also derives the host section's memory shares from the board's reading of
 * /proc/meminfo (ram.available_mb, ram.used_pct, swap.used_pct): the one
 * reading of that file a sample, set by the composition root when the host
 * source runs beside the board (docs/metrics.md#the-host).
 */
void board_set_memory_shares(struct board *b, bool on);

/** True when anything at all was found to read (zones, cores, memory, rails, fans, a GPU clock). */
bool board_has_metrics(const struct board *b);

/** Read errors counted since open. */
uint64_t board_read_errors(const struct board *b);

#endif
