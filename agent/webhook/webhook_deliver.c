/*
 * The webhook delivery thread, the only libcurl user: one multi handle,
 * at most INFLIGHT_MAX requests in flight and one per endpoint (so each
 * endpoint's order holds and a hung receiver holds only its own slot).
 *
 * Each turn of the thread: take what the loop thread handed over (bodies,
 * new settings, removals) into the queues, writing queue files through at
 * once; start the requests that are due; let libcurl work; judge the
 * answers (sent, retried with full-jitter back-off, failed, or 410: the
 * endpoint is disabled); publish the counters; sleep in curl_multi_poll()
 * until a socket, a due retry or curl_multi_wakeup().
 */
#include "webhook_deliver.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include <curl/curl.h>

#include "agent/core/clock.h"
#include "agent/core/log.h"
#include "agent/core/spool.h"
#include "agent/core/xalloc.h"

#define INFLIGHT_MAX 4
#define RESPONSE_MAX_BYTES (64 * 1024)  /* more is cut: the answer's status is all we need */
#define CONNECT_TIMEOUT_MAX_MS 10000
#define BACKOFF_BASE_MS 5000
#define BACKOFF_CAP_MS (10 * 60 * 1000)
#define GIVE_UP_MS (24LL * 3600 * 1000)
#define ACK_SYNC_MS 1000   /* acknowledgements reach a queue file at most this often */
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

struct transfer {
	struct endpoint *ep;
	CURL *easy;
	struct curl_slist *headers;
	char *body;
	size_t len;
	uint64_t record_id;
	int64_t retry_after_ms; /* -1: the answer had none */
	size_t received;
	bool capped;
	char error[CURL_ERROR_SIZE];
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
	struct transfer *active;
	uint64_t attempt_id;         /* the record ATTEMPTS counts for */
	int attempts;                /* made for it */
	int64_t first_attempt_ms;    /* monotonic, of that record */
	int64_t next_attempt_ms;     /* monotonic; 0 = now */
	int64_t last_sync_ms;
	bool sync_due;               /* acknowledgements not yet in the file */
	bool failing;                /* a failure streak was logged */
};

struct deliverer {
	pthread_mutex_t mu;
	pthread_t thread;
	CURLM *multi;
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

void
endpoint_conf_free(struct endpoint_conf *conf)
{
	if (!conf) {
		return;
	}
	for (size_t i = 0; i < WEBHOOK_SECRETS_MAX; i++) {
		webhook_key_wipe(&conf->keys[i]);
	}
	if (conf->auth) {
		memset(conf->auth, 0, strlen(conf->auth));
		free(conf->auth);
	}
	free(conf->user_agent);
	webhook_config_free(&conf->cfg);
	free(conf);
}

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

/* ---- requests ---- */

static void
add_header(struct curl_slist **list, const char *line)
{
	struct curl_slist *l = curl_slist_append(*list, line);
	if (!l) {
		abort_out_of_memory();
	}
	*list = l;
}

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	struct transfer *t = arg;
	t->received += size * n;
	if (t->received > RESPONSE_MAX_BYTES) {
		t->capped = true;
		return 0; /* ends the transfer; the status is already known */
	}
	return size * n;
}

/* Retry-After: delay-seconds or an HTTP-date */
static size_t
on_header(char *data, size_t size, size_t n, void *arg)
{
	struct transfer *t = arg;
	size_t len = size * n;
	if (len > 12 && len < 128 && strncasecmp(data, "retry-after:", 12) == 0) {
		char value[128];
		size_t at = 12;
		while (at < len && (data[at] == ' ' || data[at] == '\t')) {
			at++;
		}
		size_t vlen = len - at;
		memcpy(value, data + at, vlen);
		while (vlen && isspace((unsigned char)value[vlen - 1])) {
			vlen--;
		}
		value[vlen] = '\0';
		char *end;
		long long s = strtoll(value, &end, 10);
		if (vlen && *end == '\0' && s >= 0) {
			t->retry_after_ms = s > 86400 ? 86400000LL : s * 1000;
		} else {
			time_t when = curl_getdate(value, NULL);
			if (when != (time_t)-1) {
				int64_t ms = ((int64_t)when - (int64_t)time(NULL)) * 1000;
				t->retry_after_ms = ms > 0 ? ms : 0;
			}
		}
	}
	return len;
}

static void
transfer_free(struct deliverer *d, struct transfer *t)
{
	if (t->easy) {
		curl_multi_remove_handle(d->multi, t->easy);
		curl_easy_cleanup(t->easy);
	}
	curl_slist_free_all(t->headers);
	free(t->body);
	t->ep->active = NULL;
	d->inflight--;
	free(t);
}

