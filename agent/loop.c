/*
 * The agent loop. One thread owns all state: each tick the sources fill a
 * sample, the throttle detector explains it, the sinks receive it. The
 * loop sleeps in poll() so fds of sources (a tegrastats pipe) and signals
 * (signalfd) wake it without extra threads.
 */
#include "agent.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "tegra/throttle.h"

#define MAX_SOURCES 8
#define MAX_SINKS 8

struct agent {
	struct agent_options opts;
	struct source *sources[MAX_SOURCES];
	int source_count;
	struct sink *sinks[MAX_SINKS];
	int sink_count;
	struct throttle_detector *throttle;
	struct sample *sample;
	uint64_t seq;
	uint64_t late_ticks;
	int (*reload)(void *data);
	void *reload_data;
	void (*decorate)(struct sample *s, void *data);
	void *decorate_data;
};

void
agent_set_decorate(struct agent *agent, void (*decorate)(struct sample *s, void *data), void *data)
{
	agent->decorate = decorate;
	agent->decorate_data = data;
}

void
agent_set_reload(struct agent *agent, int (*reload)(void *data), void *data)
{
	agent->reload = reload;
	agent->reload_data = data;
}

static int64_t
now_ms(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct agent *
agent_create(const struct agent_options *opts)
{
	struct agent *agent = calloc(1, sizeof(*agent));
	if (!agent) {
		abort();
	}
	agent->opts = *opts;
	if (agent->opts.interval_ms <= 0) {
		agent->opts.interval_ms = 1000;
	}
	agent->throttle = throttle_detector_create();
	agent->sample = calloc(1, sizeof(*agent->sample));
	if (!agent->sample) {
		abort();
	}
	return agent;
}

void
agent_destroy(struct agent *agent)
{
	if (!agent) {
		return;
	}
	for (int i = 0; i < agent->source_count; i++) {
		source_destroy(agent->sources[i]);
	}
	for (int i = 0; i < agent->sink_count; i++) {
		sink_destroy(agent->sinks[i]);
	}
	throttle_detector_destroy(agent->throttle);
	free(agent->sample);
	free(agent);
}

int
agent_add_source(struct agent *agent, struct source *src)
{
	if (agent->source_count == MAX_SOURCES) {
		return -ENOSPC;
	}
	agent->sources[agent->source_count++] = src;
	return 0;
}

int
agent_add_sink(struct agent *agent, struct sink *sink)
{
	if (agent->sink_count == MAX_SINKS) {
		return -ENOSPC;
	}
	agent->sinks[agent->sink_count++] = sink;
	return 0;
}

uint64_t
agent_sample_count(const struct agent *agent)
{
	return agent->seq;
}

/*
 * One tick. Returns 1 when a source is finished for good, else 0.
 */
static int
tick(struct agent *agent)
{
	struct sample *s = agent->sample;
	bool got = false, finished = false;

	sample_clear(s);
	s->time_ms = now_ms(CLOCK_REALTIME);
	for (int i = 0; i < agent->source_count; i++) {
		struct source *src = agent->sources[i];
		int r = src->ops->read(src, s);
		if (r == 0) {
			got = true;
		} else if (r == -ENODATA) {
			finished = true;
		} else if (r != -EAGAIN) {
			log_debug("source %s: %s", src->ops->name, strerror(-r));
		}
	}
	/* a replay that ended produced nothing this tick: no half sample */
	if (!got || finished) {
		return finished;
	}
	s->seq = ++agent->seq;
	throttle_detector_update(agent->throttle, s);
	metric_set_put(&s->metrics, "agent.samples_total", (double)agent->seq);
	metric_set_put(&s->metrics, "agent.late_ticks_total", (double)agent->late_ticks);
	if (agent->decorate) {
		agent->decorate(s, agent->decorate_data);
	}
	for (int i = 0; i < agent->sink_count; i++) {
		struct sink *sink = agent->sinks[i];
		int r = sink->ops->write(sink, s);
		if (r < 0) {
			log_debug("sink %s: %s", sink->ops->name, strerror(-r));
		}
	}
	return 0;
}

/* Housekeeping of sinks once per tick (reaping programs, reconnecting). */
static void
dispatch_sinks(struct agent *agent)
{
	for (int i = 0; i < agent->sink_count; i++) {
		struct sink *sink = agent->sinks[i];
		if (sink->ops->dispatch) {
			sink->ops->dispatch(sink);
		}
	}
}

/* The delay until the next tick: a pacing source wins over the interval. */
static int64_t
next_deadline(struct agent *agent, int64_t planned)
{
	int64_t now = now_ms(CLOCK_MONOTONIC);
	for (int i = 0; i < agent->source_count; i++) {
		struct source *src = agent->sources[i];
		if (src->ops->next_tick_ms) {
			int64_t d = src->ops->next_tick_ms(src);
			if (d >= 0) {
				return now + d;
			}
		}
	}
	if (planned < now) {
		/* we fell behind: count it and start again from now, no burst */
		agent->late_ticks++;
		return now + agent->opts.interval_ms;
	}
	return planned;
}

int
agent_run(struct agent *agent)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigset_t old;
	if (sigprocmask(SIG_BLOCK, &mask, &old) < 0) {
		return -errno;
	}
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		int e = errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -e;
	}

