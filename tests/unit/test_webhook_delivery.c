/*
 * Webhook delivery over real HTTP on 127.0.0.1: a small server thread in
 * this test answers each request with the next status of its script (or
 * never, as a tarpit) and records what came. Success with every header
 * checked and the signature verified; 500 x3 then 200; 429 with
 * Retry-After; 404; 410 and enabling again; a tarpit next to a healthy
 * action; a full queue; queue_file across a stop with the receiver down;
 * alertmanager-api re-sends; the metric names. Back-offs are shortened
 * through webhooks_set_backoff_for_tests().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/metrics.h"
#include "webhook/webhook.h"
#include "webhook/webhook_sign.h"
#include "build_config.h"
#include "helpers.h"

/* ---- the receiver ---- */

#define REQS_MAX 64
#define SECRET "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

struct request {
	char line[160];
	char id[64], timestamp[32], signature[256], auth[128], custom[128], agent[64], type[64];
	char body[8192];
	size_t body_len;
	int64_t at_ms;
	int64_t at_s;
};

struct server {
	int fd, port;
	pthread_t thread;
	pthread_mutex_t mu;
	int statuses[8];
	size_t nstatus;
	const char *extra; /* more response header lines */
	bool tarpit;
	bool stop;
	int held[16]; /* tarpit connections */
	size_t nheld;
	struct request reqs[REQS_MAX];
	size_t nreqs;
};

static void
copy_header(const char *head, const char *name, char *out, size_t size)
{
	size_t nlen = strlen(name);
	for (const char *p = head; p && *p; p = strstr(p, "\r\n") ? strstr(p, "\r\n") + 2 : NULL) {
		if (strncasecmp(p, name, nlen) == 0 && p[nlen] == ':') {
			const char *v = p + nlen + 1;
			while (*v == ' ') {
				v++;
			}
			size_t len = strcspn(v, "\r\n");
			snprintf(out, size, "%.*s", (int)(len < size ? len : size - 1), v);
			return;
		}
	}
	out[0] = '\0';
}

static void
serve_one(struct server *s, int c)
{
	char buf[16384];
	size_t len = 0;
	char *end = NULL;
	size_t want = 0;
	for (;;) {
		struct pollfd p = {c, POLLIN, 0};
		if (poll(&p, 1, 2000) <= 0) {
			break;
		}
		ssize_t n = read(c, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0) {
			break;
		}
		len += (size_t)n;
		buf[len] = '\0';
		if (!end && (end = strstr(buf, "\r\n\r\n"))) {
			char cl[32];
			copy_header(buf, "Content-Length", cl, sizeof(cl));
			want = (size_t)(end + 4 - buf) + (size_t)strtoul(cl, NULL, 10);
		}
		if (end && len >= want) {
			break;
		}
	}
	if (!end || len < want) {
		close(c);
		return;
	}
	pthread_mutex_lock(&s->mu);
	int status = 200;
	if (s->nreqs < REQS_MAX) {
		struct request *r = &s->reqs[s->nreqs];
		*end = '\0';
		snprintf(r->line, sizeof(r->line), "%.*s", (int)strcspn(buf, "\r\n"), buf);
		copy_header(buf, "webhook-id", r->id, sizeof(r->id));
		copy_header(buf, "webhook-timestamp", r->timestamp, sizeof(r->timestamp));
		copy_header(buf, "webhook-signature", r->signature, sizeof(r->signature));
		copy_header(buf, "Authorization", r->auth, sizeof(r->auth));
		copy_header(buf, "X-Team", r->custom, sizeof(r->custom));
		copy_header(buf, "User-Agent", r->agent, sizeof(r->agent));
		copy_header(buf, "Content-Type", r->type, sizeof(r->type));
		r->body_len = want - (size_t)(end + 4 - buf);
		memcpy(r->body, end + 4, r->body_len < sizeof(r->body) - 1 ? r->body_len : sizeof(r->body) - 1);
		r->at_ms = monotonic_ms();
		r->at_s = (int64_t)time(NULL);
		if (s->nstatus) {
			status = s->statuses[s->nreqs < s->nstatus ? s->nreqs : s->nstatus - 1];
		}
		s->nreqs++;
	}
	const char *extra = s->extra ? s->extra : "";
	pthread_mutex_unlock(&s->mu);
	char resp[512];
	int n = snprintf(resp, sizeof(resp), "HTTP/1.1 %d X\r\nContent-Length: 2\r\nConnection: close\r\n%s\r\nok", status,
			 extra);
	(void)!write(c, resp, (size_t)n);
	close(c);
}

