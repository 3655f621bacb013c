/*
 * HTTP for webhooks, the only libcurl user: POSTs with the module's
 * headers and signature, many at once on one multi handle, each judged
 * when it ends (sent, retry, failed, gone). No queues and no policy here:
 * webhook_deliver.c decides what to send when. Used by one thread, except
 * http_wakeup(), which any thread may call.
 */
#ifndef TEGRAWATCH_WEBHOOK_HTTP_H
#define TEGRAWATCH_WEBHOOK_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "webhook_config.h"
#include "webhook_sign.h"

/* What a request of one endpoint is made of. */
struct endpoint_conf {
	struct webhook_config cfg; /* a deep copy */
	struct webhook_key keys[WEBHOOK_SECRETS_MAX];
	size_t nkeys;     /* 0 = unsigned */
	char *auth;       /* "Authorization: Bearer ..." or NULL */
	char *user_agent; /* "tegrawatch/VERSION" */
};

/** Frees CONF and wipes its secrets; NULL is a no-op. */
void endpoint_conf_free(struct endpoint_conf *conf);

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

struct http_client;

/** libcurl's global start (once, before any thread uses it). 0 or -EIO (logged). */
int http_global_init(void);
void http_global_cleanup(void);

/** NULL when libcurl cannot make a multi handle. */
struct http_client *http_client_new(void);
/** Cuts what still runs; NULL is a no-op. */
void http_client_free(struct http_client *c);

/**
 * Starts a POST of BODY (LEN bytes, copied) to CONF's url with ID as the
 * webhook-id, stamped and signed now. OWNER comes back in http_run()'s
 * callback. Returns a handle for http_cancel(), or NULL with WHY filled.
 */
void *http_post(struct http_client *c, const struct endpoint_conf *conf, const char *id, const void *body, size_t len,
		void *owner, char *why, size_t why_size);

/** Stops the request REQ (from http_post) without a callback. */
void http_cancel(struct http_client *c, void *req);

/** Lets the transfers progress; DONE(CTX, OWNER, RESULT) for each that ended. */
void http_run(struct http_client *c, void (*done)(void *ctx, void *owner, const struct http_result *res), void *ctx);

/** Sleeps until a transfer needs attention, http_wakeup() or TIMEOUT_MS. */
void http_wait(struct http_client *c, int64_t timeout_ms);

/** Ends an http_wait() now (any thread). */
void http_wakeup(struct http_client *c);

#endif
