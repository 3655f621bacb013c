/* The probe source (probe_source.h): one attempt per probe at a time, each socket polled by the loop. */
#include "probe_source.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/readfile.h"
#include "core/xalloc.h"
#include "icmp_echo.h"
#include "probe_window.h"

#define RESOLVE_EVERY_MS (5 * 60 * 1000) /* a name is looked up again this often, and after a failed attempt */
#define TARGET_MAX (PROBE_HOST_MAX + 32)

/* a name lookup in flight (getaddrinfo_a owns it until it is done) */
struct lookup {
	struct gaicb cb;
	struct addrinfo hints;
	char host[PROBE_HOST_MAX + 1];
};

enum attempt {
	IDLE,
	RESOLVING,
	WAITING
};

struct probe {
	struct probe_config cfg;
	char target[TARGET_MAX]; /* "10.0.0.5:1883", "board2.lan (ICMP echo)": for messages */
	bool icmp, is_name;
	struct sockaddr_storage addr;
	socklen_t addr_len; /* 0: no address yet */
	int64_t resolved_ms;
	struct lookup *lookup;
	enum attempt state;
	int fd; /* the attempt's socket, -1 when none */
	int64_t started_ms, sent_us, sent_wall_us, next_ms;
	uint16_t seq;
	bool last_failed;
	bool forbidden; /* ICMP echo sockets are not allowed to this agent's groups */
	int said;       /* what the log said last: -1 nothing, 0 no answer, 1 answers */
	struct probe_window win;
};

struct probe_source {
	struct source base;
	int ep; /* every attempt's socket, for the loop's poll() */
	size_t count;
	struct probe *probes;
};

/* The state change in the log, once: a probe that keeps failing says so once, not at every attempt. */
static void
tell(struct probe *p, bool up, const char *why)
{
	if (p->said == (up ? 1 : 0)) {
		return;
	}
	if (!up) {
		log_warn("probe %s (%s): no answer: %s", p->cfg.name, p->target, why);
	} else if (p->said == 0) {
		log_info("probe %s (%s): answers again", p->cfg.name, p->target);
	}
	p->said = up ? 1 : 0;
}

/* The attempt's end: answered in RTT_US, or lost (RTT_US < 0, WHY says why). */
static void
finish(struct probe *p, int64_t rtt_us, const char *why)
{
	if (p->fd >= 0) {
		close(p->fd); /* leaves the epoll set with it */
		p->fd = -1;
	}
	p->state = IDLE;
	p->last_failed = rtt_us < 0;
	probe_window_add(&p->win, rtt_us);
	tell(p, rtt_us >= 0, why);
}

static void
finish_errno(struct probe *p, int err)
{
	finish(p, -1, strerror(err));
}

/* The groups allowed to open ping sockets, for the message that says they are not ours. */
static void
say_forbidden(struct probe *p)
{
	char range[64] = "";
	char *text = NULL;
	size_t len = 0;
	if (readfile_all("/proc/sys/net/ipv4/ping_group_range", 64, &text, &len, NULL) == 0) {
		snprintf(range, sizeof(range), "%.*s", (int)strcspn(text, "\n"), text);
		free(text);
		for (char *c = range; *c; c++) {
			*c = *c == '\t' ? ' ' : *c; /* the kernel separates the two with a tab */
		}
	}
	log_warn("probe %s (%s): the kernel refuses this agent (group %u) an ICMP echo socket: "
		 "net.ipv4.ping_group_range is \"%s\" and does not hold its group. Its metrics stay absent until it "
		 "does (sysctl net.ipv4.ping_group_range=\"0 2147483647\" allows every group), or give the probe a "
		 "port to connect to instead",
		 p->cfg.name, p->target, (unsigned)getegid(), range[0] ? range : "unreadable");
}

static void
forbid(struct probe *p)
{
	if (!p->forbidden) {
		say_forbidden(p);
		p->forbidden = true;
		probe_window_init(&p->win, p->cfg.window); /* absent from now on, never 0 */
		p->said = -1;
	}
	p->state = IDLE;
}

