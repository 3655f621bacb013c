/* The HTTP server's connection policy (see conn_guard.h). */
#include "conn_guard.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "core/log.h"

#define REPORT_MS 60000 /* shed connections are logged at most this often */

void
conn_guard_init(struct conn_guard *g, const struct conn_limits *lim)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
	g->lim = *lim;
}

void
conn_guard_fini(struct conn_guard *g)
{
	pthread_mutex_destroy(&g->lock);
}

/* Not counted any more; libmicrohttpd reads end-of-file and closes it. Lock held. */
static void
close_locked(struct conn_entry *e)
{
	if (!e->closing) {
		e->closing = true;
		shutdown(e->fd, SHUT_RDWR);
	}
}

static bool
counts_as_request(const struct conn_entry *e)
{
	return !e->closing && e->phase != CONN_STREAM;
}

/* Requests open from ADDR (any address when NULL). Lock held. */
static size_t
count_locked(const struct conn_guard *g, const unsigned char *addr)
{
	size_t n = 0;
	for (const struct conn_entry *e = g->head; e; e = e->next) {
		if (counts_as_request(e) && (!addr || memcmp(e->addr, addr, sizeof(e->addr)) == 0)) {
			n++;
		}
	}
	return n;
}

/*
 * Who makes room for NEW_E from ADDR (any address when NULL): the
 * connection that has waited longest for its request head, else one whose
 * answer has taken over CONN_STUCK_MS (its client does not read), else
 * nobody. Lock held.
 */
static struct conn_entry *
victim_locked(const struct conn_guard *g, const struct conn_entry *new_e, const unsigned char *addr, int64_t now_ms)
{
	struct conn_entry *waiting = NULL, *stuck = NULL;
	for (struct conn_entry *e = g->head; e; e = e->next) {
		if (e == new_e || !counts_as_request(e) || (addr && memcmp(e->addr, addr, sizeof(e->addr)) != 0)) {
			continue;
		}
		if (e->phase == CONN_WAITING && (!waiting || e->since_ms < waiting->since_ms)) {
			waiting = e;
		} else if (e->phase == CONN_BUSY && now_ms - e->since_ms >= CONN_STUCK_MS &&
			   (!stuck || e->since_ms < stuck->since_ms)) {
			stuck = e;
		}
	}
	return waiting ? waiting : stuck;
}

/* Makes room for NEW under a limit of MAX (per ADDR, or global); false when NEW must go. Lock held. */
static bool
make_room_locked(struct conn_guard *g, const struct conn_entry *new_e, const unsigned char *addr, size_t max,
		 int64_t now_ms)
{
	if (count_locked(g, addr) <= max) {
		return true;
	}
	struct conn_entry *victim = victim_locked(g, new_e, addr, now_ms);
	if (!victim) {
		return false;
	}
	close_locked(victim);
	g->stats.evicted++;
	return true;
}

static void
sweep_locked(struct conn_guard *g, int64_t now_ms)
{
	for (struct conn_entry *e = g->head; e; e = e->next) {
		if (counts_as_request(e) && e->phase == CONN_WAITING &&
		    now_ms - e->since_ms >= g->lim.header_timeout_ms) {
			close_locked(e);
			g->stats.timed_out++;
		} else if (!e->closing && e->phase == CONN_STREAM && !atomic_load(&e->parked) &&
			   now_ms - atomic_load(&e->progress_ms) >= g->lim.stall_ms) {
			close_locked(e);
			g->stats.streams_stalled++;
		}
	}
}

bool
conn_guard_add(struct conn_guard *g, struct conn_entry *e, int fd, const unsigned char addr[16], int64_t now_ms)
{
	memset(e, 0, sizeof(*e));
	e->fd = fd;
	memcpy(e->addr, addr, sizeof(e->addr));
	e->phase = CONN_WAITING;
	e->since_ms = now_ms;
	atomic_init(&e->progress_ms, now_ms);
	atomic_init(&e->parked, false);
	pthread_mutex_lock(&g->lock);
	e->prev = g->tail;
	if (g->tail) {
		g->tail->next = e;
	} else {
		g->head = e;
	}
	g->tail = e;
	g->stats.open++;
	/* the overdue first: they free room without evicting anyone */
	sweep_locked(g, now_ms);
	bool ok = make_room_locked(g, e, e->addr, g->lim.per_ip, now_ms) &&
		  make_room_locked(g, e, NULL, g->lim.max_conns, now_ms);
	if (!ok) {
		close_locked(e);
		g->stats.refused++;
	}
	pthread_mutex_unlock(&g->lock);
	return ok;
}

