/*
 * The server state the sampling loop publishes into (see server_priv.h):
 * refcounted blobs, the latest sample and its /metrics text, the active
 * and recent alert lists, the event ring, the history rings, and the
 * notifier thread that wakes parked event streams. No libmicrohttpd here:
 * the notifier resumes streams through the hook http_mhd.c gives it.
 */
#include "server_priv.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/sample_json.h"
#include "core/xalloc.h"
#include "proc_self.h"

#define HTTP_NICE 10       /* the HTTP threads' nice value, above the loop's */
#define SWEEP_MS 1000      /* the notifier's round while a connection is open */
#define IDLE_WAIT_MS 60000 /* its wait with none: a new connection wakes it (server_connection_add) */

static const char empty_sample_json[] = "{\"seq\":0,\"ts\":null,\"time_ms\":null,\"power_mode\":null,\"metrics\":{},"
					"\"throttle\":{\"active\":false,\"reasons\":{},\"context\":\"\"}}";

/* ---- blobs ---- */

struct blob *
blob_new(const char *data, size_t len)
{
	struct blob *b = xrealloc(NULL, sizeof(*b) + len + 1, 1);
	atomic_init(&b->refs, 1);
	b->len = len;
	memcpy(b->data, data, len);
	b->data[len] = '\0';
	return b;
}

struct blob *
blob_ref(struct blob *b)
{
	if (b) {
		atomic_fetch_add(&b->refs, 1);
	}
	return b;
}

void
blob_unref(struct blob *b)
{
	if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
		free(b);
	}
}

/*
 * The HTTP threads run at a lower priority (Linux nice is per thread):
 * when the CPU is short, a burst of requests waits, the sampling loop
 * does not. MHD's thread is lowered on its first request.
 */
void
server_lower_thread_priority(void)
{
	static _Thread_local bool done;
	if (!done) {
		done = true;
		setpriority(PRIO_PROCESS, (id_t)gettid(), HTTP_NICE);
	}
}

/* ---- set up and tear down ---- */

static void
render_board(struct server_state *st, const struct agent_info *info)
{
	st->identity = info->identity;
	struct json j;
	json_init(&j);
	json_object_begin(&j);
	board_identity_to_json(&j, &st->identity, false);
	json_object_end(&j);
	st->board_json = xstrdup(j.out.buf);
	json_free(&j);
	st->info_facts = (struct metric_info_facts){.board = &st->identity, .version = st->version};
}

void
server_state_init(struct server_state *st, const struct web_config *cfg, const struct agent_info *info,
		  const struct web_work_hook *work)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_init(&st->lock, NULL);
	pthread_mutex_init(&st->hist_lock, NULL);
	pthread_mutex_init(&st->dict_lock, NULL);
	st->prom_dict = xcalloc(1, sizeof(*st->prom_dict));
	clock_cond_init(&st->wake);
	json_init(&st->j);
	buf_init(&st->text);
	st->event_next = 1;
	st->interval_ms = info->interval_ms > 0 ? info->interval_ms : 1000;
	st->span.seconds = cfg->history_ms / 1000;
	st->span.minute_seconds = cfg->minute_history_ms / 1000;
	st->start_mono_ms = monotonic_ms();
	atomic_init(&st->last_sample_mono_ms, st->start_mono_ms);
	st->boot_time_s = proc_boot_time_s();
	st->version = xstrdup(info->version ? info->version : "");
	if (work) {
		st->work = *work;
	}
	render_board(st, info);
	st->active = xcalloc(ACTIVE_MAX, sizeof(*st->active));
	st->wake_cap = (size_t)cfg->max_event_streams;
	st->wake_list = xcalloc(st->wake_cap, sizeof(*st->wake_list));
	struct conn_limits lim = {
		.max_conns = (size_t)cfg->max_connections,
		.per_ip = (size_t)cfg->max_connections_per_ip,
		.max_streams = (size_t)cfg->max_event_streams,
		.header_timeout_ms = cfg->header_timeout_ms,
		.stall_ms = cfg->stream_stall_timeout_ms,
	};
	conn_guard_init(&st->guard, &lim);
	st->hist = history_create((size_t)(cfg->history_ms / st->interval_ms),
				  history_buckets_for(cfg->minute_history_ms, st->interval_ms), st->interval_ms);
	st->sample = blob_new(empty_sample_json, sizeof(empty_sample_json) - 1);
	struct sample *empty = xcalloc(1, sizeof(*empty));
	prom_format_sample(&st->text, empty, &st->info_facts, st->prom_dict);
	free(empty);
	st->prom = blob_new(st->text.buf, st->text.len);
}

