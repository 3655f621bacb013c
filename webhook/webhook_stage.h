/*
 * Webhook delivery as a stage after the rules: a listener on the agent's
 * alert fan-out (core/pipeline.h), as MQTT and the web server are. It
 * hands each event to the webhook actions among its actions (ev->actions),
 * sends a tick's batch at the end of the tick (its process), the re-sends
 * that are due in between (its dispatch), and adds webhook.NAME.* after
 * the rules stage's counters. Delivery is webhook.h's, on its own thread.
 */
#ifndef TEGRAWATCH_WEBHOOK_STAGE_H
#define TEGRAWATCH_WEBHOOK_STAGE_H

#include <stddef.h>

#include "core/board_info.h"
#include "core/pipeline.h"
#include "webhook_config.h"

/* A webhook action of the configuration. */
struct webhook_action {
	const char *name;
	const struct webhook_config *cfg;
};

/** Creates the stage with no action: no delivery thread runs until one is set. */
struct stage *webhook_stage_create(void);

/**
 * The webhook actions of a configuration (a reload gives them again; those
 * not given go, their pending notifications dropped): webhooks_set() and
 * webhooks_prune(). The first action given starts the delivery thread for
 * BOARD (its board_name, device_id and generator_url copied then).
 */
void webhook_stage_set(struct stage *st, const struct agent_info *board, const struct webhook_action *actions,
		       size_t count);

#endif
