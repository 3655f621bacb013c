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

#include "agent/core/metrics.h"

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
};

struct web_request {
	enum web_route route;
	unsigned status; /* 200 with a route; 400, 404 or 414 with ROUTE_NONE */
	char error[128]; /* what the error answer says */
	/* ROUTE_HISTORY: a valid metric name, and seconds from 1 to the history length */
	char metric[METRIC_NAME_MAX];
	int64_t seconds;
};

/**
 * Routes TARGET ("/api/v1/history?metric=temp.tj_c&seconds=60"): the path
 * is percent-decoded and must match exactly; the query ('+' is a space,
 * %XX a byte, the first of repeated names counts) matters only to the
 * history, whose `seconds` defaults to and is at most HISTORY_S. A decoded
 * NUL or a bad %-escape is a 400, an unknown path a 404, a target over
 * WEB_URI_MAX bytes a 414.
 */
void web_route(const char *target, int64_t history_s, struct web_request *out);

#endif