void
server_state_stop(struct server_state *st)
{
	pthread_mutex_lock(&st->lock);
	st->stopping = true;
	pthread_cond_signal(&st->wake);
	pthread_mutex_unlock(&st->lock);
	if (st->notifier_started) {
		/* its last round resumes every parked stream: MHD must not stop with one */
		pthread_join(st->notifier, NULL);
		st->notifier_started = false;
	}
}

void
server_state_fini(struct server_state *st)
{
	if (st->work.release) {
		st->work.release(st->work.data);
	}
	blob_unref(st->sample);
	blob_unref(st->prom);
	server_render_fini(st);
	for (size_t i = 0; i < st->active_count; i++) {
		blob_unref(st->active[i].json);
		blob_unref(st->active[i].prom);
	}
	for (size_t i = 0; i < RECENT_MAX; i++) {
		blob_unref(st->recent[i]);
	}
	for (size_t i = 0; i < EVENT_RING; i++) {
		blob_unref(st->events[i]);
	}
	free(st->active);
	free(st->wake_list);
	log_info("web: the history held %.1f KiB for %zu metrics (%zu of them 2 bytes a sample)",
		 (double)history_held_bytes(st->hist) / 1024, history_metric_count(st->hist),
		 history_narrow_count(st->hist));
	history_destroy(st->hist);
	json_free(&st->j);
	buf_free(&st->text);
	free(st->board_json);
	free(st->version);
	conn_guard_fini(&st->guard);
	pthread_cond_destroy(&st->wake);
	pthread_mutex_destroy(&st->hist_lock);
	pthread_mutex_destroy(&st->dict_lock);
	free(st->prom_dict);
	pthread_mutex_destroy(&st->lock);
}

/* ---- the loop thread publishes ---- */

/* Adds EV as the next stream event; returns the event it pushed out. Lock held. */
static struct blob *
push_event_locked(struct server_state *st, struct blob *ev)
{
	size_t slot = st->event_next % EVENT_RING;
	struct blob *old = st->events[slot];
	st->events[slot] = ev;
	st->event_next++;
	/* only a parked reader needs the notifier: without one, a sample wakes no thread */
	if (st->streams) {
		pthread_cond_signal(&st->wake);
	}
	return old;
}

static struct blob *
render_event(struct server_state *st, const char *kind, const char *json, size_t len)
{
	buf_reset(&st->text);
	/* event_next changes only on this thread, so it can be read without the lock */
	buf_addf(&st->text, "id: %llu\nevent: %s\ndata: ", (unsigned long long)st->event_next, kind);
	buf_add(&st->text, json, len);
	buf_adds(&st->text, "\n\n");
	return blob_new(st->text.buf, st->text.len);
}

void
server_publish_sample(struct server_state *st, const struct sample *s)
{
	/* the snapshot JSON and /metrics are rendered when asked for (server_render.c) */
	server_render_publish(st, s);

	pthread_mutex_lock(&st->hist_lock);
	history_add(st->hist, s);
	pthread_mutex_unlock(&st->hist_lock);

	/*
	 * The stream event only when the stream has readers. Without, its id
	 * is used all the same (a slot without an event, a gap for a reader
	 * resuming from before), decided under the lock so a reader that
	 * attaches meanwhile gets a rendered event.
	 */
	struct blob *old_ev = NULL;
	pthread_mutex_lock(&st->lock);
	bool readers = st->streams != NULL;
	if (!readers) {
		st->last_sample_event = st->event_next;
		st->last_sample_copy = st->latest_seq;
		old_ev = push_event_locked(st, NULL);
	}
	pthread_mutex_unlock(&st->lock);
	if (readers) {
		struct blob *json = server_render_sample(st);
		struct blob *ev = render_event(st, "sample", json->data, json->len);
		blob_unref(json);
		pthread_mutex_lock(&st->lock);
		st->last_sample_event = st->event_next;
		old_ev = push_event_locked(st, ev);
		pthread_mutex_unlock(&st->lock);
	}
	blob_unref(old_ev);
	atomic_store(&st->last_sample_mono_ms, monotonic_ms());
}

