/*
 * The HTTP server on libmicrohttpd: the only file that includes
 * <microhttpd.h>. One internal polling thread (epoll, or poll) serves
 * every connection; a small notifier thread wakes suspended event
 * streams. The sampling loop renders each sample (and each alert event)
 * once into immutable refcounted blobs and swaps them in under `lock`;
 * handlers take references under the same lock and build their answers
 * outside it. The history rings have their own lock.
 */
#include "web.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "agent/core/alert.h"
#include "agent/core/buf.h"
#include "agent/core/json.h"
#include "agent/core/log.h"
#include "agent/core/metrics.h"
#include "agent/core/sample_json.h"
#include "dashboard.h"
#include "history.h"
#include "prom_format.h"
#include "web_util.h"

/* Callbacks return enum MHD_Result since 0.9.71; int before. */
#if MHD_VERSION >= 0x00097002
typedef enum MHD_Result mhd_result;
#else
typedef int mhd_result;
#endif

#define URI_MAX 2048              /* longer request targets get 414 */
#define HEADERS_MAX 8192          /* more header bytes get 431 */
#define POOL_BYTES (32 * 1024)    /* per-connection memory (headers, buffers) */
#define LISTEN_BACKLOG 64
#define EVENT_RING 64             /* pre-rendered stream events kept for slow readers */
#define RECENT_MAX 100            /* alert transitions in /api/v1/alerts */
#define ACTIVE_MAX 4096
#define KEEPALIVE_MS 15000
#define SSE_BLOCK 16384
#define HEALTH_SLACK_MS 1000
#define HTTP_NICE 10              /* the HTTP threads' nice value, above the loop's */

#define CT_JSON "application/json"
#define CT_TEXT "text/plain; charset=utf-8"
#define CT_HTML "text/html; charset=utf-8"
#define CT_PROM "text/plain; version=0.0.4; charset=utf-8"
#define CT_SSE "text/event-stream"
#define PAGE_CSP                                                                                           \
	"default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "         \
	"img-src 'self' data:; connect-src 'self'"

/* An immutable piece of output shared by the loop and the handlers. */
struct blob {
	atomic_uint refs;
	size_t len;
	char data[];
};

struct active_alert {
	char fingerprint[ALERT_FINGERPRINT_LEN + 1];
	struct blob *json;
};

struct sse_client {
	struct web_server *srv;
	struct MHD_Connection *conn;
	struct sse_client *prev, *next;
	uint64_t cursor;       /* seq of the next event to send */
	bool started;          /* "retry:" sent */
	bool suspended;
	int64_t last_write_ms;
	/* what is being sent: a shared event or a line of its own */
	struct blob *cur;
	const char *out;
	size_t out_len, out_off;
	char line[96];
};

struct web_server {
	struct sink sink;
	struct MHD_Daemon *daemon;
	int listen_fd;
	int port;
	bool loopback;       /* check Host against loopback names */
	char *token;         /* bearer token, NULL = none */
	size_t token_len;
	char *basic_user;    /* NULL = no basic auth */
	size_t basic_user_len;
	char *basic_pass;
	size_t basic_pass_len;
	int64_t interval_ms;
	int64_t history_s;
	int64_t start_mono_ms;
	int64_t boot_time_s; /* from /proc/stat, for process_start_time_seconds */
	char *version;
	char *board_json;    /* {"model",...} */
	struct prom_board board;
	struct board_identity identity;
	struct MHD_Response *page;

	pthread_mutex_t lock; /* everything down to `clients` */
	pthread_cond_t wake;
	struct blob *sample;  /* the latest sample's JSON object */
	struct blob *prom;    /* its /metrics text (without the process part) */
	struct active_alert *active;
	size_t active_count;
	struct blob *recent[RECENT_MAX];
	size_t recent_next;   /* slot of the next transition */
	size_t recent_count;
	struct blob *events[EVENT_RING]; /* event seq s is at s % EVENT_RING */
	uint64_t event_next;  /* seq of the next event, from 1; written by the loop only */
	uint64_t last_sample_event;
	struct sse_client *clients;
	bool stopping;

	pthread_t notifier;
	bool notifier_started;
	struct MHD_Connection **wake_list;
	size_t wake_cap;

	pthread_mutex_t hist_lock;
	struct history *hist;

	atomic_llong last_sample_mono_ms;

	/* the loop thread's scratch */
	struct json j;
	struct buf text;
};

/* Markers kept in a request's context pointer. */
static char uri_too_long; /* its target is over URI_MAX */
static char headers_seen; /* the first call is done */

static const char empty_sample_json[] =
	"{\"seq\":0,\"ts\":null,\"time_ms\":null,\"power_mode\":null,\"metrics\":{},"
	"\"throttle\":{\"active\":false,\"reasons\":{},\"context\":\"\"}}";

/* ---- small things ---- */

