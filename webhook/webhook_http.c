/*
 * Webhook POSTs through libcurl (the only file that includes it): one
 * multi handle, one easy handle per attempt. Every request: http and
 * https only, no redirects followed, TLS verification on, connect timeout
 * min(10 s, timeout), total timeout, no signals, the answer's body
 * discarded and cut at 64 KiB, no "Expect: 100-continue" round trip.
 *
 * libcurl is loaded with dlopen() by the first http_global_init(), so an
 * agent without webhook actions never maps it: linked, it and the
 * libraries it pulls in (Kerberos, LDAP, SSH, RTMP, nghttp2, brotli...)
 * cost ~250 KiB of RssAnon in every process. Its functions are called
 * through CURL_FN(), the pointers dlsym() found.
 */
#include "webhook_http.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <dlfcn.h>

#define CURL_DISABLE_TYPECHECK /* CURL_FN(curl_easy_setopt)() and CURL_FN(curl_easy_getinfo)() as plain functions */
#include <curl/curl.h>

#include "core/log.h"
#include "core/xalloc.h"

#define RESPONSE_MAX_BYTES (64 * 1024) /* more is cut: the status is all we need */
#define CONNECT_TIMEOUT_MAX_MS 10000L
#define RETRY_AFTER_MAX_S 86400

struct request {
	struct request *next;
	void *owner;
	CURL *easy;
	struct curl_slist *headers;
	char *body;
	int64_t retry_after_ms;
	size_t received;
	bool capped;
	char error[CURL_ERROR_SIZE];
};

