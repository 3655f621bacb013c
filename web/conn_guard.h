/*
 * The HTTP server's connection policy, kept apart from libmicrohttpd so
 * it can be tested alone (docs/http.md, "Limits and errors"). Every
 * connection is tracked from accept to close with its phase: waiting for
 * a complete request head (new, or idle between requests), busy with a
 * request, or an event stream.
 *
 * Why not libmicrohttpd's own limits: its per-address limit refuses the
 * newcomer, so on loopback (every local client is 127.0.0.1: a browser's
 * tabs, an ssh tunnel, a proxy, a scraper) 8 sockets that trickle a byte
 * now and then lock every other local user out, and its global limit stops
 * accepting altogether.
 *
 * Here the limits count connections, but never close one that has not had
 * its fair chance: libmicrohttpd accepts a burst before it reads any of it,
 * so a connection whose request head sits unread in its socket is spared,
 * and so is one that has sent nothing yet, for CONN_GRACE_MS (a browser's
 * preconnect). Over a limit, the newcomer is admitted and room is made by
 * closing, in this order: the connection that has waited longest for its
 * request head beyond its grace; the one that has waited longest after
 * sending something that has all been read (a slow head, or an idle
 * kept-alive connection); one whose answer has waited in its socket for
 * the client to take it for CONN_STUCK_MS (a slow machine making answers
 * is nobody's fault). A socket whose client has gone never counts. The
 * per-address limit therefore never refuses a newcomer: it decides whom of
 * that address to evict. Only over twice the global limit, with nobody to
 * evict, is the newcomer shut at once; the sweep trims what a burst left
 * over once its grace is over. Waiting longer than the header timeout
 * closes a connection whatever its idle timer says (slowloris), and event
 * streams have a budget of their own, so they never take the slots
 * requests need; a stream whose client has gone frees its place at once.
 *
 * Closing means shutdown(): libmicrohttpd then reads end-of-file and
 * closes the connection itself. The caller keeps the entries alive until
 * conn_guard_remove(), which it must call before the socket is closed.
 */
#ifndef TEGRAWATCH_WEB_CONN_GUARD_H
#define TEGRAWATCH_WEB_CONN_GUARD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/metrics.h"

#define CONN_STUCK_MS 2000     /* an answer that takes longer has a client that does not read */
#define CONN_READ_GRACE_MS 500 /* a head read but not yet parsed: the server's moment, not the client's */
#define CONN_GRACE_MS 2000 /* a new or idle connection that has not sent a request head within this may be evicted */

enum conn_phase {
	CONN_WAITING, /* no complete request head yet: new, or idle between requests */
	CONN_BUSY,    /* a request is being answered */
	CONN_STREAM,  /* an event stream */
};

struct conn_entry {
	struct conn_entry *prev, *next;
	int fd;
	unsigned char addr[16]; /* the peer (web_addr_key with the whole address) */
	enum conn_phase phase;
	bool closing;     /* shut down by the guard: no longer counted */
	bool served;      /* answered a request before: waiting again means idle, not new */
	int64_t since_ms; /* when the phase began */
	/* event streams: the last time their reader ran (or they were resumed), and whether they wait for events */
	atomic_llong progress_ms;
	atomic_bool parked;
};

struct conn_limits {
	size_t max_conns; /* requests (waiting or busy) at once */
	size_t per_ip;    /* of those, from one address */
	size_t max_streams;
	int64_t header_timeout_ms;
	int64_t stall_ms; /* a stream whose socket has taken nothing for this long is dropped */
};

struct conn_stats {
	uint64_t refused;         /* newcomers closed at once: over twice the global limit, nobody evictable */
	uint64_t evicted;         /* waiting connections closed for a newcomer */
	uint64_t timed_out;       /* no complete request head within the header timeout */
	uint64_t streams_refused; /* event streams answered 503 */
	uint64_t streams_stalled; /* event streams dropped: their client stopped reading */
	uint64_t requests;        /* answers sent, counted when the request completes */
	uint64_t request_errors;  /* of those, 4xx and 5xx */
	size_t open;              /* connections now (streams included) */
	size_t streams;
};

struct conn_guard {
	pthread_mutex_t lock;
	struct conn_entry *head, *tail; /* in order of arrival */
	struct conn_limits lim;
	struct conn_stats stats;
	/* the loop thread's: what the last log line about shed connections said */
	uint64_t reported_shed;
	int64_t reported_ms;
};

void conn_guard_init(struct conn_guard *g, const struct conn_limits *lim);
void conn_guard_fini(struct conn_guard *g);

/**
 * Tracks E, a new connection on FD from ADDR. When it goes over a limit,
 * a connection of the same address (or any, for the global limit) is
 * evicted as the header says; without one, E is admitted up to twice the
 * global limit, and beyond that shut down and false returned (E stays
 * tracked until conn_guard_remove()).
 */
bool conn_guard_add(struct conn_guard *g, struct conn_entry *e, int fd, const unsigned char addr[16], int64_t now_ms);
/** Forgets E: before its socket is closed. */
void conn_guard_remove(struct conn_guard *g, struct conn_entry *e);
/** E's request head is complete (CONN_BUSY) or its answer is done (CONN_WAITING). */
void conn_guard_set_phase(struct conn_guard *g, struct conn_entry *e, enum conn_phase phase, int64_t now_ms);
/** Makes E an event stream: 0, or -EBUSY when the stream budget is spent (counted). */
int conn_guard_start_stream(struct conn_guard *g, struct conn_entry *e, int64_t now_ms);
/**
 * Closes what waited too long for a request head, the event streams that
 * have had something to send (not parked) but whose reader has not run for
 * the stall time (their client stopped reading), and, while an address or
 * the server is over its limit, the connections past their grace that
 * waited longest for a request head.
 */
void conn_guard_sweep(struct conn_guard *g, int64_t now_ms);

/** True when no connection is tracked: nothing to sweep. */
bool conn_guard_empty(struct conn_guard *g);

void conn_guard_get_stats(struct conn_guard *g, struct conn_stats *out);
/** Counts a request answered with STATUS (once it completed). */
void conn_guard_count_answer(struct conn_guard *g, unsigned int status);

/**
 * The loop thread: adds the agent.http_* counters to M, and logs a warning
 * when connections were shed, at most once a minute (the log is not shared
 * with the HTTP threads).
 */
void conn_guard_add_metrics(struct conn_guard *g, struct metric_set *m, int64_t now_ms);

/* An event stream's reader ran, or the stream was resumed: any thread, no lock. */
static inline void
conn_guard_stream_progress(struct conn_entry *e, int64_t now_ms, bool parked)
{
	atomic_store(&e->progress_ms, now_ms);
	atomic_store(&e->parked, parked);
}

#endif
