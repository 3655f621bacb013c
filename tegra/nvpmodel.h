/*
 * nvpmodel: pure parsers for /etc/nvpmodel.conf (modes, their names and
 * per-mode clock ceilings) and /var/lib/nvpmodel/status ("pmode:0002").
 * The agent never runs the nvpmodel binary on a sample.
 */
#ifndef TEGRAWATCH_NVPMODEL_H
#define TEGRAWATCH_NVPMODEL_H

#include <stdbool.h>
#include <stdint.h>

#define NVPMODEL_MODES_MAX 16
#define NVPMODEL_NAME_MAX 48

struct nvpmodel_mode {
	int id;
	char name[NVPMODEL_NAME_MAX];
	/* ceilings set by the mode; 0 = not capped by this mode (-1 in the file) or not set */
	uint64_t gpu_max_hz;
	uint64_t cpu_max_khz; /* the highest MAX_FREQ over CPU clusters */
	uint64_t emc_max_hz;
	int cores_online;     /* CPU_ONLINE entries with 1; -1 when not set */
};

struct nvpmodel_conf {
	int mode_count;
	int default_id; /* PM_CONFIG DEFAULT, -1 when absent */
	struct nvpmodel_mode modes[NVPMODEL_MODES_MAX];
};

/** Parses nvpmodel.conf text. Returns 0 and *OUT, or -EINVAL when it has no POWER_MODEL. */
int nvpmodel_parse_conf(const char *text, struct nvpmodel_conf *out);

/** Parses the status file text ("pmode:0002 ..."). Returns 0 and *ID, or -EINVAL. */
int nvpmodel_parse_status(const char *text, int *id);

/** Returns the mode with ID, or NULL. */
const struct nvpmodel_mode *nvpmodel_find(const struct nvpmodel_conf *conf, int id);

#endif
