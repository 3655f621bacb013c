/*
 * The fleet sinks' engine, shared by remote write and OTLP: each sample
 * the sink keeps (interval, metrics, exclude) becomes a spool record
 * (sample_record.h); the oldest records go out in batches, one request in
 * flight, over an evented core/http_client.h polled by the agent's loop.
 *
 *   2xx        the batch is acknowledged and leaves the spool
 *   5xx, 408, 429, connection errors, timeouts
 *              the batch is tried again after a full-jitter back-off
 *              (backoff_base doubling to backoff_cap) or what Retry-After says
 *   413        the batch is split in halves and sent again; one sample alone
 *              that is still too large is dropped (counted)
 *   other 4xx  no retry: the batch is dropped, counted, and logged once per status
 *
 * A batch goes out when batch_samples are waiting, when the oldest has
 * waited batch_interval, or at once while a backlog drains.
 */
#include "fleet.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "compress.h"
#include "core/cfg_headers.h"
#include "core/clock.h"
#include "core/http_client.h"
#include "core/log.h"
#include "core/spool.h"
#include "core/xalloc.h"
#include "encode.h"

#define RECORD_TOPIC "sample" /* the spool wants one; every record is a sample */
#define SYNC_EVERY_MS 1000
#define STATUS_LOGGED_MAX 8
#define KIND_HEADERS_MAX 3 /* the content headers a kind sends */
#define STOP_FLUSH_MS 10000

/* What differs between the two sinks. */
struct push_kind {
	const char *name;    /* "remote_write": logs and agent.NAME_* counters */
	int codec;           /* enum fleet_codec, or -1 for none */
	const char *headers; /* the content headers, "\n"-separated */
};

struct push_sink {
	struct sink base;
	struct push_kind kind;
	struct fleet_encoder *enc;
	char *url;
	int64_t timeout_ms;
	size_t batch_max;
	int64_t batch_interval_ms;
	int64_t interval_ms;
	struct fleet_config filter; /* metrics and exclude only */
	char *username;
	char *password;
	char *auth; /* "Authorization: Bearer ..." */
	char *ca_file, *cert_file, *key_file;
	char *user_agent;
	char *header_text; /* the kind's headers, split in place into header_lines */
	char **extra;      /* the configured headers: on every request, retries too */
	size_t extra_count;
	const char **header_lines; /* the kind's, Authorization, then the configured ones */
	size_t header_count;
	int64_t backoff_base_ms, backoff_cap_ms;
	char counter_prefix[48];

	struct spool *spool;
	struct http_client *http;
	void *inflight;
	uint64_t *batch_ids;
	size_t batch_n;
	size_t batch_limit; /* lowered by a 413, back up after each success */
	unsigned attempt;   /* failures in a row */
	int64_t next_attempt_ms;
	int64_t waiting_since_ms; /* the oldest record not yet sent was waiting from then (-1: none) */
	int64_t last_kept_ms;     /* the time of the last sample kept (interval) */
	int64_t last_sync_ms;
	bool failing;
	long statuses_logged[STATUS_LOGGED_MAX];
	uint64_t rng;

	struct buf rec, body, packed;
	const void **payloads;
	size_t *lens;

	/* counters */
	uint64_t samples_sent, samples_rejected, requests, retries, bytes_sent, damaged;
	int64_t last_success_s;
};

/* ---- small helpers ---- */

static uint64_t
next_random(struct push_sink *s)
{
	/* xorshift64*: the back-off's jitter needs no more */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545F4914F6CDD1DULL;
}

/* Full jitter: uniform in [base, min(cap, base * 2^attempt)]. */
static int64_t
backoff_ms(struct push_sink *s)
{
	int64_t ceiling = s->backoff_base_ms;
	for (unsigned i = 1; i < s->attempt && ceiling < s->backoff_cap_ms; i++) {
		ceiling *= 2;
	}
	if (ceiling > s->backoff_cap_ms) {
		ceiling = s->backoff_cap_ms;
	}
	return s->backoff_base_ms + (int64_t)(next_random(s) % (uint64_t)(ceiling - s->backoff_base_ms + 1));
}

static bool
keep_metric(void *arg, const char *name)
{
	return fleet_config_wants(arg, name);
}

static void
wipe_free(char *secret)
{
	if (secret) {
		explicit_bzero(secret, strlen(secret));
		free(secret);
	}
}

/* ---- sending ---- */

static void done(void *ctx, void *owner, const struct http_result *res);

static size_t
spool_depth(const struct push_sink *s)
{
	struct spool_stats st;
	spool_get_stats(s->spool, &st);
	return (size_t)st.depth;
}

