/*
 * The work source: StatsD counter lines on a loopback UDP port into the
 * ledger, and the ledger's counts into every sample. UDP because every
 * language and a shell can send a datagram without a library and without
 * waiting (a full socket drops, the application never blocks):
 *   shell:   echo "inference:1|c" > /dev/udp/127.0.0.1/9475
 *   Python:  socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"inference:1|c", ("127.0.0.1", 9475))
 * (C is in docs/work.md). Loopback only: anyone on the network could
 * otherwise make the board's joules per unit say anything.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/xalloc.h"
#include "work_priv.h"

#define DATAGRAM_MAX 2048
#define DATAGRAMS_PER_DISPATCH 256 /* then the loop gets back to sampling */
#define WARN_EVERY_MS 60000

struct work_source {
	struct source base;
	struct work_ledger *ledger;
	int fd; /* -1: no listener (POST only) */
	uint64_t bad_lines;
	int64_t warned_ms;
	char metric[WORK_NAMES_MAX][METRIC_NAME_MAX]; /* work.NAME.count_total, made once per name */
	int named;
};

int
work_parse_listen(const char *text, struct sockaddr_storage *addr, socklen_t *len)
{
	const char *colon = strrchr(text, ':');
	if (!colon || colon == text) {
		return -EINVAL;
	}
	char host[64];
	size_t n = (size_t)(colon - text);
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (n >= sizeof(host) || *end || port < 1 || port > 65535) {
		return -EINVAL;
	}
	memcpy(host, text, n);
	host[n] = '\0';
	memset(addr, 0, sizeof(*addr));
	struct sockaddr_in *a4 = (struct sockaddr_in *)addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;
	if (strcmp(host, "localhost") == 0) {
		snprintf(host, sizeof(host), "127.0.0.1");
	}
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1 && (ntohl(a4->sin_addr.s_addr) >> 24) == 127) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*len = sizeof(*a4);
		return 0;
	}
	if (n > 2 && host[0] == '[' && host[n - 1] == ']') {
		host[n - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) == 1 && IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr)) {
			a6->sin6_family = AF_INET6;
			a6->sin6_port = htons((uint16_t)port);
			*len = sizeof(*a6);
			return 0;
		}
	}
	return -EINVAL;
}

static void
take_datagram(struct work_source *ws, const char *buf, size_t len)
{
	for (const char *p = buf, *end = buf + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		if (n > 0 && p[n - 1] == '\r') {
			n--;
		}
		const char *name;
		size_t name_len;
		double count;
		char err[128];
		if (n > 0 && (work_parse_statsd(p, n, &name, &name_len, &count, err, sizeof(err)) < 0 ||
			      work_ledger_add(ws->ledger, name, name_len, count, err, sizeof(err)) < 0)) {
			ws->bad_lines++;
			int64_t now = monotonic_ms();
			if (ws->warned_ms == 0 || now - ws->warned_ms >= WARN_EVERY_MS) {
				ws->warned_ms = now;
				log_warn(
					"work: a line was refused (%s): '%.*s' (%llu so far; this is said once a minute)",
					err, (int)(n < 80 ? n : 80), p, (unsigned long long)ws->bad_lines);
			}
		}
		p += n + (nl ? 1 + (p[n] == '\r') : 0);
		if (!nl) {
			break;
		}
	}
}

static int
work_dispatch(struct source *src)
{
	struct work_source *ws = (struct work_source *)src;
	char buf[DATAGRAM_MAX];
	for (int i = 0; i < DATAGRAMS_PER_DISPATCH; i++) {
		ssize_t n = recv(ws->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0) {
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
		}
		take_datagram(ws, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf));
	}
	return 0;
}

static int
work_get_fd(struct source *src)
{
	return ((struct work_source *)src)->fd;
}

static int
work_read(struct source *src, struct sample *s)
{
	struct work_source *ws = (struct work_source *)src;
	char names[WORK_NAMES_MAX][WORK_NAME_MAX];
	double units[WORK_NAMES_MAX];
	uint64_t reports;
	size_t n = work_ledger_snapshot(ws->ledger, names, units, &reports);
	for (size_t i = 0; i < n; i++) {
		if ((int)i == ws->named) {
			snprintf(ws->metric[i], sizeof(ws->metric[i]), "work.%.*s.count_total", WORK_NAME_MAX - 1,
				 names[i]);
			ws->named++;
		}
		metric_set_put(&s->metrics, ws->metric[i], units[i]);
	}
	if (ws->fd >= 0 || n > 0) {
		metric_set_put(&s->metrics, "agent.work_reports_total", (double)reports);
		metric_set_put(&s->metrics, "agent.work_bad_lines_total", (double)ws->bad_lines);
	}
	return -EAGAIN; /* the board's sources make the samples */
}

static void
work_destroy(struct source *src)
{
	struct work_source *ws = (struct work_source *)src;
	if (ws->fd >= 0) {
		close(ws->fd);
	}
	work_ledger_unref(ws->ledger);
	free(ws);
}

static const struct source_ops work_ops = {
	.name = "work",
	.read = work_read,
	.get_fd = work_get_fd,
	.dispatch = work_dispatch,
	.destroy = work_destroy,
};

int
work_source_create(const char *listen, struct work_ledger *ledger, struct source **out)
{
	int fd = -1;
	if (listen && listen[0]) {
		struct sockaddr_storage addr;
		socklen_t len;
		if (work_parse_listen(listen, &addr, &len) < 0) {
			return -EINVAL;
		}
		fd = socket(addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			return -errno;
		}
		if (bind(fd, (struct sockaddr *)&addr, len) < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
	}
	struct work_source *ws = xcalloc(1, sizeof(*ws));
	ws->base.ops = &work_ops;
	ws->fd = fd;
	ws->ledger = work_ledger_ref(ledger);
	*out = &ws->base;
	return 0;
}