static int64_t
mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct blob *
blob_new(const char *data, size_t len)
{
	struct blob *b = malloc(sizeof(*b) + len + 1);
	if (!b) {
		abort();
	}
	atomic_init(&b->refs, 1);
	b->len = len;
	memcpy(b->data, data, len);
	b->data[len] = '\0';
	return b;
}

static struct blob *
blob_ref(struct blob *b)
{
	if (b) {
		atomic_fetch_add(&b->refs, 1);
	}
	return b;
}

static void
blob_unref(struct blob *b)
{
	if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
		free(b);
	}
}

static char *
xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");
	if (!p) {
		abort();
	}
	return p;
}

static struct web_server *
server_of(struct sink *sink)
{
	return (struct web_server *)((char *)sink - offsetof(struct web_server, sink));
}

/* ---- responses ---- */

enum cache_policy {
	CACHE_NO_STORE,
	CACHE_NO_CACHE,
};

static void
common_headers(struct MHD_Response *r, const char *type, enum cache_policy cache)
{
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, cache == CACHE_NO_STORE ? "no-store" : "no-cache");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

static mhd_result
queue(struct MHD_Connection *conn, unsigned int status, struct MHD_Response *r)
{
	if (!r) {
		return MHD_NO;
	}
	mhd_result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* A body MHD frees with free(). */
static mhd_result
reply_owned(struct MHD_Connection *conn, unsigned int status, const char *type, char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
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
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
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
	struct MHD_Response *r = MHD_create_response_from_buffer(j.len, j.buf, MHD_RESPMEM_MUST_COPY);
	json_free(&j);
	if (!r) {
		return MHD_NO;
	}
	common_headers(r, CT_JSON, CACHE_NO_STORE);
	if (extra_name) {
		MHD_add_response_header(r, extra_name, extra_value);
	}
	return queue(conn, status, r);
}

/* ---- request checks ---- */

/*
 * The HTTP threads run at a lower priority (Linux nice is per thread):
 * when the CPU is short, a burst of requests waits, the sampling loop
 * does not. MHD's thread is lowered on its first request.
 */
static void
lower_thread_priority(void)
{
	static _Thread_local bool done;
	if (!done) {
		done = true;
		setpriority(PRIO_PROCESS, (id_t)gettid(), HTTP_NICE);
	}
}

static void *
uri_log(void *cls, const char *uri, struct MHD_Connection *conn)
{
	(void)cls;
	(void)conn;
	lower_thread_priority();
	/* the only place that sees the whole target, query included */
	return strlen(uri) > URI_MAX ? &uri_too_long : NULL;
}

static mhd_result
count_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	size_t *sum = cls;
	*sum += strlen(key) + (value ? strlen(value) : 0) + 4; /* ": " and CRLF */
	return MHD_YES;
}

static size_t
header_bytes(struct MHD_Connection *conn)
{
	size_t sum = 0;
	MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &sum);
	return sum;
}

static bool
authorized(const struct web_server *srv, struct MHD_Connection *conn)
{
	if (!srv->token && !srv->basic_user) {
		return true;
	}
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (srv->token && auth && strncasecmp(auth, "Bearer ", 7) == 0) {
		const char *t = auth + 7;
		while (*t == ' ') {
			t++;
		}
		return web_secret_equal(srv->token, srv->token_len, t, strlen(t));
	}
	if (!srv->basic_user) {
		return false;
	}
	char *pass = NULL;
	char *user = MHD_basic_auth_get_username_password(conn, &pass);
	bool ok = false;
	if (user && pass) {
		/* both compared in full, whichever is wrong */
		bool u = web_secret_equal(srv->basic_user, srv->basic_user_len, user, strlen(user));
		bool p = web_secret_equal(srv->basic_pass, srv->basic_pass_len, pass, strlen(pass));
		ok = u && p;
	}
	MHD_free(user);
	MHD_free(pass);
	return ok;
}

static mhd_result
reply_unauthorized(const struct web_server *srv, struct MHD_Connection *conn)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		sizeof("{\"error\":\"authentication required\"}\n") - 1,
		(void *)"{\"error\":\"authentication required\"}\n", MHD_RESPMEM_PERSISTENT);
	if (!r) {
		return MHD_NO;
	}
	common_headers(r, CT_JSON, CACHE_NO_STORE);
	if (srv->basic_user) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Basic realm=\"tegrawatch\", charset=\"UTF-8\"");
	}
	if (srv->token) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"tegrawatch\"");
	}
	return queue(conn, MHD_HTTP_UNAUTHORIZED, r);
}

/* ---- handlers ---- */

static mhd_result
handle_page(struct web_server *srv, struct MHD_Connection *conn)
{
	/* one shared response: MHD counts its users */
	return MHD_queue_response(conn, MHD_HTTP_OK, srv->page);
}

