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

#include "core/metrics.h"
#include "core/sample.h"
#include "web/history.h"
#include "web/route.h"
#include "web/web_util.h"

#include "helpers.h"

/* Adds a sample at TIME_MS with metric "a" = A (NAN: absent) and "b" = B. */
static void
add(struct history *h, struct sample *s, int64_t time_ms, double a, double b)
{
	sample_clear(s);
	s->time_ms = time_ms;
	s->mono_ms = time_ms; /* a clock that did not step */
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
	struct history *h = history_create(4, 0, 1000); /* no tier 1 */
	struct sample *s = th_sample_new();
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
	struct history *h = history_create(3600, history_buckets_for(24 * 3600 * 1000, 1000), 1000);
	assert_int_equal(history_capacity(h), 3600);
	assert_int_equal(history_bucket_count(h), 1441); /* 24 h of whole minutes and the one being filled */
	assert_int_equal(history_max_metrics(h), METRIC_SET_MAX);
	history_destroy(h);
	/* a week at 1 Hz keeps every metric: no byte cap drops rings any more */
	h = history_create(604800, 2, 1000);
	struct sample *s = th_sample_new();
	for (int i = 0; i < 8; i++) {
		metric_set_putf(&s->metrics, (double)i, "m.%d", i);
	}
	history_add(h, s);
	assert_int_equal(history_metric_count(h), 8);
	assert_int_equal(history_dropped(h), 0);
	history_destroy(h);
	/* a full set takes every ring; a new name then is dropped and counted */
	h = history_create(2, 2, 1000);
	sample_clear(s);
	for (int i = 0; i < METRIC_SET_MAX; i++) {
		metric_set_putf(&s->metrics, (double)i, "m.%d", i);
	}
	history_add(h, s);
	assert_int_equal(history_metric_count(h), METRIC_SET_MAX);
	metric_set_remove(&s->metrics, "m.0");
	metric_set_put(&s->metrics, "late", 1);
	history_add(h, s);
	assert_int_equal(history_dropped(h), 1);
	history_destroy(h);
	h = history_create(0, 0, 0);
	assert_int_equal(history_capacity(h), 1);
	assert_int_equal(history_bucket_count(h), 0);
	history_destroy(h);
	free(s);
	assert_int_equal(history_buckets_for(0, 1000), 0);
	assert_int_equal(history_buckets_for(1, 1000), 2);
	assert_int_equal(history_buckets_for(60000, 1000), 2);
	assert_int_equal(history_buckets_for(60001, 1000), 3);
	assert_int_equal(history_buckets_for(24 * 3600 * 1000, 600000), 145); /* one bucket a sample */
	/* the documented sizes: 1 count byte at 1 Hz, 2 at 10 Hz */
	assert_int_equal(history_bytes(3600, 1441, 1000, 1), 3600 * 8 + 1441 * 8 + 3600 * 4 + 1441 * 13 + 144);
	assert_int_equal(history_bytes(36000, 1441, 100, 2),
			 36000 * 8 + 1441 * 8 + 2 * (36000 * 4 + 1441 * 14 + 144));
}

/*
 * Samples whose names mostly sit where they sat (the history then finds
 * their rings without a lookup), now and then a name less, more, or in
 * another place, rings freed and their places taken by other names: every
 * metric's points are those of a model, always in the right ring.
 */
static void
test_history_layouts(void **state)
{
	(void)state;
	enum { CAP = 6, NAMES = 7, SAMPLES = 3000 };
	static const char *const names[NAMES] = {"a", "b.c", "d", "e_f", "g", "h.i.j", "k"};
	struct history *h = history_create(CAP, 0, 1000);
	struct sample *s = th_sample_new();
	int order[NAMES], count = 3;
	for (int i = 0; i < NAMES; i++) {
		order[i] = i;
	}
	double seen[SAMPLES][NAMES]; /* the value of each name in each sample, NAN: absent */
	uint64_t rng = 0x3c6ef372fe94f82bull;
	for (int k = 0; k < SAMPLES; k++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		if (rng % 10 == 0) { /* another layout: a swap, a name more or less */
			int a = (int)((rng >> 8) % NAMES), b = (int)((rng >> 16) % NAMES), t = order[a];
			order[a] = order[b];
			order[b] = t;
			count = 1 + (int)((rng >> 24) % NAMES);
		}
		th_sample_at(s, 1000 * (int64_t)(k + 1), 1000 * (int64_t)(k + 1));
		for (int n = 0; n < NAMES; n++) {
			seen[k][n] = NAN;
		}
		for (int i = 0; i < count; i++) {
			seen[k][order[i]] = k * 10 + order[i];
			th_put(s, names[order[i]], seen[k][order[i]]);
		}
		history_add(h, s);
		for (int n = 0; n < NAMES; n++) {
			struct history_point *p = NULL;
			size_t got = 0;
			int r = history_window(h, names[n], 0, &p, &got);
			size_t want = 0;
			for (int j = k + 1 - CAP < 0 ? 0 : k + 1 - CAP; j <= k; j++) {
				if (isnan(seen[j][n])) {
					continue;
				}
				if (r != 0 || want >= got || p[want].value != seen[j][n] || p[want].time_ms != 1000 * (j + 1)) {
					fail_msg("sample %d: %s lacks %g of sample %d", k, names[n], seen[j][n], j);
				}
				want++;
			}
			if ((r == 0 && got != want) || (r != 0 && r != -ENOENT)) {
				fail_msg("sample %d: %s has %zu points (%d), the model %zu", k, names[n], got, r, want);
			}
			free(p);
		}
	}
	history_destroy(h);
	free(s);
}

