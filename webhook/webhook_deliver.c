/*
 * The webhook delivery thread: the queues and the policy. At most
 * INFLIGHT_MAX requests in flight and one per endpoint (so each
 * endpoint's order holds and a hung receiver holds only its own slot);
 * the requests themselves are webhook_http.c's (libcurl).
 *
 * Each turn of the thread: take what the loop thread handed over (bodies,
 * new settings, removals) into the queues, writing queue files through at
 * once; start the requests that are due; let libcurl work; judge the
 * answers (sent, retried with full-jitter back-off, failed, or 410: the
 * endpoint is disabled); publish the counters; sleep until a socket, a
 * due retry or http_wakeup().
 */
#include "webhook_deliver.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/spool.h"
#include "core/xalloc.h"

#define INFLIGHT_MAX 4
#define BACKOFF_BASE_MS 5000
#define BACKOFF_CAP_MS (10 * 60 * 1000)
#define GIVE_UP_MS (24LL * 3600 * 1000)
#define ACK_SYNC_MS 1000 /* acknowledgements reach a queue file at most this often */
#define IDLE_POLL_MS 1000
#define LOG_RING 32

struct pending {
	struct pending *next;
	char *body;
	size_t len;
};

struct logline {
	enum log_level level;
	char text[256];
};

struct endpoint {
	struct endpoint *next;
	char *name;
	int queue_max;
	/* handed over under d->mu */
	struct endpoint_conf *new_conf;
	bool removed;
	struct pending *inbox, **inbox_tail;
	size_t inbox_len;
	uint64_t inbox_dropped;
	struct webhook_stats published; /* queue_depth: the queue's, without the inbox */
	/* the thread's own */
	struct endpoint_conf *conf;
	struct spool *queue;
	bool queue_file;
	uint64_t spool_dropped_seen;
	struct webhook_stats own;
	void *active;             /* the request in flight (webhook_http.c) */
	uint64_t active_id;       /* of the record it carries */
	uint64_t attempt_id;      /* the record ATTEMPTS counts for */
	int attempts;             /* made for it */
	int64_t first_attempt_ms; /* monotonic, of that record */
	int64_t next_attempt_ms;  /* monotonic; 0 = now */
	int64_t last_sync_ms;
	bool sync_due; /* acknowledgements not yet in the file */
	bool failing;  /* a failure streak was logged */
};

struct deliverer {
	pthread_mutex_t mu;
	pthread_t thread;
	struct http_client *http;
	/* under mu */
	struct endpoint *endpoints; /* the loop prepends; only the thread unlinks */
	bool stopping;
	int64_t stop_deadline_ms;
	int64_t backoff_base_ms, backoff_cap_ms;
	struct logline logs[LOG_RING];
	size_t nlogs;
	uint64_t logs_lost;
	/* the thread's own */
	size_t inflight;
	uint64_t rng;
	int64_t base_ms, cap_ms;
};

/* From the thread: the message waits for the loop thread (never call with mu held). */
__attribute__((format(printf, 3, 4))) static void
dlog(struct deliverer *d, enum log_level level, const char *fmt, ...)
{
	struct logline line = {.level = level};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line.text, sizeof(line.text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&d->mu);
	if (d->nlogs < LOG_RING) {
		d->logs[d->nlogs++] = line;
	} else {
		d->logs_lost++;
	}
	pthread_mutex_unlock(&d->mu);
}

void
deliverer_print_logs(struct deliverer *d)
{
	struct logline lines[LOG_RING];
	pthread_mutex_lock(&d->mu);
	size_t n = d->nlogs;
	uint64_t lost = d->logs_lost;
	memcpy(lines, d->logs, n * sizeof(lines[0]));
	d->nlogs = 0;
	d->logs_lost = 0;
	pthread_mutex_unlock(&d->mu);
	for (size_t i = 0; i < n; i++) {
		log_msg(lines[i].level, "%s", lines[i].text);
	}
	if (lost) {
		log_warn("webhook: %" PRIu64 " more delivery messages were not shown", lost);
	}
}

static uint64_t
rand_u64(struct deliverer *d)
{
	/* xorshift64*: jitter only, seeded from getrandom() */
	d->rng ^= d->rng >> 12;
	d->rng ^= d->rng << 25;
	d->rng ^= d->rng >> 27;
	return d->rng * 0x2545F4914F6CDD1DULL;
}