/* Appends the active alerts as a JSON array; the caller holds the lock. */
static void
add_active_locked(const struct web_server *srv, struct buf *t)
{
	buf_addc(t, '[');
	for (size_t i = 0; i < srv->active_count; i++) {
		if (i > 0) {
			buf_addc(t, ',');
		}
		buf_add(t, srv->active[i].json->data, srv->active[i].json->len);
	}
	buf_addc(t, ']');
}

static mhd_result
handle_snapshot(struct web_server *srv, struct MHD_Connection *conn)
{
	struct buf t;
	buf_init(&t);
	buf_addf(&t, "{\"board\":%s,\"agent\":{\"version\":", srv->board_json);
	struct json j;
	json_init(&j);
	json_string(&j, srv->version);
	buf_add(&t, j.buf, j.len);
	json_free(&j);
	buf_addf(&t, ",\"interval_ms\":%lld,\"uptime_s\":%lld},", (long long)srv->interval_ms,
		     (long long)((mono_ms() - srv->start_mono_ms) / 1000));
	struct buf alerts;
	buf_init(&alerts);
	pthread_mutex_lock(&srv->lock);
	struct blob *sample = blob_ref(srv->sample);
	add_active_locked(srv, &alerts);
	pthread_mutex_unlock(&srv->lock);
	/* the sample's fields without its braces */
	buf_add(&t, sample->data + 1, sample->len - 2);
	blob_unref(sample);
	buf_adds(&t, ",\"alerts\":");
	buf_add(&t, alerts.buf, alerts.len);
	buf_free(&alerts);
	buf_adds(&t, "}\n");
	size_t len;
	char *body = buf_take(&t, &len);
	return reply_owned(conn, MHD_HTTP_OK, CT_JSON, body, len);
}

static mhd_result
handle_history(struct web_server *srv, struct MHD_Connection *conn)
{
	const char *metric = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "metric");
	if (!metric || !metric[0]) {
		return reply_error(conn, MHD_HTTP_BAD_REQUEST, "missing metric: use ?metric=NAME", NULL, NULL);
	}
	if (strlen(metric) >= METRIC_NAME_MAX || !metric_name_valid(metric)) {
		return reply_error(conn, MHD_HTTP_BAD_REQUEST,
				   "metric: expected a metric name like temp.cpu_c (lower case, dotted)", NULL, NULL);
	}
	int64_t seconds = srv->history_s;
	const char *sec_text = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds");
	if (sec_text && web_parse_uint(sec_text, 1, srv->history_s, &seconds) < 0) {
		char msg[96];
		snprintf(msg, sizeof(msg), "seconds: expected a whole number from 1 to %lld", (long long)srv->history_s);
		return reply_error(conn, MHD_HTTP_BAD_REQUEST, msg, NULL, NULL);
	}
	struct history_point *pts = NULL;
	size_t n = 0;
	pthread_mutex_lock(&srv->hist_lock);
	int r = history_window(srv->hist, metric, seconds * 1000, &pts, &n);
	pthread_mutex_unlock(&srv->hist_lock);
	if (r == -ENOENT) {
		char msg[METRIC_NAME_MAX + 48];
		snprintf(msg, sizeof(msg), "no history for metric '%s'", metric);
		return reply_error(conn, MHD_HTTP_NOT_FOUND, msg, NULL, NULL);
	}
	struct history_stats st;
	history_stats(pts, n, &st);
	struct json j;
	json_init(&j);
	json_object_begin(&j);
	json_key(&j, "metric");
	json_string(&j, metric);
	json_key(&j, "seconds");
	json_int(&j, seconds);
	json_key(&j, "interval_ms");
	json_int(&j, srv->interval_ms);
	json_key(&j, "points");
	json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		json_array_begin(&j);
		json_int(&j, pts[i].time_ms);
		json_number(&j, pts[i].value);
		json_array_end(&j);
	}
	json_array_end(&j);
	free(pts);
	json_key(&j, "stats");
	json_object_begin(&j);
	json_key(&j, "count");
	json_uint(&j, st.count);
	json_key(&j, "min");
	json_number(&j, st.min); /* null when there is no point */
	json_key(&j, "mean");
	json_number(&j, st.mean);
	json_key(&j, "max");
	json_number(&j, st.max);
	json_key(&j, "p95");
	json_number(&j, st.p95);
	json_object_end(&j);
	json_object_end(&j);
	json_raw(&j, "\n", 1);
	char *body = j.buf; /* handed to MHD, which frees it */
	size_t len = j.len;
	return reply_owned(conn, MHD_HTTP_OK, CT_JSON, body, len);
}