static void *
server_main(void *arg)
{
	struct server *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		bool stop = s->stop;
		pthread_mutex_unlock(&s->mu);
		if (stop) {
			break;
		}
		struct pollfd p = {s->fd, POLLIN, 0};
		if (poll(&p, 1, 50) <= 0) {
			continue;
		}
		int c = accept(s->fd, NULL, NULL);
		if (c < 0) {
			continue;
		}
		if (s->tarpit && s->nheld < 16) {
			s->held[s->nheld++] = c; /* accepted, never answered */
			continue;
		}
		serve_one(s, c);
	}
	for (size_t i = 0; i < s->nheld; i++) {
		close(s->held[i]);
	}
	return NULL;
}

/* A loopback port nobody listens on (connections are refused) until a server takes it. */
static int
free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	socklen_t len = sizeof(a);
	getsockname(fd, (struct sockaddr *)&a, &len);
	close(fd);
	return ntohs(a.sin_port);
}

static struct server *
server_start(int port, const int *statuses, size_t n)
{
	struct server *s = calloc(1, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	if (n) {
		memcpy(s->statuses, statuses, n * sizeof(*statuses));
	}
	s->nstatus = n;
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->fd, 16), 0);
	socklen_t len = sizeof(a);
	getsockname(s->fd, (struct sockaddr *)&a, &len);
	s->port = ntohs(a.sin_port);
	return s;
}

static void
server_run(struct server *s)
{
	assert_int_equal(pthread_create(&s->thread, NULL, server_main, s), 0);
}