/* The alert's tegrawatch_alerts series line. */
static struct blob *
render_alert_series(const struct alert_event *ev)
{
	struct buf b;
	buf_init(&b);
	prom_format_alert(&b, &(struct prom_alert){
				      .alertname = ev->rule_name,
				      .pending = ev->transition == TRANSITION_PENDING,
				      .severity = severity_name(ev->severity),
				      .metric = ev->metric,
			      });
	struct blob *p = blob_new(b.buf, b.len);
	buf_free(&b);
	return p;
}

/*
 * Puts alert A (JSON blob, series line P) in the active list or takes it
 * out. The blobs it replaced go to DROP[0..1] for the caller to unref.
 */
static void
update_active_locked(struct server_state *st, const struct alert_event *ev, struct blob *a, struct blob *p,
		     struct blob **drop)
{
	bool active = ev->transition != TRANSITION_RESOLVED && ev->transition != TRANSITION_CANCELLED;
	size_t i = 0;
	while (i < st->active_count && strcmp(st->active[i].fingerprint, ev->fingerprint) != 0) {
		i++;
	}
	if (i < st->active_count) {
		drop[0] = st->active[i].json;
		drop[1] = st->active[i].prom;
		if (active) {
			st->active[i].json = blob_ref(a);
			st->active[i].prom = blob_ref(p);
		} else {
			memmove(&st->active[i], &st->active[i + 1], (st->active_count - i - 1) * sizeof(st->active[0]));
			st->active_count--;
		}
	} else if (active && st->active_count < ACTIVE_MAX) {
		struct active_alert *na = &st->active[st->active_count++];
		snprintf(na->fingerprint, sizeof(na->fingerprint), "%s", ev->fingerprint);
		na->json = blob_ref(a);
		na->prom = blob_ref(p);
	}
}

/*
 * Active alerts, recent transitions and (unless RESTORED: an alert already
 * active at start, from the state file) the transition and the event stream.
 */
static void
on_alert(struct server_state *st, const struct alert_event *ev)
{
	json_reset(&st->j);
	alert_event_to_json(&st->j, ev);
	struct blob *a = blob_new(st->j.out.buf, st->j.out.len);
	struct blob *p = render_alert_series(ev);
	struct blob *e = ev->restored ? NULL : render_event(st, "alert", st->j.out.buf, st->j.out.len);
	struct blob *drop[4] = {NULL, NULL, NULL, NULL};

	pthread_mutex_lock(&st->lock);
	if (!ev->restored) {
		drop[2] = st->recent[st->recent_next];
		st->recent[st->recent_next] = blob_ref(a);
		st->recent_next = (st->recent_next + 1) % RECENT_MAX;
		if (st->recent_count < RECENT_MAX) {
			st->recent_count++;
		}
		drop[3] = push_event_locked(st, e);
	}
	update_active_locked(st, ev, a, p, drop);
	pthread_mutex_unlock(&st->lock);

	blob_unref(a);
	blob_unref(p);
	for (size_t k = 0; k < 4; k++) {
		blob_unref(drop[k]);
	}
}

void
server_publish_alert(struct server_state *st, const struct alert_event *ev)
{
	on_alert(st, ev);
}

/* ---- the HTTP threads read ---- */