/* The kernel's own round-trip time of the handshake (TCP_INFO), else the loop's. */
static int64_t
tcp_rtt_us(const struct probe *p)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	/* an older kernel fills less of the struct than these headers know: tcpi_rtt is in it since 2.6 */
	size_t need = offsetof(struct tcp_info, tcpi_rtt) + sizeof(ti.tcpi_rtt);
	if (getsockopt(p->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 && len >= need && ti.tcpi_rtt > 0) {
		return ti.tcpi_rtt;
	}
	int64_t us = monotonic_us() - p->sent_us;
	return us > 0 ? us : 1;
}

/*
 * The kernel's receive stamp (wall clock) less the wall clock just before
 * the send; the loop's own measure when there is no stamp or the wall clock
 * stepped in between (a result outside 0 .. the loop's own measure).
 */
static int64_t
icmp_rtt_us(const struct probe *p, struct msghdr *msg)
{
	int64_t loop_us = monotonic_us() - p->sent_us;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			int64_t us = ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000) - p->sent_wall_us;
			if (us > 0 && us <= loop_us) {
				return us;
			}
		}
	}
	return loop_us > 0 ? loop_us : 1;
}

/* Opens the attempt's socket and sends (ICMP) or connects (TCP); the loop polls it from then on. */
static void
send_attempt(struct probe_source *ps, struct probe *p)
{
	int family = p->addr.ss_family;
	int proto = !p->icmp ? 0 : family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
	int fd = socket(family, (p->icmp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (fd < 0) {
		if (p->icmp && (errno == EACCES || errno == EPERM)) {
			forbid(p);
		} else {
			finish_errno(p, errno);
		}
		return;
	}
	if (p->forbidden) {
		log_info("probe %s (%s): ICMP echo sockets are allowed now", p->cfg.name, p->target);
		p->forbidden = false;
	}
	p->fd = fd;
	p->state = WAITING;
	p->started_ms = monotonic_ms(); /* the timeout counts from here: a name lookup had its own */
	p->sent_us = monotonic_us();
	/* a connected ping socket also hears the ICMP errors (host unreachable) */
	int err = connect(fd, (const struct sockaddr *)&p->addr, p->addr_len) < 0 ? errno : 0;
	uint32_t events = EPOLLOUT;
	if (p->icmp) {
		uint8_t msg[ICMP_ECHO_LEN];
		icmp_echo_request(family == AF_INET6, ++p->seq, msg);
		/* the kernel stamps the reply as it comes in: the time the loop takes to read it is not counted */
		int on = 1;
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
		p->sent_wall_us = clock_wall_us();
		if (!err && send(fd, msg, sizeof(msg), 0) != (ssize_t)sizeof(msg)) {
			err = errno;
		}
		if (err) {
			finish_errno(p, err);
			return;
		}
		events = EPOLLIN;
	} else if (!err) {
		finish(p, tcp_rtt_us(p), NULL); /* connected at once */
		return;
	} else if (err != EINPROGRESS) {
		finish_errno(p, err); /* refused at once, no route */
		return;
	}
	struct epoll_event ev = {.events = events, .data.ptr = p};
	if (epoll_ctl(ps->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		finish_errno(p, errno);
	}
}

static void
lookup_free(struct lookup *l)
{
	if (l && l->cb.ar_result) {
		freeaddrinfo(l->cb.ar_result);
	}
	free(l);
}

/* Starts looking up the probe's name; false when it cannot (said by the caller). */
static bool
begin_lookup(struct probe *p, int *err)
{
	struct lookup *l = xcalloc(1, sizeof(*l));
	memcpy(l->host, p->cfg.host, sizeof(l->host));
	l->hints.ai_family = AF_UNSPEC;
	l->hints.ai_socktype = p->icmp ? SOCK_DGRAM : SOCK_STREAM;
	l->hints.ai_flags = AI_ADDRCONFIG;
	l->cb.ar_name = l->host;
	l->cb.ar_request = &l->hints;
	struct gaicb *list[1] = {&l->cb};
	*err = getaddrinfo_a(GAI_NOWAIT, list, 1, NULL);
	if (*err != 0) {
		free(l);
		return false;
	}
	p->lookup = l;
	return true;
}

static void
set_port(struct probe *p)
{
	/* ping sockets take the identifier from the port: 0 lets the kernel choose one */
	uint16_t port = htons((uint16_t)(p->icmp ? 0 : p->cfg.port));
	if (p->addr.ss_family == AF_INET6) {
		((struct sockaddr_in6 *)&p->addr)->sin6_port = port;
	} else {
		((struct sockaddr_in *)&p->addr)->sin_port = port;
	}
}

/* A lookup that ended: its first IPv4 or IPv6 address becomes the probe's. 0, or the EAI_ error. */
static int
end_lookup(struct probe *p, int rc, int64_t now)
{
	struct lookup *l = p->lookup;
	p->lookup = NULL;
	if (rc == 0) {
		rc = EAI_NONAME;
		for (const struct addrinfo *ai = l->cb.ar_result; ai; ai = ai->ai_next) {
			if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) &&
			    ai->ai_addrlen <= sizeof(p->addr)) {
				memcpy(&p->addr, ai->ai_addr, ai->ai_addrlen);
				p->addr_len = ai->ai_addrlen;
				p->resolved_ms = now;
				set_port(p);
				rc = 0;
				break;
			}
		}
	}
	lookup_free(l);
	return rc;
}

/* A lookup that finished: the attempt waiting for it goes on (or fails). */
static void
poll_lookup(struct probe_source *ps, struct probe *p, int64_t now)
{
	if (!p->lookup) {
		return;
	}
	int rc = gai_error(&p->lookup->cb);
	if (rc == EAI_INPROGRESS) {
		return;
	}
	rc = end_lookup(p, rc, now);
	if (p->state != RESOLVING) {
		return; /* its attempt timed out: the address serves the next one */
	}
	if (rc != 0) {
		char why[160];
		snprintf(why, sizeof(why), "cannot look up the name: %s", gai_strerror(rc));
		finish(p, -1, why);
		return;
	}
	send_attempt(ps, p);
}

static void
start_attempt(struct probe_source *ps, struct probe *p, int64_t now)
{
	/* every interval from the first, without a burst after the loop fell behind */
	p->next_ms = p->next_ms && now - p->next_ms < p->cfg.interval_ms ? p->next_ms + p->cfg.interval_ms
									 : now + p->cfg.interval_ms;
	p->started_ms = now;
	bool stale = !p->addr_len || now - p->resolved_ms >= RESOLVE_EVERY_MS || p->last_failed;
	if (p->is_name && (stale || p->lookup)) {
		int err;
		if (!p->lookup && !begin_lookup(p, &err)) {
			char why[160];
			snprintf(why, sizeof(why), "cannot look up the name: %s", gai_strerror(err));
			finish(p, -1, why);
			return;
		}
		p->state = RESOLVING;
		poll_lookup(ps, p, now); /* /etc/hosts answers at once */
		return;
	}
	send_attempt(ps, p);
}

static void
check_timeout(struct probe *p, int64_t now)
{
	if (p->state == IDLE || now - p->started_ms < p->cfg.timeout_ms) {
		return;
	}
	char t[32], why[96];
	cfg_format_duration(p->cfg.timeout_ms, t, sizeof(t));
	snprintf(why, sizeof(why),
		 p->state == RESOLVING ? "the name lookup took longer than the timeout (%s)"
				       : "nothing came back within the timeout (%s)",
		 t);
	finish(p, -1, why);
}

/* A socket the loop found ready: the connection's outcome, or what the ping socket received. */
static void
on_ready(struct probe *p)
{
	if (p->state != WAITING || p->fd < 0) {
		return;
	}
	if (!p->icmp) {
		int err = 0;
		socklen_t len = sizeof(err);
		if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
			err = errno;
		}
		if (err) {
			finish_errno(p, err); /* refused: the host is there, the service is not */
		} else {
			finish(p, tcp_rtt_us(p), NULL);
		}
		return;
	}
	for (;;) {
		uint8_t buf[512];
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(struct timespec))];
		} control;
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control)};
		ssize_t n = recvmsg(p->fd, &msg, 0);
		uint16_t seq;
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				finish_errno(p, errno); /* an ICMP error: unreachable */
			}
			return;
		}
		if (icmp_echo_reply_seq(p->addr.ss_family == AF_INET6, buf, (size_t)n, &seq) == 0 && seq == p->seq) {
			finish(p, icmp_rtt_us(p, &msg), NULL);
			return;
		}
	}
}

