/* The HTTP server's connection policy (see conn_guard.h). */
#include "conn_guard.h"

#include <errno.h>
#include <string.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
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

static bool
same_addr(const struct conn_entry *e, const unsigned char *addr)
{
	return !addr || memcmp(e->addr, addr, sizeof(e->addr)) == 0;
}

/*
 * True when E's client has closed its end: end-of-file (or a reset) with
 * nothing left to read. Such a socket holds a slot until libmicrohttpd
 * reaps it (a suspended event stream only at its next resume).
 */
static bool
peer_gone(const struct conn_entry *e)
{
	if (e->fd < 0) {
		return false;
	}
	char c;
	ssize_t n = recv(e->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Requests open from ADDR (any address when NULL). Lock held. */
static size_t
count_locked(const struct conn_guard *g, const unsigned char *addr)
{
	size_t n = 0;
	for (const struct conn_entry *e = g->head; e; e = e->next) {
		n += counts_as_request(e) && same_addr(e, addr);
	}
	return n;
}

/* Forgets the waiting connections of ADDR whose client has gone: they free room without evicting anyone. */
static void
drop_gone_locked(struct conn_guard *g, const unsigned char *addr)
{
	for (struct conn_entry *e = g->head; e; e = e->next) {
		if (counts_as_request(e) && e->phase == CONN_WAITING && same_addr(e, addr) && peer_gone(e)) {
			close_locked(e);
		}
	}
}

/* True when E's client has sent bytes that libmicrohttpd has not read yet (its request head, in a burst). */
static bool
unread_bytes(const struct conn_entry *e)
{
	if (e->fd < 0) {
		return true;
	}
	char c;
	return recv(e->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/*
 * True when E's client has sent anything yet (TCP's count of bytes
 * received, Linux 4.1). A client that connects ahead of its request (a
 * browser's preconnect, a pool) is given its grace; one that has sent part
 * of a head, or a whole request before, and now nothing is slow or idle.
 * Unknown (not TCP, an older kernel) counts as sent.
 */
static bool
has_sent(const struct conn_entry *e)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	memset(&ti, 0, sizeof(ti));
	if (e->fd < 0 || getsockopt(e->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received)) {
		return true;
	}
	return ti.tcpi_bytes_received > 0;
}

/*
 * True when the answer written to E waits in its socket for the client to
 * take it. An answer that is slow to be made (a loaded machine) is not
 * the client's fault; one the client does not read is. Unknown counts as
 * waiting.
 */
static bool
answer_untaken(const struct conn_entry *e)
{
	int queued = 0;
	if (e->fd < 0 || ioctl(e->fd, SIOCOUTQ, &queued) != 0) {
		return true;
	}
	return queued > 0;
}

/*
 * Who makes room under a limit for ADDR (any address when NULL): the
 * connection that has waited longest for its request head past its grace
 * (unless that head sits unread: then the server is slow, not the client);
 * else (IDLE_TOO) the one that has waited longest while everything it sent
 * has been read (a slow or idle client: a burst's unread heads and the
 * silent connections within their grace are spared);
 * else one whose answer has waited in its socket for over CONN_STUCK_MS
 * (its client does not read); else nobody. NEW_E is never chosen. Lock held.
 */
static struct conn_entry *
victim_locked(const struct conn_guard *g, const struct conn_entry *new_e, const unsigned char *addr, bool idle_too,
	      int64_t now_ms)
{
	struct conn_entry *late = NULL, *idle = NULL, *stuck = NULL;
	for (struct conn_entry *e = g->head; e; e = e->next) {
		if (e == new_e || !counts_as_request(e) || !same_addr(e, addr)) {
			continue;
		}
		if (e->phase == CONN_WAITING) {
			/* a head that sits unread is the server's delay, never the client's, however long */
			if (now_ms - e->since_ms >= CONN_GRACE_MS) {
				if ((!late || e->since_ms < late->since_ms) && !unread_bytes(e)) {
					late = e;
				}
			} else if (idle_too && (!idle || e->since_ms < idle->since_ms) &&
				   (e->served || now_ms - e->since_ms >= CONN_READ_GRACE_MS) && !unread_bytes(e) &&
				   has_sent(e)) {
				idle = e;
			}
		} else if (e->phase == CONN_BUSY && now_ms - e->since_ms >= CONN_STUCK_MS &&
			   (!stuck || e->since_ms < stuck->since_ms) && answer_untaken(e)) {
			stuck = e;
		}
	}
	return late ? late : idle ? idle : stuck;
}

/*
 * Brings ADDR (or the server, when NULL) back under MAX by evicting what
 * may be evicted; false when it stays over HARD (NEW_E must then go).
 * Lock held.
 */
static bool
make_room_locked(struct conn_guard *g, const struct conn_entry *new_e, const unsigned char *addr, size_t max,
		 size_t hard, bool idle_too, int64_t now_ms)
{
	size_t n = count_locked(g, addr);
	if (n <= max) {
		return true;
	}
	drop_gone_locked(g, addr);
	n = count_locked(g, addr);
	struct conn_entry *victim;
	while (n > max && (victim = victim_locked(g, new_e, addr, idle_too, now_ms))) {
		close_locked(victim);
		g->stats.evicted++;
		n--;
	}
	return n <= hard;
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

/* The surplus admitted in a burst, once its grace is over: per address, then overall. Lock held. */
static void
trim_locked(struct conn_guard *g, int64_t now_ms)
{
	for (struct conn_entry *e = g->head; e; e = e->next) {
		if (counts_as_request(e)) {
			make_room_locked(g, NULL, e->addr, g->lim.per_ip, SIZE_MAX, false, now_ms);
		}
	}
	make_room_locked(g, NULL, NULL, g->lim.max_conns, SIZE_MAX, false, now_ms);
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
	bool ok = make_room_locked(g, e, e->addr, g->lim.per_ip, SIZE_MAX, true, now_ms) &&
		  make_room_locked(g, e, NULL, g->lim.max_conns, 2 * g->lim.max_conns, true, now_ms);
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
		e->served |= e->phase == CONN_BUSY && phase == CONN_WAITING;
		e->phase = phase;
		e->since_ms = now_ms;
	}
	pthread_mutex_unlock(&g->lock);
}

/* Event streams that still have a reader; the ones whose client has gone are shut down and let go. Lock held. */
static size_t
live_streams_locked(struct conn_guard *g)
{
	size_t n = 0;
	for (struct conn_entry *e = g->head; e; e = e->next) {
		if (e->closing || e->phase != CONN_STREAM) {
			continue;
		}
		if (peer_gone(e)) {
			close_locked(e);
		} else {
			n++;
		}
	}
	return n;
}

int
conn_guard_start_stream(struct conn_guard *g, struct conn_entry *e, int64_t now_ms)
{
	int r = 0;
	pthread_mutex_lock(&g->lock);
	/* closed streams stay open until libmicrohttpd resumes them: look only when the budget seems spent */
	if (g->stats.streams >= g->lim.max_streams && live_streams_locked(g) >= g->lim.max_streams) {
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
	trim_locked(g, now_ms);
	pthread_mutex_unlock(&g->lock);
}

bool
conn_guard_empty(struct conn_guard *g)
{
	pthread_mutex_lock(&g->lock);
	bool empty = !g->head;
	pthread_mutex_unlock(&g->lock);
	return empty;
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