/* Starts the next request when one is due. */
static void
pump(struct push_sink *s, int64_t now)
{
	if (s->inflight || now < s->next_attempt_ms) {
		return;
	}
	size_t depth = spool_depth(s);
	if (depth == 0) {
		s->waiting_since_ms = -1;
		return;
	}
	bool backlog = s->attempt > 0 || depth > s->batch_max;
	if (!backlog && depth < s->batch_limit && now - s->waiting_since_ms < s->batch_interval_ms) {
		return;
	}
	s->batch_n = 0;
	const struct spool_record *rec;
	while (s->batch_n < s->batch_limit && (rec = spool_peek_next(s->spool))) {
		s->batch_ids[s->batch_n] = rec->id;
		s->payloads[s->batch_n] = rec->payload;
		s->lens[s->batch_n] = rec->payload_len;
		s->batch_n++;
	}
	if (s->batch_n == 0) {
		return;
	}
	s->damaged += fleet_encode(s->enc, s->payloads, s->lens, s->batch_n, &s->body);
	const struct buf *body = &s->body;
	if (s->kind.codec >= 0) {
		if (fleet_compress((enum fleet_codec)s->kind.codec, s->body.buf, s->body.len, &s->packed) < 0) {
			log_error("%s: compression failed: the batch waits", s->kind.name);
			spool_rewind(s->spool);
			s->next_attempt_ms = now + s->backoff_cap_ms;
			return;
		}
		body = &s->packed;
	}
	struct http_request req = {
		.url = s->url,
		.headers = s->header_lines,
		.header_count = s->header_count,
		.body = body->buf,
		.len = body->len,
		.timeout_ms = s->timeout_ms,
		.ca_file = s->ca_file,
		.cert_file = s->cert_file,
		.key_file = s->key_file,
		.username = s->username,
		.password = s->password,
		.user_agent = s->user_agent,
	};
	char why[200];
	s->inflight = http_start(s->http, &req, s, why, sizeof(why));
	if (!s->inflight) {
		log_error("%s: %s", s->kind.name, why);
		spool_rewind(s->spool);
		s->attempt++;
		s->next_attempt_ms = now + backoff_ms(s);
		return;
	}
	s->requests++;
	s->bytes_sent += body->len;
}

/* Logs a refusal with status STATUS once per status: a receiver that refuses one batch refuses them all. */
static void
log_refusal(struct push_sink *s, const struct http_result *res, const char *what)
{
	for (size_t i = 0; i < STATUS_LOGGED_MAX; i++) {
		if (s->statuses_logged[i] == res->status) {
			return;
		}
		if (s->statuses_logged[i] == 0) {
			s->statuses_logged[i] = res->status;
			break;
		}
	}
	log_error("%s: the receiver refused %zu samples (%s): %s; not retried (logged once per status; counted in "
		  "agent.%ssamples_rejected_total)",
		  s->kind.name, s->batch_n, res->why, what, s->counter_prefix);
}

static void
ack_batch(struct push_sink *s)
{
	for (size_t i = 0; i < s->batch_n; i++) {
		spool_ack(s->spool, s->batch_ids[i]);
	}
}

static void
done(void *ctx, void *owner, const struct http_result *res)
{
	(void)owner;
	struct push_sink *s = ctx;
	int64_t now = monotonic_ms();
	s->inflight = NULL;
	if (res->outcome == HTTP_SENT) {
		ack_batch(s);
		s->samples_sent += s->batch_n;
		s->last_success_s = clock_wall_ms() / 1000;
		if (s->failing) {
			log_info("%s: the receiver takes samples again (%s)", s->kind.name, res->why);
		}
		s->failing = false;
		s->attempt = 0;
		s->batch_limit = s->batch_limit * 2 < s->batch_max ? s->batch_limit * 2 : s->batch_max;
		s->waiting_since_ms = now;
	} else if (res->outcome == HTTP_RETRY) {
		spool_rewind(s->spool);
		s->retries++;
		s->attempt++;
		int64_t delay = res->retry_after_ms >= 0 ? res->retry_after_ms : backoff_ms(s);
		s->next_attempt_ms = now + delay;
		if (!s->failing) {
			log_warn("%s: sending failed (%s): trying again in %" PRId64 " ms, then with back-off; samples "
				 "wait in the spool",
				 s->kind.name, res->why, delay);
		}
		s->failing = true;
	} else if (res->status == 413 && s->batch_n > 1) {
		spool_rewind(s->spool);
		s->batch_limit = s->batch_n / 2;
		log_info("%s: the receiver found %zu samples too large (HTTP 413): sending %zu at a time", s->kind.name,
			 s->batch_n, s->batch_limit);
	} else {
		ack_batch(s);
		s->samples_rejected += s->batch_n;
		s->attempt = 0;
		log_refusal(s, res,
			    res->status == 413 ? "one sample is too large for it"
			    : res->status == 401 || res->status == 403
				    ? "check username, password_file or bearer_token_file"
				    : "dropped");
	}
	pump(s, now);
}

