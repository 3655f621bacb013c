/* The web server's pure parts: history rings and statistics, listen addresses, Host check, secrets. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/core/metrics.h"
#include "agent/core/sample.h"
#include "web/history.h"
#include "web/route.h"
#include "web/web_util.h"

static struct sample *
new_sample(void)
{
	struct sample *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	sample_clear(s);
	return s;
}

/* Adds a sample at TIME_MS with metric "a" = A (NAN: absent) and "b" = B. */
static void
add(struct history *h, struct sample *s, int64_t time_ms, double a, double b)
{
	sample_clear(s);
	s->time_ms = time_ms;
	if (!isnan(a)) {
		metric_set_put(&s->metrics, "a", a);
	}
	if (!isnan(b)) {
		metric_set_put(&s->metrics, "b", b);
	}
	history_add(h, s);
}

static void
test_history_ring(void **state)
{
	(void)state;
	struct history *h = history_create(4);
	struct sample *s = new_sample();
	struct history_point *p;
	size_t n;
	assert_int_equal(history_window(h, "a", 0, &p, &n), -ENOENT);
	add(h, s, 1000, 1, NAN);
	add(h, s, 2000, 2, NAN);
	add(h, s, 3000, NAN, 30); /* a absent; b appears */
	add(h, s, 4000, 4, 40);
	assert_int_equal(history_metric_count(h), 2);
	assert_int_equal(history_window(h, "a", 0, &p, &n), 0);
	assert_int_equal(n, 3);
	assert_true(p[0].time_ms == 1000 && p[0].value == 1);
	assert_true(p[1].time_ms == 2000 && p[1].value == 2);
	assert_true(p[2].time_ms == 4000 && p[2].value == 4);
	free(p);
	/* b was born at the third sample: the slots before it are not its own */
	assert_int_equal(history_window(h, "b", 0, &p, &n), 0);
	assert_int_equal(n, 2);
	assert_true(p[0].time_ms == 3000 && p[0].value == 30);
	free(p);
	/* the ring wraps: the oldest sample goes */
	add(h, s, 5000, 5, NAN);
	assert_int_equal(history_window(h, "a", 0, &p, &n), 0);
	assert_int_equal(n, 3);
	assert_true(p[0].time_ms == 2000 && p[2].time_ms == 5000);
	free(p);
	/* window: times after newest - 2000 ms, so 4000 and 5000 */
	assert_int_equal(history_window(h, "a", 2000, &p, &n), 0);
	assert_int_equal(n, 2);
	assert_true(p[0].time_ms == 4000 && p[1].time_ms == 5000);
	free(p);
	/* b absent for a whole ring: its ring is freed and the name unknown again */
	add(h, s, 6000, 6, NAN);
	add(h, s, 7000, 7, NAN);
	assert_int_equal(history_window(h, "b", 0, &p, &n), 0);
	assert_int_equal(n, 1); /* 4000 is still in the ring */
	assert_true(p[0].time_ms == 4000 && p[0].value == 40);
	free(p);
	assert_int_equal(history_window(h, "b", 1000, &p, &n), 0); /* only 7000 is in the window */
	assert_int_equal(n, 0);
	assert_null(p);
	add(h, s, 8000, 8, NAN);
	assert_int_equal(history_window(h, "b", 0, &p, &n), -ENOENT);
	assert_int_equal(history_metric_count(h), 1);
	history_destroy(h);
	free(s);
}

static void
test_history_bounds(void **state)
{
	(void)state;
	/* one hour at 1 Hz: 512 rings fit in 16 MiB */
	struct history *h = history_create(3600);
	assert_int_equal(history_capacity(h), 3600);
	assert_int_equal(history_max_metrics(h), 512);
	history_destroy(h);
	/* a week at 1 Hz: fewer rings, same memory bound (16 MiB / (604800 x 4 B) = 6) */
	h = history_create(604800);
	assert_int_equal(history_max_metrics(h), 6);
	struct sample *s = new_sample();
	for (int i = 0; i < 8; i++) {
		metric_set_putf(&s->metrics, (double)i, "m.%d", i);
	}
	history_add(h, s);
	assert_int_equal(history_metric_count(h), 6);
	assert_int_equal(history_dropped(h), 2);
	history_destroy(h);
	h = history_create(0);
	assert_int_equal(history_capacity(h), 1);
	history_destroy(h);
	free(s);
}