/* "msg_" + 32 hex digits: unique per notification, the same on every attempt (no '.'). */
static void
new_webhook_id(struct deliverer *d, char *buf, size_t size)
{
	uint64_t r[2];
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		r[0] = rand_u64(d);
		r[1] = rand_u64(d);
	}
	snprintf(buf, size, "msg_%016" PRIx64 "%016" PRIx64, r[0], r[1]);
}

/* Full jitter: uniform in [0, min(cap, base * 2^(attempts - 1))]. */
static int64_t
backoff_ms(struct deliverer *d, int attempts)
{
	int64_t ceiling = d->base_ms;
	for (int i = 1; i < attempts && ceiling < d->cap_ms; i++) {
		ceiling *= 2;
	}
	if (ceiling > d->cap_ms) {
		ceiling = d->cap_ms;
	}
	return (int64_t)(rand_u64(d) % (uint64_t)(ceiling + 1));
}

/* Starts the request for the record at the head of EP's queue. */
static void
start(struct deliverer *d, struct endpoint *ep, int64_t now)
{
	const struct spool_record *rec = spool_peek_next(ep->queue);
	if (!rec) {
		return;
	}
	if (rec->id != ep->attempt_id) {
		ep->attempts = 0; /* the record retried before was dropped (queue full): a new one */
		ep->attempt_id = rec->id;
	}
	if (ep->attempts == 0) {
		ep->first_attempt_ms = now;
	} else {
		ep->own.retried++;
	}
	ep->attempts++;
	char why[160];
	/* the topic is the webhook-id: the same on every attempt, and after a restart */
	ep->active = http_post(d->http, ep->conf, rec->topic, rec->payload, rec->payload_len, ep, why, sizeof(why));
	if (!ep->active) {
		/* nothing reached the network: try again after a back-off */
		dlog(d, LOG_ERROR, "webhook %s: %s", ep->name, why);
		spool_rewind(ep->queue);
		ep->next_attempt_ms = now + backoff_ms(d, ep->attempts);
		return;
	}
	ep->active_id = rec->id;
	d->inflight++;
}

/* Everything EP still holds is dropped (410, removed): acknowledged, so its file forgets it too. */
static uint64_t
drop_all(struct endpoint *ep)
{
	uint64_t n = 0;
	spool_rewind(ep->queue);
	const struct spool_record *rec;
	while ((rec = spool_peek_next(ep->queue))) {
		spool_ack(ep->queue, rec->id);
		n++;
	}
	ep->own.dropped += n;
	ep->attempts = 0;
	ep->next_attempt_ms = 0;
	ep->sync_due = true;
	return n;
}

/* http_run()'s callback: the answer to EP's request. */
static void
done(void *ctx, void *owner, const struct http_result *res)
{
	struct deliverer *d = ctx;
	struct endpoint *ep = owner;
	int64_t now = monotonic_ms();
	ep->active = NULL;
	d->inflight--;
	enum http_outcome o = res->outcome;
	if (o == HTTP_RETRY && now - ep->first_attempt_ms >= GIVE_UP_MS) {
		dlog(d, LOG_ERROR, "webhook %s: giving up on a notification after %d attempts in 24 h (%s)", ep->name,
		     ep->attempts, res->why);
		o = HTTP_FAILED;
	} else if (o == HTTP_FAILED) {
		dlog(d, LOG_WARN, "webhook %s: the receiver refused a notification (%s); not retried", ep->name,
		     res->why);
	}
	if (o == HTTP_RETRY) {
		int64_t delay = res->retry_after_ms >= 0 ? res->retry_after_ms : backoff_ms(d, ep->attempts);
		if (!ep->failing) {
			dlog(d, LOG_WARN, "webhook %s: delivery failed (%s); retrying with back-off", ep->name,
			     res->why);
			ep->failing = true;
		}
		spool_rewind(ep->queue);
		ep->next_attempt_ms = now + (delay < d->cap_ms ? delay : d->cap_ms);
		return;
	}
	spool_ack(ep->queue, ep->active_id);
	ep->sync_due = true;
	ep->next_attempt_ms = 0;
	if (o == HTTP_SENT) {
		ep->own.sent++;
		ep->own.last_success_s = clock_wall_ms() / 1000;
		if (ep->failing) {
			dlog(d, LOG_WARN, "webhook %s: the receiver takes notifications again", ep->name);
			ep->failing = false;
		}
		ep->attempts = 0;
		return;
	}
	ep->attempts = 0;
	ep->own.failed++;
	if (o == HTTP_GONE) {
		ep->own.disabled = 1;
		uint64_t dropped = drop_all(ep);
		dlog(d, LOG_ERROR,
		     "webhook %s: the receiver answered 410 Gone: action disabled until the configuration is reloaded "
		     "(%" PRIu64 " queued notifications dropped)",
		     ep->name, dropped);
	}
}