static void
server_stop(struct server *s)
{
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	close(s->fd);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static size_t
nreqs(struct server *s)
{
	pthread_mutex_lock(&s->mu);
	size_t n = s->nreqs;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* ---- the agent's side ---- */

static char tmpdir[64];
static const struct agent_info board = {
	.board_name = "orin-01", .device_id = "1421019054321", .generator_url = "http://orin-01:9474/"};

static int
setup_tmp(void **state)
{
	(void)state;
	char *dir = th_tmpdir("webhook-delivery");
	snprintf(tmpdir, sizeof(tmpdir), "%s", dir);
	free(dir);
	return 0;
}

static int
teardown_tmp(void **state)
{
	(void)state;
	th_rmtree(strdup(tmpdir));
	return 0;
}

static char *
tmp_path(const char *name)
{
	static char paths[4][160];
	static int next;
	char *p = paths[next++ % 4];
	snprintf(p, 160, "%s/%s", tmpdir, name);
	return p;
}

static void
config(struct webhook_config *cfg, int port, int format)
{
	static char url[96];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", port);
	*cfg = (struct webhook_config){
		.url = url, .format = format, .timeout_ms = 2000, .secret_file = "", .bearer_token_file = "",
		.ca_file = "", .queue_file = "", .queue_max = 1000, .resend_ms = 60000,
	};
}

static void
event(struct alert_event *ev, int n, enum alert_transition t)
{
	static const struct alert_label labels[] = {{"zone", "cpu"}};
	memset(ev, 0, sizeof(*ev));
	ev->rule_name = "soc-hot";
	ev->labels = labels;
	ev->label_count = 1;
	ev->metric = "temp.cpu_c";
	ev->transition = t;
	ev->severity = SEVERITY_WARNING;
	ev->value = 80 + n;
	ev->threshold = 80;
	ev->at_ms = 1795425123000 + n * 1000;
	ev->starts_at_ms = 1795425123000;
	ev->ends_at_ms = t == TRANSITION_RESOLVED ? ev->at_ms : 0;
	snprintf(ev->fingerprint, sizeof(ev->fingerprint), "00000000000000%02u", (unsigned)n % 100u);
	snprintf(ev->summary, sizeof(ev->summary), "event %d", n);
	ev->power_mode = "MAXN";
}

static struct webhook_stats
stats(struct webhooks *w, const char *name)
{
	struct webhook_stats st;
	assert_int_equal(webhooks_get_stats(w, name, &st), 0);
	return st;
}

/* Ticks (flush) every 10 ms until COND or MS pass. */
#define WAIT_UNTIL(w, cond, ms)                                                                                      \
	do {                                                                                                         \
		int64_t end_ = monotonic_ms() + (ms);                                                                \
		while (!(cond) && monotonic_ms() < end_) {                                                           \
			webhooks_flush(w);                                                                           \
			usleep(10000);                                                                               \
		}                                                                                                    \
	} while (0)

static void
notify_json(struct webhooks *w, const char *name, int n)
{
	struct alert_event ev;
	event(&ev, n, TRANSITION_FIRING);
	webhooks_notify(w, name, &ev);
	webhooks_flush(w);
}

/* ---- tests ---- */

static void
test_success_headers_signature(void **state)
{
	(void)state;
	FILE *f = fopen(tmp_path("secret"), "w");
	fputs(SECRET "\n", f);
	fclose(f);
	f = fopen(tmp_path("token"), "w");
	fputs("t0ken\n", f);
	fclose(f);
	struct server *s = server_start(0, NULL, 0);
	server_run(s);
	struct webhooks *w = webhooks_create(&board);
	assert_non_null(w);
	struct webhook_config cfg;
	config(&cfg, s->port, WEBHOOK_JSON);
	cfg.secret_file = tmp_path("secret");
	cfg.bearer_token_file = tmp_path("token");
	char *headers[] = {"X-Team: robots", NULL};
	cfg.headers = headers;
	cfg.header_count = 1;
	assert_int_equal(webhooks_set(w, "fleet", &cfg), 0);
	notify_json(w, "fleet", 1);
	WAIT_UNTIL(w, stats(w, "fleet").sent == 1, 5000);
	struct webhook_stats st = stats(w, "fleet");
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.failed + st.retried + st.dropped + st.queue_depth, 0);
	assert_true(st.last_success_s >= (int64_t)time(NULL) - 5);

	assert_int_equal(nreqs(s), 1);
	struct request *r = &s->reqs[0];
	assert_string_equal(r->line, "POST /hook HTTP/1.1");
	assert_string_equal(r->type, "application/json");
	assert_string_equal(r->agent, "tegrawatch/" TEGRAWATCH_VERSION);
	assert_string_equal(r->auth, "Bearer t0ken");
	assert_string_equal(r->custom, "robots");
	struct alert_event ev;
	event(&ev, 1, TRANSITION_FIRING);
	struct json j;
	json_init(&j);
	alert_event_to_json(&j, &ev);
	assert_int_equal(r->body_len, j.out.len);
	assert_memory_equal(r->body, j.out.buf, j.out.len);
	json_free(&j);
	/* the receiver's check: the signature over what came */
	assert_int_equal(strncmp(r->id, "msg_", 4), 0);
	assert_true(llabs(strtoll(r->timestamp, NULL, 10) - r->at_s) <= 1);
	struct webhook_key key;
	assert_int_equal(webhook_key_parse(SECRET, &key), 0);
	char sig[WEBHOOK_SIGNATURE_MAX];
	assert_int_equal(webhook_sign(&key, 1, r->id, strtoll(r->timestamp, NULL, 10), r->body, r->body_len, sig,
				      sizeof(sig)),
			 0);
	assert_string_equal(r->signature, sig);

	/* the metric names */
	struct metric_set *m = calloc(1, sizeof(*m));
	webhooks_add_metrics(w, m);
	double v;
	assert_true(metric_set_get(m, "webhook.fleet.sent_total", &v) && v == 1);
	assert_true(metric_set_get(m, "webhook.fleet.queue_depth", &v) && v == 0);
	for (size_t i = 0; i < m->count; i++) {
		assert_true(metric_name_valid(m->items[i].name));
	}
	assert_int_equal(m->count, 6);
	free(m);
	webhooks_destroy(w);
	server_stop(s);
}

static void
test_500_three_times_then_200(void **state)
{
	(void)state;
	FILE *f = fopen(tmp_path("secret"), "w");
	fputs(SECRET "\n", f);
	fclose(f);
	static const int script[] = {500, 502, 503, 200};
	struct server *s = server_start(0, script, 4);
	server_run(s);
	struct webhooks *w = webhooks_create(&board);
	webhooks_set_backoff_for_tests(w, 20, 100);
	struct webhook_config cfg;
	config(&cfg, s->port, WEBHOOK_JSON);
	cfg.secret_file = tmp_path("secret");
	assert_int_equal(webhooks_set(w, "a", &cfg), 0);
	notify_json(w, "a", 1);
	WAIT_UNTIL(w, stats(w, "a").sent == 1, 5000);
	struct webhook_stats st = stats(w, "a");
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.retried, 3);
	assert_int_equal(st.failed, 0);
	assert_int_equal(nreqs(s), 4);
	struct webhook_key key;
	assert_int_equal(webhook_key_parse(SECRET, &key), 0);
	for (size_t i = 0; i < 4; i++) {
		struct request *r = &s->reqs[i];
		assert_string_equal(r->id, s->reqs[0].id); /* one notification, one id */
		assert_memory_equal(r->body, s->reqs[0].body, r->body_len);
		/* each attempt is stamped and signed when it is made */
		assert_true(llabs(strtoll(r->timestamp, NULL, 10) - r->at_s) <= 1);
		char sig[WEBHOOK_SIGNATURE_MAX];
		webhook_sign(&key, 1, r->id, strtoll(r->timestamp, NULL, 10), r->body, r->body_len, sig, sizeof(sig));
		assert_string_equal(r->signature, sig);
	}
	webhooks_destroy(w);
	server_stop(s);
}