/* ---- the sink's ops ---- */

static int
push_write(struct sink *sink, const struct sample *smp)
{
	struct push_sink *s = (struct push_sink *)sink;
	if (s->interval_ms > 0 && s->last_kept_ms != INT64_MIN && smp->time_ms >= s->last_kept_ms &&
	    smp->time_ms - s->last_kept_ms < s->interval_ms) {
		return 0;
	}
	s->last_kept_ms = smp->time_ms;
	buf_reset(&s->rec);
	sample_record_encode(&s->rec, smp, keep_metric, &s->filter);
	int64_t now = monotonic_ms();
	if (spool_depth(s) == 0 || s->waiting_since_ms < 0) {
		s->waiting_since_ms = now;
	}
	int r = spool_push(s->spool, RECORD_TOPIC, s->rec.buf, s->rec.len, 0, false);
	if (r < 0) {
		log_warn("%s: sample %" PRIu64 " not spooled: %s", s->kind.name, smp->seq, strerror(-r));
	}
	pump(s, now);
	return 0;
}

static int
push_get_fd(struct sink *sink)
{
	return http_client_fd(((struct push_sink *)sink)->http);
}

static short
push_poll_events(struct sink *sink)
{
	(void)sink;
	return POLLIN;
}

static int
push_dispatch(struct sink *sink)
{
	struct push_sink *s = (struct push_sink *)sink;
	http_run(s->http, done, s);
	int64_t now = monotonic_ms();
	if (now - s->last_sync_ms >= SYNC_EVERY_MS) {
		spool_sync(s->spool);
		s->last_sync_ms = now;
	}
	pump(s, now);
	return 0;
}

static void
put_counter(struct push_sink *s, struct metric_set *m, const char *what, double v)
{
	metric_set_putf(m, v, "agent.%s%s", s->counter_prefix, what);
}

static void
push_add_metrics(struct sink *sink, struct metric_set *m)
{
	struct push_sink *s = (struct push_sink *)sink;
	struct spool_stats st;
	spool_get_stats(s->spool, &st);
	put_counter(s, m, "samples_sent_total", (double)s->samples_sent);
	put_counter(s, m, "samples_rejected_total", (double)s->samples_rejected);
	put_counter(s, m, "requests_total", (double)s->requests);
	put_counter(s, m, "retries_total", (double)s->retries);
	put_counter(s, m, "sent_bytes_total", (double)s->bytes_sent);
	put_counter(s, m, "failing", s->failing ? 1 : 0);
	put_counter(s, m, "last_success_timestamp_seconds", (double)s->last_success_s);
	put_counter(s, m, "spool_depth", (double)st.depth);
	put_counter(s, m, "spool_dropped_total", (double)st.dropped);
	put_counter(s, m, "spool_corrupt_total", (double)(st.corrupt_records + s->damaged));
	put_counter(s, m, "spool_write_errors_total", (double)st.write_errors);
}

/*
 * A clean stop sends what waits, for at most STOP_FLUSH_MS: a run with
 * --count or a replay ends with its last samples delivered. What is left
 * stays in the spool file, or is lost with the memory spool.
 */
static void
flush_on_stop(struct push_sink *s)
{
	int64_t end = monotonic_ms() + STOP_FLUSH_MS;
	s->batch_interval_ms = 0;
	for (int64_t now = monotonic_ms(); now < end && (s->inflight || spool_depth(s) > 0); now = monotonic_ms()) {
		if (!s->inflight && s->next_attempt_ms >= end) {
			break; /* the receiver is failing: its back-off ends too late */
		}
		pump(s, now);
		int64_t until = s->inflight || s->next_attempt_ms <= now ? end : s->next_attempt_ms;
		struct pollfd p = {.fd = http_client_fd(s->http), .events = POLLIN};
		poll(&p, 1, (int)clock_poll_ms(until - now));
		http_run(s->http, done, s);
	}
}

