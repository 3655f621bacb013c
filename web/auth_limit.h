/*
 * Failed logins per address (goal D5 of the reliability plan): after
 * AUTH_FAILS_MAX failures from one address within AUTH_WINDOW_MS, every
 * request of that address that carries credentials gets 429 until the
 * oldest of them leaves the window, right credentials included (else the
 * answer would still tell a right guess from a wrong one). A success does
 * not reset the count: another user of the same address (127.0.0.1 is
 * every local user) must not buy an attacker more guesses.
 *
 * Kept apart from libmicrohttpd so it can be tested alone. The table is
 * used by the server's one polling thread only; the counters are read by
 * the loop thread.
 */
#ifndef TEGRAWATCH_WEB_AUTH_LIMIT_H
#define TEGRAWATCH_WEB_AUTH_LIMIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/metrics.h"

#define AUTH_FAILS_MAX 10
#define AUTH_WINDOW_MS 60000
#define AUTH_ADDRS 256 /* addresses remembered; the one that failed least recently makes room */

struct auth_slot {
	unsigned char key[16]; /* web_addr_key with the /64 of an IPv6 address */
	bool used;
	unsigned count, next;          /* failures in FAILS, and where the next goes */
	int64_t fails[AUTH_FAILS_MAX]; /* their times, a ring */
	int64_t last_ms;
};

struct auth_limit {
	struct auth_slot slots[AUTH_ADDRS];
	atomic_ullong failures;  /* wrong credentials (401) */
	atomic_ullong throttled; /* credentials not even checked (429) */
	/* the loop thread's: what the last log line said */
	unsigned long long reported;
	int64_t reported_ms;
};

void auth_limit_init(struct auth_limit *l);
/**
 * Whether KEY may try credentials now: 0, or the milliseconds until it
 * may (then the attempt is counted as throttled).
 */
int64_t auth_limit_check(struct auth_limit *l, const unsigned char key[16], int64_t now_ms);
/** KEY presented wrong credentials. */
void auth_limit_failed(struct auth_limit *l, const unsigned char key[16], int64_t now_ms);
/** The loop thread: agent.http_auth_* into M, and a warning at most once a minute when logins failed. */
void auth_limit_add_metrics(struct auth_limit *l, struct metric_set *m, int64_t now_ms);

#endif
