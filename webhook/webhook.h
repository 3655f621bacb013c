/*
 * Alert webhooks: every webhook action's notifications, delivered by one
 * thread off the sampling loop (webhook_deliver.c; HTTP: webhook_http.c). The loop
 * calls these functions only; none blocks on the network, and none does
 * file I/O except webhooks_set() (reads the secret files, opens queue_file)
 * and webhooks_destroy() (up to WEBHOOK_STOP_GRACE_MS).
 *
 * Per action: a bounded queue (queue_max, drop-oldest, counted), one
 * request in flight (so order holds), retries with full-jitter
 * exponential back-off (5 s doubling to 10 min, given up after 24 h) on
 * connection errors, timeouts, 5xx, 408 and 429 (Retry-After honoured);
 * other 4xx and 3xx fail at once; 410 disables the action until it is set
 * again. At most 4 requests are in flight overall. With queue_file the
 * queue is written through (fsynced) as it fills, and survives a restart.
 *
 * What goes in one request (bodies: webhook_format.h):
 *   json              one event, as it comes;
 *   alertmanager      the events of a tick in one request, at webhooks_flush();
 *   alertmanager-api  the events of a tick in one request, and every firing
 *                     alert again each `resend` while nothing is queued
 *                     (Alertmanager forgets alerts it is not told about).
 *
 * Not thread-safe: call everything from the loop thread.
 */
#ifndef TEGRAWATCH_WEBHOOK_H
#define TEGRAWATCH_WEBHOOK_H

#include <stdint.h>

#include "core/alert.h"
#include "core/metrics.h"
#include "webhook_config.h"
#include "webhook_format.h"

/*
 * For tests only (docs/webhooks.md): "BASE[,CAP]" in milliseconds replaces
 * the retry back-off (5 s doubling to 10 min), read once by
 * webhooks_create(). Production never sets it.
 */
#define WEBHOOK_BACKOFF_ENV "TEGRAWATCH_WEBHOOK_BACKOFF_MS"
#define WEBHOOK_BACKOFF_ENV_MAX_MS (10 * 60 * 1000)

/* webhooks_destroy() gives pending notifications this long. */
#define WEBHOOK_STOP_GRACE_MS 3000

struct webhooks;

/**
 * Starts the delivery thread. BOARD's board_name, device_id and
 * generator_url are copied; the back-off
 * comes from WEBHOOK_BACKOFF_ENV when that is set. Returns NULL
 * when this build has no webhooks (webhook_supported() is false) or the
 * thread cannot start (logged).
 */
struct webhooks *webhooks_create(const struct agent_info *board);

/**
 * Adds the action NAME with a copy of CFG, or updates it (a reload): its
 * queue is kept, a 410-disabled action is enabled again. Reads the secret
 * and token files (a file that cannot be used leaves the action as it was:
 * -EINVAL, logged); queue_file and queue_max of an existing action apply at
 * the next start. Returns 0 or -errno.
 */
int webhooks_set(struct webhooks *w, const char *name, const struct webhook_config *cfg);

/**
 * Removes the actions not set since the last call (after a reload sets
 * every action that remains); their pending notifications count as dropped.
 */
void webhooks_prune(struct webhooks *w);

/**
 * An alert event routed to the action NAME. Pending and cancelled events
 * are ignored; restored ones (ev->restored) only for alertmanager-api,
 * which sends them again. Copies what it needs from EV.
 */
void webhooks_notify(struct webhooks *w, const char *name, const struct alert_event *ev);

/** End of a tick: sends the batched events, and the re-sends that are due. Call every tick. */
void webhooks_flush(struct webhooks *w);

/**
 * Adds per action webhook.NAME.sent_total, failed_total, retried_total,
 * dropped_total, queue_depth and last_success_s (unix seconds, 0 = never).
 * Actions whose names cannot make a metric name are skipped.
 */
void webhooks_add_metrics(struct webhooks *w, struct metric_set *m);

/**
 * Flushes, gives pending notifications up to WEBHOOK_STOP_GRACE_MS to go
 * out, then cuts what is still in flight and frees everything. What is
 * left stays in queue_file. NULL is a no-op.
 */
void webhooks_destroy(struct webhooks *w);

/* ---- for tests ---- */

/** Back-off base and cap for later retries (defaults 5 s and 10 min); tests make it fast. */
void webhooks_set_backoff_for_tests(struct webhooks *w, int64_t base_ms, int64_t cap_ms);

/* One action's counters, as webhooks_add_metrics() publishes them. */
struct webhook_stats {
	uint64_t sent;    /* 2xx answers */
	uint64_t failed;  /* given up: not retried (3xx, 4xx, 410) or retried for 24 h */
	uint64_t retried; /* attempts after the first */
	uint64_t dropped; /* queue full (oldest), disabled by 410, action removed */
	uint64_t queue_depth;
	int64_t last_success_s;
	int disabled; /* by a 410 answer */
};

/** Counters of NAME. Returns 0, or -ENOENT. */
int webhooks_get_stats(struct webhooks *w, const char *name, struct webhook_stats *out);

#endif