static void
test_429_retry_after(void **state)
{
	(void)state;
	FILE *f = fopen(tmp_path("secret"), "w");
	fputs(SECRET "\n", f);
	fclose(f);
	static const int script[] = {429, 200};
	struct server *s = server_start(0, script, 2);
	s->extra = "Retry-After: 1\r\n";
	server_run(s);
	struct webhooks *w = webhooks_create(&board);
	webhooks_set_backoff_for_tests(w, 10, 5000);
	struct webhook_config cfg;
	config(&cfg, s->port, WEBHOOK_JSON);
	cfg.secret_file = tmp_path("secret");
	webhooks_set(w, "a", &cfg);
	notify_json(w, "a", 1);
	WAIT_UNTIL(w, stats(w, "a").sent == 1, 5000);
	assert_int_equal(stats(w, "a").retried, 1);
	assert_int_equal(nreqs(s), 2);
	int64_t gap = s->reqs[1].at_ms - s->reqs[0].at_ms;
	assert_true(gap >= 950);  /* the receiver's 1 s, not our 10 ms back-off */
	assert_true(gap < 2500);
	/* the retry is stamped anew, the id stays */
	assert_string_equal(s->reqs[0].id, s->reqs[1].id);
	assert_true(strtoll(s->reqs[1].timestamp, NULL, 10) > strtoll(s->reqs[0].timestamp, NULL, 10));
	webhooks_destroy(w);
	server_stop(s);
}

static void
test_404_not_retried(void **state)
{
	(void)state;
	static const int script[] = {404, 200};
	struct server *s = server_start(0, script, 2);
	server_run(s);
	struct webhooks *w = webhooks_create(&board);
	webhooks_set_backoff_for_tests(w, 10, 50);
	struct webhook_config cfg;
	config(&cfg, s->port, WEBHOOK_JSON);
	webhooks_set(w, "a", &cfg);
	notify_json(w, "a", 1);
	WAIT_UNTIL(w, stats(w, "a").failed == 1, 5000);
	WAIT_UNTIL(w, false, 300); /* a retry would come within 50 ms */
	struct webhook_stats st = stats(w, "a");
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.sent + st.retried + st.queue_depth, 0);
	assert_int_equal(nreqs(s), 1);
	/* the next notification goes out as usual */
	notify_json(w, "a", 2);
	WAIT_UNTIL(w, stats(w, "a").sent == 1, 5000);
	assert_int_equal(nreqs(s), 2);
	webhooks_destroy(w);
	server_stop(s);
}

