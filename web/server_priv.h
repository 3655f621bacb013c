/*
 * Private to web/: the server state the sampling loop publishes into
 * (server_state.c) and what the libmicrohttpd side (http_mhd.c) reads
 * from it. The loop renders each sample and alert event once into
 * immutable refcounted blobs and swaps them in under `lock`; handlers take
 * references under the same lock and build their answers outside it. The
 * history rings have their own lock. Nothing here needs <microhttpd.h>.
 */
#ifndef TEGRAWATCH_WEB_SERVER_PRIV_H
#define TEGRAWATCH_WEB_SERVER_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/alert.h"
#include "core/board_info.h"
#include "core/buf.h"
#include "core/json.h"
#include "core/sample.h"
#include "auth.h"
#include "conn_guard.h"
#include "history.h"
#include "prom_format.h"
#include "route.h"
#include "web.h"

#define EVENT_RING 64  /* pre-rendered stream events kept for slow readers */
#define RECENT_MAX 100 /* alert transitions in /api/v1/alerts */
#define ACTIVE_MAX 4096
#define KEEPALIVE_MS 15000 /* an idle event stream gets a comment this often */

/* An immutable piece of output shared by the loop and the handlers. */
struct blob {
	atomic_uint refs;
	size_t len;
	char data[];
};

/* The latest sample, copied for rendering on demand (server_render.c). */
struct sample_copy {
	atomic_uint refs;
	struct sample s; /* the used metrics only, no index: for rendering, never for lookups */
};

struct active_alert {
	char fingerprint[ALERT_FINGERPRINT_LEN + 1];
	struct blob *json;
	struct blob *prom; /* its tegrawatch_alerts series line */
};

/* An event-stream reader as the ring and the notifier see it; http_mhd.c wraps it. */
struct stream {
	struct stream *prev, *next;
	uint64_t cursor; /* seq of the next event to send */
	bool suspended;  /* parked until the notifier resumes it */
	bool started;    /* "retry:" sent */
	int64_t last_write_ms;
};

/* What a stream sends next (server_stream_step_locked). */
enum stream_step {
	STREAM_END,   /* the server stops */
	STREAM_TEXT,  /* a line of its own, in the caller's TEXT */
	STREAM_EVENT, /* a shared event, referenced in *EVENT */
	STREAM_PARK,  /* nothing to say: park until the notifier resumes it */
};

/* Resumes a parked stream (http_mhd.c): called without the lock. */
typedef void stream_resume_fn(struct stream *s);

struct server_state {
	int64_t interval_ms;
	struct web_history_span span; /* of the history's tiers */
	int64_t start_mono_ms;
	int64_t boot_time_s; /* from /proc/stat, for process_start_time_seconds */
	char *version;
	char *board_json;                    /* {"model",...} */
	struct metric_info_facts info_facts; /* the info families' (core/metric_dict.h): IDENTITY and VERSION */
	struct board_identity identity;

	pthread_mutex_t lock; /* everything down to `stopping` */
	pthread_cond_t wake;
	struct blob *sample; /* the JSON object of sample number sample_seq */
	struct blob *prom;   /* the /metrics text (without the process part) of sample prom_seq */
	uint64_t sample_seq;
	uint64_t prom_seq;
	struct sample_copy *latest; /* what `sample` and `prom` are rendered from, on demand */
	uint64_t latest_seq;        /* samples published; 0: none, the empty blobs are current */
	struct active_alert *active;
	size_t active_count;
	struct blob *recent[RECENT_MAX];
	size_t recent_next; /* slot of the next transition */
	size_t recent_count;
	struct blob *events[EVENT_RING]; /* event seq s is at s % EVENT_RING */
	uint64_t event_next;             /* seq of the next event, from 1; written by the loop only */
	uint64_t last_sample_event;
	uint64_t last_sample_copy; /* latest_seq when last_sample_event was taken without an event */
	struct stream *streams;
	bool stopping;

	pthread_t notifier;
	bool notifier_started;
	stream_resume_fn *resume;
	struct stream **wake_list;
	size_t wake_cap;

	pthread_mutex_t hist_lock;
	struct history *hist;

	pthread_mutex_t dict_lock; /* held while /metrics is rendered: one renders at a time */
	struct metric_dict_cache *prom_dict;

	atomic_llong last_sample_mono_ms;

	/* POST /api/v1/work (web.h): called on the server's thread, released at fini */
	struct web_work_hook work; /* post NULL: none */

	/* every connection, from accept to close: limits, header deadline (the notifier sweeps) */
	struct conn_guard guard;

	/* the loop thread's scratch, and the copy it reuses when no handler holds it */
	struct sample_copy *spare;
	struct json j;
	struct buf text;
};

