/*
 * What alert actions do: `log` writes a line, `exec` starts a program
 * without a shell, with the alert in TEGRAWATCH_* environment variables.
 * Which actions an event calls it says itself (ev->actions: its rule's,
 * else `notify:`'s); the runner does those it was given by name. Nothing
 * here blocks the loop: programs are queued for one of 8 slots, reaped and
 * timed out from actions_poll().
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

/* An action the runner does by name: the `log` line, or an `exec` program. */
struct alert_action {
	const char *name;
	char *const *argv;  /* exec: the program and its arguments, NULL-terminated (no shell); NULL: log */
	int64_t timeout_ms; /* exec: the program is killed after this long */
};

/**
 * The actions the runner does, copied, replacing those given before (a
 * reload; running programs go on). Actions of other kinds (webhooks) are
 * not given: an event's names that are not here are left alone.
 */
void actions_set(struct actions *act, const struct alert_action *defs, size_t count);

/**
 * Does the actions of EV (ev->actions) that were set: a line at warning
 * level for `log`; for `exec` the program with EV in its environment,
 * queued while the 8 slots are taken (with 256 waiting, the oldest waiting
 * call is dropped). An alert restored after a restart (ev->restored) does
 * none again: they were done before it.
 */
void actions_notify(struct actions *act, const struct alert_event *ev);

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
