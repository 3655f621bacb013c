/* Request targets to handlers (see route.h). */
#include "route.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "web_util.h"

static const struct {
	const char *path;
	enum web_route route;
} routes[] = {
	{"/", ROUTE_PAGE},
	{"/api/v1/snapshot", ROUTE_SNAPSHOT},
	{"/api/v1/history", ROUTE_HISTORY},
	{"/api/v1/alerts", ROUTE_ALERTS},
	{"/api/v1/work", ROUTE_WORK},
	{"/api/v1/events", ROUTE_EVENTS},
	{"/metrics", ROUTE_METRICS},
	{"/healthz", ROUTE_HEALTHZ},
};

static int
hex(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

/*
 * Decodes LEN bytes of IN into OUT (room for CAP bytes and a NUL): %XX,
 * and '+' as a space when PLUS. -1 for a bad escape, a NUL or no room.
 */
static int
decode(const char *in, size_t len, bool plus, char *out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		char c = in[i];
		if (c == '%') {
			int hi = i + 2 < len ? hex(in[i + 1]) : -1;
			int lo = i + 2 < len ? hex(in[i + 2]) : -1;
			if (hi < 0 || lo < 0) {
				return -1;
			}
			c = (char)(hi << 4 | lo);
			i += 2;
		} else if (c == '+' && plus) {
			c = ' ';
		}
		if (c == '\0' || n + 1 >= cap) {
			return -1;
		}
		out[n++] = c;
	}
	out[n] = '\0';
	return 0;
}

/*
 * The first argument NAME of QUERY (LEN bytes), decoded into OUT: 1 when
 * found with a value, 0 when absent or without '=' (as a bare name), -1
 * when its value cannot be decoded or does not fit.
 */
static int
query_arg(const char *query, size_t len, const char *name, char *out, size_t cap)
{
	size_t i = 0;
	while (i < len) {
		const char *amp = memchr(query + i, '&', len - i);
		size_t end = amp ? (size_t)(amp - query) : len;
		const char *eq = memchr(query + i, '=', end - i);
		size_t name_end = eq ? (size_t)(eq - query) : end;
		char key[32];
		if (decode(query + i, name_end - i, true, key, sizeof(key)) == 0 && strcmp(key, name) == 0) {
			if (!eq) {
				return 0;
			}
			return decode(eq + 1, end - name_end - 1, true, out, cap) == 0 ? 1 : -1;
		}
		i = end + 1;
	}
	return 0;
}

static void
fail(struct web_request *out, unsigned status, const char *error)
{
	out->route = ROUTE_NONE;
	out->status = status;
	snprintf(out->error, sizeof(out->error), "%s", error);
}

/* The tier and the largest `seconds` of a history request (TIER -1: not asked for). */
static int64_t
history_max_s(int tier, const struct web_history_span *span)
{
	if (tier == 0) {
		return span->seconds;
	}
	if (tier == 1) {
		return span->minute_seconds;
	}
	return span->seconds > span->minute_seconds ? span->seconds : span->minute_seconds;
}

static void
history_args(const char *query, size_t len, const struct web_history_span *span, struct web_request *out)
{
	int r = query_arg(query, len, "metric", out->metric, sizeof(out->metric));
	if (r == 0 || (r > 0 && !out->metric[0])) {
		fail(out, 400, "missing metric: use ?metric=NAME");
		return;
	}
	if (r < 0 || !metric_name_valid(out->metric)) {
		fail(out, 400, "metric: expected a metric name like temp.cpu_c (lower case, dotted)");
		return;
	}
	char text[24];
	int tier = -1;
	r = query_arg(query, len, "tier", text, sizeof(text));
	if (r != 0) {
		if (r < 0 || (strcmp(text, "0") != 0 && strcmp(text, "1") != 0)) {
			fail(out, 400, "tier: expected 0 (every sample) or 1 (one-minute min, mean and max)");
			return;
		}
		tier = text[0] - '0';
		if (tier == 1 && span->minute_seconds <= 0) {
			fail(out, 404, "no tier 1: web.minute_history is 0");
			return;
		}
	}
	int64_t max_s = history_max_s(tier, span);
	out->seconds = tier == 1 ? span->minute_seconds : span->seconds;
	r = query_arg(query, len, "seconds", text, sizeof(text));
	if (r < 0 || (r > 0 && web_parse_uint(text, 1, max_s, &out->seconds) < 0)) {
		char msg[96];
		snprintf(msg, sizeof(msg), "seconds: expected a whole number from 1 to %lld", (long long)max_s);
		fail(out, 400, msg);
		return;
	}
	/* the finest tier that covers the span asked for */
	out->tier = tier >= 0 ? tier : out->seconds <= span->seconds ? 0 : 1;
}

void
web_route(const char *target, const struct web_history_span *span, struct web_request *out)
{
	memset(out, 0, sizeof(*out));
	size_t len = strnlen(target, WEB_URI_MAX + 1);
	if (len > WEB_URI_MAX) {
		fail(out, 414, "URI too long");
		return;
	}
	const char *q = memchr(target, '?', len);
	size_t path_len = q ? (size_t)(q - target) : len;
	char path[WEB_URI_MAX + 1];
	if (decode(target, path_len, false, path, sizeof(path)) < 0) {
		fail(out, 400, "bad request target: a bad %-escape or a NUL");
		return;
	}
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (strcmp(path, routes[i].path) == 0) {
			out->route = routes[i].route;
			out->status = 200;
			break;
		}
	}
	if (out->route == ROUTE_NONE) {
		fail(out, 404, "not found");
	} else if (out->route == ROUTE_HISTORY) {
		history_args(q ? q + 1 : "", q ? len - path_len - 1 : 0, span, out);
	}
}
