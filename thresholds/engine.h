/*
 * The alert engine: evaluates rules against each sample and produces one
 * alert event per state transition. Knows nothing of YAML, MQTT or HTTP:
 * it tells every event to the one listener it was created with.
 */
#ifndef TEGRAWATCH_ENGINE_H
#define TEGRAWATCH_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/diag.h"
#include "core/sample.h"
#include "rules.h"

enum alert_state {
	ALERT_INACTIVE,
	ALERT_PENDING, /* condition met, waiting for `for` */
	ALERT_FIRING,
};

struct engine;

/**
 * Creates an engine over RULES (borrowed: they must outlive the engine)
 * that tells LISTENER(event, DATA) every event: pending, firing, escalated,
 * deescalated, repeat, resolved and cancelled, and the active alerts
 * engine_announce_active() restores. LISTENER runs synchronously inside
 * engine_evaluate(), engine_adopt() and engine_announce_active(), must not
 * block and must not call back into the engine. NULL: events are only
 * counted (engine_generation), not rendered. Cannot fail.
 */
struct engine *engine_create(const struct rule_set *rules, alert_callback listener, void *data);
void engine_destroy(struct engine *engine);

/**
 * Sets the board name used by {{board}} and in events, and its device id
 * (both copied). A board name scopes the events' fingerprints to the board.
 */
void engine_set_board(struct engine *engine, const char *board, const char *device_id);

/** Sets what {{expected_power_mode}} renders ("MAXN_SUPER (id 2), jetson_clocks on"; copied). */
void engine_set_expected_power_mode(struct engine *engine, const char *text);

/**
 * Sets the actions of an alert whose rule names none, per severity (the
 * names of `notify:`, borrowed as the rules are). Every event carries the
 * names of its actions (ev->actions): the rule's, else these.
 */
void engine_set_notify(struct engine *engine, char **const notify[SEVERITY_COUNT], const size_t count[SEVERITY_COUNT]);

/**
 * Evaluates every rule against sample S. Durations (for, clear_for,
 * absent_for, repeat) are measured on S->mono_ms only, never a clock, so
 * a wall clock step changes none of them and replays at any speed give the
 * same timeline (a replay's mono_ms is the recording's time; when that
 * goes back, no time passes). Event times are on S->time_ms's wall clock:
 * at_ms is the sample's stamp, starts_at_ms the time that really passed
 * before it.
 */
void engine_evaluate(struct engine *engine, const struct sample *s);

/**
 * Takes over the alert state of OLD for every (rule name, metric) that still
 * exists in ENGINE's rules (a reload that keeps a rule keeps its alerts).
 * Alerts of rules that disappeared, or of metrics a changed pattern no
 * longer matches, are resolved (pending ones cancelled) through ENGINE's
 * listener; those events point at OLD's rule, so OLD's rules must still
 * exist during the call. OLD is left with no active alert.
 */
void engine_adopt(struct engine *engine, struct engine *old);

/**
 * Writes the pending and firing alerts to PATH whole or not at all
 * (core/atomic_file.h). Returns 0 or -errno.
 */
int engine_save_state(const struct engine *engine, const char *path);

/**
 * Loads alerts saved by engine_save_state(), for rules that still exist, so
 * an alert that resolves after a restart still gets its resolve. A missing
 * file is not an error. Bad lines are reported in DIAGS and skipped.
 * Returns 0 or -errno.
 */
int engine_load_state(struct engine *engine, const char *path, struct diag_list *diags);

/** Number of alerts currently firing. */
size_t engine_firing_count(const struct engine *engine);

/**
 * Counts every transition (and adoption): the state file needs writing
 * when this differs from its value at the last engine_save_state().
 */
uint64_t engine_generation(const struct engine *engine);

/** Metric instances tracked over all rules (an exact rule has one from the start). */
size_t engine_instance_count(const struct engine *engine);

/** Metrics a glob matched but that were refused because its rule had 256 instances. */
uint64_t engine_dropped_instances(const struct engine *engine);

/** How often the metric -> instance mapping was rebuilt (the set of metric names changed). */
uint64_t engine_layout_rebuilds(const struct engine *engine);

/**
 * Tells the listener each pending or firing alert (loaded from a state
 * file, or taken over) as an event marked `restored`, whose transition is
 * TRANSITION_FIRING or TRANSITION_PENDING: once at start, so that every
 * consumer knows what is already active. Changes nothing in the engine.
 */
void engine_announce_active(const struct engine *engine);

#endif