static mhd_result
handle_alerts(struct web_server *srv, struct MHD_Connection *conn)
{
	struct buf t;
	buf_init(&t);
	buf_adds(&t, "{\"active\":");
	pthread_mutex_lock(&srv->lock);
	add_active_locked(srv, &t);
	buf_adds(&t, ",\"recent\":[");
	for (size_t i = 0; i < srv->recent_count; i++) {
		size_t slot = (srv->recent_next + RECENT_MAX - srv->recent_count + i) % RECENT_MAX;
		if (i > 0) {
			buf_addc(&t, ',');
		}
		buf_add(&t, srv->recent[slot]->data, srv->recent[slot]->len);
	}
	pthread_mutex_unlock(&srv->lock);
	buf_adds(&t, "]}\n");
	size_t len;
	char *body = buf_take(&t, &len);
	return reply_owned(conn, MHD_HTTP_OK, CT_JSON, body, len);
}

/* Reads /proc/self: best effort, unknown figures stay negative. */
static void
read_process(const struct web_server *srv, struct prom_process *p)
{
	p->resident_bytes = p->virtual_bytes = p->cpu_seconds = -1;
	p->start_time_seconds = p->open_fds = p->max_fds = -1;
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n > 0) {
		buf[n] = '\0';
		/* the command name may hold spaces and parentheses: fields start after the last ')' */
		const char *p_end = strrchr(buf, ')');
		if (p_end) {
			/* fields after "pid (comm)": state is field 3 */
			unsigned long long f[25] = {0};
			const char *s = p_end + 1;
			for (int i = 3; i <= 24 && *s; i++) {
				while (*s == ' ') {
					s++;
				}
				char *end;
				f[i] = strtoull(s, &end, 10);
				s = end;
				while (*s && *s != ' ') {
					s++;
				}
			}
			double tick = (double)sysconf(_SC_CLK_TCK);
			double page = (double)sysconf(_SC_PAGESIZE);
			p->cpu_seconds = (double)(f[14] + f[15]) / tick;
			p->virtual_bytes = (double)f[23];
			p->resident_bytes = (double)f[24] * page;
			if (srv->boot_time_s > 0) {
				p->start_time_seconds = (double)srv->boot_time_s + (double)f[22] / tick;
			}
		}
	}
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		double count = 0;
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] != '.') {
				count++;
			}
		}
		closedir(d);
		p->open_fds = count - 1; /* the directory's own descriptor */
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		p->max_fds = (double)rl.rlim_cur;
	}
}

static int64_t
read_boot_time(void)
{
	FILE *f = fopen("/proc/stat", "re");
	if (!f) {
		return 0;
	}
	char line[256];
	int64_t bt = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "btime ", 6) == 0) {
			bt = strtoll(line + 6, NULL, 10);
			break;
		}
	}
	fclose(f);
	return bt;
}

static mhd_result
handle_metrics(struct web_server *srv, struct MHD_Connection *conn)
{
	pthread_mutex_lock(&srv->lock);
	struct blob *prom = blob_ref(srv->prom);
	pthread_mutex_unlock(&srv->lock);
	struct buf t;
	buf_init(&t);
	buf_add(&t, prom->data, prom->len);
	blob_unref(prom);
	struct prom_process p;
	read_process(srv, &p);
	prom_format_process(&t, &p);
	size_t len;
	char *body = buf_take(&t, &len);
	return reply_owned(conn, MHD_HTTP_OK, CT_PROM, body, len);
}

static mhd_result
handle_healthz(struct web_server *srv, struct MHD_Connection *conn)
{
	int64_t age = mono_ms() - atomic_load(&srv->last_sample_mono_ms);
	if (age <= 3 * srv->interval_ms + HEALTH_SLACK_MS) {
		return reply_text(conn, MHD_HTTP_OK, CT_TEXT, "ok\n");
	}
	char msg[96];
	snprintf(msg, sizeof(msg), "late: no sample for %lld ms\n", (long long)age);
	return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, CT_TEXT, msg);
}

/* ---- the event stream ---- */

static void
sse_send_line(struct sse_client *c, const char *text)
{
	snprintf(c->line, sizeof(c->line), "%s", text);
	c->out = c->line;
	c->out_len = strlen(c->line);
	c->out_off = 0;
}

static ssize_t
sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct sse_client *c = cls;
	struct web_server *srv = c->srv;
	if (c->out_off == c->out_len) {
		blob_unref(c->cur);
		c->cur = NULL;
		int64_t now = mono_ms();
		pthread_mutex_lock(&srv->lock);
		uint64_t oldest = srv->event_next > EVENT_RING ? srv->event_next - EVENT_RING : 1;
		if (srv->stopping) {
			pthread_mutex_unlock(&srv->lock);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		if (!c->started) {
			c->started = true;
			sse_send_line(c, "retry: 2000\n\n");
		} else if (c->cursor < oldest) {
			/* fell behind the ring: skip ahead, say how much was lost */
			char text[80];
			snprintf(text, sizeof(text), "event: gap\ndata: {\"missed\":%llu}\n\n",
				 (unsigned long long)(oldest - c->cursor));
			sse_send_line(c, text);
			c->cursor = oldest;
		} else if (c->cursor < srv->event_next) {
			c->cur = blob_ref(srv->events[c->cursor % EVENT_RING]);
			c->cursor++;
			c->out = c->cur->data;
			c->out_len = c->cur->len;
			c->out_off = 0;
		} else if (now - c->last_write_ms >= KEEPALIVE_MS) {
			sse_send_line(c, ": keepalive\n\n");
		} else {
			/* nothing to say: park until the notifier resumes us */
			c->suspended = true;
			MHD_suspend_connection(c->conn);
			pthread_mutex_unlock(&srv->lock);
			return 0;
		}
		pthread_mutex_unlock(&srv->lock);
	}
	size_t n = c->out_len - c->out_off;
	if (n > max) {
		n = max;
	}
	memcpy(buf, c->out + c->out_off, n);
	c->out_off += n;
	c->last_write_ms = mono_ms();
	return (ssize_t)n;
}