static void
test_history_stats(void **state)
{
	(void)state;
	struct history_point pts[20];
	for (int i = 0; i < 20; i++) {
		pts[i].time_ms = i * 1000;
		pts[i].value = (double)(20 - i); /* 20 .. 1, unsorted on purpose */
	}
	struct history_stats st;
	history_stats(pts, 20, &st);
	assert_int_equal(st.count, 20);
	assert_true(st.min == 1 && st.max == 20);
	assert_true(st.mean == 10.5);
	assert_true(st.p95 == 19); /* nearest rank: ceil(0.95 x 20) = 19th smallest */
	history_stats(pts, 10, &st); /* 20 .. 11: ceil(9.5) = 10th smallest = 20 */
	assert_true(st.p95 == 20 && st.min == 11);
	history_stats(pts + 19, 1, &st);
	assert_true(st.count == 1 && st.min == 1 && st.p95 == 1 && st.mean == 1);
	history_stats(NULL, 0, &st);
	assert_int_equal(st.count, 0);
	assert_true(isnan(st.min) && isnan(st.mean) && isnan(st.max) && isnan(st.p95));
}

static void
test_float_value(void **state)
{
	(void)state;
	/* stored as float, read back as the decimal that was written */
	assert_true(history_float_value(46.281f) == 46.281);
	assert_true(history_float_value(729.6f) == 729.6);
	assert_true(history_float_value(95.031f) == 95.031);
	assert_true(history_float_value(0.1f) == 0.1);
	assert_true(history_float_value(13990.0f) == 13990);
	assert_true(history_float_value(-3.5f) == -3.5);
	assert_true(history_float_value(16777216.0f) == 16777216);
	assert_true(isnan(history_float_value(NAN)));
}

static void
check_listen(const char *text, int family, int port, bool loopback)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	bool lo = !loopback;
	assert_int_equal(web_parse_listen(text, &ss, &len, &lo), 0);
	assert_int_equal(ss.ss_family, family);
	if (family == AF_INET) {
		assert_int_equal(len, sizeof(struct sockaddr_in));
		assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), port);
	} else {
		assert_int_equal(len, sizeof(struct sockaddr_in6));
		assert_int_equal(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), port);
	}
	assert_int_equal(lo, loopback);
}

static void
test_parse_listen(void **state)
{
	(void)state;
	check_listen("127.0.0.1:9474", AF_INET, 9474, true);
	check_listen("127.1.2.3:1", AF_INET, 1, true);
	check_listen("localhost:8080", AF_INET, 8080, true);
	check_listen("0.0.0.0:9474", AF_INET, 9474, false);
	check_listen("192.168.1.20:80", AF_INET, 80, false);
	check_listen("[::1]:9474", AF_INET6, 9474, true);
	check_listen("[::]:9474", AF_INET6, 9474, false);
	check_listen("[::ffff:127.0.0.1]:9", AF_INET6, 9, true);
	check_listen("[fe80::1]:0", AF_INET6, 0, false);
	static const char *const bad[] = {
		"127.0.0.1", "127.0.0.1:", ":9474", "127.0.0.1:65536", "127.0.0.1:09", "127.0.0.1:-1",
		"jetson.lan:9474", "[::1]9474", "[::1]", "::1:9474", "1.2.3.4:5:6", "", "127.0.0.1:94 74",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sockaddr_storage ss;
		socklen_t len;
		bool lo;
		if (web_parse_listen(bad[i], &ss, &len, &lo) != -EINVAL) {
			fail_msg("'%s' was accepted", bad[i]);
		}
	}
}