void
conn_guard_remove(struct conn_guard *g, struct conn_entry *e)
{
	pthread_mutex_lock(&g->lock);
	if (e->prev) {
		e->prev->next = e->next;
	} else {
		g->head = e->next;
	}
	if (e->next) {
		e->next->prev = e->prev;
	} else {
		g->tail = e->prev;
	}
	g->stats.open--;
	if (e->phase == CONN_STREAM) {
		g->stats.streams--;
	}
	pthread_mutex_unlock(&g->lock);
}

void
conn_guard_set_phase(struct conn_guard *g, struct conn_entry *e, enum conn_phase phase, int64_t now_ms)
{
	pthread_mutex_lock(&g->lock);
	if (e->phase != CONN_STREAM) {
		e->phase = phase;
		e->since_ms = now_ms;
	}
	pthread_mutex_unlock(&g->lock);
}

int
conn_guard_start_stream(struct conn_guard *g, struct conn_entry *e, int64_t now_ms)
{
	int r = 0;
	pthread_mutex_lock(&g->lock);
	if (g->stats.streams >= g->lim.max_streams) {
		g->stats.streams_refused++;
		r = -EBUSY;
	} else if (e->phase != CONN_STREAM) {
		e->phase = CONN_STREAM;
		e->since_ms = now_ms;
		conn_guard_stream_progress(e, now_ms, false);
		g->stats.streams++;
	}
	pthread_mutex_unlock(&g->lock);
	return r;
}

void
conn_guard_sweep(struct conn_guard *g, int64_t now_ms)
{
	pthread_mutex_lock(&g->lock);
	sweep_locked(g, now_ms);
	pthread_mutex_unlock(&g->lock);
}

void
conn_guard_get_stats(struct conn_guard *g, struct conn_stats *out)
{
	pthread_mutex_lock(&g->lock);
	*out = g->stats;
	pthread_mutex_unlock(&g->lock);
}

void
conn_guard_count_answer(struct conn_guard *g, unsigned int status)
{
	pthread_mutex_lock(&g->lock);
	g->stats.requests++;
	g->stats.request_errors += status >= 400;
	pthread_mutex_unlock(&g->lock);
}

void
conn_guard_add_metrics(struct conn_guard *g, struct metric_set *m, int64_t now_ms)
{
	struct conn_stats cs;
	conn_guard_get_stats(g, &cs);
	metric_set_put(m, "agent.http_connections", (double)cs.open);
	metric_set_put(m, "agent.http_event_streams", (double)cs.streams);
	metric_set_put(m, "agent.http_connections_refused_total", (double)cs.refused);
	metric_set_put(m, "agent.http_connections_evicted_total", (double)cs.evicted);
	metric_set_put(m, "agent.http_header_timeouts_total", (double)cs.timed_out);
	metric_set_put(m, "agent.http_streams_refused_total", (double)cs.streams_refused);
	metric_set_put(m, "agent.http_streams_stalled_total", (double)cs.streams_stalled);
	metric_set_put(m, "agent.http_requests_total", (double)cs.requests);
	metric_set_put(m, "agent.http_request_errors_total", (double)cs.request_errors);
	uint64_t shed = cs.refused + cs.evicted + cs.streams_refused;
	if (shed == g->reported_shed || (g->reported_ms && now_ms - g->reported_ms < REPORT_MS)) {
		return;
	}
	log_warn("web: connection limits reached: %llu refused, %llu evicted, %llu event streams refused since start "
		 "(web.max_connections, max_connections_per_ip, max_event_streams)",
		 (unsigned long long)cs.refused, (unsigned long long)cs.evicted,
		 (unsigned long long)cs.streams_refused);
	g->reported_shed = shed;
	g->reported_ms = now_ms;
}
