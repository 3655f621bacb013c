/*
 * nvpmodel: pure parsers for /etc/nvpmodel.conf (modes, their names and
 * per-mode clock ceilings) and /var/lib/nvpmodel/status ("pmode:0002"),
 * and the check of the clocks against a mode's ceilings. The agent never
 * runs the nvpmodel binary on a sample.
 */
#ifndef TEGRAWATCH_NVPMODEL_H
#define TEGRAWATCH_NVPMODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/board_info.h"

/** Parses nvpmodel.conf text. Returns 0 and *OUT, or -EINVAL when it has no POWER_MODEL. */
int nvpmodel_parse_conf(const char *text, struct nvpmodel_conf *out);

/** Parses the status file text ("pmode:0002 ..."). Returns 0 and *ID, or -EINVAL. */
int nvpmodel_parse_status(const char *text, int *id);

/** Returns the mode with ID, or NULL. */
const struct nvpmodel_mode *nvpmodel_find(const struct nvpmodel_conf *conf, int id);

/* The clock ceilings a board runs under, read from sysfs, in MHz. */
struct nvpmodel_clocks {
	bool gpu_ok, gpu_hw_ok;
	double gpu_max_mhz;      /* devfreq max_freq */
	double gpu_hw_max_mhz;   /* the highest available frequency: a mode without a GPU cap */
	double gpu_mhz_per_unit; /* of the devfreq files, which a mode's GPU MAX_FREQ is written to; 0: Hz */
	bool cpu_ok, cpu_hw_ok;
	double cpu_max_mhz;    /* the highest scaling_max_freq of the online clusters */
	double cpu_hw_max_mhz; /* their highest cpuinfo_max_freq: a mode without a CPU cap */
};

#define NVPMODEL_WHY_MAX 320

/* Whether the clocks run the mode nvpmodel's status names (nvpmodel_check_clocks). */
struct nvpmodel_verdict {
	bool mismatch;
	int other_id;               /* the (first) mode whose ceilings the clocks run; -1 none */
	char why[NVPMODEL_WHY_MAX]; /* with a mismatch: the disagreement, in a sentence */
};

/**
 * Compares the ceilings NOW with those of mode ID of CONF, the one nvpmodel's
 * status names, each to within 3 %. A mismatch is a ceiling above the mode's
 * (a thermal cap never raises one), or one below it while every ceiling
 * agrees with another mode's (a cap landing on another mode's pair by chance
 * is unlikely; below alone may be a thermal cap). Returns 0 and *OUT, -ENOENT
 * when CONF has no mode ID, -ENODATA when no ceiling can be compared.
 */
int nvpmodel_check_clocks(const struct nvpmodel_conf *conf, int id, const struct nvpmodel_clocks *now,
			  struct nvpmodel_verdict *out);

#endif
