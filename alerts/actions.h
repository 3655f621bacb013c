/*
 * What alert actions do, once the composition root has chosen them for an
 * alert event (its routing by severity, per rule or `notify:`): `log`
 * writes a line, `exec` starts a program without a shell, with the alert in
 * TEGRAWATCH_* environment variables. Nothing here blocks the loop:
 * programs are queued for one of 8 slots, reaped and timed out from
 * actions_poll().
 */
#ifndef TEGRAWATCH_ACTIONS_H
#define TEGRAWATCH_ACTIONS_H

#include <stdint.h>

#include "core/alert.h"

struct actions;

/** Creates the runner; makes the process adopt what programs leave behind (a subreaper). */
struct actions *actions_create(void);

/** Kills still-running programs after a grace period and frees everything; NULL is a no-op. */
void actions_destroy(struct actions *act);

/** The `log` action: one line about EV at warning level. */
void actions_log(const struct alert_event *ev);

/**
 * The exec action NAME: runs ARGV (copied; no shell) with EV in its
 * environment, killed after TIMEOUT_MS. Queued while the 8 slots are
 * taken; with 256 waiting, the oldest waiting call is dropped.
 */
void actions_exec(struct actions *act, const char *name, char *const *argv, int64_t timeout_ms,
		  const struct alert_event *ev);

/** Reaps finished programs, stops those past their timeout, starts queued ones. Call every tick and about once a second. */
void actions_poll(struct actions *act);

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