struct blob *blob_new(const char *data, size_t len);
struct blob *blob_ref(struct blob *b);
/** Drops a reference; NULL is a no-op. */
void blob_unref(struct blob *b);

/** Sets ST up before the first sample: an empty snapshot and /metrics. Cannot fail. */
void server_state_init(struct server_state *st, const struct web_config *cfg, const struct agent_info *info,
		       const struct web_work_hook *work);
/** Ends the event streams: stops the notifier after it resumed every parked one. */
void server_state_stop(struct server_state *st);
/** Frees what ST holds, once nothing reads it (after the daemon stopped). */
void server_state_fini(struct server_state *st);

/** Starts the thread that wakes parked streams through RESUME. 0 or -EAGAIN. */
int server_notifier_start(struct server_state *st, stream_resume_fn *resume);
/**
 * MHD's thread: conn_guard_add() of a new connection, then wakes the
 * notifier, which sleeps while no connection is open, so that it sweeps
 * the new one's header deadline.
 */
void server_connection_add(struct server_state *st, struct conn_entry *e, int fd, const unsigned char addr[16]);

/* The loop thread publishes. */
void server_publish_sample(struct server_state *st, const struct sample *s);
void server_publish_alert(struct server_state *st, const struct alert_event *ev);

/* The latest sample, rendered on demand (server_render.c) */

/** The loop: makes S the latest sample; nothing is rendered yet. */
void server_render_publish(struct server_state *st, const struct sample *s);
/** A reference to the latest sample's JSON object, rendered by the first caller after a sample. */
struct blob *server_render_sample(struct server_state *st);
/** The same for the /metrics text (without the process part). */
struct blob *server_render_prom(struct server_state *st);
/**
 * The stream event of the latest sample, "id: ID", rendered from the copy
 * on behalf of a reader that arrives after samples nobody read. Lock held.
 */
struct blob *server_render_event_locked(struct server_state *st, uint64_t id);
/** Frees the copies; after the daemon stopped. */
void server_render_fini(struct server_state *st);

/* The HTTP threads read: whole bodies appended to OUT. */
void server_snapshot(struct server_state *st, struct buf *out);
void server_alerts(struct server_state *st, struct buf *out);
void server_metrics(struct server_state *st, struct buf *out);
/** The METRIC's last SECONDS in TIER with their stats as JSON into J; -ENOENT without history. */
int server_history(struct server_state *st, const char *metric, int64_t seconds, int tier, struct json *j);
/** Milliseconds since the last sample (or the start). */
int64_t server_sample_age_ms(struct server_state *st);

/**
 * Decides what stream S sends next at NOW_MS, the caller holding st->lock:
 * the retry line first, a gap event when it fell behind the ring (or
 * samples went by while nobody read, with no event rendered), the next
 * event, a keepalive comment, or nothing (park). The cursor moves past
 * what it is given.
 */
enum stream_step server_stream_step_locked(struct server_state *st, struct stream *s, int64_t now_ms, char *text,
					   size_t size, struct blob **event);

/** Adds S to the readers; LAST_ID is the Last-Event-ID of a reconnect, or -1. */
void server_stream_attach(struct server_state *st, struct stream *s, int64_t last_id);
void server_stream_detach(struct server_state *st, struct stream *s);

/** Lowers the calling HTTP thread below the sampling loop (once per thread). */
void server_lower_thread_priority(void);

/**
 * POST /api/v1/work: the answer to BODY (LEN bytes; TOO_LARGE when it was cut at WEB_POST_MAX) sent with
 * CONTENT_TYPE (NULL: none): 202 {"accepted": ...}, 400, 404 (no work reporting), 413 or 415 with
 * {"error": ...} in OUT. Returns the status.
 */
unsigned server_work(struct server_state *st, const char *content_type, const char *body, size_t len, bool too_large,
		     struct buf *out);

#define WEB_POST_MAX 4096 /* a work report is a line of JSON */

/* libmicrohttpd's objects, opaque here: only http_mhd.c includes <microhttpd.h> */
struct MHD_Daemon;
struct MHD_Response;

/* The server: its sink (web_sink.c, on the loop's thread), the state it serves, libmicrohttpd's side (http_mhd.c). */
struct web_server {
	struct sink sink;
	struct server_state st;
	struct MHD_Daemon *daemon;
	int listen_fd;
	int port;
	bool loopback; /* check Host against loopback names */
	struct web_auth auth;
	struct MHD_Response *page;
};

/** The sink's operations (web_sink.c): write, notify, add_metrics, destroy (web_server_free). */
extern const struct sink_ops web_sink_ops;

/** Stops the server (event streams ended, the daemon stopped) and frees it (http_mhd.c). NULL is a no-op. */
void web_server_free(struct web_server *srv);

#endif
