/*
 * The HTTP server's libmicrohttpd side: the only file that includes
 * <microhttpd.h>. The daemon and its options, the request checks
 * (method, size, Host, authentication), routing, the responses and the
 * event-stream reader. One internal polling thread (epoll, or poll)
 * serves every connection. What the answers are made of lives in the
 * server state (server_state.c), which the sampling loop publishes into
 * through the sink below.
 */
#include "web.h"

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/dynlib.h"
#include "core/json.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/xalloc.h"
#include "auth.h"
#include "dashboard.h"
#include "route.h"
#include "server_priv.h"
#include "web_util.h"

/* Callbacks return enum MHD_Result since 0.9.71; int before. */
#if MHD_VERSION >= 0x00097002
typedef enum MHD_Result mhd_result;
#else
typedef int mhd_result;
#endif

/*
 * libmicrohttpd is loaded with dlopen() when the server starts: linked, it
 * and what it pulls in (GnuTLS, p11-kit, nettle, gmp...; GnuTLS's start-up
 * builds its ASN.1 trees) cost ~350 KiB of RssAnon in every process, the
 * web server configured or not. Its functions are called through HTTPD(),
 * the pointers core/dynlib.h found.
 */
/* clang-format off */
#define HTTPD_FUNCTIONS(X) \
	X(MHD_add_response_header) X(MHD_create_response_from_buffer) X(MHD_create_response_from_callback) \
	X(MHD_destroy_response) X(MHD_get_connection_info) X(MHD_get_connection_values) \
	X(MHD_is_feature_supported) X(MHD_lookup_connection_value) X(MHD_lookup_connection_value_n) \
	X(MHD_queue_response) X(MHD_resume_connection) X(MHD_set_connection_option) \
	X(MHD_start_daemon) X(MHD_stop_daemon) X(MHD_suspend_connection)
/* clang-format on */

#define HTTPD(name) (mhd_lib.name)
#define HTTPD_SYMBOL(name) DYNLIB_SYMBOL(mhd_lib, name)

static struct {
	struct dynlib *lib;
	HTTPD_FUNCTIONS(DYNLIB_POINTER)
} mhd_lib;

/* Loads libmicrohttpd once; it stays loaded (a reload starts the server again). 0 or -ELIBACC, logged. */
static int
mhd_load(void)
{
	static const char *const names[] = {"libmicrohttpd.so.12", NULL};
	static const struct dynlib_symbol symbols[] = {HTTPD_FUNCTIONS(HTTPD_SYMBOL)};
	return dynlib_load_once(&mhd_lib.lib, names, symbols, sizeof(symbols) / sizeof(symbols[0]), "web",
				"libmicrohttpd 0.9.75 or later", "install libmicrohttpd12");
}

#define HEADERS_MAX 8192       /* more header bytes get 431 */
#define POOL_BYTES (32 * 1024) /* per-connection memory (headers, buffers) */
#define LISTEN_BACKLOG 64
#define SSE_BLOCK 16384
#define HEALTH_SLACK_MS 1000
/* beyond our limits: room for connections shut down by the guard that MHD has not reaped yet */
#define CONN_SLACK 64
#define STREAM_RETRY_S "10"
#define STREAM_SNDBUF (16 * 1024) /* the kernel doubles it */

#define CT_JSON "application/json"
#define CT_TEXT "text/plain; charset=utf-8"
#define CT_HTML "text/html; charset=utf-8"
#define CT_PROM "text/plain; version=0.0.4; charset=utf-8"
#define CT_SSE "text/event-stream"
#define PAGE_CSP                                                                                                       \
	"default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "                    \
	"img-src 'self' data:; connect-src 'self'"

/* One event-stream connection: what it sends next. */
struct sse_client {
	struct stream stream; /* the ring's and the notifier's view */
	struct server_state *st;
	struct MHD_Connection *conn;
	struct conn_entry *entry; /* the guard's: alive while the connection is */
	/* what is being sent: a shared event or a line of its own */
	struct blob *cur;
	const char *out;
	size_t out_len, out_off;
	char line[96];
};

