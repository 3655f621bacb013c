/*
 * nvpmodel: pure parsers for /etc/nvpmodel.conf (modes, their names and
 * per-mode clock ceilings) and /var/lib/nvpmodel/status ("pmode:0002").
 * The agent never runs the nvpmodel binary on a sample.
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

#endif