struct http_client {
	CURLM *multi;
	struct request *requests;
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

#define CURL_FUNCTIONS(X)                                                                                              \
	X(curl_easy_cleanup)                                                                                           \
	X(curl_easy_getinfo)                                                                                           \
	X(curl_easy_init)                                                                                              \
	X(curl_easy_setopt)                                                                                            \
	X(curl_easy_strerror)                                                                                          \
	X(curl_getdate)                                                                                                \
	X(curl_global_cleanup)                                                                                         \
	X(curl_global_init)                                                                                            \
	X(curl_multi_add_handle)                                                                                       \
	X(curl_multi_cleanup)                                                                                          \
	X(curl_multi_info_read)                                                                                        \
	X(curl_multi_init)                                                                                             \
	X(curl_multi_perform)                                                                                          \
	X(curl_multi_poll)                                                                                             \
	X(curl_multi_remove_handle)                                                                                    \
	X(curl_multi_wakeup)                                                                                           \
	X(curl_slist_append)                                                                                           \
	X(curl_slist_free_all)                                                                                         \
	X(curl_version_info)

#define CURL_FN(name) (curl_lib.name)
#define CURL_POINTER(name) __typeof__(name) *name;

static struct {
	void *handle;
	CURL_FUNCTIONS(CURL_POINTER)
} curl_lib;

/* Loads libcurl once (the OpenSSL or the GnuTLS build: the same API). 0 or -ENOENT. */
static int
curl_load(void)
{
	if (curl_lib.handle) {
		return 0;
	}
	static const char *const names[] = {"libcurl.so.4", "libcurl-gnutls.so.4"};
	void *h = NULL;
	for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++) {
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	}
	if (!h) {
		log_error("webhook: cannot load libcurl (%s): webhooks are off", dlerror());
		return -ENOENT;
	}
#define CURL_RESOLVE(name)                                                                                             \
	if (!(curl_lib.name = (__typeof__(curl_lib.name))dlsym(h, #name))) {                                           \
		log_error("webhook: libcurl has no %s (7.68 or later is needed): webhooks are off", #name);            \
		dlclose(h);                                                                                            \
		return -ENOENT;                                                                                        \
	}
	CURL_FUNCTIONS(CURL_RESOLVE)
#undef CURL_RESOLVE
	curl_lib.handle = h;
	return 0;
}

int
http_global_init(void)
{
	if (curl_load() < 0) {
		return -ENOENT;
	}
	if (CURL_FN(curl_global_init)(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		log_error("webhook: libcurl cannot start: webhooks are off");
		return -EIO;
	}
	const curl_version_info_data *info = CURL_FN(curl_version_info)(CURLVERSION_NOW);
	if (!(info->features & CURL_VERSION_ASYNCHDNS)) {
		log_warn("webhook: libcurl %s resolves names synchronously: a slow DNS delays every webhook",
			 info->version);
	}
	return 0;
}

void
http_global_cleanup(void)
{
	CURL_FN(curl_global_cleanup)();
}

struct http_client *
http_client_new(void)
{
	CURLM *multi = CURL_FN(curl_multi_init)();
	if (!multi) {
		return NULL;
	}
	struct http_client *c = xcalloc(1, sizeof(*c));
	c->multi = multi;
	return c;
}

static void
request_free(struct http_client *c, struct request *r)
{
	for (struct request **pp = &c->requests; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	}
	if (r->easy) {
		CURL_FN(curl_multi_remove_handle)(c->multi, r->easy);
		CURL_FN(curl_easy_cleanup)(r->easy);
	}
	CURL_FN(curl_slist_free_all)(r->headers);
	free(r->body);
	free(r);
}

void
http_client_free(struct http_client *c)
{
	if (!c) {
		return;
	}
	while (c->requests) {
		request_free(c, c->requests);
	}
	CURL_FN(curl_multi_cleanup)(c->multi);
	free(c);
}

static void
add_header(struct curl_slist **list, const char *line)
{
	struct curl_slist *l = CURL_FN(curl_slist_append)(*list, line);
	if (!l) {
		abort_out_of_memory();
	}
	*list = l;
}

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	struct request *r = arg;
	r->received += size * n;
	if (r->received > RESPONSE_MAX_BYTES) {
		r->capped = true;
		return 0; /* ends the transfer; the status is already known */
	}
	return size * n;
}

/* Retry-After: delay-seconds or an HTTP-date */
static size_t
on_header(char *data, size_t size, size_t n, void *arg)
{
	struct request *r = arg;
	size_t len = size * n;
	if (len <= 12 || len >= 128 || strncasecmp(data, "retry-after:", 12) != 0) {
		return len;
	}
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
		r->retry_after_ms = (s > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S : s) * 1000LL;
		return len;
	}
	time_t when = CURL_FN(curl_getdate)(value, NULL);
	if (when != (time_t)-1) {
		int64_t ms = ((int64_t)when - (int64_t)time(NULL)) * 1000;
		r->retry_after_ms = ms > 0 ? ms : 0;
	}
	return len;
}

/* Sets what a request must have; false when libcurl refuses one (it cannot then be made safely). */
static bool
configure(CURL *e, struct request *r, const struct endpoint_conf *conf, size_t len)
{
	const struct webhook_config *cfg = &conf->cfg;
	long timeout = (long)cfg->timeout_ms;
	bool ok = CURL_FN(curl_easy_setopt)(e, CURLOPT_URL, cfg->url) == CURLE_OK;
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85 added the string form and deprecated the bitmask */
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK;
#else
	ok = ok &&
	     CURL_FN(curl_easy_setopt)(e, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) == CURLE_OK;
#endif
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_SSL_VERIFYPEER, 1L) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_SSL_VERIFYHOST, 2L) == CURLE_OK;
	if (cfg->ca_file[0]) {
		ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_CAINFO, cfg->ca_file) == CURLE_OK;
	}
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_NOSIGNAL, 1L) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_FOLLOWLOCATION, 0L) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_TIMEOUT_MS, timeout) == CURLE_OK;
	ok = ok &&
	     CURL_FN(curl_easy_setopt)(e, CURLOPT_CONNECTTIMEOUT_MS,
				       timeout < CONNECT_TIMEOUT_MAX_MS ? timeout : CONNECT_TIMEOUT_MAX_MS) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_POST, 1L) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_POSTFIELDS, r->body) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_HTTPHEADER, r->headers) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_USERAGENT, conf->user_agent) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_WRITEFUNCTION, on_body) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_WRITEDATA, r) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_HEADERFUNCTION, on_header) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_HEADERDATA, r) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_ERRORBUFFER, r->error) == CURLE_OK;
	ok = ok && CURL_FN(curl_easy_setopt)(e, CURLOPT_PRIVATE, r) == CURLE_OK;
	return ok;
}

