/* systemd's notify protocol as a stage: the only libsystemd user. */
#include "service.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/xalloc.h"
#include "build_config.h"

#if HAVE_SYSTEMD
#include <systemd/sd-daemon.h>

struct service {
	struct stage base;
	bool ready;
	bool reloading;
	int64_t watchdog_ms; /* ping interval: half of WATCHDOG_USEC; 0 = no watchdog */
	int64_t last_ping_ms;
	double late_ticks; /* agent.late_ticks_total of the previous sample */
};

static void
tell(const char *state)
{
	int r = sd_notify(0, state);
	if (r < 0) {
		log_warn("cannot notify the service manager (%s): %d", state, r);
	}
}

static int
service_process(struct stage *st, struct sample *s)
{
	struct service *sv = (struct service *)st;
	if (!sv->ready || sv->reloading) {
		tell("READY=1\nSTATUS=sampling");
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
		tell("WATCHDOG=1");
		sv->last_ping_ms = now;
	}
	return 0;
}

static int
service_reload(struct stage *st)
{
	struct service *sv = (struct service *)st;
	char msg[64];
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%lld", (long long)clock_ms(CLOCK_MONOTONIC) * 1000);
	tell(msg);
	sv->reloading = true;
	return 0;
}

static void
service_reloaded(struct stage *st)
{
	struct service *sv = (struct service *)st;
	if (sv->reloading) {
		tell("READY=1\nSTATUS=sampling");
		sv->reloading = false;
	}
}

static void
service_destroy(struct stage *st)
{
	tell("STOPPING=1");
	free(st);
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
	if (!getenv("NOTIFY_SOCKET")) {
		return NULL;
	}
	struct service *sv = xcalloc(1, sizeof(*sv));
	sv->base.ops = &service_ops;
	uint64_t usec = 0;
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
		sv->watchdog_ms = (int64_t)(usec / 2000);
		if (sv->watchdog_ms < 1) {
			sv->watchdog_ms = 1;
		}
	}
	sv->last_ping_ms = monotonic_ms() - sv->watchdog_ms;
	return &sv->base;
}

#else

struct stage *
service_stage_create(void)
{
	if (getenv("NOTIFY_SOCKET")) {
		log_info("built without libsystemd: the service manager is not notified");
	}
	return NULL;
}

#endif