static int
probe_dispatch(struct source *src)
{
	struct probe_source *ps = (struct probe_source *)src;
	struct epoll_event evs[PROBE_MAX];
	int n = epoll_wait(ps->ep, evs, PROBE_MAX, 0);
	for (int i = 0; i < n; i++) {
		on_ready(evs[i].data.ptr);
	}
	return n < 0 && errno != EINTR ? -errno : 0;
}

static int
probe_get_fd(struct source *src)
{
	return ((struct probe_source *)src)->ep;
}

static int
probe_read(struct source *src, struct sample *sample)
{
	struct probe_source *ps = (struct probe_source *)src;
	int64_t now = monotonic_ms();
	struct metric_set *m = &sample->metrics;
	for (size_t i = 0; i < ps->count; i++) {
		struct probe *p = &ps->probes[i];
		poll_lookup(ps, p, now);
		check_timeout(p, now);
		if (p->state == IDLE && now >= p->next_ms) {
			start_attempt(ps, p, now);
		}
		struct probe_stats st;
		if (probe_window_stats(&p->win, &st) < 0) {
			continue; /* no attempt ended yet, or ICMP not allowed: absent, never 0 */
		}
		metric_set_putf(m, st.up ? 1 : 0, "probe.%s.up", p->cfg.name);
		metric_set_putf(m, st.loss_pct, "probe.%s.loss_pct", p->cfg.name);
		if (!isnan(st.rtt_mean_ms)) {
			metric_set_putf(m, st.rtt_mean_ms, "probe.%s.rtt_ms", p->cfg.name);
		}
	}
	return 0;
}

