/*
 * Fuzz target for the HTTP server's pure parts: the router and its query
 * parsing (web/route.c), the Host check, the Authorization parsers and
 * the base64 decoder (web/web_util.c), the query number parser. The input
 * is up to three lines: a request target, a Host value, an Authorization
 * value (which may hold NULs). Invariants checked on every input:
 *   route:   200 exactly with a route; a history has a valid metric and
 *            1 <= seconds <= its tier's length; otherwise 400/404/414 with a
 *            message; 414 exactly for targets over WEB_URI_MAX bytes;
 *   auth:    basic or bearer credentials match only their one spelling
 *            (the scheme in any case, spaces, the exact encoding);
 *   base64:  what decodes encodes back to the same text;
 *   numbers: what web_parse_uint accepts prints back the same.
 * Any violation aborts, which libFuzzer and the replay driver report.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base64.h"
#include "core/metrics.h"
#include "web/route.h"
#include "web/web_util.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HISTORY_S 3600
#define MINUTE_S 86400
#define USER "admin"
#define PASS "pa55word"
#define BASIC_B64 "YWRtaW46cGE1NXdvcmQ=" /* admin:pa55word */
#define TOKEN "t0ken"

/* An exact-size NUL-terminated copy of LEN bytes (the replay driver and ASan see over-reads). */
static char *
copy(const uint8_t *p, size_t len)
{
	char *s = malloc(len + 1);
	CHECK(s);
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

static void
check_route(const char *target)
{
	struct web_request req;
	const struct web_history_span span = {.seconds = HISTORY_S, .minute_seconds = MINUTE_S};
	web_route(target, &span, &req);
	CHECK((req.status == 200) == (req.route != ROUTE_NONE));
	CHECK((req.status == 414) == (strlen(target) > WEB_URI_MAX));
	if (req.route == ROUTE_NONE) {
		CHECK(req.status == 400 || req.status == 404 || req.status == 414);
		CHECK(req.error[0] != '\0');
	} else if (req.route == ROUTE_HISTORY) {
		CHECK(metric_name_valid(req.metric));
		CHECK(req.tier == 0 || req.tier == 1);
		CHECK(req.seconds >= 1 && req.seconds <= (req.tier ? MINUTE_S : HISTORY_S));
	}
}

/* What follows SCHEME and its spaces in H (LEN bytes), or NULL. */
static const char *
after_scheme(const char *h, size_t len, const char *scheme, size_t *rest)
{
	size_t n = strlen(scheme);
	if (len <= n || strncasecmp(h, scheme, n) != 0 || h[n] != ' ') {
		return NULL;
	}
	while (n < len && h[n] == ' ') {
		n++;
	}
	*rest = len - n;
	return h + n;
}

static void
check_auth(const char *h, size_t len)
{
	size_t rest;
	const char *cred;
	if (web_basic_auth_match(h, len, USER, strlen(USER), PASS, strlen(PASS))) {
		cred = after_scheme(h, len, "Basic", &rest);
		CHECK(cred && rest == strlen(BASIC_B64) && memcmp(cred, BASIC_B64, rest) == 0);
	}
	if (web_bearer_match(h, len, TOKEN, strlen(TOKEN))) {
		cred = after_scheme(h, len, "Bearer", &rest);
		CHECK(cred && rest == strlen(TOKEN) && memcmp(cred, TOKEN, rest) == 0);
	}
	/* the whole value as base64: a decoding encodes back to the same text */
	unsigned char *out = malloc(len / 4 * 3 + 1);
	char *again = malloc(len + 1);
	CHECK(out && again);
	size_t n;
	if (base64_decode(h, len, out, len / 4 * 3, &n, false) == 0) {
		CHECK(n <= len / 4 * 3);
		base64_encode(out, n, again);
		CHECK(strlen(again) == len && memcmp(again, h, len) == 0);
	}
	free(out);
	free(again);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* target \n host \n authorization (the rest, NULs and newlines included) */
	const uint8_t *nl1 = memchr(data, '\n', size);
	size_t target_len = nl1 ? (size_t)(nl1 - data) : size;
	const uint8_t *host = nl1 ? nl1 + 1 : data + size;
	size_t host_room = (size_t)(data + size - host);
	const uint8_t *nl2 = memchr(host, '\n', host_room);
	size_t host_len = nl2 ? (size_t)(nl2 - host) : host_room;
	const uint8_t *auth = nl2 ? nl2 + 1 : data + size;
	size_t auth_len = (size_t)(data + size - auth);

	char *target = copy(data, target_len);
	check_route(target); /* up to a NUL, as a C string */
	int64_t v;
	if (web_parse_uint(target, 0, INT64_MAX, &v) == 0) {
		char back[24];
		snprintf(back, sizeof(back), "%lld", (long long)v);
		CHECK(strcmp(back, target) == 0);
	}
	char *h = copy(host, host_len);
	bool loop = web_host_is_loopback(h);
	CHECK(!loop || strncasecmp(h, "localhost", 9) == 0 || strncmp(h, "127.", 4) == 0 || h[0] == '[');
	char *a = copy(auth, auth_len);
	check_auth(a, auth_len);
	free(target);
	free(h);
	free(a);
	return 0;
}
