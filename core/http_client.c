/*
 * HTTP POSTs through libcurl (the only file that includes it; see
 * http_client.h): one multi handle, one easy handle per attempt. Every
 * request: http and https only, no redirects followed, TLS verification
 * on, connect timeout min(10 s, timeout), total timeout, no signals, the
 * answer's body discarded and cut at 64 KiB, no "Expect: 100-continue"
 * round trip.
 *
 * libcurl is loaded with dlopen() by the first http_global_init(): linked,
 * it and the libraries it pulls in (Kerberos, LDAP, SSH, RTMP, nghttp2,
 * brotli...) cost ~250 KiB of RssAnon in every process. Its functions are
 * called through CURL_FN(), the pointers core/dynlib.h found.
 *
 * An evented client drives libcurl's socket interface: the sockets libcurl
 * wants watched and a timerfd for its timeouts sit in one epoll set, whose
 * descriptor the agent's loop polls.
 */
#include "http_client.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define CURL_DISABLE_TYPECHECK /* CURL_FN(curl_easy_setopt)() and CURL_FN(curl_easy_getinfo)() as plain functions */
#include <curl/curl.h>

#include "clock.h"
#include "dynlib.h"
#include "log.h"
#include "xalloc.h"

#define RESPONSE_MAX_BYTES (64 * 1024) /* more is cut: the status is all we need */
#define CONNECT_TIMEOUT_MAX_MS 10000L
#define RETRY_AFTER_MAX_S 86400
#define EVENTS_MAX 16

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
	int epfd;    /* evented: libcurl's sockets and the timer; -1 otherwise */
	int timerfd; /* evented: libcurl's next timeout */
};

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
	X(curl_multi_setopt)                                                                                           \
	X(curl_multi_socket_action)                                                                                    \
	X(curl_multi_wakeup)                                                                                           \
	X(curl_slist_append)                                                                                           \
	X(curl_slist_free_all)                                                                                         \
	X(curl_version_info)

#define CURL_FN(name) (curl_lib.name)
#define CURL_SYMBOL(name) DYNLIB_SYMBOL(curl_lib, name)

static struct {
	struct dynlib *lib;
	CURL_FUNCTIONS(DYNLIB_POINTER)
} curl_lib;

/* Loads libcurl once (the OpenSSL or the GnuTLS build: the same API). 0 or -ENOENT. */
static int
curl_load(const char *who)
{
	static const char *const names[] = {"libcurl.so.4", "libcurl-gnutls.so.4", NULL};
	static const struct dynlib_symbol symbols[] = {CURL_FUNCTIONS(CURL_SYMBOL)};
	return dynlib_load_once(&curl_lib.lib, names, symbols, sizeof(symbols) / sizeof(symbols[0]), who,
				"libcurl 7.68 or later", "nothing is sent") < 0
		       ? -ENOENT
		       : 0;
}

int
http_global_init(const char *who)
{
	if (curl_load(who) < 0) {
		return -ENOENT;
	}
	if (CURL_FN(curl_global_init)(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		log_error("%s: libcurl cannot start: nothing is sent", who);
		return -EIO;
	}
	const curl_version_info_data *info = CURL_FN(curl_version_info)(CURLVERSION_NOW);
	if (!(info->features & CURL_VERSION_ASYNCHDNS)) {
		log_warn("%s: libcurl %s resolves names synchronously: a slow DNS delays every request", who,
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
	c->epfd = -1;
	c->timerfd = -1;
	return c;
}

/* libcurl's CURLMOPT_SOCKETFUNCTION: watch S for WHAT in the epoll set. */
static int
on_socket(CURL *easy, curl_socket_t s, int what, void *arg, void *socketp)
{
	(void)easy;
	(void)socketp;
	struct http_client *c = arg;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, s, NULL); /* libcurl may have closed it already */
		return 0;
	}
	struct epoll_event ev = {.data.fd = s};
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	if (epoll_ctl(c->epfd, EPOLL_CTL_MOD, s, &ev) < 0 && errno == ENOENT) {
		epoll_ctl(c->epfd, EPOLL_CTL_ADD, s, &ev);
	}
	return 0;
}

/* libcurl's CURLMOPT_TIMERFUNCTION: its next timeout, on the timerfd (-1 = none, 0 = now). */
static int
on_timer(CURLM *multi, long timeout_ms, void *arg)
{
	(void)multi;
	struct http_client *c = arg;
	struct itimerspec its = {0};
	if (timeout_ms == 0) {
		its.it_value.tv_nsec = 1; /* all zero would disarm it */
	} else if (timeout_ms > 0) {
		its.it_value.tv_sec = timeout_ms / 1000;
		its.it_value.tv_nsec = (timeout_ms % 1000) * 1000000L;
	}
	timerfd_settime(c->timerfd, 0, &its, NULL);
	return 0;
}

struct http_client *
http_client_new_evented(void)
{
	struct http_client *c = http_client_new();
	if (!c) {
		return NULL;
	}
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = c->timerfd};
	if (c->epfd < 0 || c->timerfd < 0 || epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->timerfd, &ev) < 0) {
		http_client_free(c);
		return NULL;
	}
	CURL_FN(curl_multi_setopt)(c->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	CURL_FN(curl_multi_setopt)(c->multi, CURLMOPT_SOCKETDATA, c);
	CURL_FN(curl_multi_setopt)(c->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	CURL_FN(curl_multi_setopt)(c->multi, CURLMOPT_TIMERDATA, c);
	return c;
}

int
http_client_fd(const struct http_client *c)
{
	return c->epfd;
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
	if (c->epfd >= 0) {
		close(c->epfd);
	}
	if (c->timerfd >= 0) {
		close(c->timerfd);
	}
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
		int64_t ms = ((int64_t)when - clock_wall_ms() / 1000) * 1000;
		r->retry_after_ms = ms > 0 ? ms : 0;
	}
	return len;
}

