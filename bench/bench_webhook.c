/*
 * bench_webhook: cost of one webhook notification.
 *
 *   bench_webhook [DIR]
 *
 * 1. CPU: one alertmanager body (one alert, three rule labels) and its
 *    Standard Webhooks signature, and one json body; ns per body (for
 *    instructions: valgrind --tool=callgrind bench_webhook --cpu-only).
 * 2. Delivery: 2,000 signed json notifications delivered over HTTP to a
 *    loopback receiver thread of this program (keep-alive, 200 at once);
 *    the process's CPU minus the receiver thread's, per notification:
 *    the body, the signature, libcurl and the delivery thread.
 * 3. Memory: RSS growth per queued notification while the receiver is down
 *    (10,000 json notifications queued in memory).
 * 4. Durability: what the delivery thread does for each notification
 *    handed over alone with a queue_file in DIR (default /tmp): push,
 *    write and fsync (wall time).
 * For 3 and 4 the receiver is a loopback port nobody listens on; back-offs
 * are long so nothing is retried meanwhile.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/spool.h"
#include "webhook/webhook.h"
#include "webhook/webhook_sign.h"

static const struct alert_label labels[] = {{"team", "robots"}, {"zone", "cpu-thermal"}, {"site", "lab-7"}};
static const struct agent_info board = {
	.board_name = "orin-01", .device_id = "1421019054321", .generator_url = "http://orin-01:9474/"};

static double
cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long
rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, rss = 0;
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2) {
			rss = 0;
		}
		fclose(f);
	}
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static void
event(struct alert_event *ev, int n)
{
	memset(ev, 0, sizeof(*ev));
	ev->rule_name = "soc-hot";
	ev->labels = labels;
	ev->label_count = 3;
	ev->metric = "temp.cpu_c";
	ev->transition = TRANSITION_FIRING;
	ev->severity = SEVERITY_CRITICAL;
	ev->value = 97.1 + n % 7;
	ev->threshold = 95.5;
	ev->at_ms = ev->starts_at_ms = 1795425123000 + n;
	snprintf(ev->fingerprint, sizeof(ev->fingerprint), "3f1c2a9be07d4e51");
	snprintf(ev->summary, sizeof(ev->summary), "cpu-thermal at %.1f C above 95.5 C for 30s", ev->value);
	ev->power_mode = "MAXN";
}

static void
bench_cpu(int rounds)
{
	struct webhook_key key;
	webhook_key_parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", &key);
	struct alert_event ev;
	struct json j;
	json_init(&j);
	char sig[WEBHOOK_SIGNATURE_MAX];
	size_t bytes = 0;
	double t0 = cpu_s();
	for (int i = 0; i < rounds; i++) {
		event(&ev, i);
		const struct alert_event *evs[] = {&ev};
		json_reset(&j);
		webhook_format_alertmanager(&j, &board, "ops", evs, 1);
		webhook_sign(&key, 1, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", 1674087231, j.out.buf, j.out.len, sig, sizeof(sig));
		bytes = j.out.len;
	}
	double t1 = cpu_s();
	for (int i = 0; i < rounds; i++) {
		event(&ev, i);
		json_reset(&j);
		alert_event_to_json(&j, &ev);
	}
	double t2 = cpu_s();
	printf("alertmanager body + signature: %.0f ns (%zu bytes)\n", (t1 - t0) / rounds * 1e9, bytes);
	printf("json body:                     %.0f ns (%zu bytes)\n", (t2 - t1) / rounds * 1e9, j.out.len);
	json_free(&j);
}

static int
refused_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		perror("bind");
		exit(1);
	}
	close(fd);
	return ntohs(a.sin_port);
}

static struct webhook_config
config(const char *url, const char *queue_file)
{
	return (struct webhook_config){.url = (char *)url, .format = WEBHOOK_JSON, .timeout_ms = 1000,
				       .secret_file = "", .bearer_token_file = "", .ca_file = "",
				       .queue_file = (char *)queue_file, .queue_max = 100000, .resend_ms = 60000};
}

static void
wait_depth(struct webhooks *w, uint64_t depth)
{
	struct webhook_stats st;
	for (int i = 0; i < 30000; i++) {
		webhooks_get_stats(w, "a", &st);
		if (st.queue_depth >= depth) {
			return;
		}
		usleep(1000);
	}
}

/* ---- 2. delivery to a loopback receiver ---- */

struct receiver {
	int fd, port;
	long requests;
	double cpu_s; /* this thread's own CPU, at its end */
	pthread_t thread;
};

/* Reads one request (headers, then Content-Length bytes) from FD; 0 at the end of the connection. */
static int
read_request(int fd, char *buf, size_t size)
{
	size_t have = 0;
	for (;;) {
		char *end = have ? memmem(buf, have, "\r\n\r\n", 4) : NULL;
		if (end) {
			char *cl = strcasestr(buf, "content-length:");
			size_t body = cl ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
			size_t want = (size_t)(end - buf) + 4 + body;
			while (have < want) {
				ssize_t n = read(fd, buf + have, want - have < size - have ? want - have : size - have);
				if (n <= 0) {
					return 0;
				}
				have += (size_t)n;
			}
			return 1;
		}
		ssize_t n = read(fd, buf + have, size - 1 - have);
		if (n <= 0) {
			return 0;
		}
		have += (size_t)n;
		buf[have] = '\0';
	}
}