static void
test_410_disables_until_set(void **state)
{
	(void)state;
	static const int script[] = {410, 200};
	struct server *s = server_start(0, script, 2);
	server_run(s);
	struct webhooks *w = webhooks_create(&board);
	struct webhook_config cfg;
	config(&cfg, s->port, WEBHOOK_JSON);
	webhooks_set(w, "a", &cfg);
	notify_json(w, "a", 1);
	WAIT_UNTIL(w, stats(w, "a").disabled, 5000);
	assert_int_equal(stats(w, "a").failed, 1);
	notify_json(w, "a", 2);
	notify_json(w, "a", 3);
	WAIT_UNTIL(w, stats(w, "a").dropped == 2, 5000);
	struct webhook_stats st = stats(w, "a");
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.queue_depth, 0);
	assert_int_equal(nreqs(s), 1);
	/* a reload sets it again: enabled */
	webhooks_set(w, "a", &cfg);
	webhooks_prune(w);
	WAIT_UNTIL(w, !stats(w, "a").disabled, 5000);
	notify_json(w, "a", 4);
	WAIT_UNTIL(w, stats(w, "a").sent == 1, 5000);
	assert_int_equal(nreqs(s), 2);
	assert_non_null(strstr(s->reqs[1].body, "\"summary\":\"event 4\""));
	webhooks_destroy(w);
	server_stop(s);
}

static void
test_tarpit_does_not_delay_others(void **state)
{
	(void)state;
	struct server *pit = server_start(0, NULL, 0);
	pit->tarpit = true;
	server_run(pit);
	struct server *s = server_start(0, NULL, 0);
	server_run(s);
	struct webhooks *w = webhooks_create(&board);
	webhooks_set_backoff_for_tests(w, 10, 50);
	struct webhook_config slow, fast;
	config(&slow, pit->port, WEBHOOK_JSON);
	slow.timeout_ms = 1500;
	webhooks_set(w, "slow", &slow);
	config(&fast, s->port, WEBHOOK_JSON);
	webhooks_set(w, "fast", &fast);
	notify_json(w, "slow", 1);
	int64_t t0 = monotonic_ms();
	for (int i = 0; i < 5; i++) {
		notify_json(w, "fast", i);
	}
	WAIT_UNTIL(w, stats(w, "fast").sent == 5, 5000);
	assert_int_equal(stats(w, "fast").sent, 5);
	assert_true(monotonic_ms() - t0 < 1200); /* all while the tarpit holds its request */
	assert_int_equal(stats(w, "slow").sent, 0);
	/* the tarpit times out and is retried */
	WAIT_UNTIL(w, stats(w, "slow").retried >= 1, 3000);
	assert_true(stats(w, "slow").retried >= 1);
	assert_int_equal(stats(w, "slow").queue_depth, 1);
	/* a stop cuts it after the grace */
	int64_t t1 = monotonic_ms();
	webhooks_destroy(w);
	int64_t took = monotonic_ms() - t1;
	assert_true(took <= WEBHOOK_STOP_GRACE_MS + 500);
	server_stop(s);
	server_stop(pit);
}

