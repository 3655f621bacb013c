/*
 * Routing a request target (path and query, as the client sent them) to
 * a handler and its parameters, apart from libmicrohttpd so it can be
 * tested and fuzzed alone (tests/fuzz/fuzz_http.c). The server keeps the
 * raw target of each request and routes it here; libmicrohttpd's own
 * unescaping and query parsing are not used.
 */
#ifndef TEGRAWATCH_WEB_ROUTE_H
#define TEGRAWATCH_WEB_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "core/metrics.h"

#define WEB_URI_MAX 2048 /* longer request targets get 414 */

enum web_route {
	ROUTE_NONE, /* answer STATUS with ERROR */
	ROUTE_PAGE,
	ROUTE_SNAPSHOT,
	ROUTE_HISTORY,
	ROUTE_ALERTS,
	ROUTE_EVENTS,
	ROUTE_METRICS,
	ROUTE_HEALTHZ,
	ROUTE_WORK, /* POST only */
};

struct web_request {
	enum web_route route;
	unsigned status; /* 200 with a route; 400, 404 or 414 with ROUTE_NONE */
	char error[128]; /* what the error answer says */
	/* ROUTE_HISTORY: a valid metric name, seconds from 1 to the tier's length, and the tier */
	char metric[METRIC_NAME_MAX];
	int64_t seconds;
	int tier; /* 0: every sample, 1: one-minute aggregates */
};

/* How far back the history's tiers go. */
struct web_history_span {
	int64_t seconds;        /* tier 0, every sample: web.history */
	int64_t minute_seconds; /* tier 1, one-minute aggregates: web.minute_history (0: none) */
};

/**
 * Routes TARGET ("/api/v1/history?metric=temp.tj_c&seconds=60"): the path
 * is percent-decoded and must match exactly; the query ('+' is a space,
 * %XX a byte, the first of repeated names counts) matters only to the
 * history. Its `tier` (0 or 1) is optional; `seconds` defaults to the
 * tier's length (tier 0's without a tier) and is at most that length (the
 * longer one without a tier, which then is the finest that covers
 * `seconds`). A decoded NUL or a bad %-escape is a 400, an unknown path or
 * tier 1 when there is none a 404, a target over WEB_URI_MAX bytes a 414.
 */
void web_route(const char *target, const struct web_history_span *span, struct web_request *out);

#endif