static void
test_host_check(void **state)
{
	(void)state;
	assert_true(web_host_is_loopback(NULL));
	assert_true(web_host_is_loopback("127.0.0.1:9474"));
	assert_true(web_host_is_loopback("127.0.0.1"));
	assert_true(web_host_is_loopback("127.8.9.10:1"));
	assert_true(web_host_is_loopback("localhost"));
	assert_true(web_host_is_loopback("LocalHost:8080")); /* an SSH tunnel on another port */
	assert_true(web_host_is_loopback("localhost.:9474"));
	assert_true(web_host_is_loopback("[::1]:9474"));
	assert_true(web_host_is_loopback("[::1]"));
	assert_false(web_host_is_loopback(""));
	assert_false(web_host_is_loopback("evil.example"));
	assert_false(web_host_is_loopback("evil.example:9474"));
	assert_false(web_host_is_loopback("127.0.0.1.evil.example"));
	assert_false(web_host_is_loopback("localhost.evil.example"));
	assert_false(web_host_is_loopback("10.0.0.1:9474"));
	assert_false(web_host_is_loopback("[::2]:9474"));
	assert_false(web_host_is_loopback("[::1"));
	assert_false(web_host_is_loopback("127.0.0.1:abc"));
	assert_false(web_host_is_loopback("127.0.0.1:9474:1"));
}

static void
test_secret_equal(void **state)
{
	(void)state;
	const char *secret = "s3cr3t-token";
	size_t len = strlen(secret);
	assert_true(web_secret_equal(secret, len, "s3cr3t-token", 12));
	assert_false(web_secret_equal(secret, len, "s3cr3t-tokeN", 12));
	assert_false(web_secret_equal(secret, len, "X3cr3t-token", 12));
	assert_false(web_secret_equal(secret, len, "s3cr3t", 6));             /* a prefix */
	assert_false(web_secret_equal(secret, len, "s3cr3t-token-and-more", 21)); /* longer */
	assert_false(web_secret_equal(secret, len, "", 0));
	/* GIVEN with a NUL inside is compared by length, not as a C string */
	assert_false(web_secret_equal(secret, len, "s3cr3t-token\0", 13));
}

static void
test_parse_uint(void **state)
{
	(void)state;
	int64_t v = -1;
	assert_int_equal(web_parse_uint("60", 1, 3600, &v), 0);
	assert_int_equal(v, 60);
	assert_int_equal(web_parse_uint("3600", 1, 3600, &v), 0);
	assert_int_equal(v, 3600);
	assert_int_equal(web_parse_uint("0", 0, 5, &v), 0);
	assert_int_equal(v, 0);
	static const char *const bad[] = {"3601", "0", "007", "-1", "+1", "1e3", "1.5", "", " 1", "1 ",
					  "99999999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 42;
		if (web_parse_uint(bad[i], 1, 3600, &v) != -EINVAL || v != 42) {
			fail_msg("'%s' was accepted", bad[i]);
		}
	}
	assert_int_equal(web_parse_uint(NULL, 1, 5, &v), -EINVAL);
}