/* Appends the active alerts as a JSON array; the caller holds the lock. */
static void
add_active_locked(const struct server_state *st, struct buf *out)
{
	buf_addc(out, '[');
	for (size_t i = 0; i < st->active_count; i++) {
		if (i > 0) {
			buf_addc(out, ',');
		}
		buf_add(out, st->active[i].json->data, st->active[i].json->len);
	}
	buf_addc(out, ']');
}

void
server_snapshot(struct server_state *st, struct buf *out)
{
	buf_addf(out, "{\"board\":%s,\"agent\":{\"version\":", st->board_json);
	struct json j;
	json_init(&j);
	json_string(&j, st->version);
	buf_add(out, j.out.buf, j.out.len);
	json_free(&j);
	buf_addf(out, ",\"interval_ms\":%lld,\"uptime_s\":%lld},", (long long)st->interval_ms,
		 (long long)((monotonic_ms() - st->start_mono_ms) / 1000));
	struct buf alerts;
	buf_init(&alerts);
	struct blob *sample = server_render_sample(st);
	pthread_mutex_lock(&st->lock);
	add_active_locked(st, &alerts);
	pthread_mutex_unlock(&st->lock);
	/* the sample's fields without its braces */
	buf_add(out, sample->data + 1, sample->len - 2);
	blob_unref(sample);
	buf_adds(out, ",\"alerts\":");
	buf_add(out, alerts.buf, alerts.len);
	buf_free(&alerts);
	buf_adds(out, "}\n");
}

void
server_alerts(struct server_state *st, struct buf *out)
{
	buf_adds(out, "{\"active\":");
	pthread_mutex_lock(&st->lock);
	add_active_locked(st, out);
	buf_adds(out, ",\"recent\":[");
	for (size_t i = 0; i < st->recent_count; i++) {
		size_t slot = (st->recent_next + RECENT_MAX - st->recent_count + i) % RECENT_MAX;
		if (i > 0) {
			buf_addc(out, ',');
		}
		buf_add(out, st->recent[slot]->data, st->recent[slot]->len);
	}
	pthread_mutex_unlock(&st->lock);
	buf_adds(out, "]}\n");
}

void
server_metrics(struct server_state *st, struct buf *out)
{
	struct blob *prom = server_render_prom(st);
	buf_add(out, prom->data, prom->len);
	blob_unref(prom);
	pthread_mutex_lock(&st->lock);
	if (st->active_count > 0) {
		prom_format_alerts_head(out);
	}
	for (size_t i = 0; i < st->active_count; i++) {
		buf_add(out, st->active[i].prom->data, st->active[i].prom->len);
	}
	pthread_mutex_unlock(&st->lock);
	struct prom_process p;
	proc_self_read(st->boot_time_s, &p);
	prom_format_process(out, &p);
}

/*
 * The points of METRIC's last SECONDS in TIER and their stats: [time, value]
 * in tier 0, [minute start, mean, min, max, count] in tier 1. -ENOENT
 * without a ring.
 */
static int
points_json(struct server_state *st, const char *metric, int64_t seconds, int tier, struct json *j,
	    struct history_stats *hs)
{
	struct history_point *pts = NULL;
	struct history_bucket *b = NULL;
	size_t n = 0;
	pthread_mutex_lock(&st->hist_lock);
	int r = tier == 1 ? history_window_minutes(st->hist, metric, seconds * 1000, &b, &n)
			  : history_window(st->hist, metric, seconds * 1000, &pts, &n);
	pthread_mutex_unlock(&st->hist_lock);
	if (r < 0) {
		return r;
	}
	if (tier == 1) {
		history_bucket_stats(b, n, hs);
	} else {
		history_stats(pts, n, hs);
	}
	json_key(j, "points");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_array_begin(j);
		if (tier == 1) {
			json_int(j, b[i].time_ms);
			json_number(j, b[i].mean);
			json_number(j, b[i].min);
			json_number(j, b[i].max);
			json_uint(j, b[i].count);
		} else {
			json_int(j, pts[i].time_ms);
			json_number(j, pts[i].value);
		}
		json_array_end(j);
	}
	json_array_end(j);
	free(pts);
	free(b);
	return 0;
}

