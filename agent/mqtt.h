/*
 * The MQTT sink: publishes samples, alerts, availability, board info and
 * Home Assistant discovery to a broker through libmosquitto (the only
 * user of <mosquitto.h> is agent/mqtt.c). Runs inside the agent's poll
 * loop: never a thread of its own, never a blocking call while sampling.
 * The agent owns reconnecting (full-jitter back-off; no error stops it);
 * samples and alert events go through a bounded spool (agent/spool.h) so
 * nothing is lost while the broker is away. Topics and payloads:
 * docs/mqtt.md.
 */
#ifndef TEGRAWATCH_MQTT_H
#define TEGRAWATCH_MQTT_H

#include "config.h"
#include "mqtt_payload.h"
#include "sink.h"
#include "thresholds/engine.h"

/**
 * Creates the sink for CFG (copied: a reload may free it) and INFO (copied).
 * The first connection attempt starts at once, without waiting. Returns 0
 * and *OUT, or -EINVAL for a configuration it cannot use (a client
 * certificate without its key, an unreadable password file), logged.
 * An unusable spool file is logged and replaced by the memory spool.
 */
int mqtt_sink_create(const struct mqtt_config *cfg, const struct mqtt_info *info, struct sink **out);

/**
 * Alert callback for alerting_on(): DATA is the sink from mqtt_sink_create().
 * Publishes firing, escalated, deescalated, repeat and resolved events on
 * PREFIX/ID/alerts (spooled, QoS 1) and keeps PREFIX/ID/alerts/active.
 */
void mqtt_sink_on_alert(const struct alert_event *ev, void *data);

/**
 * Adds an alert that is already active (restored from the state file) to
 * PREFIX/ID/alerts/active without publishing a transition event. For
 * alerting_foreach_active().
 */
void mqtt_sink_seed_alert(const struct alert_event *ev, void *data);

/**
 * Decorator for agent_set_decorate() (DATA: the sink): adds
 * agent.mqtt_connected, agent.mqtt_connects_total,
 * agent.mqtt_disconnects_total, agent.mqtt_publishes_total,
 * agent.mqtt_spool_depth, agent.mqtt_dropped_total and
 * agent.mqtt_spool_corrupt_total to S.
 */
void mqtt_sink_decorate(struct sample *s, void *data);

/**
 * Reads ROOT/etc/nvpmodel.conf (ROOT "" = /) into *OUT for mqtt_info.modes.
 * Returns 0, or -errno / -EINVAL; *OUT is written only on success.
 */
int mqtt_read_power_modes(const char *root, struct nvpmodel_conf *out);

#endif
