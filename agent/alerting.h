/*
 * The alerting stage as a sink: owns the configuration's rules, the engine
 * evaluating them, the actions they trigger and the alert state file.
 * Reloads swap all of it at once, or keep the old one when the new file
 * is bad.
 */
#ifndef TEGRAWATCH_ALERTING_H
#define TEGRAWATCH_ALERTING_H

#include <stdint.h>

#include "config.h"
#include "sink.h"
#include "thresholds/engine.h"

struct alerting;

/**
 * Creates the stage for CFG (owned from now on). RUN_ACTIONS false makes a
 * dry run: the engine and any extra callbacks work, no action is run and
 * no state file is written. Loads the state file when there is one.
 */
struct alerting *alerting_create(struct config *cfg, bool run_actions);

void alerting_destroy(struct alerting *al);

/** The stage as a sink for the agent (owned by the alerting stage, do not destroy it). */
struct sink *alerting_sink(struct alerting *al);

/** Adds a callback for every alert event (like engine_on), kept across reloads. */
int alerting_on(struct alerting *al, alert_callback cb, void *data);

/**
 * Loads the configuration file again. On success the new rules replace the
 * old ones and alerts of rules that stayed keep their state; on failure the
 * old configuration keeps running, each error is logged once and the
 * failure counted. Returns 0, or -EINVAL.
 */
int alerting_reload(struct alerting *al);

/**
 * Calls FN for each pending or firing alert (restored from the state file
 * or current), so a sink added after start-up can show them without
 * waiting for their next transition.
 */
void alerting_foreach_active(const struct alerting *al, alert_callback fn, void *data);

/** The configuration in force. */
const struct config *alerting_config(const struct alerting *al);

uint64_t alerting_reload_failures(const struct alerting *al);

/**
 * Adds the stage's own metrics to S: agent.config_reloads_total,
 * agent.config_reload_failures_total, agent.alerts_firing and the action
 * counters (agent.action_runs_total, _failures_total, _timeouts_total,
 * _dropped_total). Matches agent_set_decorate().
 */
void alerting_decorate(struct sample *s, void *data);

#endif