/* Sets what a request must have; false when libcurl refuses one (the request cannot be made safely). */
static bool
configure(CURL *e, struct transfer *t, const struct endpoint_conf *conf)
{
	const struct webhook_config *cfg = &conf->cfg;
	long timeout = (long)cfg->timeout_ms;
	bool ok = curl_easy_setopt(e, CURLOPT_URL, cfg->url) == CURLE_OK;
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85 added the string form and deprecated the bitmask */
	ok = ok && curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK;
#else
	ok = ok && curl_easy_setopt(e, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) == CURLE_OK;
#endif
	ok = ok && curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L) == CURLE_OK;
	if (cfg->ca_file[0]) {
		ok = ok && curl_easy_setopt(e, CURLOPT_CAINFO, cfg->ca_file) == CURLE_OK;
	}
	ok = ok && curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
				    timeout < CONNECT_TIMEOUT_MAX_MS ? timeout : (long)CONNECT_TIMEOUT_MAX_MS) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_POST, 1L) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)t->len) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_USERAGENT, conf->user_agent) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_WRITEDATA, t) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_HEADERDATA, t) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error) == CURLE_OK;
	ok = ok && curl_easy_setopt(e, CURLOPT_PRIVATE, t) == CURLE_OK;
	return ok;
}

/* Builds and starts the request for the record at the head of EP's queue. */
static void
start(struct deliverer *d, struct endpoint *ep, int64_t now)
{
	const struct spool_record *rec = spool_peek_next(ep->queue);
	if (!rec) {
		return;
	}
	const struct endpoint_conf *conf = ep->conf;
	struct transfer *t = xcalloc(1, sizeof(*t));
	t->ep = ep;
	t->record_id = rec->id;
	t->len = rec->payload_len;
	t->body = xmalloc(t->len + 1);
	memcpy(t->body, rec->payload, t->len);
	t->retry_after_ms = -1;
	char line[WEBHOOK_SIGNATURE_MAX + 32];
	add_header(&t->headers, "Content-Type: application/json");
	add_header(&t->headers, "Expect:"); /* no 100-continue round trip */
	if (conf->auth) {
		add_header(&t->headers, conf->auth);
	}
	for (size_t i = 0; i < conf->cfg.header_count; i++) {
		add_header(&t->headers, conf->cfg.headers[i]);
	}
	if (conf->nkeys) {
		int64_t ts = (int64_t)time(NULL); /* of this attempt: receivers refuse stale ones */
		char sig[WEBHOOK_SIGNATURE_MAX];
		snprintf(line, sizeof(line), "webhook-id: %s", rec->topic);
		add_header(&t->headers, line);
		snprintf(line, sizeof(line), "webhook-timestamp: %" PRId64, ts);
		add_header(&t->headers, line);
		if (webhook_sign(conf->keys, conf->nkeys, rec->topic, ts, t->body, t->len, sig, sizeof(sig)) == 0) {
			snprintf(line, sizeof(line), "webhook-signature: %s", sig);
			add_header(&t->headers, line);
		}
	}
	ep->active = t;
	d->inflight++;
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
	t->easy = curl_easy_init();
	if (!t->easy || !configure(t->easy, t, conf) || curl_multi_add_handle(d->multi, t->easy) != CURLM_OK) {
		/* nothing reached the network: try again after a back-off */
		dlog(d, LOG_ERROR, "webhook %s: libcurl refused the request (%s)", ep->name,
		     t->error[0] ? t->error : "setup failed");
		if (t->easy) {
			curl_easy_cleanup(t->easy);
			t->easy = NULL;
		}
		transfer_free(d, t);
		spool_rewind(ep->queue);
		ep->next_attempt_ms = now + backoff_ms(d, ep->attempts);
	}
}

/* ---- answers ---- */

enum outcome {
	SENT,
	RETRY,
	FAILED,
	GONE,
};