/* The tier 1 buckets of NAME over WINDOW_MS, asserting it has a ring. */
static struct history_bucket *
minutes(const struct history *h, const char *name, int64_t window_ms, size_t *n)
{
	struct history_bucket *b = NULL;
	assert_int_equal(history_window_minutes(h, name, window_ms, &b, n), 0);
	return b;
}

static void
assert_bucket(const struct history_bucket *b, int64_t time_ms, double min, double mean, double max, uint32_t count)
{
	if (b->time_ms != time_ms || b->min != min || b->mean != mean || b->max != max || b->count != count) {
		fail_msg("bucket %lld: %g/%g/%g x%u, expected %lld: %g/%g/%g x%u", (long long)b->time_ms, b->min,
			 b->mean, b->max, b->count, (long long)time_ms, min, mean, max, count);
	}
}

static void
test_history_minutes(void **state)
{
	(void)state;
	/* an hour of samples, 3 minutes of buckets (4 with the one being filled) */
	struct history *h = history_create(3600, history_buckets_for(3 * 60000, 1000), 1000);
	struct sample *s = th_sample_new();
	size_t n;
	/* minute 0: a = 0..59 every second; b only in the second half, = 2 x t */
	for (int i = 0; i < 60; i++) {
		add(h, s, i * 1000LL, i, i >= 30 ? 2.0 * i : NAN);
	}
	struct history_bucket *b = minutes(h, "a", 0, &n);
	assert_int_equal(n, 1);
	assert_bucket(&b[0], 0, 0, 29.5, 59, 60);
	free(b);
	b = minutes(h, "b", 0, &n);
	assert_int_equal(n, 1);
	assert_bucket(&b[0], 0, 60, 89, 118, 30);
	free(b);
	/* minute 1: one sample; minute 2: none (a gap); minute 3: three samples and c appears */
	add(h, s, 61000, 7.25, -1);
	for (int i = 0; i < 3; i++) {
		sample_clear(s);
		s->time_ms = 180000 + i * 1000;
		s->mono_ms = s->time_ms;
		metric_set_put(&s->metrics, "a", i + 1);
		metric_set_put(&s->metrics, "c", 0.5 * (i + 1));
		history_add(h, s);
	}
	b = minutes(h, "a", 0, &n);
	assert_int_equal(n, 3);
	assert_bucket(&b[0], 0, 0, 29.5, 59, 60);
	assert_bucket(&b[1], 60000, 7.25, 7.25, 7.25, 1);
	assert_bucket(&b[2], 180000, 1, 2, 3, 3);
	struct history_stats st;
	history_bucket_stats(b, n, &st);
	assert_int_equal(st.count, 64);
	assert_true(st.min == 0 && st.max == 59 && isnan(st.p95));
	assert_true(st.mean == (29.5 * 60 + 7.25 + 6) / 64); /* the mean of the 64 samples */
	free(b);
	/* b is absent from minute 3: no bucket, and its stats cover its 31 samples */
	b = minutes(h, "b", 0, &n);
	assert_int_equal(n, 2);
	assert_bucket(&b[1], 60000, -1, -1, -1, 1);
	history_bucket_stats(b, n, &st);
	assert_true(st.count == 31 && st.min == -1 && st.max == 118);
	free(b);
	/* c appeared later: it has history from its first minute on, in both tiers */
	b = minutes(h, "c", 0, &n);
	assert_int_equal(n, 1);
	assert_bucket(&b[0], 180000, 0.5, 1, 1.5, 3);
	free(b);
	struct history_point *p;
	assert_int_equal(history_window(h, "c", 0, &p, &n), 0);
	assert_int_equal(n, 3);
	free(p);
	/* the window: newest is 182 s; 60 s back is 122 s, so only the minute at 180 s overlaps */
	b = minutes(h, "a", 60000, &n);
	assert_int_equal(n, 1);
	assert_int_equal(b[0].time_ms, 180000);
	free(b);
	/* minutes 4 and 5: a minute without samples takes no bucket, so the ring of 4 keeps 1, 3, 4, 5 */
	add(h, s, 240000, 10, NAN);
	add(h, s, 300000, 20, NAN);
	b = minutes(h, "a", 0, &n);
	assert_int_equal(n, 4);
	assert_bucket(&b[0], 60000, 7.25, 7.25, 7.25, 1);
	assert_bucket(&b[1], 180000, 1, 2, 3, 3);
	assert_bucket(&b[3], 300000, 20, 20, 20, 1);
	free(b);
	add(h, s, 360000, 30, NAN); /* now minute 1 goes too */
	b = minutes(h, "b", 0, &n); /* its minutes left the ring; its samples are still in tier 0 */
	assert_int_equal(n, 0);
	assert_null(b);
	history_destroy(h);
	free(s);
}

