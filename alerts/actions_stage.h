/*
 * The `log` and `exec` actions as a stage after the rules: a listener on
 * the agent's alert fan-out (core/pipeline.h), as MQTT and the web server
 * are, that does each event's actions (ev->actions) it was given, reaps
 * the programs, and adds its counters after the rules stage's.
 */
#ifndef TEGRAWATCH_ACTIONS_STAGE_H
#define TEGRAWATCH_ACTIONS_STAGE_H

#include "actions.h"
#include "core/pipeline.h"

/**
 * Creates the stage with no action yet (actions_stage_set() gives them).
 * Counters it adds: agent.action_runs_total, _failures_total,
 * _timeouts_total, _dropped_total, _leftovers_total.
 */
struct stage *actions_stage_create(void);

/** The log and exec actions of a configuration, copied (a reload gives them again): actions_set(). */
void actions_stage_set(struct stage *st, const struct alert_action *defs, size_t count);

#endif