static void
sse_free(void *cls)
{
	struct sse_client *c = cls;
	struct web_server *srv = c->srv;
	pthread_mutex_lock(&srv->lock);
	if (c->prev) {
		c->prev->next = c->next;
	} else {
		srv->clients = c->next;
	}
	if (c->next) {
		c->next->prev = c->prev;
	}
	pthread_mutex_unlock(&srv->lock);
	blob_unref(c->cur);
	free(c);
}

static mhd_result
handle_events(struct web_server *srv, struct MHD_Connection *conn, bool head)
{
	struct MHD_Response *r;
	if (head) {
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	} else {
		struct sse_client *c = calloc(1, sizeof(*c));
		if (!c) {
			abort();
		}
		c->srv = srv;
		c->conn = conn;
		c->last_write_ms = mono_ms();
		int64_t last_id = -1;
		const char *last = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID");
		if (last && web_parse_uint(last, 0, INT64_MAX - 1, &last_id) < 0) {
			last_id = -1;
		}
		pthread_mutex_lock(&srv->lock);
		uint64_t oldest = srv->event_next > EVENT_RING ? srv->event_next - EVENT_RING : 1;
		if (last_id >= 0 && (uint64_t)last_id < srv->event_next) {
			c->cursor = (uint64_t)last_id + 1; /* a reconnect resumes where it stopped */
		} else if (srv->last_sample_event >= oldest && srv->last_sample_event > 0) {
			c->cursor = srv->last_sample_event; /* a new reader starts with the latest sample */
		} else {
			c->cursor = srv->event_next;
		}
		c->next = srv->clients;
		if (c->next) {
			c->next->prev = c;
		}
		srv->clients = c;
		pthread_mutex_unlock(&srv->lock);
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK, sse_read, c, sse_free);
		if (!r) {
			sse_free(c);
			return MHD_NO;
		}
	}
	if (!r) {
		return MHD_NO;
	}
	common_headers(r, CT_SSE, CACHE_NO_STORE);
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	return queue(conn, MHD_HTTP_OK, r);
}

/* Wakes parked streams: new events, keep-alive time, shutdown. */
static void *
notifier_main(void *arg)
{
	struct web_server *srv = arg;
	lower_thread_priority();
	pthread_mutex_lock(&srv->lock);
	for (;;) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		if (!srv->stopping) {
			pthread_cond_timedwait(&srv->wake, &srv->lock, &until);
		}
		bool stop = srv->stopping;
		int64_t now = mono_ms();
		size_t n = 0;
		for (struct sse_client *c = srv->clients; c && n < srv->wake_cap; c = c->next) {
			if (c->suspended &&
			    (stop || c->cursor < srv->event_next || now - c->last_write_ms >= KEEPALIVE_MS)) {
				c->suspended = false;
				srv->wake_list[n++] = c->conn;
			}
		}
		/* a parked connection stays alive until we resume it, so no lock is needed here */
		pthread_mutex_unlock(&srv->lock);
		for (size_t i = 0; i < n; i++) {
			MHD_resume_connection(srv->wake_list[i]);
		}
		pthread_mutex_lock(&srv->lock);
		if (stop) {
			break;
		}
	}
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

/* ---- dispatch ---- */

