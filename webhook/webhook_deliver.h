/*
 * The delivery thread behind webhook.c: every endpoint (one webhook
 * action's queue and settings), its requests made by webhook_http.c. The loop thread
 * hands bodies over under a mutex and wakes the thread; the thread owns
 * the queues (core/spool.h), the transfers, the retries and the
 * files, and publishes counters under the same mutex. Messages the thread
 * wants logged wait in a small ring until the loop thread prints them
 * (deliverer_print_logs), so log.c is only ever called from one thread.
 * Internal to webhook/.
 */
#ifndef TEGRAWATCH_WEBHOOK_DELIVER_H
#define TEGRAWATCH_WEBHOOK_DELIVER_H

#include <stddef.h>
#include <stdint.h>

#include "webhook.h"
#include "webhook_config.h"
#include "webhook_http.h"

struct deliverer;
struct endpoint;

/** Starts the thread. NULL (logged) when libcurl or the thread cannot start. */
struct deliverer *deliverer_start(void);

/**
 * Adds an endpoint NAME that takes CONF (owned from now on). Opens its
 * queue: CONF's queue_file when set (its undelivered records go first;
 * memory only, logged, when it cannot be used). Never fails.
 */
struct endpoint *deliverer_add(struct deliverer *d, const char *name, struct endpoint_conf *conf);

/** New settings for EP (CONF owned from now on); enables it again after a 410. */
void deliverer_update(struct deliverer *d, struct endpoint *ep, struct endpoint_conf *conf);

/** Removes EP: what it still holds counts as dropped, and is gone from its queue_file. EP is invalid after. */
void deliverer_remove(struct deliverer *d, struct endpoint *ep);

/** Queues BODY (LEN bytes, owned from now on) on EP; call deliverer_wake() after a batch. */
void deliverer_push(struct deliverer *d, struct endpoint *ep, char *body, size_t len);

/** Wakes the thread to take what was pushed. */
void deliverer_wake(struct deliverer *d);

/** EP's counters. */
void deliverer_stats(struct deliverer *d, const struct endpoint *ep, struct webhook_stats *out);

/** Prints the thread's waiting messages through log.c (from the loop thread). */
void deliverer_print_logs(struct deliverer *d);

/** Back-off for the next retries (tests). */
void deliverer_set_backoff(struct deliverer *d, int64_t base_ms, int64_t cap_ms);

/**
 * Lets the thread send what it can for up to GRACE_MS (not waiting out
 * back-offs), then cuts the transfers still running, closes the queues
 * (undelivered records stay in their files), joins and frees. Every
 * endpoint is invalid after.
 */
void deliverer_stop(struct deliverer *d, int64_t grace_ms);

#endif
