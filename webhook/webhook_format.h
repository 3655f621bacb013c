/*
 * The bodies webhook receivers expect, built from core alert events.
 * Pure: no I/O, no clock (times come from the events), nothing kept.
 *
 *   alertmanager-api  [{labels, annotations, startsAt[, endsAt], generatorURL}, ...]
 *                     for POST /api/v2/alerts of an Alertmanager
 *   alertmanager      the version 4 body Alertmanager's own webhook sends,
 *                     one group per board, several alerts in one body
 *   json              alert_event_to_json() of one event plus
 *                     "board": {"name", "device_id"}
 *
 * Labels of an alert, sorted by name (as Alertmanager writes them):
 * alertname (the rule), severity, instance and board (the board name),
 * metric, then the rule's labels; a rule label never replaces one of
 * these. Annotations: summary, description (not empty), value and
 * threshold (finite numbers, as text), throttle (not empty).
 * Times are RFC 3339 in UTC with Z ("2026-11-23T09:12:03Z").
 */
#ifndef TEGRAWATCH_WEBHOOK_FORMAT_H
#define TEGRAWATCH_WEBHOOK_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/alert.h"
#include "core/board_info.h"
#include "core/json.h"

/*
 * The board that sends is INFO (core/board_info.h): its board_name is the
 * instance label, device_id goes in the labels, generator_url links back
 * (may be "" or NULL).
 */

/** True for the transitions a webhook sends on: firing, escalated, deescalated, repeat, resolved. */
bool webhook_event_wanted(const struct alert_event *ev);

/** True when EV leaves its alert firing (everything wanted but resolved). */
bool webhook_event_firing(const struct alert_event *ev);

/** alertmanager-api: the array of the N alerts of EVS. */
void webhook_format_alertmanager_api(struct json *j, const struct agent_info *board,
				     const struct alert_event *const *evs, size_t n);

/** alertmanager: one version 4 body for the N alerts of EVS; RECEIVER is the action's name. */
void webhook_format_alertmanager(struct json *j, const struct agent_info *board, const char *receiver,
				 const struct alert_event *const *evs, size_t n);

#endif
