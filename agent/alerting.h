/*
 * The rules as a pipeline stage: owns the configuration's rules, the
 * engine evaluating them, the actions they trigger and the alert state
 * file. Its alert events go to the agent's fan-out (pipeline.h), and its
 * notify runs the actions on what the fan-out brings, as the sinks get
 * it: restored alerts included. A reload (SIGHUP) swaps all of it at
 * once, or keeps the old one when the new file is bad.
 */
#ifndef TEGRAWATCH_ALERTING_H
#define TEGRAWATCH_ALERTING_H

#include <stdbool.h>

#include "core/pipeline.h"
#include "config.h"
#include "procs/proc_table.h"

/**
 * Creates the stage for CFG (owned from now on); DEVICE_ID (copied) is the
 * board's id in alert events and webhooks, kept across reloads. RUN_ACTIONS false makes a
 * dry run: the engine works and events reach the sinks, but no action is
 * run and no state file is read or written. Loads the state file when
 * there is one; its alerts reach the sinks before the first tick.
 *
 * Counters it adds after each evaluation: agent.config_reloads_total,
 * agent.config_reload_failures_total, agent.config_restart_needed,
 * agent.alerts_firing and, with actions, agent.action_runs_total,
 * _failures_total, _timeouts_total, _dropped_total.
 */
struct stage *alerting_stage_create(struct config *cfg, const char *device_id, bool run_actions);

/** What {{expected_power_mode}} renders in ST's alert texts (agent.expected_power_mode, resolved; copied). */
void alerting_stage_set_expected_power_mode(struct stage *st, const char *text);

/**
 * Gives ST the process table (a reference is taken): from then on an alert
 * that starts pending scans it (the baseline of the CPU shares), and one
 * that fires carries the top processes by CPU and memory at that moment
 * (core/alert.h), put on the sample too, so a recording keeps them. Without
 * it (replays, a fixture root) events carry what the sample brings: none,
 * or a recording's.
 */
void alerting_stage_set_processes(struct stage *st, struct proc_table *t);

#endif