static void
test_full_queue_drops_oldest(void **state)
{
	(void)state;
	/* the first answer holds the queue for a second (Retry-After, capped at 1 s) */
	static const int script[] = {503, 200};
	struct server *s = server_start(0, script, 2);
	s->extra = "Retry-After: 60\r\n";
	server_run(s);
	struct webhooks *w = webhooks_create(&board);
	webhooks_set_backoff_for_tests(w, 1000, 1000);
	struct webhook_config cfg;
	config(&cfg, s->port, WEBHOOK_JSON);
	cfg.queue_max = 3;
	webhooks_set(w, "a", &cfg);
	notify_json(w, "a", 1);
	WAIT_UNTIL(w, nreqs(s) == 1, 2000);
	WAIT_UNTIL(w, false, 50); /* the answer is judged: event 1 waits out its back-off */
	for (int i = 2; i <= 5; i++) {
		notify_json(w, "a", i);
	}
	WAIT_UNTIL(w, stats(w, "a").dropped == 2, 2000);
	struct webhook_stats st = stats(w, "a");
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.queue_depth, 3);
	assert_int_equal(st.sent, 0);
	/* after the back-off the newest three arrive, in order */
	WAIT_UNTIL(w, stats(w, "a").sent == 3, 5000);
	assert_int_equal(stats(w, "a").sent, 3);
	assert_int_equal(stats(w, "a").retried, 0); /* event 1 was tried once, then dropped */
	assert_int_equal(nreqs(s), 4);
	assert_true(s->reqs[1].at_ms - s->reqs[0].at_ms >= 950);
	for (int i = 0; i < 3; i++) {
		char want[32];
		snprintf(want, sizeof(want), "\"summary\":\"event %d\"", i + 3);
		assert_non_null(strstr(s->reqs[i + 1].body, want));
	}
	webhooks_destroy(w);
	server_stop(s);
}

static void
test_queue_file_survives_a_stop(void **state)
{
	(void)state;
	int port = free_port();
	struct webhook_config cfg;
	config(&cfg, port, WEBHOOK_JSON);
	cfg.queue_file = tmp_path("fleet.queue");
	struct webhooks *w = webhooks_create(&board);
	webhooks_set_backoff_for_tests(w, 60000, 60000); /* after the refusal nothing is due: the stop is quick */
	webhooks_set(w, "fleet", &cfg);
	for (int i = 1; i <= 3; i++) {
		notify_json(w, "fleet", i);
	}
	WAIT_UNTIL(w, stats(w, "fleet").retried == 0 && stats(w, "fleet").queue_depth == 3, 2000);
	int64_t t0 = monotonic_ms();
	webhooks_destroy(w);
	assert_true(monotonic_ms() - t0 < WEBHOOK_STOP_GRACE_MS);

	struct server *s = server_start(port, NULL, 0);
	server_run(s);
	w = webhooks_create(&board);
	webhooks_set(w, "fleet", &cfg);
	WAIT_UNTIL(w, stats(w, "fleet").sent == 3, 5000);
	assert_int_equal(stats(w, "fleet").sent, 3);
	assert_int_equal(nreqs(s), 3);
	for (int i = 0; i < 3; i++) {
		char want[32];
		snprintf(want, sizeof(want), "\"summary\":\"event %d\"", i + 1);
		assert_non_null(strstr(s->reqs[i].body, want));
	}
	webhooks_destroy(w);
	/* delivered and acknowledged: a third start finds nothing */
	w = webhooks_create(&board);
	webhooks_set(w, "fleet", &cfg);
	assert_int_equal(stats(w, "fleet").queue_depth, 0);
	webhooks_destroy(w);
	assert_int_equal(nreqs(s), 3);
	server_stop(s);
}

static void
test_prune_drops_what_was_queued(void **state)
{
	(void)state;
	int port = free_port();
	struct webhook_config cfg, other;
	config(&cfg, port, WEBHOOK_JSON);
	cfg.queue_file = tmp_path("gone.queue");
	config(&other, port, WEBHOOK_JSON);
	struct webhooks *w = webhooks_create(&board);
	webhooks_set_backoff_for_tests(w, 60000, 60000);
	webhooks_set(w, "gone", &cfg);
	webhooks_set(w, "kept", &other);
	webhooks_prune(w); /* both were set: both stay */
	notify_json(w, "gone", 1);
	notify_json(w, "gone", 2);
	WAIT_UNTIL(w, stats(w, "gone").queue_depth == 2, 2000);
	WAIT_UNTIL(w, false, 100); /* in the queue file, not only handed over */
	/* a reload without "gone" */
	webhooks_set(w, "kept", &other);
	webhooks_prune(w);
	struct webhook_stats st;
	assert_int_equal(webhooks_get_stats(w, "gone", &st), -ENOENT);
	assert_int_equal(webhooks_get_stats(w, "kept", &st), 0);
	notify_json(w, "gone", 3); /* an unknown action: ignored */
	webhooks_destroy(w);
	/* its queue file holds nothing any more */
	w = webhooks_create(&board);
	webhooks_set_backoff_for_tests(w, 60000, 60000);
	webhooks_set(w, "gone", &cfg);
	assert_int_equal(stats(w, "gone").queue_depth, 0);
	webhooks_destroy(w);
}