static mhd_result
handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method, const char *version,
       const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	struct web_server *srv = cls;
	(void)version;
	(void)upload_data;
	if (*req_cls == &uri_too_long) {
		return reply_error(conn, MHD_HTTP_URI_TOO_LONG, "URI too long", NULL, NULL);
	}
	bool head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	if (!head && strcmp(method, MHD_HTTP_METHOD_GET) != 0) {
		return reply_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed", MHD_HTTP_HEADER_ALLOW,
				   "GET, HEAD");
	}
	if (header_bytes(conn) > HEADERS_MAX) {
		return reply_error(conn, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE, "request headers too large", NULL,
				   NULL);
	}
	if (srv->loopback &&
	    !web_host_is_loopback(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST))) {
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
	if (*upload_data_size != 0) {
		*upload_data_size = 0; /* a body on GET means nothing here */
		return MHD_YES;
	}
	if (!authorized(srv, conn)) {
		return reply_unauthorized(srv, conn);
	}
	if (strcmp(url, "/") == 0) {
		return handle_page(srv, conn);
	}
	if (strcmp(url, "/api/v1/snapshot") == 0) {
		return handle_snapshot(srv, conn);
	}
	if (strcmp(url, "/api/v1/history") == 0) {
		return handle_history(srv, conn);
	}
	if (strcmp(url, "/api/v1/alerts") == 0) {
		return handle_alerts(srv, conn);
	}
	if (strcmp(url, "/api/v1/events") == 0) {
		return handle_events(srv, conn, head);
	}
	if (strcmp(url, "/metrics") == 0) {
		return handle_metrics(srv, conn);
	}
	if (strcmp(url, "/healthz") == 0) {
		return handle_healthz(srv, conn);
	}
	return reply_error(conn, MHD_HTTP_NOT_FOUND, "not found", NULL, NULL);
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

/* ---- the sink: the loop thread publishes ---- */

/* Adds EV as the next stream event; returns the event it pushed out. Lock held. */
static struct blob *
push_event_locked(struct web_server *srv, struct blob *ev)
{
	size_t slot = srv->event_next % EVENT_RING;
	struct blob *old = srv->events[slot];
	srv->events[slot] = ev;
	srv->event_next++;
	pthread_cond_signal(&srv->wake);
	return old;
}

static struct blob *
render_event(struct web_server *srv, const char *kind, const struct json *j)
{
	buf_reset(&srv->text);
	/* event_next changes only on this thread, so it can be read without the lock */
	buf_addf(&srv->text, "id: %llu\nevent: %s\ndata: ", (unsigned long long)srv->event_next, kind);
	buf_add(&srv->text, j->buf, j->len);
	buf_adds(&srv->text, "\n\n");
	return blob_new(srv->text.buf, srv->text.len);
}

static int
web_sink_write(struct sink *sink, const struct sample *s)
{
	struct web_server *srv = server_of(sink);
	json_reset(&srv->j);
	sample_to_json(&srv->j, s);
	struct blob *sample = blob_new(srv->j.buf, srv->j.len);
	struct blob *ev = render_event(srv, "sample", &srv->j);
	buf_reset(&srv->text);
	prom_format_sample(&srv->text, s, &srv->board);
	struct blob *prom = blob_new(srv->text.buf, srv->text.len);

	pthread_mutex_lock(&srv->hist_lock);
	history_add(srv->hist, s);
	pthread_mutex_unlock(&srv->hist_lock);

	pthread_mutex_lock(&srv->lock);
	struct blob *old_sample = srv->sample, *old_prom = srv->prom;
	srv->sample = sample;
	srv->prom = prom;
	srv->last_sample_event = srv->event_next;
	struct blob *old_ev = push_event_locked(srv, ev);
	pthread_mutex_unlock(&srv->lock);

	blob_unref(old_sample);
	blob_unref(old_prom);
	blob_unref(old_ev);
	atomic_store(&srv->last_sample_mono_ms, mono_ms());
	return 0;
}


/* Puts alert A (JSON blob) in the active list or takes it out. Returns what to unref. */
static struct blob *
update_active_locked(struct web_server *srv, const struct alert_event *ev, struct blob *a)
{
	bool active = ev->transition != TRANSITION_RESOLVED && ev->transition != TRANSITION_CANCELLED;
	struct blob *drop = NULL;
	size_t i = 0;
	while (i < srv->active_count && strcmp(srv->active[i].fingerprint, ev->fingerprint) != 0) {
		i++;
	}
	if (i < srv->active_count) {
		drop = srv->active[i].json;
		if (active) {
			srv->active[i].json = blob_ref(a);
		} else {
			memmove(&srv->active[i], &srv->active[i + 1],
				(srv->active_count - i - 1) * sizeof(srv->active[0]));
			srv->active_count--;
		}
	} else if (active && srv->active_count < ACTIVE_MAX) {
		struct active_alert *na = &srv->active[srv->active_count++];
		snprintf(na->fingerprint, sizeof(na->fingerprint), "%s", ev->fingerprint);
		na->json = blob_ref(a);
	}
	return drop;
}

/* Active alerts, recent transitions and the event stream. */
static void
on_alert(struct web_server *srv, const struct alert_event *ev)
{
	json_reset(&srv->j);
	alert_event_to_json(&srv->j, ev);
	struct blob *a = blob_new(srv->j.buf, srv->j.len);
	struct blob *e = render_event(srv, "alert", &srv->j);
	struct blob *drop[3] = {NULL, NULL, NULL};

	pthread_mutex_lock(&srv->lock);
	drop[0] = srv->recent[srv->recent_next];
	srv->recent[srv->recent_next] = blob_ref(a);
	srv->recent_next = (srv->recent_next + 1) % RECENT_MAX;
	if (srv->recent_count < RECENT_MAX) {
		srv->recent_count++;
	}
	drop[1] = update_active_locked(srv, ev, a);
	drop[2] = push_event_locked(srv, e);
	pthread_mutex_unlock(&srv->lock);

	blob_unref(a);
	for (size_t k = 0; k < 3; k++) {
		blob_unref(drop[k]);
	}
}

/* An alert already active at start (the state file): the active list only, no transition. */
static void
seed_alert(struct web_server *srv, const struct alert_event *ev)
{
	json_reset(&srv->j);
	alert_event_to_json(&srv->j, ev);
	struct blob *a = blob_new(srv->j.buf, srv->j.len);
	pthread_mutex_lock(&srv->lock);
	struct blob *drop = update_active_locked(srv, ev, a);
	pthread_mutex_unlock(&srv->lock);
	blob_unref(a);
	blob_unref(drop);
}

static void
web_sink_notify(struct sink *sink, const struct alert_event *ev)
{
	struct web_server *srv = (struct web_server *)sink;
	if (ev->restored) {
		seed_alert(srv, ev);
	} else {
		on_alert(srv, ev);
	}
}

static void web_server_destroy(struct web_server *srv);

static void
web_sink_destroy(struct sink *sink)
{
	web_server_destroy((struct web_server *)sink);
}

static const struct sink_ops web_sink_ops = {
	.name = "web",
	.write = web_sink_write,
	.notify = web_sink_notify,
	.destroy = web_sink_destroy,
};

/* ---- start and stop ---- */

static int
open_listen_socket(const struct sockaddr_storage *addr, socklen_t len, int *port)
{
	int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -errno;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->ss_family == AF_INET6) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (bind(fd, (const struct sockaddr *)addr, len) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	*port = 0;
	if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0) {
		*port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
							   : ((struct sockaddr_in *)&bound)->sin_port);
	}
	return fd;
}

