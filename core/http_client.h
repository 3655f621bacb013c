/*
 * HTTP POSTs through libcurl, the only file that includes it: many
 * requests at once on one multi handle, each judged when it ends (sent,
 * retry, failed, gone). No queues and no policy here: the webhook
 * delivery and the fleet sinks decide what to send when.
 *
 * libcurl is loaded with dlopen() by the first http_global_init(), so an
 * agent that never sends (no webhook action, no remote_write or otlp
 * section) never maps it nor the libraries it pulls in.
 *
 * Two ways to drive a client: from a thread of its own (http_run(),
 * http_wait(), http_wakeup() from any thread), or inside the agent's
 * poll loop (http_client_new_evented(): one descriptor, http_client_fd(),
 * readable whenever http_run() has work; no thread, never blocks).
 */
#ifndef TEGRAWATCH_HTTP_CLIENT_H
#define TEGRAWATCH_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum http_outcome {
	HTTP_SENT,   /* 2xx */
	HTTP_RETRY,  /* connection errors, timeouts, TLS, 5xx, 408, 429 */
	HTTP_FAILED, /* 3xx (never followed), other 4xx, a URL libcurl cannot use */
	HTTP_GONE,   /* 410: the receiver wants no more */
};

struct http_result {
	enum http_outcome outcome;
	long status;            /* 0 when nothing was answered */
	int64_t retry_after_ms; /* from Retry-After (seconds or HTTP-date), -1 when none */
	char why[300];          /* "HTTP 503" or libcurl's message; never the URL's path or a secret */
};

/* One POST: everything is copied by http_start(). */
struct http_request {
	const char *url;
	const char *const *headers; /* "Name: value" lines, Content-Type included */
	size_t header_count;
	const void *body;
	size_t len;
	int64_t timeout_ms;    /* in total; connect timeout min(10 s, this) */
	const char *ca_file;   /* NULL or "" = the system CAs; verification is always on */
	const char *cert_file; /* a client certificate (PEM), with key_file; NULL or "" = none */
	const char *key_file;
	const char *username; /* basic auth when non-empty */
	const char *password;
	const char *user_agent;
};

struct http_client;

/**
 * Loads libcurl (once) and starts it; every success is paired with an
 * http_global_cleanup(). WHO names the caller in the logged error
 * ("webhook"). Returns 0, -ENOENT (no usable libcurl) or -EIO.
 */
int http_global_init(const char *who);
void http_global_cleanup(void);

/** NULL when libcurl cannot make a multi handle. */
struct http_client *http_client_new(void);

/** A client for the agent's poll loop: see http_client_fd(). NULL on failure. */
struct http_client *http_client_new_evented(void);

/** Cuts what still runs; NULL is a no-op. */
void http_client_free(struct http_client *c);

/**
 * Evented clients: a descriptor that polls readable when a transfer or a
 * timer of the client needs http_run(). -1 for the others.
 */
int http_client_fd(const struct http_client *c);

/**
 * Starts REQ. OWNER comes back in http_run()'s callback. Returns a handle
 * for http_cancel(), or NULL with WHY filled.
 */
void *http_start(struct http_client *c, const struct http_request *req, void *owner, char *why, size_t why_size);

/** Stops the request REQ (from http_start) without a callback. */
void http_cancel(struct http_client *c, void *req);

/** Lets the transfers progress; DONE(CTX, OWNER, RESULT) for each that ended. Never blocks. */
void http_run(struct http_client *c, void (*done)(void *ctx, void *owner, const struct http_result *res), void *ctx);

/** Sleeps until a transfer needs attention, http_wakeup() or TIMEOUT_MS (thread clients). */
void http_wait(struct http_client *c, int64_t timeout_ms);

/** Ends an http_wait() now (any thread). */
void http_wakeup(struct http_client *c);

#endif
