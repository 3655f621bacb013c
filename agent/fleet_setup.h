/* The remote_write and otlp sinks of `run`, as configured (fleet/fleet.h). */
#ifndef TEGRAWATCH_FLEET_SETUP_H
#define TEGRAWATCH_FLEET_SETUP_H

#include "config.h"
#include "core/loop.h"
#include "core/board_info.h"

/**
 * Adds a sink for each of remote_write and otlp that has a url, telling
 * receivers who sends (INFO). Returns 0, or an exit status: EX_CONFIG for
 * settings the sink cannot use, EX_UNAVAILABLE when libcurl, libsnappy or
 * zlib cannot be loaded.
 */
int fleet_sinks_add(struct agent *agent, const struct config *cfg, const struct agent_info *info);

#endif