static void
push_destroy(struct sink *sink)
{
	struct push_sink *s = (struct push_sink *)sink;
	if (s->http && s->spool) {
		flush_on_stop(s);
	}
	if (s->inflight) {
		http_cancel(s->http, s->inflight);
		spool_rewind(s->spool);
	}
	http_client_free(s->http);
	if (s->http) {
		http_global_cleanup();
	}
	spool_close(s->spool);
	fleet_encoder_destroy(s->enc);
	free(s->url);
	cfg_free_string_list(s->filter.metrics);
	cfg_free_string_list(s->filter.exclude);
	free(s->username);
	wipe_free(s->password);
	wipe_free(s->auth);
	free(s->ca_file);
	free(s->cert_file);
	free(s->key_file);
	free(s->user_agent);
	free(s->header_text);
	cfg_headers_free(s->extra, s->extra_count);
	free(s->header_lines);
	free(s->batch_ids);
	free(s->payloads);
	free(s->lens);
	buf_free(&s->rec);
	buf_free(&s->body);
	buf_free(&s->packed);
	free(s);
}

static const struct sink_ops push_ops = {
	.name = "fleet",
	.write = push_write,
	.add_metrics = push_add_metrics,
	.get_fd = push_get_fd,
	.dispatch = push_dispatch,
	.poll_events = push_poll_events,
	.destroy = push_destroy,
};

/* ---- creation ---- */

static char **
copy_list(char *const *list, size_t n)
{
	if (!list || !n) {
		return NULL;
	}
	char **out = xcalloc(n + 1, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		out[i] = xstrdup(list[i]);
	}
	return out;
}

static int
load_secrets(struct push_sink *s, const struct fleet_config *cfg)
{
	char why[160];
	if (cfg->password_file[0] && fleet_read_secret(cfg->password_file, &s->password, why, sizeof(why)) < 0) {
		log_error("%s: cannot use password_file %s: %s", s->kind.name, cfg->password_file, why);
		return -EINVAL;
	}
	if (cfg->bearer_token_file[0]) {
		char *token;
		if (fleet_read_secret(cfg->bearer_token_file, &token, why, sizeof(why)) < 0) {
			log_error("%s: cannot use bearer_token_file %s: %s", s->kind.name, cfg->bearer_token_file, why);
			return -EINVAL;
		}
		size_t len = strlen(token) + sizeof("Authorization: Bearer ");
		s->auth = xmalloc(len);
		snprintf(s->auth, len, "Authorization: Bearer %s", token);
		wipe_free(token);
	}
	return 0;
}

static int
open_spool(struct push_sink *s, const struct fleet_config *cfg, int64_t interval_ms)
{
	struct spool_options o = {
		.max_records = fleet_config_spool_memory_records(cfg, interval_ms),
		.path = cfg->spool_file,
		.max_file_bytes = (uint64_t)cfg->spool_file_max_mb << 20,
		.spill = true,
	};
	int r = spool_open(&o, &s->spool);
	if (r < 0 && cfg->spool_file[0]) {
		log_error("%s: cannot use spool_file %s (%s): spooling in memory only", s->kind.name, cfg->spool_file,
			  strerror(-r));
		o.path = NULL;
		o.max_records = (size_t)cfg->spool_records;
		r = spool_open(&o, &s->spool);
	}
	if (r < 0) {
		log_error("%s: cannot create the spool: %s", s->kind.name, strerror(-r));
		return r;
	}
	struct spool_stats st;
	spool_get_stats(s->spool, &st);
	if (st.depth || st.corrupt_records) {
		log_warn("%s: %" PRIu64 " samples waiting in the spool from an earlier run (%" PRIu64
			 " damaged records skipped)",
			 s->kind.name, st.depth, st.corrupt_records);
	}
	return 0;
}