/* Stops EP's request in flight; its record stays queued. */
static void
cancel(struct deliverer *d, struct endpoint *ep)
{
	if (ep->active) {
		http_cancel(d->http, ep->active);
		ep->active = NULL;
		d->inflight--;
	}
}

/* ---- the thread ---- */

/* Takes EP's handed-over bodies into its queue; writes a queue file through. */
static void
enqueue(struct deliverer *d, struct endpoint *ep, struct pending *list, int64_t now)
{
	bool pushed = false;
	while (list) {
		struct pending *p = list;
		list = p->next;
		if (ep->own.disabled) {
			ep->own.dropped++;
		} else {
			char id[40];
			new_webhook_id(d, id, sizeof(id));
			int r = spool_push(ep->queue, id, p->body, p->len, 0, false);
			if (r < 0) {
				ep->own.dropped++;
				dlog(d, LOG_ERROR, "webhook %s: cannot queue a %zu-byte notification: %s", ep->name,
				     p->len, strerror(-r));
			}
			pushed = pushed || r == 0;
		}
		free(p->body);
		free(p);
	}
	if (pushed || (ep->sync_due && now - ep->last_sync_ms >= ACK_SYNC_MS)) {
		/* pushed: fsynced before anything is sent, so a kill -9 or a power cut loses nothing queued */
		spool_sync(ep->queue);
		ep->sync_due = false;
		ep->last_sync_ms = now;
	}
	struct spool_stats st;
	spool_get_stats(ep->queue, &st);
	ep->own.dropped += st.dropped - ep->spool_dropped_seen;
	ep->spool_dropped_seen = st.dropped;
	ep->own.queue_depth = st.depth;
}

static void
endpoint_free(struct deliverer *d, struct endpoint *ep)
{
	cancel(d, ep);
	while (ep->inbox) {
		struct pending *p = ep->inbox;
		ep->inbox = p->next;
		free(p->body);
		free(p);
	}
	spool_close(ep->queue);
	endpoint_conf_free(ep->conf);
	endpoint_conf_free(ep->new_conf);
	free(ep->name);
	free(ep);
}

/*
 * Under mu: new settings, removals and handed-over bodies. Returns the
 * first endpoint; removed ones go to *DEAD, bodies to each TAKEN[i].
 */
static struct endpoint *
take_handover(struct deliverer *d, struct endpoint **dead)
{
	for (struct endpoint **pp = &d->endpoints; *pp;) {
		struct endpoint *ep = *pp;
		if (ep->removed) {
			*pp = ep->next;
			ep->next = *dead;
			*dead = ep;
			continue;
		}
		if (ep->new_conf) {
			endpoint_conf_free(ep->conf);
			ep->conf = ep->new_conf;
			ep->new_conf = NULL;
			ep->own.disabled = 0; /* set again: a 410 is forgiven */
		}
		pp = &ep->next;
	}
	d->base_ms = d->backoff_base_ms;
	d->cap_ms = d->backoff_cap_ms;
	return d->endpoints;
}

static void
publish(struct deliverer *d, struct endpoint *head)
{
	pthread_mutex_lock(&d->mu);
	for (struct endpoint *ep = head; ep; ep = ep->next) {
		ep->published = ep->own;
	}
	pthread_mutex_unlock(&d->mu);
}

