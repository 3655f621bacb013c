/*
 * The boot source: a reboot between two runs of the agent, told once
 * (docs/metrics.md#reboots). At start it compares the kernel's boot id
 * with the one boot.state kept; on another boot it logs the event and puts
 * reboot.KIND.last_seen_timestamp_s (KIND unexpected or orderly) on its
 * first sample only, for the rule unexpected-reboot. It saves the boot it
 * runs on at start, every 5 minutes (when it was last seen, should it end
 * without warning) and when the agent stops (an orderly end).
 */
#ifndef TEGRAWATCH_BOOT_SOURCE_H
#define TEGRAWATCH_BOOT_SOURCE_H

#include "core/pipeline.h"

struct boot_source_options {
	const char *state_path; /* boot.state; copied */
	const char *proc;       /* "/proc" unless a test says otherwise */
};

/** Creates the source. Returns 0 and *OUT, or -errno when the kernel has no boot id to read (said at info). */
int boot_source_create(const struct boot_source_options *o, struct source **out);

#endif
