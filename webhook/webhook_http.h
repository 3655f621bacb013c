/*
 * HTTP for webhooks: a POST with the module's headers and signature,
 * through core/http_client.h (which judges each answer: sent, retry,
 * failed, gone). No queues and no policy here: webhook_deliver.c decides
 * what to send when.
 */
#ifndef TEGRAWATCH_WEBHOOK_HTTP_H
#define TEGRAWATCH_WEBHOOK_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "core/http_client.h"
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

/**
 * Starts a POST of BODY (LEN bytes, copied) to CONF's url with ID as the
 * webhook-id, stamped and signed now. OWNER comes back in http_run()'s
 * callback. Returns a handle for http_cancel(), or NULL with WHY filled.
 */
void *http_post(struct http_client *c, const struct endpoint_conf *conf, const char *id, const void *body, size_t len,
		void *owner, char *why, size_t why_size);

#endif
