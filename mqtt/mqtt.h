/*
 * The MQTT sink: publishes samples, alerts, availability, board info and
 * Home Assistant discovery to a broker through libmosquitto (the only
 * user of <mosquitto.h> is mqtt/mqtt_conn.c). Runs inside the
 * agent's poll loop: never a thread of its own, never a blocking call
 * while sampling.
 * The agent owns reconnecting (full-jitter back-off; no error stops it);
 * samples and alert events go through a bounded spool (core/spool.h) so
 * nothing is lost while the broker is away. Topics and payloads:
 * docs/mqtt.md.
 */
#ifndef TEGRAWATCH_MQTT_H
#define TEGRAWATCH_MQTT_H

#include "core/pipeline.h"
#include "mqtt_config.h"
#include "mqtt_payload.h"

/**
 * Creates the sink for CFG (copied: a reload may free it) and INFO (copied;
 * its device_id is the one used when mqtt.device_id is "", its board_name
 * the device's name in Home Assistant, its interval sizes expire_after).
 * The first connection attempt starts at once, without waiting. Returns 0
 * and *OUT, or -EINVAL for a configuration it cannot use (a client
 * certificate without its key, an unreadable password file), or -ELIBACC
 * when libmosquitto cannot be loaded (it is loaded here, not at start),
 * logged.
 * An unusable spool file is logged and replaced by the memory spool.
 */
int mqtt_sink_create(const struct mqtt_config *cfg, const struct agent_info *info, struct sink **out);

#endif