#ifdef __GLIBC__
	/* start-up (config parsing, probing) freed a lot: give it back before the long run */
	malloc_trim(0);
#endif
	int ret = 0;
	int64_t deadline = now_ms(CLOCK_MONOTONIC);
	int64_t last_dispatch = deadline;
	for (;;) {
		struct pollfd pfds[1 + MAX_SOURCES + MAX_SINKS];
		int owner[1 + MAX_SOURCES + MAX_SINKS]; /* >0 source i+1, <0 sink -(i+1) */
		int nfds = 0;
		pfds[nfds] = (struct pollfd){.fd = sfd, .events = POLLIN};
		owner[nfds++] = 0;
		for (int i = 0; i < agent->source_count; i++) {
			struct source *src = agent->sources[i];
			int fd = src->ops->get_fd ? src->ops->get_fd(src) : -1;
			if (fd >= 0) {
				pfds[nfds] = (struct pollfd){.fd = fd, .events = POLLIN};
				owner[nfds++] = i + 1;
			}
		}
		for (int i = 0; i < agent->sink_count; i++) {
			struct sink *sink = agent->sinks[i];
			int fd = sink->ops->get_fd ? sink->ops->get_fd(sink) : -1;
			if (fd >= 0) {
				short ev = sink->ops->poll_events ? sink->ops->poll_events(sink) : POLLIN;
				pfds[nfds] = (struct pollfd){.fd = fd, .events = ev};
				owner[nfds++] = -(i + 1);
			}
		}
		int64_t wait = deadline - now_ms(CLOCK_MONOTONIC);
		if (wait < 0) {
			wait = 0;
		}
		int n = poll(pfds, (nfds_t)nfds, (int)(wait > 1000 ? 1000 : wait));
		if (n < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		bool stop = false;
		for (int i = 0; n > 0 && i < nfds; i++) {
			if (!(pfds[i].revents & (POLLIN | POLLOUT | POLLHUP | POLLERR))) {
				continue;
			}
			if (owner[i] == 0) {
				struct signalfd_siginfo si;
				while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						if (agent->reload) {
							agent->reload(agent->reload_data);
						}
					} else {
						stop = true;
					}
				}
			} else if (owner[i] > 0) {
				struct source *src = agent->sources[owner[i] - 1];
				src->ops->dispatch(src);
			} else {
				struct sink *sink = agent->sinks[-owner[i] - 1];
				sink->ops->dispatch(sink);
			}
		}
		if (stop) {
			break;
		}
		int64_t now = now_ms(CLOCK_MONOTONIC);
		if (now < deadline) {
			/* long intervals: sinks still get their housekeeping (keepalive, reconnect) each second */
			if (now - last_dispatch >= 1000) {
				dispatch_sinks(agent);
				last_dispatch = now;
			}
			continue;
		}
		int finished = tick(agent);
		dispatch_sinks(agent);
		last_dispatch = now_ms(CLOCK_MONOTONIC);
		if (finished) {
			break;
		}
		if (agent->opts.max_samples && agent->seq >= agent->opts.max_samples) {
			break;
		}
		deadline = next_deadline(agent, deadline + agent->opts.interval_ms);
	}
	close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}