static void
probe_destroy(struct source *src)
{
	struct probe_source *ps = (struct probe_source *)src;
	for (size_t i = 0; i < ps->count; i++) {
		struct probe *p = &ps->probes[i];
		if (p->fd >= 0) {
			close(p->fd);
		}
		/* a lookup still running owns its buffers: leave them to it if it cannot be stopped */
		if (p->lookup && gai_cancel(&p->lookup->cb) != EAI_NOTCANCELED) {
			lookup_free(p->lookup);
		}
	}
	close(ps->ep);
	free(ps->probes);
	free(ps);
}

static const struct source_ops probe_ops = {
	.name = "probes",
	.read = probe_read,
	.get_fd = probe_get_fd,
	.dispatch = probe_dispatch,
	.destroy = probe_destroy,
};

/* An address literal is the probe's address from the start: no lookup ever. */
static void
init_probe(struct probe *p, const struct probe_config *cfg)
{
	p->cfg = *cfg;
	p->fd = -1;
	p->said = -1;
	p->icmp = cfg->port == 0;
	probe_window_init(&p->win, cfg->window);
	enum probe_host_kind kind = probe_host_kind(cfg->host);
	p->is_name = kind == PROBE_HOST_NAME;
	bool v6 = kind == PROBE_HOST_IPV6;
	if (p->icmp) {
		snprintf(p->target, sizeof(p->target), "%s, ICMP echo", cfg->host);
	} else {
		snprintf(p->target, sizeof(p->target), v6 ? "[%s]:%d" : "%s:%d", cfg->host, cfg->port);
	}
	if (kind == PROBE_HOST_IPV4) {
		struct sockaddr_in *a = (struct sockaddr_in *)&p->addr;
		a->sin_family = AF_INET;
		inet_pton(AF_INET, cfg->host, &a->sin_addr);
		p->addr_len = sizeof(*a);
	} else if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&p->addr;
		a->sin6_family = AF_INET6;
		inet_pton(AF_INET6, cfg->host, &a->sin6_addr);
		p->addr_len = sizeof(*a);
	}
	if (p->addr_len) {
		set_port(p);
	}
	if (p->icmp) {
		/* said at start, once, when the kernel will not let us */
		int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
		if (fd >= 0) {
			close(fd);
		} else if (errno == EACCES || errno == EPERM) {
			forbid(p);
		}
	}
}

int
probe_source_create(const struct host_probes *probes, struct source **out)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		return -errno;
	}
	struct probe_source *ps = xcalloc(1, sizeof(*ps));
	ps->base.ops = &probe_ops;
	ps->ep = ep;
	ps->probes = xcalloc(probes->count ? probes->count : 1, sizeof(*ps->probes));
	for (size_t i = 0; i < probes->count && i < PROBE_MAX; i++) {
		init_probe(&ps->probes[ps->count++], &probes->items[i]);
	}
	*out = &ps->base;
	return 0;
}