static enum outcome
judge(CURLcode res, long status, bool answered)
{
	if (answered) {
		if (status >= 200 && status < 300) {
			return SENT;
		}
		if (status == 410) {
			return GONE;
		}
		return status >= 500 || status == 408 || status == 429 ? RETRY : FAILED;
	}
	switch (res) {
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_NOT_BUILT_IN:
	case CURLE_BAD_FUNCTION_ARGUMENT:
		return FAILED; /* the settings are wrong: another try cannot help */
	default:
		return RETRY; /* connection refused, reset, timeouts, name resolution, TLS */
	}
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

static void
done(struct deliverer *d, struct transfer *t, CURLcode res, int64_t now)
{
	struct endpoint *ep = t->ep;
	long status = 0;
	curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
	bool answered = status > 0 && (res == CURLE_OK || (res == CURLE_WRITE_ERROR && t->capped));
	enum outcome o = judge(res, status, answered);
	char why[CURL_ERROR_SIZE + 32];
	if (answered) {
		snprintf(why, sizeof(why), "HTTP %ld", status);
	} else {
		snprintf(why, sizeof(why), "%s", t->error[0] ? t->error : curl_easy_strerror(res));
	}
	if (o == RETRY && now - ep->first_attempt_ms >= GIVE_UP_MS) {
		dlog(d, LOG_ERROR, "webhook %s: giving up on a notification after %d attempts in 24 h (%s)", ep->name,
		     ep->attempts, why);
		o = FAILED;
	} else if (o == FAILED) {
		dlog(d, LOG_WARN, "webhook %s: the receiver refused a notification (%s); not retried", ep->name, why);
	}
	uint64_t id = t->record_id;
	int attempts = ep->attempts;
	int64_t retry_after_ms = t->retry_after_ms;
	transfer_free(d, t);
	if (o == RETRY) {
		int64_t delay = retry_after_ms >= 0 ? retry_after_ms : backoff_ms(d, attempts);
		delay = delay < d->cap_ms ? delay : d->cap_ms;
		if (!ep->failing) {
			dlog(d, LOG_WARN, "webhook %s: delivery failed (%s); retrying with back-off", ep->name, why);
			ep->failing = true;
		}
		spool_rewind(ep->queue);
		ep->next_attempt_ms = now + delay;
		return;
	}
	spool_ack(ep->queue, id);
	ep->sync_due = true;
	ep->attempts = 0;
	ep->next_attempt_ms = 0;
	if (o == SENT) {
		ep->own.sent++;
		ep->own.last_success_s = (int64_t)time(NULL);
		if (ep->failing) {
			dlog(d, LOG_WARN, "webhook %s: delivering again (after %d attempts)", ep->name, attempts);
			ep->failing = false;
		}
		return;
	}
	ep->own.failed++;
	if (o == GONE) {
		ep->own.disabled = 1;
		uint64_t dropped = drop_all(ep);
		dlog(d, LOG_ERROR,
		     "webhook %s: the receiver answered 410 Gone: action disabled until the configuration is reloaded "
		     "(%" PRIu64 " queued notifications dropped)",
		     ep->name, dropped);
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
				dlog(d, LOG_ERROR, "webhook %s: cannot queue a %zu-byte notification: %s", ep->name, p->len,
				     strerror(-r));
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
	if (ep->active) {
		transfer_free(d, ep->active);
	}
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
			if (ep->active) {
				transfer_free(d, ep->active);
			}
			uint64_t n = drop_all(ep);
			dlog(d, LOG_INFO, "webhook %s: removed (%" PRIu64 " queued notifications dropped)", ep->name, n);
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
		int running = 0;
		curl_multi_perform(d->multi, &running);
		CURLMsg *msg;
		int left;
		now = monotonic_ms();
		while ((msg = curl_multi_info_read(d->multi, &left))) {
			if (msg->msg == CURLMSG_DONE) {
				char *priv = NULL;
				curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
				done(d, (struct transfer *)(void *)priv, msg->data.result, now);
				wait_ms = 0; /* the endpoint may have more to send */
			}
		}
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
			curl_multi_poll(d->multi, NULL, 0, (int)wait_ms, NULL);
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
			dlog(d, LOG_WARN, "webhook %s: stopping with a notification still in flight (kept queued)", ep->name);
			transfer_free(d, ep->active);
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
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		log_error("webhook: libcurl cannot start: webhooks are off");
		return NULL;
	}
	const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
	if (!(info->features & CURL_VERSION_ASYNCHDNS)) {
		log_warn("webhook: libcurl %s resolves names synchronously: a slow DNS delays every webhook",
			 info->version);
	}
	struct deliverer *d = xcalloc(1, sizeof(*d));
	pthread_mutex_init(&d->mu, NULL);
	d->backoff_base_ms = BACKOFF_BASE_MS;
	d->backoff_cap_ms = BACKOFF_CAP_MS;
	d->base_ms = BACKOFF_BASE_MS;
	d->cap_ms = BACKOFF_CAP_MS;
	if (getrandom(&d->rng, sizeof(d->rng), GRND_NONBLOCK) != (ssize_t)sizeof(d->rng) || d->rng == 0) {
		d->rng = (uint64_t)monotonic_ms() * 0x9E3779B97F4A7C15ULL | 1;
	}
	d->multi = curl_multi_init();
	int r = d->multi ? pthread_create(&d->thread, NULL, deliver_main, d) : EAGAIN;
	if (r != 0) {
		log_error("webhook: cannot start the delivery thread: %s", strerror(r));
		if (d->multi) {
			curl_multi_cleanup(d->multi);
		}
		pthread_mutex_destroy(&d->mu);
		free(d);
		curl_global_cleanup();
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
	curl_multi_wakeup(d->multi);
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
	curl_multi_wakeup(d->multi);
}

void
deliverer_remove(struct deliverer *d, struct endpoint *ep)
{
	pthread_mutex_lock(&d->mu);
	ep->removed = true;
	pthread_mutex_unlock(&d->mu);
	curl_multi_wakeup(d->multi);
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
	curl_multi_wakeup(d->multi);
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
	curl_multi_wakeup(d->multi);
	pthread_join(d->thread, NULL);
	deliverer_print_logs(d);
	curl_multi_cleanup(d->multi);
	pthread_mutex_destroy(&d->mu);
	free(d);
	curl_global_cleanup();
}