int
server_history(struct server_state *st, const char *metric, int64_t seconds, int tier, struct json *j)
{
	json_object_begin(j);
	json_key(j, "metric");
	json_string(j, metric);
	json_key(j, "seconds");
	json_int(j, seconds);
	json_key(j, "interval_ms");
	json_int(j, st->interval_ms);
	json_key(j, "tier");
	json_int(j, tier);
	json_key(j, "step_ms");
	json_int(j, tier == 1 ? HISTORY_BUCKET_MS : st->interval_ms);
	struct history_stats hs;
	int r = points_json(st, metric, seconds, tier, j, &hs);
	if (r < 0) {
		return r;
	}
	json_key(j, "stats");
	json_object_begin(j);
	json_key(j, "count");
	json_uint(j, hs.count);
	json_key(j, "min");
	json_number(j, hs.min); /* null when there is no point */
	json_key(j, "mean");
	json_number(j, hs.mean);
	json_key(j, "max");
	json_number(j, hs.max);
	json_key(j, "p95");
	json_number(j, hs.p95); /* null in tier 1: minutes do not keep their samples */
	json_object_end(j);
	json_object_end(j);
	json_raw(j, "\n", 1);
	return 0;
}

int64_t
server_sample_age_ms(struct server_state *st)
{
	return monotonic_ms() - atomic_load(&st->last_sample_mono_ms);
}

/* ---- event streams ---- */

enum stream_step
server_stream_step_locked(struct server_state *st, struct stream *s, int64_t now_ms, char *text, size_t size,
			  struct blob **event)
{
	uint64_t oldest = st->event_next > EVENT_RING ? st->event_next - EVENT_RING : 1;
	if (st->stopping) {
		return STREAM_END;
	}
	if (!s->started) {
		s->started = true;
		snprintf(text, size, "retry: 2000\n\n");
		return STREAM_TEXT;
	}
	if (s->cursor < oldest || (s->cursor < st->event_next && !st->events[s->cursor % EVENT_RING])) {
		uint64_t to = s->cursor < oldest ? oldest : s->cursor;
		/* past the last slot without an event, so one gap says it all */
		for (uint64_t k = to; k < st->event_next; k++) {
			if (!st->events[k % EVENT_RING]) {
				to = k + 1;
			}
		}
		snprintf(text, size, "event: gap\ndata: {\"missed\":%llu}\n\n", (unsigned long long)(to - s->cursor));
		s->cursor = to;
		return STREAM_TEXT;
	}
	if (s->cursor < st->event_next) {
		*event = blob_ref(st->events[s->cursor % EVENT_RING]);
		s->cursor++;
		return STREAM_EVENT;
	}
	if (now_ms - s->last_write_ms >= KEEPALIVE_MS) {
		snprintf(text, size, ": keepalive\n\n");
		return STREAM_TEXT;
	}
	return STREAM_PARK;
}

void
server_stream_attach(struct server_state *st, struct stream *s, int64_t last_id)
{
	pthread_mutex_lock(&st->lock);
	uint64_t oldest = st->event_next > EVENT_RING ? st->event_next - EVENT_RING : 1;
	if (last_id >= 0 && (uint64_t)last_id < st->event_next) {
		s->cursor = (uint64_t)last_id + 1; /* a reconnect resumes where it stopped */
	} else if (st->last_sample_event >= oldest && st->last_sample_event > 0) {
		s->cursor = st->last_sample_event; /* a new reader starts with the latest sample */
		struct blob **slot = &st->events[st->last_sample_event % EVENT_RING];
		if (!*slot && st->last_sample_copy == st->latest_seq) {
			/* nobody read it when it came: render it now, once, from the copy */
			*slot = server_render_event_locked(st, st->last_sample_event);
		} else if (!*slot) {
			s->cursor = st->event_next; /* a newer sample is on its way, rendered */
		}
	} else {
		s->cursor = st->event_next;
	}
	s->next = st->streams;
	if (s->next) {
		s->next->prev = s;
	}
	st->streams = s;
	pthread_mutex_unlock(&st->lock);
}

