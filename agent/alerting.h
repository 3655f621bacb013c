/*
 * The alert side of the pipeline, wired from a configuration: the rules
 * stage (thresholds/rules_stage.h), then its listeners on the agent's
 * alert fan-out, the log and exec actions (alerts/) and the webhooks
 * (webhook/). A reload (SIGHUP) loads the configuration again here and
 * gives each its part: the rules to the stage, the actions to theirs.
 */
#ifndef TEGRAWATCH_ALERTING_H
#define TEGRAWATCH_ALERTING_H

#include <stdbool.h>

#include "config.h"
#include "core/loop.h"
#include "procs/proc_table.h"

/**
 * Adds the stages for CFG (owned from now on) to AGENT, in this order:
 * rules, actions, webhooks. DEVICE_ID is the board's id in alert events
 * and webhooks, EXPECTED_POWER_MODE what {{expected_power_mode}} renders
 * (both copied, kept across reloads). RUN_ACTIONS false makes a dry run:
 * the engine works and events reach the sinks, but no action stage is
 * added and no state file is read or written. PROCS (a reference is
 * taken; NULL: none) is the host's process table: an alert that starts
 * pending scans it (the baseline of the CPU shares), and one that fires
 * carries the top processes by CPU and memory at that moment (core/alert.h),
 * put on the sample too, so a recording keeps them. Without it (replays,
 * a fixture root) events carry what the sample brings: none, or a
 * recording's. Returns 0 or -ENOSPC.
 *
 * Counters the rules stage adds: agent.config_reloads_total,
 * agent.config_reload_failures_total, agent.config_restart_needed, then
 * its own (rules_stage.h); the actions' and the webhooks' follow.
 */
int alerting_add(struct agent *agent, struct config *cfg, const char *device_id, const char *expected_power_mode,
		 bool run_actions, struct proc_table *procs);

#endif
