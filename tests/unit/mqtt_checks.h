/*
 * What the MQTT payload tests share: the agent's facts about an AGX Orin
 * board (its identity and power modes) and the time zone they run in.
 */
#ifndef TEGRAWATCH_TESTS_MQTT_CHECKS_H
#define TEGRAWATCH_TESTS_MQTT_CHECKS_H

#include "core/board_info.h"

/** An AGX Orin on L4T 36.4.3 (JetPack 6.2) with the modes MAXN (0) and 15W (1, the default), agent 0.1.0 at 1 s. */
struct agent_info mqtt_checks_info(void);

/** A group setup: the tests run in UTC. */
int mqtt_checks_utc(void **state);

#endif