void
server_stream_detach(struct server_state *st, struct stream *s)
{
	pthread_mutex_lock(&st->lock);
	if (s->prev) {
		s->prev->next = s->next;
	} else {
		st->streams = s->next;
	}
	if (s->next) {
		s->next->prev = s->prev;
	}
	pthread_mutex_unlock(&st->lock);
}

/* Wakes parked streams (new events, keep-alive time, shutdown) and sweeps the connections. */
static void *
notifier_main(void *arg)
{
	struct server_state *st = arg;
	server_lower_thread_priority();
	pthread_mutex_lock(&st->lock);
	/* streams whose clients left give their budget place back while still parked, so more than
	 * wake_cap may wait: a full round is followed by another at once */
	bool full = false;
	for (;;) {
		if (!st->stopping && !full) {
			/* nothing to resume or sweep without a connection: no round each second then */
			bool idle = !st->streams && conn_guard_empty(&st->guard);
			clock_cond_wait(&st->wake, &st->lock, monotonic_ms() + (idle ? IDLE_WAIT_MS : SWEEP_MS));
		}
		bool stop = st->stopping;
		int64_t now = monotonic_ms();
		size_t n = 0;
		for (struct stream *s = st->streams; s && n < st->wake_cap; s = s->next) {
			if (s->suspended &&
			    (stop || s->cursor < st->event_next || now - s->last_write_ms >= KEEPALIVE_MS)) {
				s->suspended = false;
				st->wake_list[n++] = s;
			}
		}
		full = n == st->wake_cap;
		/* a parked stream stays alive until we resume it, so no lock is needed here */
		pthread_mutex_unlock(&st->lock);
		for (size_t i = 0; i < n; i++) {
			st->resume(st->wake_list[i]);
		}
		/* slow request heads are closed here too, whether or not new clients come */
		conn_guard_sweep(&st->guard, now);
		pthread_mutex_lock(&st->lock);
		if (stop && !full) {
			break; /* every parked stream resumed: MHD must not stop with one */
		}
	}
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

void
server_connection_add(struct server_state *st, struct conn_entry *e, int fd, const unsigned char addr[16])
{
	conn_guard_add(&st->guard, e, fd, addr, monotonic_ms());
	/* under the lock: the notifier either waits already or has yet to see the connection */
	pthread_mutex_lock(&st->lock);
	pthread_cond_signal(&st->wake);
	pthread_mutex_unlock(&st->lock);
}

int
server_notifier_start(struct server_state *st, stream_resume_fn *resume)
{
	st->resume = resume;
	if (pthread_create(&st->notifier, NULL, notifier_main, st) != 0) {
		return -EAGAIN;
	}
	st->notifier_started = true;
	return 0;
}

unsigned
server_work(struct server_state *st, const char *content_type, const char *body, size_t len, bool too_large,
	    struct buf *out)
{
	char err[160];
	unsigned status = 202;
	/* application/json only: a form or text/plain a web page may send without asking is refused (CSRF) */
	size_t ct = content_type ? strcspn(content_type, "; ") : 0;
	if (!st->work.post) {
		status = 404;
		snprintf(err, sizeof(err), "work reporting is off (a replay)");
	} else if (!content_type || ct != 16 || strncasecmp(content_type, "application/json", 16) != 0) {
		status = 415;
		snprintf(err, sizeof(err), "send Content-Type: application/json");
	} else if (too_large) {
		status = 413;
		snprintf(err, sizeof(err), "a work report is at most %d bytes", WEB_POST_MAX);
	} else if (st->work.post(st->work.data, body, len, err, sizeof(err)) < 0) {
		status = 400;
	}
	struct json j;
	json_init(&j);
	json_object_begin(&j);
	json_key(&j, status == 202 ? "accepted" : "error");
	if (status == 202) {
		json_bool(&j, true);
	} else {
		json_string(&j, err);
	}
	json_object_end(&j);
	json_raw(&j, "\n", 1);
	buf_add(out, j.out.buf, j.out.len);
	json_free(&j);
	return status;
}