static bool
is_set(const char *s)
{
	return s && s[0];
}

#define SETOPT(e, opt, value) (CURL_FN(curl_easy_setopt)((e), (opt), (value)) == CURLE_OK)

/* Sets what a request must have; false when libcurl refuses one (it cannot then be made safely). */
static bool
configure(CURL *e, struct request *r, const struct http_request *req)
{
	long timeout = (long)(req->timeout_ms > 0 ? req->timeout_ms : 10000); /* 0 would be libcurl's "never" */
	bool ok = SETOPT(e, CURLOPT_URL, req->url);
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85 added the string form and deprecated the bitmask */
	ok = ok && SETOPT(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	ok = ok && SETOPT(e, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	ok = ok && SETOPT(e, CURLOPT_SSL_VERIFYPEER, 1L);
	ok = ok && SETOPT(e, CURLOPT_SSL_VERIFYHOST, 2L);
	if (is_set(req->ca_file)) {
		ok = ok && SETOPT(e, CURLOPT_CAINFO, req->ca_file);
	}
	if (is_set(req->cert_file)) {
		ok = ok && SETOPT(e, CURLOPT_SSLCERT, req->cert_file);
		ok = ok && SETOPT(e, CURLOPT_SSLKEY, req->key_file);
	}
	if (is_set(req->username)) {
		ok = ok && SETOPT(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		ok = ok && SETOPT(e, CURLOPT_USERNAME, req->username);
		ok = ok && SETOPT(e, CURLOPT_PASSWORD, req->password ? req->password : "");
	}
	ok = ok && SETOPT(e, CURLOPT_NOSIGNAL, 1L);
	ok = ok && SETOPT(e, CURLOPT_FOLLOWLOCATION, 0L);
	ok = ok && SETOPT(e, CURLOPT_TIMEOUT_MS, timeout);
	ok = ok &&
	     SETOPT(e, CURLOPT_CONNECTTIMEOUT_MS, timeout < CONNECT_TIMEOUT_MAX_MS ? timeout : CONNECT_TIMEOUT_MAX_MS);
	ok = ok && SETOPT(e, CURLOPT_POST, 1L);
	ok = ok && SETOPT(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->len);
	ok = ok && SETOPT(e, CURLOPT_POSTFIELDS, r->body);
	ok = ok && SETOPT(e, CURLOPT_HTTPHEADER, r->headers);
	if (is_set(req->user_agent)) {
		ok = ok && SETOPT(e, CURLOPT_USERAGENT, req->user_agent);
	}
	ok = ok && SETOPT(e, CURLOPT_WRITEFUNCTION, on_body);
	ok = ok && SETOPT(e, CURLOPT_WRITEDATA, r);
	ok = ok && SETOPT(e, CURLOPT_HEADERFUNCTION, on_header);
	ok = ok && SETOPT(e, CURLOPT_HEADERDATA, r);
	ok = ok && SETOPT(e, CURLOPT_ERRORBUFFER, r->error);
	ok = ok && SETOPT(e, CURLOPT_PRIVATE, r);
	return ok;
}

void *
http_start(struct http_client *c, const struct http_request *req, void *owner, char *why, size_t why_size)
{
	struct request *r = xcalloc(1, sizeof(*r));
	r->owner = owner;
	r->retry_after_ms = -1;
	r->body = xmalloc(req->len + 1);
	memcpy(r->body, req->body, req->len);
	add_header(&r->headers, "Expect:"); /* no 100-continue round trip */
	for (size_t i = 0; i < req->header_count; i++) {
		add_header(&r->headers, req->headers[i]);
	}
	r->easy = CURL_FN(curl_easy_init)();
	if (!r->easy || !configure(r->easy, r, req) || CURL_FN(curl_multi_add_handle)(c->multi, r->easy) != CURLM_OK) {
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

/* Evented clients: hands libcurl what the epoll set saw, without waiting. */
static void
drive_events(struct http_client *c)
{
	struct epoll_event evs[EVENTS_MAX];
	int running = 0;
	int n = epoll_wait(c->epfd, evs, EVENTS_MAX, 0);
	for (int i = 0; i < n; i++) {
		if (evs[i].data.fd == c->timerfd) {
			uint64_t expirations;
			if (read(c->timerfd, &expirations, sizeof(expirations)) < 0) {
				continue; /* not expired after all (EAGAIN) */
			}
			CURL_FN(curl_multi_socket_action)(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
			continue;
		}
		int flags = (evs[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
			    (evs[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
			    (evs[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
		CURL_FN(curl_multi_socket_action)(c->multi, evs[i].data.fd, flags, &running);
	}
}

void
http_run(struct http_client *c, void (*done)(void *ctx, void *owner, const struct http_result *res), void *ctx)
{
	if (c->epfd >= 0) {
		drive_events(c);
	} else {
		int running = 0;
		CURL_FN(curl_multi_perform)(c->multi, &running);
	}
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