void *
http_post(struct http_client *c, const struct endpoint_conf *conf, const char *id, const void *body, size_t len,
	  void *owner, char *why, size_t why_size)
{
	struct request *r = xcalloc(1, sizeof(*r));
	r->owner = owner;
	r->retry_after_ms = -1;
	r->body = xmalloc(len + 1);
	memcpy(r->body, body, len);
	add_header(&r->headers, "Content-Type: application/json");
	add_header(&r->headers, "Expect:"); /* no 100-continue round trip */
	if (conf->auth) {
		add_header(&r->headers, conf->auth);
	}
	for (size_t i = 0; i < conf->cfg.header_count; i++) {
		add_header(&r->headers, conf->cfg.headers[i]);
	}
	if (conf->nkeys) {
		int64_t ts = (int64_t)time(NULL); /* of this attempt: receivers refuse stale ones */
		char sig[WEBHOOK_SIGNATURE_MAX], line[WEBHOOK_SIGNATURE_MAX + 32];
		snprintf(line, sizeof(line), "webhook-id: %s", id);
		add_header(&r->headers, line);
		snprintf(line, sizeof(line), "webhook-timestamp: %" PRId64, ts);
		add_header(&r->headers, line);
		if (webhook_sign(conf->keys, conf->nkeys, id, ts, r->body, len, sig, sizeof(sig)) == 0) {
			snprintf(line, sizeof(line), "webhook-signature: %s", sig);
			add_header(&r->headers, line);
		}
	}
	r->easy = CURL_FN(curl_easy_init)();
	if (!r->easy || !configure(r->easy, r, conf, len) ||
	    CURL_FN(curl_multi_add_handle)(c->multi, r->easy) != CURLM_OK) {
		snprintf(why, why_size, "libcurl refused the request (%s)", r->error[0] ? r->error : "setup failed");
		if (r->easy) {
			CURL_FN(curl_easy_cleanup)(r->easy);
			r->easy = NULL;
		}
		CURL_FN(curl_slist_free_all)(r->headers);
		free(r->body);
		free(r);
		return NULL;
	}
	r->next = c->requests;
	c->requests = r;
	return r;
}

void
http_cancel(struct http_client *c, void *req)
{
	request_free(c, req);
}

static enum http_outcome
judge(CURLcode res, long status, bool answered)
{
	if (answered) {
		if (status >= 200 && status < 300) {
			return HTTP_SENT;
		}
		if (status == 410) {
			return HTTP_GONE;
		}
		return status >= 500 || status == 408 || status == 429 ? HTTP_RETRY : HTTP_FAILED;
	}
	switch (res) {
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_NOT_BUILT_IN:
	case CURLE_BAD_FUNCTION_ARGUMENT:
		return HTTP_FAILED; /* the settings are wrong: another try cannot help */
	default:
		return HTTP_RETRY; /* connection refused or reset, timeouts, name resolution, TLS */
	}
}

void
http_run(struct http_client *c, void (*done)(void *ctx, void *owner, const struct http_result *res), void *ctx)
{
	int running = 0;
	CURL_FN(curl_multi_perform)(c->multi, &running);
	CURLMsg *msg;
	int left;
	while ((msg = CURL_FN(curl_multi_info_read)(c->multi, &left))) {
		if (msg->msg != CURLMSG_DONE) {
			continue;
		}
		char *priv = NULL;
		CURL_FN(curl_easy_getinfo)(msg->easy_handle, CURLINFO_PRIVATE, &priv);
		struct request *r = (struct request *)(void *)priv;
		CURLcode res = msg->data.result;
		struct http_result out = {.retry_after_ms = r->retry_after_ms};
		CURL_FN(curl_easy_getinfo)(r->easy, CURLINFO_RESPONSE_CODE, &out.status);
		/* a body over the cap ends the transfer with a write error after a complete status */
		bool answered = out.status > 0 && (res == CURLE_OK || (res == CURLE_WRITE_ERROR && r->capped));
		out.outcome = judge(res, out.status, answered);
		if (answered) {
			snprintf(out.why, sizeof(out.why), "HTTP %ld", out.status);
		} else {
			out.status = 0;
			snprintf(out.why, sizeof(out.why), "%s",
				 r->error[0] ? r->error : CURL_FN(curl_easy_strerror)(res));
		}
		void *owner = r->owner;
		request_free(c, r); /* msg is invalid from here */
		done(ctx, owner, &out);
	}
}

void
http_wait(struct http_client *c, int64_t timeout_ms)
{
	CURL_FN(curl_multi_poll)(c->multi, NULL, 0, (int)(timeout_ms > 0 ? timeout_ms : 0), NULL);
}

void
http_wakeup(struct http_client *c)
{
	CURL_FN(curl_multi_wakeup)(c->multi);
}