static void *
deliver_main(void *arg)
{
	struct deliverer *d = arg;
	for (;;) {
		struct endpoint *dead = NULL;
		pthread_mutex_lock(&d->mu);
		struct endpoint *head = take_handover(d, &dead);
		bool stopping = d->stopping;
		int64_t deadline = d->stop_deadline_ms;
		/* bodies are taken per endpoint below, each under the lock again: a short hold */
		pthread_mutex_unlock(&d->mu);

		int64_t now = monotonic_ms();
		while (dead) {
			struct endpoint *ep = dead;
			dead = ep->next;
			cancel(d, ep);
			uint64_t n = drop_all(ep) + ep->inbox_len; /* the inbox is freed with it */
			dlog(d, LOG_INFO, "webhook %s: removed (%" PRIu64 " queued notifications dropped)", ep->name,
			     n);
			endpoint_free(d, ep);
		}
		int64_t wait_ms = IDLE_POLL_MS;
		for (struct endpoint *ep = head; ep; ep = ep->next) {
			pthread_mutex_lock(&d->mu);
			struct pending *list = ep->inbox;
			ep->inbox = NULL;
			ep->inbox_tail = &ep->inbox;
			ep->inbox_len = 0;
			pthread_mutex_unlock(&d->mu);
			enqueue(d, ep, list, now);
			if (!ep->active && !ep->own.disabled && ep->own.queue_depth > 0) {
				if (ep->next_attempt_ms <= now && d->inflight < INFLIGHT_MAX) {
					start(d, ep, now);
				} else if (ep->next_attempt_ms > now && ep->next_attempt_ms - now < wait_ms) {
					wait_ms = ep->next_attempt_ms - now;
				}
			}
		}
		if (stopping && (d->inflight == 0 || now >= deadline)) {
			break; /* what is left waits for a back-off (or the grace is over): it stays queued */
		}
		size_t before = d->inflight;
		http_run(d->http, done, d);
		if (d->inflight < before) {
			wait_ms = 0; /* an endpoint may have more to send */
		}
		now = monotonic_ms();
		for (struct endpoint *ep = head; ep; ep = ep->next) {
			struct spool_stats st;
			spool_get_stats(ep->queue, &st);
			ep->own.queue_depth = st.depth;
		}
		publish(d, head);
		if (stopping && deadline - now < wait_ms) {
			wait_ms = deadline - now > 0 ? deadline - now : 0;
		}
		if (wait_ms > 0) {
			http_wait(d->http, clock_poll_ms(wait_ms));
		}
	}
	/* stopped: cut what still runs (it stays queued, unacknowledged) and close the queues */
	pthread_mutex_lock(&d->mu);
	struct endpoint *all = d->endpoints;
	d->endpoints = NULL;
	pthread_mutex_unlock(&d->mu);
	while (all) {
		struct endpoint *ep = all;
		all = ep->next;
		if (ep->active) {
			dlog(d, LOG_WARN, "webhook %s: stopping with a notification still in flight (kept queued)",
			     ep->name);
			cancel(d, ep);
		}
		if (ep->removed) {
			drop_all(ep);
		}
		endpoint_free(d, ep);
	}
	return NULL;
}

/* ---- the loop thread's side ---- */

struct deliverer *
deliverer_start(void)
{
	if (http_global_init("webhook") < 0) {
		return NULL;
	}
	/* with CURLOPT_NOSIGNAL libcurl leaves SIGPIPE to us, and a TLS write to a closed peer raises it */
	signal(SIGPIPE, SIG_IGN);
	struct deliverer *d = xcalloc(1, sizeof(*d));
	pthread_mutex_init(&d->mu, NULL);
	d->backoff_base_ms = d->base_ms = BACKOFF_BASE_MS;
	d->backoff_cap_ms = d->cap_ms = BACKOFF_CAP_MS;
	if (getrandom(&d->rng, sizeof(d->rng), GRND_NONBLOCK) != (ssize_t)sizeof(d->rng) || d->rng == 0) {
		d->rng = (uint64_t)monotonic_ms() * 0x9E3779B97F4A7C15ULL | 1;
	}
	d->http = http_client_new();
	/*
	 * The loop reads SIGTERM, SIGINT and SIGHUP from a signalfd, which works
	 * only while no thread takes them: this one (and the threads libcurl
	 * starts from it) blocks every signal, as the web server's do.
	 */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = d->http ? pthread_create(&d->thread, NULL, deliver_main, d) : EAGAIN;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		log_error("webhook: cannot start the delivery thread: %s", strerror(r));
		http_client_free(d->http);
		pthread_mutex_destroy(&d->mu);
		free(d);
		http_global_cleanup();
		return NULL;
	}
	return d;
}