static int
push_create(const struct push_kind *kind, struct fleet_encoder *enc, const struct fleet_config *cfg,
	    const struct fleet_info *info, struct sink **out)
{
	struct push_sink *s = xcalloc(1, sizeof(*s));
	s->base.ops = &push_ops;
	s->kind = *kind;
	s->enc = enc;
	s->url = xstrdup(cfg->url);
	s->timeout_ms = cfg->timeout_ms;
	s->batch_max = s->batch_limit = (size_t)cfg->batch_samples;
	s->batch_interval_ms = cfg->batch_interval_ms;
	s->interval_ms = cfg->interval_ms;
	s->filter.metrics = copy_list(cfg->metrics, cfg->metric_count);
	s->filter.metric_count = cfg->metric_count;
	s->filter.exclude = copy_list(cfg->exclude, cfg->exclude_count);
	s->filter.exclude_count = cfg->exclude_count;
	s->username = xstrdup(cfg->username);
	s->ca_file = xstrdup(cfg->ca_file);
	s->cert_file = xstrdup(cfg->cert_file);
	s->key_file = xstrdup(cfg->key_file);
	size_t ua_len = sizeof("tegrawatch/") + strlen(info->agent.version);
	s->user_agent = xmalloc(ua_len);
	snprintf(s->user_agent, ua_len, "tegrawatch/%s", info->agent.version);
	s->backoff_base_ms = cfg->backoff_base_ms;
	s->backoff_cap_ms = cfg->backoff_cap_ms > cfg->backoff_base_ms ? cfg->backoff_cap_ms : cfg->backoff_base_ms;
	snprintf(s->counter_prefix, sizeof(s->counter_prefix), "%s_", kind->name);
	s->batch_ids = xcalloc(s->batch_max, sizeof(*s->batch_ids));
	s->payloads = xcalloc(s->batch_max, sizeof(*s->payloads));
	s->lens = xcalloc(s->batch_max, sizeof(*s->lens));
	s->waiting_since_ms = -1;
	s->last_kept_ms = INT64_MIN;
	buf_init(&s->rec);
	buf_init(&s->body);
	buf_init(&s->packed);
	/* the content headers, split into lines in one copy */
	s->header_lines = xcalloc(KIND_HEADERS_MAX + 1 + cfg->header_count, sizeof(*s->header_lines));
	s->header_text = xstrdup(kind->headers);
	for (char *p = s->header_text; p && s->header_count < KIND_HEADERS_MAX;) {
		s->header_lines[s->header_count++] = p;
		p = strchr(p, '\n');
		if (p) {
			*p++ = '\0';
		}
	}
	if (getrandom(&s->rng, sizeof(s->rng), GRND_NONBLOCK) != (ssize_t)sizeof(s->rng) || s->rng == 0) {
		s->rng = (uint64_t)monotonic_ms() * 0x9E3779B97F4A7C15ULL | 1;
	}
	int r = load_secrets(s, cfg);
	if (r == 0 && s->auth) {
		s->header_lines[s->header_count++] = s->auth;
	}
	s->extra = cfg_headers_copy(cfg->headers, cfg->header_count);
	s->extra_count = cfg->header_count;
	for (size_t i = 0; i < s->extra_count; i++) {
		s->header_lines[s->header_count++] = s->extra[i];
	}
	if (r == 0 && kind->codec >= 0) {
		r = fleet_codec_load((enum fleet_codec)kind->codec, kind->name);
	}
	if (r == 0) {
		r = open_spool(s, cfg, info->agent.interval_ms);
	}
	if (r == 0 && http_global_init(kind->name) < 0) {
		r = -ENOENT;
	}
	if (r == 0 && !(s->http = http_client_new_evented())) {
		http_global_cleanup();
		log_error("%s: libcurl cannot make a client", kind->name);
		r = -ENOMEM;
	}
	if (r < 0) {
		push_destroy(&s->base);
		return r;
	}
	/* with CURLOPT_NOSIGNAL libcurl leaves SIGPIPE to us, and a TLS write to a closed peer raises it */
	signal(SIGPIPE, SIG_IGN);
	if (s->password && strncasecmp(s->url, "https://", 8) != 0) {
		log_warn("%s: the url is not https: the password crosses the network in clear text", kind->name);
	}
	s->last_sync_ms = monotonic_ms();
	*out = &s->base;
	return 0;
}

int
remote_write_sink_create(const struct fleet_config *cfg, const struct fleet_info *info, struct sink **out)
{
	static const struct push_kind kind = {
		.name = "remote_write",
		.codec = FLEET_CODEC_SNAPPY,
		.headers = "Content-Type: application/x-protobuf\nContent-Encoding: snappy\n"
			   "X-Prometheus-Remote-Write-Version: 0.1.0",
	};
	return push_create(&kind, rw_encoder_create(cfg, info), cfg, info, out);
}

int
otlp_sink_create(const struct fleet_config *cfg, const struct fleet_info *info, struct sink **out)
{
	static const struct push_kind gzip = {
		.name = "otlp",
		.codec = FLEET_CODEC_GZIP,
		.headers = "Content-Type: application/x-protobuf\nContent-Encoding: gzip",
	};
	static const struct push_kind plain = {
		.name = "otlp",
		.codec = -1,
		.headers = "Content-Type: application/x-protobuf",
	};
	return push_create(cfg->compression == FLEET_COMPRESSION_GZIP ? &gzip : &plain,
			   otlp_encoder_create(cfg, info, clock_wall_ms()), cfg, info, out);
}