static void
test_base64(void **state)
{
	(void)state;
	unsigned char out[16];
	size_t n;
	assert_int_equal(web_base64_decode("", 0, out, sizeof(out), &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(web_base64_decode("YWJj", 4, out, sizeof(out), &n), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(out, "abc", 3);
	assert_int_equal(web_base64_decode("YWI=", 4, out, sizeof(out), &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(web_base64_decode("YQ==", 4, out, sizeof(out), &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(web_base64_decode("+/+/", 4, out, sizeof(out), &n), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(out, "\xfb\xff\xbf", 3);
	const char *bad[] = {"YWJ", "YQ=", "Y===", "YQ=a", "=QQQ", "YQ==YWJj", "YW J", "YW\nJ", "YWJj=", "YQ-_", "YR==", "YWK="};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(web_base64_decode(bad[i], strlen(bad[i]), out, sizeof(out), &n), -EINVAL);
	}
	assert_int_equal(web_base64_decode("YWJjYWJj", 8, out, 5, &n), -EINVAL); /* no room */
}

/* "Basic " + base64 of TEXT (LEN bytes, may hold NULs). */
static char *
basic_header(const char *text, size_t len)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *h = malloc(6 + (len + 2) / 3 * 4 + 1);
	assert_non_null(h);
	memcpy(h, "Basic ", 6);
	size_t o = 6;
	for (size_t i = 0; i < len; i += 3) {
		unsigned int q = (unsigned char)text[i] << 16;
		q |= i + 1 < len ? (unsigned char)text[i + 1] << 8 : 0;
		q |= i + 2 < len ? (unsigned char)text[i + 2] : 0;
		h[o++] = abc[q >> 18 & 63];
		h[o++] = abc[q >> 12 & 63];
		h[o++] = i + 1 < len ? abc[q >> 6 & 63] : '=';
		h[o++] = i + 2 < len ? abc[q & 63] : '=';
	}
	h[o] = '\0';
	return h;
}

static bool
basic_ok(const char *text, size_t len)
{
	char *h = basic_header(text, len);
	bool ok = web_basic_auth_match(h, strlen(h), "admin", 5, "pa55word", 8);
	free(h);
	return ok;
}

static void
test_auth_headers(void **state)
{
	(void)state;
	assert_true(basic_ok("admin:pa55word", 14));
	assert_false(basic_ok("admin:pa55word\0junk", 19)); /* the password, a NUL, junk */
	assert_false(basic_ok("admin:pa55word\0", 15));
	assert_false(basic_ok("admin\0:pa55word", 15));
	assert_false(basic_ok("admin:pa55wor", 13));
	assert_false(basic_ok("admin:pa55word:", 15));
	assert_false(basic_ok("admin:pa55word\n", 15));
	assert_false(basic_ok("adminpa55word", 13));
	assert_false(basic_ok(":", 1));
	assert_false(basic_ok("", 0));
	/* a colon in the password is the password's */
	char *h = basic_header("u:a:b", 5);
	assert_true(web_basic_auth_match(h, strlen(h), "u", 1, "a:b", 3));
	free(h);
	const char *ok = "bAsIc   YWRtaW46cGE1NXdvcmQ=";
	assert_true(web_basic_auth_match(ok, strlen(ok), "admin", 5, "pa55word", 8));
	const char *others[] = {"Basic", "Basic ", "BasicYWRtaW46cGE1NXdvcmQ=", "Basic YWRtaW46cGE1NXdvcmQ",
				"Basic YWRtaW46cGE1NXdvcmQ= ", "Bearer YWRtaW46cGE1NXdvcmQ="};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		assert_false(web_basic_auth_match(others[i], strlen(others[i]), "admin", 5, "pa55word", 8));
	}
	assert_true(web_bearer_match("Bearer tok", 10, "tok", 3));
	assert_true(web_bearer_match("bearer   tok", 12, "tok", 3));
	assert_false(web_bearer_match("Bearer tok\0junk", 15, "tok", 3)); /* its whole length counts */
	assert_false(web_bearer_match("Bearer to", 9, "tok", 3));
	assert_false(web_bearer_match("Bearer ", 7, "tok", 3));
	assert_false(web_bearer_match("Bearertok", 9, "tok", 3));
	assert_false(web_bearer_match(NULL, 0, "tok", 3));
}

static void
check_route(const char *target, enum web_route route, unsigned status)
{
	struct web_request req;
	web_route(target, 3600, &req);
	if (req.route != route || req.status != status) {
		fail_msg("%s: route %d status %u (%s), expected %d %u", target, req.route, req.status, req.error, route,
			 status);
	}
}

static void
test_route(void **state)
{
	(void)state;
	check_route("/", ROUTE_PAGE, 200);
	check_route("/?x=1", ROUTE_PAGE, 200);
	check_route("/api/v1/snapshot", ROUTE_SNAPSHOT, 200);
	check_route("/api/v1/alerts", ROUTE_ALERTS, 200);
	check_route("/api/v1/events", ROUTE_EVENTS, 200);
	check_route("/metrics", ROUTE_METRICS, 200);
	check_route("/healthz", ROUTE_HEALTHZ, 200);
	check_route("/%61pi/v1/snapshot", ROUTE_SNAPSHOT, 200); /* escapes decoded, as libmicrohttpd did */
	check_route("/api/v1/snapshot/", ROUTE_NONE, 404);
	check_route("/API/V1/SNAPSHOT", ROUTE_NONE, 404);
	check_route("", ROUTE_NONE, 404);
	check_route("/api/v1/snapshot%00junk", ROUTE_NONE, 400); /* a NUL does not cut the path short */
	check_route("/api/v1/snapshot%0", ROUTE_NONE, 400);
	check_route("/api/v1/snapshot%zz", ROUTE_NONE, 400);
	struct web_request req;
	web_route("/api/v1/history?metric=temp.tj_c&seconds=60", 3600, &req);
	assert_int_equal(req.route, ROUTE_HISTORY);
	assert_string_equal(req.metric, "temp.tj_c");
	assert_int_equal(req.seconds, 60);
	web_route("/api/v1/history?seconds&x=y&metric=temp%2Etj_c&metric=gpu.load_pct", 3600, &req);
	assert_int_equal(req.route, ROUTE_HISTORY);
	assert_string_equal(req.metric, "temp.tj_c"); /* the first counts */
	assert_int_equal(req.seconds, 3600);          /* a bare name is no value */
	const char *bad[] = {
		"/api/v1/history",
		"/api/v1/history?",
		"/api/v1/history?metric",
		"/api/v1/history?metric=",
		"/api/v1/history?metric=Temp.TJ",
		"/api/v1/history?metric=temp..c",
		"/api/v1/history?metric=temp.tj_c%00x",
		"/api/v1/history?metric=temp.tj_c&seconds=",
		"/api/v1/history?metric=temp.tj_c&seconds=0",
		"/api/v1/history?metric=temp.tj_c&seconds=3601",
		"/api/v1/history?metric=temp.tj_c&seconds=+5",
		"/api/v1/history?metric=temp.tj_c&seconds=1.5",
		"/api/v1/history?metric=temp.tj_c&seconds=%zz",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		check_route(bad[i], ROUTE_NONE, 400);
	}
	char long_target[WEB_URI_MAX + 2];
	memset(long_target, 'a', sizeof(long_target));
	long_target[0] = '/';
	long_target[WEB_URI_MAX] = '\0';
	check_route(long_target, ROUTE_NONE, 404);
	long_target[WEB_URI_MAX] = 'a';
	long_target[WEB_URI_MAX + 1] = '\0';
	check_route(long_target, ROUTE_NONE, 414);
}

static void
write_file(const char *path, const char *text, size_t len, mode_t mode)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void
test_read_secret(void **state)
{
	(void)state;
	char dir[] = "/tmp/tw-secret-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof(path), "%s/token", dir);
	char *out = NULL;
	bool world = true;
	write_file(path, "abc def\r\n\n", 10, 0600);
	assert_int_equal(web_read_secret(path, &out, &world), 0);
	assert_string_equal(out, "abc def");
	assert_false(world);
	free(out);
	write_file(path, "tok", 3, 0644);
	assert_int_equal(web_read_secret(path, &out, &world), 0);
	assert_string_equal(out, "tok");
	assert_true(world);
	free(out);
	write_file(path, "\n \n", 3, 0600);
	assert_int_equal(web_read_secret(path, &out, &world), -EINVAL);
	char *big = malloc(WEB_SECRET_MAX + 1);
	assert_non_null(big);
	memset(big, 'x', WEB_SECRET_MAX + 1);
	write_file(path, big, WEB_SECRET_MAX, 0600);
	assert_int_equal(web_read_secret(path, &out, &world), 0);
	assert_int_equal(strlen(out), WEB_SECRET_MAX);
	free(out);
	write_file(path, big, WEB_SECRET_MAX + 1, 0600);
	assert_int_equal(web_read_secret(path, &out, &world), -EINVAL);
	free(big);
	assert_int_equal(web_read_secret(dir, &out, &world), -EINVAL); /* a directory */
	unlink(path);
	assert_int_equal(web_read_secret(path, &out, &world), -ENOENT);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_history_ring),
		cmocka_unit_test(test_history_bounds),
		cmocka_unit_test(test_history_stats),
		cmocka_unit_test(test_float_value),
		cmocka_unit_test(test_parse_listen),
		cmocka_unit_test(test_host_check),
		cmocka_unit_test(test_secret_equal),
		cmocka_unit_test(test_parse_uint),
		cmocka_unit_test(test_read_secret),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_auth_headers),
		cmocka_unit_test(test_route),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
