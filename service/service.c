/*
 * systemd's notify protocol as a stage, spoken directly as sd_notify(3)
 * documents it for programs that do not link libsystemd: one datagram of
 * "KEY=VALUE" lines to the AF_UNIX socket NOTIFY_SOCKET names, a path or
 * "@name" in the abstract namespace. No library: libsystemd and what it
 * loads (libgcrypt, liblzma, liblz4, libzstd, libcap...) cost ~140 KiB of RssAnon for
 * a few datagrams (bench/README.md).
 */
#include "service.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/xalloc.h"

struct service {
	struct stage base;
	int fd;
	struct sockaddr_un addr; /* NOTIFY_SOCKET */
	socklen_t addr_len;
	bool ready;
	bool reloading;
	int64_t watchdog_ms; /* ping interval: half of WATCHDOG_USEC; 0 = no watchdog */
	int64_t last_ping_ms;
	double late_ticks; /* agent.late_ticks_total of the previous sample */
};

static void
tell(struct service *sv, const char *state)
{
	if (sendto(sv->fd, state, strlen(state), MSG_NOSIGNAL, (const struct sockaddr *)&sv->addr, sv->addr_len) < 0) {
		log_warn("cannot notify the service manager (%s): %s", state, strerror(errno));
	}
}

/*
 * The socket NOTIFY_SOCKET names: 0, -EAFNOSUPPORT for a kind not spoken
 * here (vsock:...), or -ENAMETOOLONG.
 */
static int
notify_address(const char *name, struct sockaddr_un *addr, socklen_t *len)
{
	size_t n = strlen(name);
	if (name[0] != '/' && name[0] != '@') {
		return -EAFNOSUPPORT;
	}
	if (n >= sizeof(addr->sun_path)) {
		return -ENAMETOOLONG;
	}
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	memcpy(addr->sun_path, name, n);
	if (name[0] == '@') {
		/* abstract: a NUL first, and the length counts the name only, no NUL after it */
		addr->sun_path[0] = '\0';
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else {
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	}
	return 0;
}

/* Half of WATCHDOG_USEC when the watchdog is meant for this process (WATCHDOG_PID unset or ours), else 0. */
static int64_t
watchdog_ping_ms(void)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	if (!usec || (pid && strtoll(pid, NULL, 10) != (long long)getpid())) {
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(usec, &end, 10);
	if (errno || end == usec || *end || v == 0) {
		return 0;
	}
	int64_t ms = (int64_t)(v / 2000);
	return ms < 1 ? 1 : ms;
}

static int
service_process(struct stage *st, struct sample *s)
{
	struct service *sv = (struct service *)st;
	if (!sv->ready || sv->reloading) {
		tell(sv, "READY=1\nSTATUS=sampling");
		sv->ready = true;
		sv->reloading = false;
	}
	double late = 0;
	metric_set_get(&s->metrics, "agent.late_ticks_total", &late);
	bool on_time = late <= sv->late_ticks;
	sv->late_ticks = late;
	int64_t now = monotonic_ms();
	/* a tick that fell behind does not count as proof of life */
	if (sv->watchdog_ms && on_time && now - sv->last_ping_ms >= sv->watchdog_ms) {
		tell(sv, "WATCHDOG=1");
		sv->last_ping_ms = now;
	}
	return 0;
}

static int
service_reload(struct stage *st)
{
	struct service *sv = (struct service *)st;
	char msg[64];
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%lld", (long long)monotonic_ms() * 1000);
	tell(sv, msg);
	sv->reloading = true;
	return 0;
}

static void
service_reloaded(struct stage *st)
{
	struct service *sv = (struct service *)st;
	if (sv->reloading) {
		tell(sv, "READY=1\nSTATUS=sampling");
		sv->reloading = false;
	}
}

static void
service_destroy(struct stage *st)
{
	struct service *sv = (struct service *)st;
	tell(sv, "STOPPING=1");
	close(sv->fd);
	free(sv);
}

static const struct stage_ops service_ops = {
	.name = "service",
	.process = service_process,
	.reload = service_reload,
	.reloaded = service_reloaded,
	.destroy = service_destroy,
};

struct stage *
service_stage_create(void)
{
	const char *name = getenv("NOTIFY_SOCKET");
	if (!name) {
		return NULL;
	}
	struct sockaddr_un addr;
	socklen_t len;
	int r = notify_address(name, &addr, &len);
	if (r < 0) {
		log_warn("NOTIFY_SOCKET=%s: %s: the service manager is not notified", name, strerror(-r));
		return NULL;
	}
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		log_warn("cannot open a socket to notify the service manager: %s", strerror(errno));
		return NULL;
	}
	struct service *sv = xcalloc(1, sizeof(*sv));
	sv->base.ops = &service_ops;
	sv->fd = fd;
	sv->addr = addr;
	sv->addr_len = len;
	sv->watchdog_ms = watchdog_ping_ms();
	sv->last_ping_ms = monotonic_ms() - sv->watchdog_ms;
	return &sv->base;
}
