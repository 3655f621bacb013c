/*
 * A webhook request: the module's headers (JSON, the bearer token, the
 * configured ones) and the Standard Webhooks signature, stamped when the
 * attempt starts, handed to core/http_client.c (the only libcurl user).
 */
#include "webhook_http.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/xalloc.h"

#define FIXED_HEADERS 5 /* Content-Type, Authorization, the three signature headers */

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

void *
http_post(struct http_client *c, const struct endpoint_conf *conf, const char *id, const void *body, size_t len,
	  void *owner, char *why, size_t why_size)
{
	const char **headers = xcalloc(FIXED_HEADERS + conf->cfg.header_count, sizeof(*headers));
	size_t n = 0;
	headers[n++] = "Content-Type: application/json";
	if (conf->auth) {
		headers[n++] = conf->auth;
	}
	for (size_t i = 0; i < conf->cfg.header_count; i++) {
		headers[n++] = conf->cfg.headers[i];
	}
	char id_line[WEBHOOK_SIGNATURE_MAX + 32], ts_line[64], sig_line[WEBHOOK_SIGNATURE_MAX + 32];
	if (conf->nkeys) {
		int64_t ts = clock_wall_ms() / 1000; /* of this attempt: receivers refuse stale ones */
		char sig[WEBHOOK_SIGNATURE_MAX];
		snprintf(id_line, sizeof(id_line), "webhook-id: %s", id);
		headers[n++] = id_line;
		snprintf(ts_line, sizeof(ts_line), "webhook-timestamp: %" PRId64, ts);
		headers[n++] = ts_line;
		if (webhook_sign(conf->keys, conf->nkeys, id, ts, body, len, sig, sizeof(sig)) == 0) {
			snprintf(sig_line, sizeof(sig_line), "webhook-signature: %s", sig);
			headers[n++] = sig_line;
		}
	}
	struct http_request req = {
		.url = conf->cfg.url,
		.headers = headers,
		.header_count = n,
		.body = body,
		.len = len,
		.timeout_ms = conf->cfg.timeout_ms,
		.ca_file = conf->cfg.ca_file,
		.user_agent = conf->user_agent,
	};
	void *r = http_start(c, &req, owner, why, why_size);
	free(headers);
	return r;
}