static void
test_history_day_rollover(void **state)
{
	(void)state;
	/* a day of minutes at one sample a minute, 1500 minutes fed: the oldest 59 roll out */
	struct history *h = history_create(60, history_buckets_for(24 * 3600 * 1000, 1000), 60000);
	struct sample *s = th_sample_new();
	for (int k = 0; k < 1500; k++) {
		add(h, s, k * 60000LL + 30000, k, k < 50 ? 1 : NAN);
	}
	size_t n;
	struct history_bucket *b = minutes(h, "a", 0, &n);
	assert_int_equal(n, 1441);
	assert_bucket(&b[0], 59 * 60000LL, 59, 59, 59, 1);
	assert_bucket(&b[1440], 1499 * 60000LL, 1499, 1499, 1499, 1);
	free(b);
	b = minutes(h, "a", 24 * 3600 * 1000, &n); /* the last 24 h overlap the same 1441 minutes */
	assert_int_equal(n, 1441);
	free(b);
	/* b stopped after 50 minutes: gone from tier 0 (60 samples) and tier 1 (minutes 59 to 1499) */
	struct history_point *p;
	assert_int_equal(history_window(h, "b", 0, &p, &n), -ENOENT);
	assert_int_equal(history_window_minutes(h, "b", 0, &b, &n), -ENOENT);
	history_destroy(h);
	/* a metric absent for a whole tier 0 but not tier 1 keeps its ring */
	h = history_create(2, history_buckets_for(10 * 60000, 1000), 1000);
	add(h, s, 0, 1, 5);
	for (int i = 1; i < 5; i++) {
		add(h, s, i * 1000LL, 1, NAN);
	}
	assert_int_equal(history_window(h, "b", 0, &p, &n), 0);
	assert_int_equal(n, 0);
	b = minutes(h, "b", 0, &n);
	assert_int_equal(n, 1);
	assert_bucket(&b[0], 0, 5, 5, 5, 1);
	free(b);
	history_destroy(h);
	free(s);
}