static int
load_secret(const char *what, const char *path, char **out, size_t *len)
{
	bool world;
	int r = web_read_secret(path, out, &world);
	if (r < 0) {
		log_error("web: %s %s: %s", what, path,
			  r == -EINVAL ? "must be a regular file holding 1 to 4096 bytes" : strerror(-r));
		return -EINVAL;
	}
	if (world) {
		log_warn("web: %s %s can be read by every user: chmod o-r it", what, path);
	}
	*len = strlen(*out);
	return 0;
}

static void
render_board(struct web_server *srv, const struct web_info *info)
{
	srv->identity = info->identity;
	struct json j;
	json_init(&j);
	json_object_begin(&j);
	board_identity_to_json(&j, &srv->identity, false);
	json_object_end(&j);
	srv->board_json = xstrdup(j.buf);
	json_free(&j);
	srv->board = (struct prom_board){
		.model = srv->identity.model,
		.soc = srv->identity.soc,
		.module = srv->identity.module,
		.l4t = srv->identity.l4t,
		.jetpack = srv->identity.jetpack,
		.version = srv->version,
	};
}

static int
start_threads(struct web_server *srv, const struct web_config *cfg, bool v6)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL;
	if (v6) {
		flags |= MHD_USE_IPv6;
	}
	unsigned int timeout_s = (unsigned int)((cfg->connection_timeout_ms + 999) / 1000);
	/* MHD's threads and ours must not take the signals the loop reads from its signalfd */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	srv->daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle, srv,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
		MHD_OPTION_LISTEN_SOCKET, srv->listen_fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)cfg->max_connections,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)cfg->max_connections_per_ip,
		MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)POOL_BYTES,
		MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
		MHD_OPTION_URI_LOG_CALLBACK, uri_log, srv,
		MHD_OPTION_END);
	int r = 0;
	if (!srv->daemon) {
		r = -EIO;
	} else if (pthread_create(&srv->notifier, NULL, notifier_main, srv) != 0) {
		r = -EAGAIN;
	} else {
		srv->notifier_started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

int
web_server_start(const struct web_config *cfg, const struct web_info *info, struct sink **out)
{
	/* the configuration was checked by web_config_section; this only guards other callers */
	struct sockaddr_storage addr;
	socklen_t addr_len;
	bool loopback;
	bool basic = cfg->basic_auth_user[0] != '\0';
	if (web_parse_listen(cfg->listen, &addr, &addr_len, &loopback) < 0 ||
	    basic != (cfg->basic_auth_password_file[0] != '\0') || (!loopback && !basic && !cfg->token_file[0])) {
		log_error("web: refusing the configuration of %s (tegrawatch check says why)", cfg->listen);
		return -EINVAL;
	}
	struct web_server *srv = calloc(1, sizeof(*srv));
	if (!srv) {
		abort();
	}
	srv->listen_fd = -1;
	srv->loopback = loopback;
	pthread_mutex_init(&srv->lock, NULL);
	pthread_mutex_init(&srv->hist_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&srv->wake, &ca);
	pthread_condattr_destroy(&ca);
	json_init(&srv->j);
	buf_init(&srv->text);
	srv->sink.ops = &web_sink_ops;
	srv->event_next = 1;
	srv->interval_ms = info->interval_ms > 0 ? info->interval_ms : 1000;
	srv->history_s = cfg->history_ms / 1000;
	srv->start_mono_ms = mono_ms();
	atomic_init(&srv->last_sample_mono_ms, srv->start_mono_ms);
	srv->boot_time_s = read_boot_time();
	srv->version = xstrdup(info->version);
	render_board(srv, info);
	srv->active = calloc(ACTIVE_MAX, sizeof(*srv->active));
	srv->wake_cap = (size_t)cfg->max_connections;
	srv->wake_list = calloc(srv->wake_cap, sizeof(*srv->wake_list));
	if (!srv->active || !srv->wake_list) {
		abort();
	}
	srv->hist = history_create((size_t)(cfg->history_ms / srv->interval_ms));
	srv->sample = blob_new(empty_sample_json, sizeof(empty_sample_json) - 1);
	struct sample *empty = calloc(1, sizeof(*empty));
	if (!empty) {
		abort();
	}
	prom_format_sample(&srv->text, empty, &srv->board);
	free(empty);
	srv->prom = blob_new(srv->text.buf, srv->text.len);

	int r = 0;
	if (cfg->token_file[0]) {
		r = load_secret("token_file", cfg->token_file, &srv->token, &srv->token_len);
	}
	if (r == 0 && basic) {
		srv->basic_user = xstrdup(cfg->basic_auth_user);
		srv->basic_user_len = strlen(srv->basic_user);
		r = load_secret("basic_auth_password_file", cfg->basic_auth_password_file, &srv->basic_pass,
				&srv->basic_pass_len);
	}
	if (r < 0) {
		web_server_destroy(srv);
		return r;
	}
	srv->page = MHD_create_response_from_buffer(dashboard_html_len, (void *)dashboard_html,
						    MHD_RESPMEM_PERSISTENT);
	if (!srv->page) {
		web_server_destroy(srv);
		return -ENOMEM;
	}
	common_headers(srv->page, CT_HTML, CACHE_NO_CACHE);
	MHD_add_response_header(srv->page, "Content-Security-Policy", PAGE_CSP);
	MHD_add_response_header(srv->page, "X-Frame-Options", "DENY");

	r = open_listen_socket(&addr, addr_len, &srv->port);
	if (r < 0) {
		log_error("web: cannot listen on %s: %s", cfg->listen, strerror(-r));
		web_server_destroy(srv);
		return r;
	}
	srv->listen_fd = r;
	r = start_threads(srv, cfg, addr.ss_family == AF_INET6);
	if (r < 0) {
		log_error("web: cannot start the HTTP server on %s", cfg->listen);
		web_server_destroy(srv);
		return r;
	}
	if (!loopback) {
		log_warn("web: listening on %s without TLS: credentials and data cross the network in clear "
			 "(an SSH tunnel or a TLS proxy is safer)",
			 cfg->listen);
	}
	log_info("web: listening on port %d (%s); history: %zu samples per metric, at most %zu metrics", srv->port,
		 cfg->listen, history_capacity(srv->hist), history_max_metrics(srv->hist));
	*out = &srv->sink;
	return 0;
}

static void
web_server_destroy(struct web_server *srv)
{
	if (!srv) {
		return;
	}
	pthread_mutex_lock(&srv->lock);
	srv->stopping = true;
	pthread_cond_signal(&srv->wake);
	pthread_mutex_unlock(&srv->lock);
	if (srv->notifier_started) {
		/* its last round resumes every parked stream: MHD must not stop with one */
		pthread_join(srv->notifier, NULL);
	}
	if (srv->daemon) {
		MHD_stop_daemon(srv->daemon); /* closes the listening socket too */
	} else if (srv->listen_fd >= 0) {
		close(srv->listen_fd);
	}
	if (srv->page) {
		MHD_destroy_response(srv->page);
	}
	blob_unref(srv->sample);
	blob_unref(srv->prom);
	for (size_t i = 0; i < srv->active_count; i++) {
		blob_unref(srv->active[i].json);
	}
	for (size_t i = 0; i < RECENT_MAX; i++) {
		blob_unref(srv->recent[i]);
	}
	for (size_t i = 0; i < EVENT_RING; i++) {
		blob_unref(srv->events[i]);
	}
	free(srv->active);
	free(srv->wake_list);
	history_destroy(srv->hist);
	json_free(&srv->j);
	buf_free(&srv->text);
	free(srv->board_json);
	free(srv->version);
	free(srv->token);
	free(srv->basic_user);
	free(srv->basic_pass);
	pthread_cond_destroy(&srv->wake);
	pthread_mutex_destroy(&srv->hist_lock);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}
