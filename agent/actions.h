/*
 * Alert actions: routes each alert event (the rules stage hands on what
 * the agent's fan-out brings, the same events the sinks get) to the actions
 * bound to its severity (per rule, else the global `notify:` binding) and
 * runs them: `log` writes a line, `exec` starts a program without a shell,
 * with the alert in TEGRAWATCH_* environment variables, `webhook` hands it
 * to the webhook delivery (webhook/, its own thread). Nothing here
 * blocks the loop: programs are reaped and timed out from actions_poll().
 */
#ifndef TEGRAWATCH_ACTIONS_H
#define TEGRAWATCH_ACTIONS_H

#include <stdint.h>

#include "config.h"
#include "thresholds/engine.h"

struct actions;

/**
 * Creates a dispatcher for CFG (borrowed until actions_set_config or
 * destroy); DEVICE_ID (copied) is the board's id in webhooks.
 */
struct actions *actions_create(const struct config *cfg, const char *device_id);

/** Kills still-running programs after a grace period and frees everything; NULL is a no-op. */
void actions_destroy(struct actions *act);

/** Switches to a new configuration (after a reload). Running programs go on. */
void actions_set_config(struct actions *act, const struct config *cfg);

/**
 * Runs the actions bound to EV's severity (the rule's, else `notify:`).
 * Pending and cancelled events run none. An alert restored after a restart
 * (ev->restored) runs no log or exec action again; webhooks decide by
 * their format (alertmanager-api sends it again).
 */
void actions_on_alert(struct actions *act, const struct alert_event *ev);

/**
 * Reaps finished programs and stops those past their timeout; hands the
 * webhook deliveries what is due (re-sends). Call every tick and about once a second.
 */
void actions_poll(struct actions *act);

/** End of a tick: the webhook notifications of this tick go out (one request per batch). */
void actions_flush(struct actions *act);

/** Adds the webhook counters (webhook.NAME.sent_total, ...) to M. */
void actions_add_metrics(struct actions *act, struct metric_set *m);

struct actions_stats {
	uint64_t runs;      /* programs started */
	uint64_t failures;  /* could not start, non-zero exit, or killed */
	uint64_t timeouts;  /* killed after their timeout */
	uint64_t dropped;   /* not started: 256 calls were already waiting for one of the 8 slots */
	uint64_t leftovers; /* processes programs left behind (in their group or escaped), stopped */
	unsigned running;
};

void actions_get_stats(const struct actions *act, struct actions_stats *out);

#endif