/* Markers kept in a request's context pointer. */
static char uri_too_long; /* its target is over WEB_URI_MAX */
static char headers_seen; /* the first call is done */

static struct sse_client *
client_of(struct stream *s)
{
	return (struct sse_client *)((char *)s - offsetof(struct sse_client, stream));
}

/* ---- responses ---- */

enum cache_policy {
	CACHE_NO_STORE,
	CACHE_NO_CACHE,
};

static void
common_headers(struct MHD_Response *r, const char *type, enum cache_policy cache)
{
	HTTPD(MHD_add_response_header)(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	HTTPD(MHD_add_response_header)(r, "X-Content-Type-Options", "nosniff");
	HTTPD(MHD_add_response_header)
	(r, MHD_HTTP_HEADER_CACHE_CONTROL, cache == CACHE_NO_STORE ? "no-store" : "no-cache");
	HTTPD(MHD_add_response_header)(r, "Referrer-Policy", "no-referrer");
}

static void note_status(struct MHD_Connection *conn, unsigned int status);

static mhd_result
queue(struct MHD_Connection *conn, unsigned int status, struct MHD_Response *r)
{
	if (!r) {
		return MHD_NO;
	}
	note_status(conn, status);
	mhd_result ret = HTTPD(MHD_queue_response)(conn, status, r);
	HTTPD(MHD_destroy_response)(r);
	return ret;
}

/* A body MHD frees with free(). */
static mhd_result
reply_owned(struct MHD_Connection *conn, unsigned int status, const char *type, char *body, size_t len)
{
	struct MHD_Response *r = HTTPD(MHD_create_response_from_buffer)(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	common_headers(r, type, CACHE_NO_STORE);
	return queue(conn, status, r);
}

static mhd_result
reply_text(struct MHD_Connection *conn, unsigned int status, const char *type, const char *text)
{
	struct MHD_Response *r =
		HTTPD(MHD_create_response_from_buffer)(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	if (!r) {
		return MHD_NO;
	}
	common_headers(r, type, CACHE_NO_STORE);
	return queue(conn, status, r);
}

/* {"error": MESSAGE} with STATUS; EXTRA_NAME/EXTRA_VALUE add one header (or NULL). */
static mhd_result
reply_error(struct MHD_Connection *conn, unsigned int status, const char *message, const char *extra_name,
	    const char *extra_value)
{
	struct json j;
	json_init(&j);
	json_object_begin(&j);
	json_key(&j, "error");
	json_string(&j, message);
	json_object_end(&j);
	json_raw(&j, "\n", 1);
	struct MHD_Response *r = HTTPD(MHD_create_response_from_buffer)(j.out.len, j.out.buf, MHD_RESPMEM_MUST_COPY);
	json_free(&j);
	if (!r) {
		return MHD_NO;
	}
	common_headers(r, CT_JSON, CACHE_NO_STORE);
	if (extra_name) {
		HTTPD(MHD_add_response_header)(r, extra_name, extra_value);
	}
	return queue(conn, status, r);
}

/* ---- connections: the guard sees each one from accept to close ---- */

/* What we keep per connection (its socket context). */
struct http_conn {
	struct conn_entry entry;
	char *target;        /* the raw target of the current request */
	unsigned int status; /* of the answer queued for it, 0 = none yet */
	struct buf body;     /* a POST's, up to WEB_POST_MAX bytes; body_large: more came */
	bool body_large;
};

static struct http_conn *
conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = HTTPD(MHD_get_connection_info)(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* Remembers the status of the answer, counted when the request completes. */
static void
note_status(struct MHD_Connection *conn, unsigned int status)
{
	struct http_conn *hc = conn_of(conn);
	if (hc) {
		hc->status = status;
	}
}

static struct conn_entry *
entry_of(struct MHD_Connection *conn)
{
	struct http_conn *hc = conn_of(conn);
	return hc ? &hc->entry : NULL;
}

static void
set_phase(struct web_server *srv, struct MHD_Connection *conn, enum conn_phase phase)
{
	struct conn_entry *e = entry_of(conn);
	if (e) {
		conn_guard_set_phase(&srv->st.guard, e, phase, monotonic_ms());
	}
}

/* MHD's thread: a connection was accepted or is about to be closed (its socket is still open). */
static void
on_connection(void *cls, struct MHD_Connection *conn, void **socket_context, enum MHD_ConnectionNotificationCode toe)
{
	struct web_server *srv = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd =
			HTTPD(MHD_get_connection_info)(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *peer =
			HTTPD(MHD_get_connection_info)(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		unsigned char key[16];
		web_addr_key(peer ? peer->client_addr : NULL, false, key);
		struct http_conn *hc = xcalloc(1, sizeof(*hc));
		server_connection_add(&srv->st, &hc->entry, fd ? fd->connect_fd : -1, key);
		*socket_context = hc;
	} else if (*socket_context) {
		struct http_conn *hc = *socket_context;
		conn_guard_remove(&srv->st.guard, &hc->entry);
		free(hc->target);
		buf_free(&hc->body);
		free(hc);
		*socket_context = NULL;
	}
}

/* MHD's thread: an answer is done; a kept-alive connection waits for its next request head. */
static void
on_completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe)
{
	struct web_server *srv = cls;
	(void)req_cls;
	(void)toe;
	struct http_conn *hc = conn_of(conn);
	if (hc && hc->status) {
		conn_guard_count_answer(&srv->st.guard, hc->status);
		hc->status = 0;
	}
	if (hc) {
		buf_reset(&hc->body);
		hc->body_large = false;
	}
	set_phase(srv, conn, CONN_WAITING);
}

/* ---- request checks ---- */

static void *
uri_log(void *cls, const char *uri, struct MHD_Connection *conn)
{
	(void)cls;
	server_lower_thread_priority();
	/* the only place that sees the whole target, query included */
	struct http_conn *hc = conn_of(conn);
	if (hc) {
		/* kept for the router: MHD's unescaping and query parsing are not used */
		free(hc->target);
		hc->target = xstrndup(uri, WEB_URI_MAX + 1);
	}
	return strlen(uri) > WEB_URI_MAX ? &uri_too_long : NULL;
}

struct head_scan {
	size_t bytes;
	unsigned hosts;
};

static mhd_result
scan_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	struct head_scan *hs = cls;
	hs->bytes += strlen(key) + (value ? strlen(value) : 0) + 4; /* ": " and CRLF */
	hs->hosts += strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0;
	return MHD_YES;
}

static mhd_result
reply_unauthorized(const struct web_server *srv, struct MHD_Connection *conn)
{
	struct MHD_Response *r = HTTPD(MHD_create_response_from_buffer)(
		sizeof("{\"error\":\"authentication required\"}\n") - 1,
		(void *)"{\"error\":\"authentication required\"}\n", MHD_RESPMEM_PERSISTENT);
	if (!r) {
		return MHD_NO;
	}
	common_headers(r, CT_JSON, CACHE_NO_STORE);
	if (srv->auth.basic_user) {
		HTTPD(MHD_add_response_header)
		(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Basic realm=\"tegrawatch\", charset=\"UTF-8\"");
	}
	if (srv->auth.token) {
		HTTPD(MHD_add_response_header)(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"tegrawatch\"");
	}
	return queue(conn, MHD_HTTP_UNAUTHORIZED, r);
}

/* Authentication, when configured: true to go on, else *RET is the answer queued (401 or 429). */
static bool
authenticate(struct web_server *srv, struct MHD_Connection *conn, mhd_result *ret)
{
	/* with its length as MHD saw it (0.9.75 still cuts a value at a raw NUL: docs/reliability.md) */
	const char *auth = NULL;
	size_t len = 0;
	if (HTTPD(MHD_lookup_connection_value_n)(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION,
						 sizeof(MHD_HTTP_HEADER_AUTHORIZATION) - 1, &auth, &len) != MHD_YES) {
		auth = NULL;
	}
	const union MHD_ConnectionInfo *peer = HTTPD(MHD_get_connection_info)(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	unsigned char key[16];
	web_addr_key(peer ? peer->client_addr : NULL, true, key);
	int64_t wait_ms;
	switch (web_auth_check(&srv->auth, auth, len, key, monotonic_ms(), &wait_ms)) {
	case AUTH_OK:
		return true;
	case AUTH_THROTTLED: {
		char secs[24];
		snprintf(secs, sizeof(secs), "%lld", (long long)((wait_ms + 999) / 1000));
		*ret = reply_error(conn, MHD_HTTP_TOO_MANY_REQUESTS, "too many failed logins: retry later",
				   MHD_HTTP_HEADER_RETRY_AFTER, secs);
		return false;
	}
	case AUTH_MISSING:
	case AUTH_WRONG:
		break;
	}
	*ret = reply_unauthorized(srv, conn);
	return false;
}

/* ---- handlers ---- */

static mhd_result
handle_page(struct web_server *srv, struct MHD_Connection *conn)
{
	/* one shared response: MHD counts its users */
	note_status(conn, MHD_HTTP_OK);
	return HTTPD(MHD_queue_response)(conn, MHD_HTTP_OK, srv->page);
}

static mhd_result
reply_buf(struct MHD_Connection *conn, const char *type, struct buf *b)
{
	size_t len;
	char *body = buf_take(b, &len);
	return reply_owned(conn, MHD_HTTP_OK, type, body, len);
}

static mhd_result
handle_snapshot(struct web_server *srv, struct MHD_Connection *conn)
{
	struct buf b;
	buf_init(&b);
	server_snapshot(&srv->st, &b);
	return reply_buf(conn, CT_JSON, &b);
}

static mhd_result
handle_history(struct web_server *srv, struct MHD_Connection *conn, const struct web_request *req)
{
	struct json j;
	json_init(&j);
	if (server_history(&srv->st, req->metric, req->seconds, req->tier, &j) == -ENOENT) {
		json_free(&j);
		char msg[METRIC_NAME_MAX + 48];
		snprintf(msg, sizeof(msg), "no history for metric '%s'", req->metric);
		return reply_error(conn, MHD_HTTP_NOT_FOUND, msg, NULL, NULL);
	}
	return reply_buf(conn, CT_JSON, &j.out);
}

static mhd_result
handle_alerts(struct web_server *srv, struct MHD_Connection *conn)
{
	struct buf b;
	buf_init(&b);
	server_alerts(&srv->st, &b);
	return reply_buf(conn, CT_JSON, &b);
}

static mhd_result
handle_metrics(struct web_server *srv, struct MHD_Connection *conn)
{
	struct buf b;
	buf_init(&b);
	server_metrics(&srv->st, &b);
	return reply_buf(conn, CT_PROM, &b);
}

static mhd_result
handle_healthz(struct web_server *srv, struct MHD_Connection *conn)
{
	int64_t age = server_sample_age_ms(&srv->st);
	if (age <= 3 * srv->st.interval_ms + HEALTH_SLACK_MS) {
		return reply_text(conn, MHD_HTTP_OK, CT_TEXT, "ok\n");
	}
	char msg[96];
	snprintf(msg, sizeof(msg), "late: no sample for %lld ms\n", (long long)age);
	return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, CT_TEXT, msg);
}

/* ---- the event stream ---- */

static ssize_t
sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct sse_client *c = cls;
	struct server_state *st = c->st;
	if (c->out_off == c->out_len) {
		blob_unref(c->cur);
		c->cur = NULL;
		int64_t now = monotonic_ms();
		pthread_mutex_lock(&st->lock);
		enum stream_step step =
			server_stream_step_locked(st, &c->stream, now, c->line, sizeof(c->line), &c->cur);
		if (step == STREAM_END) {
			pthread_mutex_unlock(&st->lock);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		if (step == STREAM_PARK) {
			c->stream.suspended = true;
			conn_guard_stream_progress(c->entry, now, true);
			HTTPD(MHD_suspend_connection)(c->conn);
			pthread_mutex_unlock(&st->lock);
			return 0;
		}
		c->out = step == STREAM_EVENT ? c->cur->data : c->line;
		c->out_len = step == STREAM_EVENT ? c->cur->len : strlen(c->line);
		c->out_off = 0;
		pthread_mutex_unlock(&st->lock);
	}
	/* the socket took what we gave last time: the client reads */
	conn_guard_stream_progress(c->entry, monotonic_ms(), false);
	size_t n = c->out_len - c->out_off;
	if (n > max) {
		n = max;
	}
	memcpy(buf, c->out + c->out_off, n);
	c->out_off += n;
	c->stream.last_write_ms = monotonic_ms();
	return (ssize_t)n;
}

static void
sse_free(void *cls)
{
	struct sse_client *c = cls;
	server_stream_detach(c->st, &c->stream);
	blob_unref(c->cur);
	free(c);
}

/* The notifier's hook: a parked stream's connection goes back to MHD. */
static void
sse_resume(struct stream *s)
{
	struct sse_client *c = client_of(s);
	/* the stall clock starts again: it has something to send from now */
	conn_guard_stream_progress(c->entry, monotonic_ms(), false);
	HTTPD(MHD_resume_connection)(c->conn);
}

static mhd_result
handle_events(struct web_server *srv, struct MHD_Connection *conn, bool head)
{
	struct MHD_Response *r;
	if (head) {
		r = HTTPD(MHD_create_response_from_buffer)(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	} else {
		struct conn_entry *e = entry_of(conn);
		if (!e) {
			return MHD_NO;
		}
		if (conn_guard_start_stream(&srv->st.guard, e, monotonic_ms()) < 0) {
			/* streams have their own budget: they cannot take the slots requests need */
			return reply_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "too many event streams: retry later",
					   MHD_HTTP_HEADER_RETRY_AFTER, STREAM_RETRY_S);
		}
		/*
		 * What a client that stopped reading can hold is the kernel's buffers:
		 * left to autotuning ours grow to megabytes (25 minutes of events). A
		 * small fixed one, and the guard drops the stream once it takes
		 * nothing for web.stream_stall_timeout (counted), in place of MHD's
		 * idle timeout (not counted).
		 */
		int sndbuf = STREAM_SNDBUF;
		setsockopt(e->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
		HTTPD(MHD_set_connection_option)(conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
		struct sse_client *c = xcalloc(1, sizeof(*c));
		c->st = &srv->st;
		c->conn = conn;
		c->entry = e;
		c->stream.last_write_ms = monotonic_ms();
		int64_t last_id = -1;
		const char *last = HTTPD(MHD_lookup_connection_value)(conn, MHD_HEADER_KIND, "Last-Event-ID");
		if (last && web_parse_uint(last, 0, INT64_MAX - 1, &last_id) < 0) {
			last_id = -1;
		}
		server_stream_attach(&srv->st, &c->stream, last_id);
		r = HTTPD(MHD_create_response_from_callback)(MHD_SIZE_UNKNOWN, SSE_BLOCK, sse_read, c, sse_free);
		if (!r) {
			sse_free(c);
			return MHD_NO;
		}
	}
	if (!r) {
		return MHD_NO;
	}
	common_headers(r, CT_SSE, CACHE_NO_STORE);
	HTTPD(MHD_add_response_header)(r, "X-Accel-Buffering", "no");
	return queue(conn, MHD_HTTP_OK, r);
}

static mhd_result
handle_work(struct web_server *srv, struct MHD_Connection *conn, struct http_conn *hc)
{
	struct buf b = {0}; /* as buf_init() leaves it */
	const char *type = HTTPD(MHD_lookup_connection_value)(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	unsigned status = server_work(&srv->st, type, hc && hc->body.buf ? hc->body.buf : "", hc ? hc->body.len : 0,
				      !hc || hc->body_large, &b);
	size_t len;
	char *body = buf_take(&b, &len);
	return reply_owned(conn, status, CT_JSON, body, len);
}

/* ---- dispatch ---- */

static mhd_result
handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method, const char *version,
       const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	struct web_server *srv = cls;
	(void)version;
	(void)upload_data;
	if (*req_cls != &headers_seen) {
		/* the request head is complete: no longer one the guard may evict */
		set_phase(srv, conn, CONN_BUSY);
	}
	if (*req_cls == &uri_too_long) {
		return reply_error(conn, MHD_HTTP_URI_TOO_LONG, "URI too long", NULL, NULL);
	}
	bool head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0, post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
	if (!head && !post && strcmp(method, MHD_HTTP_METHOD_GET) != 0) {
		return reply_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed", MHD_HTTP_HEADER_ALLOW,
				   strcmp(url, "/api/v1/work") == 0 ? "POST" : "GET, HEAD");
	}
	struct head_scan hs = {0, 0};
	HTTPD(MHD_get_connection_values)(conn, MHD_HEADER_KIND, scan_header, &hs);
	if (hs.bytes > HEADERS_MAX) {
		return reply_error(conn, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE, "request headers too large", NULL,
				   NULL);
	}
	if (hs.hosts > 1) {
		/* MHD would give us the first: which one a proxy in front checked is anyone's guess (RFC 9112 3.2) */
		return reply_error(conn, MHD_HTTP_BAD_REQUEST, "more than one Host header", NULL, NULL);
	}
	if (srv->loopback &&
	    !web_host_is_loopback(HTTPD(MHD_lookup_connection_value)(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST))) {
		return reply_error(conn, MHD_HTTP_MISDIRECTED_REQUEST,
				   "this server answers only to localhost, 127.0.0.1 and [::1]", NULL, NULL);
	}
	if (*req_cls == NULL) {
		/*
		 * Answer only once the request is complete: a response queued on
		 * the first call makes MHD close the connection (no keep-alive).
		 */
		*req_cls = &headers_seen;
		return MHD_YES;
	}
	struct http_conn *hc = conn_of(conn);
	if (*upload_data_size != 0) { /* a body means something on POST only, and a work report is short */
		if (post && hc && !(hc->body_large |= hc->body.len + *upload_data_size > WEB_POST_MAX)) {
			buf_add(&hc->body, upload_data, *upload_data_size);
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	mhd_result ret;
	if (!authenticate(srv, conn, &ret)) {
		return ret;
	}
	struct web_request req;
	web_route(hc && hc->target ? hc->target : url, &srv->st.span, &req);
	if (req.route != ROUTE_NONE && post != (req.route == ROUTE_WORK)) {
		return reply_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed", MHD_HTTP_HEADER_ALLOW,
				   post ? "GET, HEAD" : "POST");
	}
	switch (req.route) {
	case ROUTE_PAGE:
		return handle_page(srv, conn);
	case ROUTE_SNAPSHOT:
		return handle_snapshot(srv, conn);
	case ROUTE_HISTORY:
		return handle_history(srv, conn, &req);
	case ROUTE_ALERTS:
		return handle_alerts(srv, conn);
	case ROUTE_EVENTS:
		return handle_events(srv, conn, head);
	case ROUTE_METRICS:
		return handle_metrics(srv, conn);
	case ROUTE_HEALTHZ:
		return handle_healthz(srv, conn);
	case ROUTE_WORK:
		return handle_work(srv, conn, hc);
	case ROUTE_NONE:
		break;
	}
	return reply_error(conn, req.status, req.error, NULL, NULL);
}

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char buf[256];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	size_t n = strlen(buf);
	while (n > 0 && buf[n - 1] == '\n') {
		buf[--n] = '\0';
	}
	/* debug only: a warning would count in the loop's warning counter from this thread */
	log_debug("web: libmicrohttpd: %s", buf);
}

/* ---- start and stop ---- */

static int
start_threads(struct web_server *srv, const struct web_config *cfg, bool v6)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	flags |= HTTPD(MHD_is_feature_supported)(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL;
	if (v6) {
		flags |= MHD_USE_IPv6;
	}
	unsigned int timeout_s = (unsigned int)((cfg->connection_timeout_ms + 999) / 1000);
	/*
	 * MHD's own limits stay out of the way (its per-address limit refuses the
	 * newcomer, its global one stops accepting): the guard applies ours and
	 * evicts instead (conn_guard.h). This ceiling only bounds the memory.
	 */
	unsigned int conn_limit = (unsigned int)(cfg->max_connections + cfg->max_event_streams + CONN_SLACK);
	/* MHD's threads and ours must not take the signals the loop reads from its signalfd */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	srv->daemon = HTTPD(MHD_start_daemon)(
		flags, 0, NULL, NULL, handle, srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv, MHD_OPTION_LISTEN_SOCKET,
		srv->listen_fd, MHD_OPTION_CONNECTION_LIMIT, conn_limit, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
		srv, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)POOL_BYTES, MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
		MHD_OPTION_URI_LOG_CALLBACK, uri_log, srv, MHD_OPTION_END);
	int r = 0;
	if (!srv->daemon) {
		r = -EIO;
	} else {
		r = server_notifier_start(&srv->st, sse_resume);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

int
web_server_start(const struct web_config *cfg, const struct agent_info *info, const struct web_work_hook *work,
		 struct sink **out)
{
	if (mhd_load() < 0) {
		if (work && work->release) {
			work->release(work->data); /* the reference the server would have released */
		}
		return -ELIBACC;
	}
	struct web_server *srv = xcalloc(1, sizeof(*srv));
	srv->listen_fd = -1;
	srv->sink.ops = &web_sink_ops;
	server_state_init(&srv->st, cfg, info, work); /* from now on web_server_free() releases WORK */
	/* the configuration was checked by web_config_section: this only guards other callers */
	struct sockaddr_storage addr;
	socklen_t addr_len;
	bool basic = cfg->basic_auth_user[0] != '\0';
	if (web_parse_listen(cfg->listen, &addr, &addr_len, &srv->loopback) < 0 ||
	    basic != (cfg->basic_auth_password_file[0] != '\0') || (!srv->loopback && !basic && !cfg->token_file[0])) {
		log_error("web: refusing the configuration of %s (tegrawatch check says why)", cfg->listen);
		web_server_free(srv);
		return -EINVAL;
	}
	int r = web_auth_load(&srv->auth, cfg);
	if (r < 0) {
		web_server_free(srv);
		return r;
	}
	srv->page = HTTPD(MHD_create_response_from_buffer)(dashboard_html_len, (void *)dashboard_html,
							   MHD_RESPMEM_PERSISTENT);
	if (!srv->page) {
		web_server_free(srv);
		return -ENOMEM;
	}
	common_headers(srv->page, CT_HTML, CACHE_NO_CACHE);
	HTTPD(MHD_add_response_header)(srv->page, "Content-Security-Policy", PAGE_CSP);
	HTTPD(MHD_add_response_header)(srv->page, "X-Frame-Options", "DENY");

	r = web_listen_socket(&addr, addr_len, LISTEN_BACKLOG, &srv->port);
	if (r < 0) {
		/* not logged: the caller knows whether it tries another port, and what to advise */
		web_server_free(srv);
		return r;
	}
	srv->listen_fd = r;
	r = start_threads(srv, cfg, addr.ss_family == AF_INET6);
	if (r < 0) {
		log_error("web: cannot start the HTTP server on %s", cfg->listen);
		web_server_free(srv);
		return r;
	}
	if (!srv->loopback) {
		log_warn("web: listening on %s without TLS: credentials and data cross the network in clear "
			 "(an SSH tunnel or a TLS proxy is safer)",
			 cfg->listen);
	}
	log_info("web: listening on port %d (%s); history: %zu samples and %zu minutes per metric, at most %zu metrics",
		 srv->port, cfg->listen, history_capacity(srv->st.hist), history_bucket_count(srv->st.hist),
		 history_max_metrics(srv->st.hist));
	*out = &srv->sink;
	return 0;
}

void
web_server_free(struct web_server *srv)
{
	if (!srv) {
		return;
	}
	server_state_stop(&srv->st);
	if (srv->daemon) {
		HTTPD(MHD_stop_daemon)(srv->daemon); /* closes the listening socket too */
	} else if (srv->listen_fd >= 0) {
		close(srv->listen_fd);
	}
	if (srv->page) {
		HTTPD(MHD_destroy_response)(srv->page);
	}
	server_state_fini(&srv->st);
	web_auth_free(&srv->auth);
	free(srv);
}