struct endpoint *
deliverer_add(struct deliverer *d, const char *name, struct endpoint_conf *conf)
{
	struct endpoint *ep = xcalloc(1, sizeof(*ep));
	ep->name = xstrdup(name);
	ep->conf = conf;
	ep->queue_max = conf->cfg.queue_max > 0 ? conf->cfg.queue_max : 1;
	ep->inbox_tail = &ep->inbox;
	struct spool_options opts = {.max_records = (size_t)ep->queue_max, .path = conf->cfg.queue_file};
	int r = spool_open(&opts, &ep->queue);
	if (r < 0 && opts.path && opts.path[0]) {
		log_error("webhook %s: cannot use queue_file %s (%s): queueing in memory only", name, opts.path,
			  strerror(-r));
		opts.path = NULL;
		r = spool_open(&opts, &ep->queue);
	}
	if (r < 0) {
		abort_out_of_memory(); /* a memory-only spool fails only without memory */
	}
	ep->queue_file = opts.path && opts.path[0];
	struct spool_stats st;
	spool_get_stats(ep->queue, &st);
	ep->spool_dropped_seen = st.dropped;
	ep->own.queue_depth = ep->published.queue_depth = st.depth;
	if (st.depth) {
		log_warn("webhook %s: %" PRIu64 " notifications waiting from an earlier run go first", name, st.depth);
	}
	pthread_mutex_lock(&d->mu);
	ep->next = d->endpoints;
	d->endpoints = ep;
	pthread_mutex_unlock(&d->mu);
	http_wakeup(d->http);
	return ep;
}

void
deliverer_update(struct deliverer *d, struct endpoint *ep, struct endpoint_conf *conf)
{
	pthread_mutex_lock(&d->mu);
	struct endpoint_conf *old = ep->new_conf;
	ep->new_conf = conf;
	pthread_mutex_unlock(&d->mu);
	endpoint_conf_free(old);
	http_wakeup(d->http);
}

void
deliverer_remove(struct deliverer *d, struct endpoint *ep)
{
	pthread_mutex_lock(&d->mu);
	ep->removed = true;
	pthread_mutex_unlock(&d->mu);
	http_wakeup(d->http);
}

void
deliverer_push(struct deliverer *d, struct endpoint *ep, char *body, size_t len)
{
	struct pending *p = xmalloc(sizeof(*p));
	*p = (struct pending){.body = body, .len = len};
	struct pending *dropped = NULL;
	pthread_mutex_lock(&d->mu);
	if (ep->inbox_len >= (size_t)ep->queue_max) {
		/* the thread is behind (a slow disk): the oldest goes, as in the queue */
		dropped = ep->inbox;
		ep->inbox = dropped->next;
		if (!ep->inbox) {
			ep->inbox_tail = &ep->inbox;
		}
		ep->inbox_len--;
		ep->inbox_dropped++;
	}
	*ep->inbox_tail = p;
	ep->inbox_tail = &p->next;
	ep->inbox_len++;
	pthread_mutex_unlock(&d->mu);
	if (dropped) {
		free(dropped->body);
		free(dropped);
	}
}

void
deliverer_wake(struct deliverer *d)
{
	http_wakeup(d->http);
}

void
deliverer_stats(struct deliverer *d, const struct endpoint *ep, struct webhook_stats *out)
{
	pthread_mutex_lock(&d->mu);
	*out = ep->published;
	out->dropped += ep->inbox_dropped;
	out->queue_depth += ep->inbox_len;
	pthread_mutex_unlock(&d->mu);
}

void
deliverer_set_backoff(struct deliverer *d, int64_t base_ms, int64_t cap_ms)
{
	pthread_mutex_lock(&d->mu);
	d->backoff_base_ms = base_ms > 0 ? base_ms : 1;
	d->backoff_cap_ms = cap_ms > d->backoff_base_ms ? cap_ms : d->backoff_base_ms;
	pthread_mutex_unlock(&d->mu);
}

void
deliverer_stop(struct deliverer *d, int64_t grace_ms)
{
	pthread_mutex_lock(&d->mu);
	d->stopping = true;
	d->stop_deadline_ms = monotonic_ms() + grace_ms;
	pthread_mutex_unlock(&d->mu);
	http_wakeup(d->http);
	pthread_join(d->thread, NULL);
	deliverer_print_logs(d);
	http_client_free(d->http);
	pthread_mutex_destroy(&d->mu);
	free(d);
	http_global_cleanup();
}