static void *
receiver_main(void *arg)
{
	struct receiver *r = arg;
	static char buf[65536];
	static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	int c;
	while ((c = accept(r->fd, NULL, NULL)) >= 0) {
		while (read_request(c, buf, sizeof(buf))) {
			__atomic_add_fetch(&r->requests, 1, __ATOMIC_RELAXED);
			if (write(c, answer, sizeof(answer) - 1) < 0) {
				break;
			}
		}
		close(c);
	}
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	r->cpu_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	return NULL;
}

static struct webhook_config config(const char *url, const char *queue_file);

static void
bench_delivery(const char *dir)
{
	struct receiver r = {.fd = socket(AF_INET, SOCK_STREAM, 0)};
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	if (bind(r.fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(r.fd, 16) < 0 ||
	    getsockname(r.fd, (struct sockaddr *)&a, &len) < 0) {
		perror("receiver");
		exit(1);
	}
	r.port = ntohs(a.sin_port);
	pthread_create(&r.thread, NULL, receiver_main, &r);
	char url[64], secret[256];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", r.port);
	snprintf(secret, sizeof(secret), "%s/bench_webhook.secret", dir);
	FILE *f = fopen(secret, "w");
	if (!f) {
		perror(secret);
		exit(1);
	}
	fputs("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", f);
	fclose(f);

	enum { N = 2000 };
	struct webhooks *w = webhooks_create(&board);
	struct webhook_config cfg = config(url, "");
	cfg.secret_file = secret;
	webhooks_set(w, "a", &cfg);
	struct alert_event ev;
	struct webhook_stats st = {0};
	double t0 = cpu_s();
	int64_t w0 = monotonic_ms();
	for (int i = 0; i < N; i++) {
		event(&ev, i);
		webhooks_notify(w, "a", &ev);
	}
	for (int i = 0; i < 6000 && st.sent < N; i++) {
		usleep(10000);
		webhooks_get_stats(w, "a", &st);
	}
	int64_t wall = monotonic_ms() - w0;
	double t1 = cpu_s();
	webhooks_destroy(w);
	shutdown(r.fd, SHUT_RDWR);
	close(r.fd);
	pthread_join(r.thread, NULL);
	double cpu = t1 - t0 - r.cpu_s; /* the receiver idles once everything is in */
	unlink(secret);
	printf("delivery: %.0f us CPU per signed json notification delivered (%" PRIu64 " of %d sent, %ld requests, "
	       "%.2f ms wall each, receiver thread excluded)\n",
	       cpu / N * 1e6, st.sent, N, r.requests, (double)wall / N);
}

static void
bench_queue(const char *dir)
{
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", refused_port());
	struct alert_event ev;

	enum { N = 10000 };
	struct webhooks *w = webhooks_create(&board);
	webhooks_set_backoff_for_tests(w, 3600000, 3600000);
	struct webhook_config cfg = config(url, "");
	webhooks_set(w, "a", &cfg);
	event(&ev, 0);
	webhooks_notify(w, "a", &ev); /* the first one is tried (refused) and waits for its back-off */
	wait_depth(w, 1);
	usleep(200000);
	long before = rss_kib();
	for (int i = 1; i <= N; i++) {
		event(&ev, i);
		webhooks_notify(w, "a", &ev);
	}
	wait_depth(w, N + 1);
	usleep(300000); /* the delivery thread has moved them from its inbox into the queue */
	long after = rss_kib();
	printf("memory queue: %.0f bytes RSS per queued notification (json, %d queued)\n",
	       (double)(after - before) * 1024 / N, N);
	webhooks_destroy(w);

	/* what the delivery thread does for each notification handed over alone: push, write and fsync */
	char path[256];
	snprintf(path, sizeof(path), "%s/bench_webhook.queue", dir);
	unlink(path);
	struct spool *sp;
	struct spool_options opts = {.max_records = 1000, .path = path};
	if (spool_open(&opts, &sp) < 0) {
		perror(path);
		return;
	}
	struct json j;
	json_init(&j);
	enum { M = 200 };
	int64_t t0 = monotonic_ms();
	for (int i = 0; i < M; i++) {
		event(&ev, i);
		json_reset(&j);
		alert_event_to_json(&j, &ev);
		spool_push(sp, "msg_0123456789abcdef0123456789abcdef", j.out.buf, j.out.len, 0, false);
		spool_sync(sp);
	}
	double per = (double)(monotonic_ms() - t0) / M;
	struct spool_stats st;
	spool_get_stats(sp, &st);
	printf("queue_file in %s: %.2f ms per notification pushed, written and fsynced alone (%.0f bytes on disk each)\n",
	       dir, per, (double)st.file_bytes / M);
	spool_close(sp);
	json_free(&j);
	unlink(path);
}

int
main(int argc, char **argv)
{
	log_set_level(LOG_ERROR);
	bool cpu_only = argc > 1 && strcmp(argv[1], "--cpu-only") == 0;
	bench_cpu(cpu_only ? 1000 : 100000);
	if (!cpu_only) {
		bench_delivery(argc > 1 ? argv[1] : "/tmp");
		bench_queue(argc > 1 ? argv[1] : "/tmp");
	}
	return 0;
}
