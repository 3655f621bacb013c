/*
 * The one JSON shape of an alert event, shared by the MQTT alerts topic,
 * the HTTP API and the event stream (and later webhooks).
 */
#ifndef TEGRAWATCH_ALERT_JSON_H
#define TEGRAWATCH_ALERT_JSON_H

#include "json.h"
#include "thresholds/engine.h"

/**
 * Writes {"rule", "metric", "transition", "status" ("firing"|"resolved"|
 * "pending"), "severity", "previous_severity", "value", "threshold",
 * "absent", "fingerprint", "at", "starts_at", "ends_at" (ISO 8601 local
 * time or null), "summary", "description", "labels": {...}, "throttle",
 * "power_mode"}.
 */
void alert_event_to_json(struct json *j, const struct alert_event *ev);

#endif