static void
test_alertmanager_api_resends_until_resolved(void **state)
{
	(void)state;
	struct server *s = server_start(0, NULL, 0);
	server_run(s);
	struct webhooks *w = webhooks_create(&board);
	struct webhook_config cfg;
	config(&cfg, s->port, WEBHOOK_ALERTMANAGER_API);
	cfg.resend_ms = 200;
	webhooks_set(w, "am", &cfg);
	struct alert_event ev;
	event(&ev, 1, TRANSITION_FIRING);
	webhooks_notify(w, "am", &ev);
	event(&ev, 1, TRANSITION_ESCALATED);
	ev.severity = SEVERITY_CRITICAL;
	ev.previous = SEVERITY_WARNING;
	webhooks_notify(w, "am", &ev);
	webhooks_flush(w);
	WAIT_UNTIL(w, nreqs(s) >= 5, 5000);
	assert_true(nreqs(s) >= 5);
	/* one tick, one request: firing warning, its label set resolved, firing critical */
	const char *b = s->reqs[0].body;
	assert_string_equal(s->reqs[0].line, "POST /hook HTTP/1.1");
	const char *w1 = strstr(b, "\"severity\":\"warning\"");
	const char *w2 = w1 ? strstr(w1 + 1, "\"severity\":\"warning\"") : NULL;
	assert_non_null(w2);
	assert_non_null(strstr(w2, "\"endsAt\":\"2026-11-23T09:12:04Z\""));
	assert_non_null(strstr(w2, "\"severity\":\"critical\""));
	/* the re-sends: the critical alert only, firing (no endsAt) */
	for (size_t i = 1; i < 3; i++) {
		assert_non_null(strstr(s->reqs[i].body, "\"severity\":\"critical\""));
		assert_null(strstr(s->reqs[i].body, "\"severity\":\"warning\""));
		assert_null(strstr(s->reqs[i].body, "endsAt"));
	}
	/* paced by resend (200 ms): three gaps of it, each arrival late by up to 150 ms on a loaded machine */
	assert_true(s->reqs[4].at_ms - s->reqs[1].at_ms >= 3 * 200 - 150);
	event(&ev, 1, TRANSITION_RESOLVED);
	ev.severity = SEVERITY_CRITICAL;
	webhooks_notify(w, "am", &ev);
	webhooks_flush(w);
	size_t before = nreqs(s);
	WAIT_UNTIL(w, nreqs(s) > before, 3000);
	WAIT_UNTIL(w, false, 500); /* no re-send after the resolve */
	size_t after = nreqs(s);
	assert_non_null(strstr(s->reqs[after - 1].body, "\"endsAt\":\"2026-11-23T09:12:04Z\""));
	assert_true(after - before <= 2); /* the resolve, and at most one re-send that was already queued */
	webhooks_destroy(w);
	server_stop(s);
}

int
main(void)
{
	log_set_level(LOG_INFO);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_success_headers_signature, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_500_three_times_then_200, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_429_retry_after, setup_tmp, teardown_tmp),
		cmocka_unit_test(test_404_not_retried),
		cmocka_unit_test(test_410_disables_until_set),
		cmocka_unit_test(test_tarpit_does_not_delay_others),
		cmocka_unit_test(test_full_queue_drops_oldest),
		cmocka_unit_test_setup_teardown(test_queue_file_survives_a_stop, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_prune_drops_what_was_queued, setup_tmp, teardown_tmp),
		cmocka_unit_test(test_alertmanager_api_resends_until_resolved),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