static void
test_history_bucket_counts(void **state)
{
	(void)state;
	struct sample *s = th_sample_new();
	size_t n;
	/* at 10 Hz a minute holds 600 samples: 2-byte counts */
	struct history *h = history_create(1000, 3, 100);
	for (int i = 0; i < 600; i++) {
		add(h, s, i * 100LL, i % 2, NAN);
	}
	struct history_bucket *b = minutes(h, "a", 0, &n);
	assert_int_equal(n, 1);
	assert_bucket(&b[0], 0, 0, 0.5, 1, 600);
	free(b);
	history_destroy(h);
	/* configured for 1 Hz (1-byte counts) but fed 300 samples in one minute: a full bucket closes early */
	h = history_create(1000, 3, 1000);
	for (int i = 0; i < 300; i++) {
		add(h, s, i * 100LL, 3, NAN);
	}
	b = minutes(h, "a", 0, &n);
	assert_int_equal(n, 2);
	assert_bucket(&b[0], 0, 3, 3, 3, 255);
	assert_bucket(&b[1], 0, 3, 3, 3, 45);
	free(b);
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

/* an hour of samples, a day of minutes */
static const struct web_history_span day_span = {.seconds = 3600, .minute_seconds = 86400};

static void
check_route(const char *target, enum web_route route, unsigned status)
{
	struct web_request req;
	web_route(target, &day_span, &req);
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
	web_route("/api/v1/history?metric=temp.tj_c&seconds=60", &day_span, &req);
	assert_int_equal(req.route, ROUTE_HISTORY);
	assert_string_equal(req.metric, "temp.tj_c");
	assert_int_equal(req.seconds, 60);
	assert_int_equal(req.tier, 0);
	web_route("/api/v1/history?seconds&x=y&metric=temp%2Etj_c&metric=gpu.load_pct", &day_span, &req);
	assert_int_equal(req.route, ROUTE_HISTORY);
	assert_string_equal(req.metric, "temp.tj_c"); /* the first counts */
	assert_int_equal(req.seconds, 3600);          /* a bare name is no value */
	assert_int_equal(req.tier, 0);
	/* the finest tier that covers the span, or the one asked for */
	const struct {
		const char *target;
		int64_t seconds;
		int tier;
	} tiers[] = {
		{"/api/v1/history?metric=a.b&seconds=3600", 3600, 0},
		{"/api/v1/history?metric=a.b&seconds=3601", 3601, 1},
		{"/api/v1/history?metric=a.b&seconds=86400", 86400, 1},
		{"/api/v1/history?metric=a.b&tier=1", 86400, 1},
		{"/api/v1/history?metric=a.b&tier=1&seconds=60", 60, 1},
		{"/api/v1/history?metric=a.b&tier=0", 3600, 0},
	};
	for (size_t i = 0; i < sizeof(tiers) / sizeof(tiers[0]); i++) {
		web_route(tiers[i].target, &day_span, &req);
		assert_int_equal(req.route, ROUTE_HISTORY);
		assert_int_equal(req.seconds, tiers[i].seconds);
		assert_int_equal(req.tier, tiers[i].tier);
	}
	const struct web_history_span hour_only = {.seconds = 3600, .minute_seconds = 0};
	web_route("/api/v1/history?metric=a.b&seconds=3601", &hour_only, &req);
	assert_int_equal(req.status, 400);
	web_route("/api/v1/history?metric=a.b&tier=1", &hour_only, &req);
	assert_int_equal(req.status, 404);
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
		"/api/v1/history?metric=temp.tj_c&seconds=86401",
		"/api/v1/history?metric=temp.tj_c&tier=0&seconds=3601",
		"/api/v1/history?metric=temp.tj_c&tier=2",
		"/api/v1/history?metric=temp.tj_c&tier=",
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
test_read_secret(void **state)
{
	(void)state;
	char dir[] = "/tmp/tw-secret-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof(path), "%s/token", dir);
	char *out = NULL;
	bool world = true;
	th_write_bytes(path, "abc def\r\n\n", 10, 0600);
	assert_int_equal(web_read_secret(path, &out, &world), 0);
	assert_string_equal(out, "abc def");
	assert_false(world);
	free(out);
	th_write_bytes(path, "tok", 3, 0644);
	assert_int_equal(web_read_secret(path, &out, &world), 0);
	assert_string_equal(out, "tok");
	assert_true(world);
	free(out);
	th_write_bytes(path, "\n \n", 3, 0600);
	assert_int_equal(web_read_secret(path, &out, &world), -EINVAL);
	char *big = malloc(WEB_SECRET_MAX + 1);
	assert_non_null(big);
	memset(big, 'x', WEB_SECRET_MAX + 1);
	th_write_bytes(path, big, WEB_SECRET_MAX, 0600);
	assert_int_equal(web_read_secret(path, &out, &world), 0);
	assert_int_equal(strlen(out), WEB_SECRET_MAX);
	free(out);
	th_write_bytes(path, big, WEB_SECRET_MAX + 1, 0600);
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
		cmocka_unit_test(test_history_layouts),
		cmocka_unit_test(test_history_bounds),
		cmocka_unit_test(test_history_minutes),
		cmocka_unit_test(test_history_day_rollover),
		cmocka_unit_test(test_history_bucket_counts),
		cmocka_unit_test(test_history_stats),
		cmocka_unit_test(test_float_value),
		cmocka_unit_test(test_parse_listen),
		cmocka_unit_test(test_host_check),
		cmocka_unit_test(test_secret_equal),
		cmocka_unit_test(test_parse_uint),
		cmocka_unit_test(test_read_secret),
		cmocka_unit_test(test_auth_headers),
		cmocka_unit_test(test_route),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
