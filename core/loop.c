/*
 * The agent loop. One thread owns all state: each tick the sources fill a
 * sample, the stages process it, the sinks receive it (pipeline.h). The
 * loop sleeps in poll() so fds of sources (a tegrastats pipe) and signals
 * (signalfd) wake it without extra threads.
 */
#include "loop.h"

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

#include "clock.h"
#include "log.h"
#include "metrics_text.h"
#include "xalloc.h"

/* work, sysfs, hwmon, host, probes, boot, NVML, tegrastats, and room for more */
#define MAX_SOURCES 12
#define MAX_STAGES 10
#define MAX_SINKS 8

struct agent {
	struct agent_options opts;
	struct source *sources[MAX_SOURCES];
	int source_count;
	struct stage *stages[MAX_STAGES];
	int stage_count;
	struct sink *sinks[MAX_SINKS];
	int sink_count;
	struct alert_fanout fanout; /* to every stage's and sink's notify */
	struct sample *sample;
	uint64_t seq;
	uint64_t late_ticks;
	struct clock_watch clock; /* steps of the wall clock between samples */
	uint64_t clock_steps;
	bool started; /* the stages replayed their active alerts */
};

static void
fan_out(void *data, const struct alert_event *ev)
{
	struct agent *agent = data;
	for (int i = 0; i < agent->stage_count; i++) {
		struct stage *st = agent->stages[i];
		if (st->ops->notify) {
			st->ops->notify(st, ev);
		}
	}
	for (int i = 0; i < agent->sink_count; i++) {
		struct sink *sink = agent->sinks[i];
		if (sink->ops->notify) {
			sink->ops->notify(sink, ev);
		}
	}
}

struct agent *
agent_create(const struct agent_options *opts)
{
	struct agent *agent = xcalloc(1, sizeof(*agent));
	agent->opts = *opts;
	if (agent->opts.interval_ms <= 0) {
		agent->opts.interval_ms = 1000;
	}
	agent->fanout = (struct alert_fanout){.emit = fan_out, .data = agent};
	agent->sample = xcalloc(1, sizeof(*agent->sample));
	agent->sample->text = metrics_text_create();
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
	for (int i = 0; i < agent->stage_count; i++) {
		stage_destroy(agent->stages[i]);
	}
	for (int i = 0; i < agent->sink_count; i++) {
		sink_destroy(agent->sinks[i]);
	}
	metrics_text_destroy(agent->sample->text);
	free(agent->sample);
	free(agent);
}

int
agent_add_source(struct agent *agent, struct source *src)
{
	if (agent->source_count == MAX_SOURCES) {
		/* a composition with more than the loop holds: said, never a silent loss */
		log_msg(LOG_ERROR, "internal: more than %d sources; source %s left out (core/loop.c MAX_SOURCES)",
			MAX_SOURCES, src->ops->name);
		source_destroy(src);
		return -ENOSPC;
	}
	agent->sources[agent->source_count++] = src;
	return 0;
}

int
agent_add_sink(struct agent *agent, struct sink *sink)
{
	if (agent->sink_count == MAX_SINKS) {
		/* a composition with more than the loop holds: said, never a silent loss */
		log_msg(LOG_ERROR, "internal: more than %d sinks; sink %s left out (core/loop.c MAX_SINKS)", MAX_SINKS,
			sink->ops->name);
		sink_destroy(sink);
		return -ENOSPC;
	}
	agent->sinks[agent->sink_count++] = sink;
	return 0;
}

int
agent_add_stage(struct agent *agent, struct stage *st)
{
	if (agent->stage_count == MAX_STAGES) {
		/* a composition with more than the loop holds: said, never a silent loss */
		log_msg(LOG_ERROR, "internal: more than %d stages; stage %s left out (core/loop.c MAX_STAGES)",
			MAX_STAGES, st->ops->name);
		stage_destroy(st);
		return -ENOSPC;
	}
	st->out = &agent->fanout;
	agent->stages[agent->stage_count++] = st;
	return 0;
}

uint64_t
agent_sample_count(const struct agent *agent)
{
	return agent->seq;
}

/* Once, before the first tick: alerts restored at start reach the stages and sinks as active. */
static void
start(struct agent *agent)
{
	agent->started = true;
	for (int i = 0; i < agent->stage_count; i++) {
		struct stage *st = agent->stages[i];
		if (st->ops->replay_active) {
			st->ops->replay_active(st);
		}
	}
}

/*
 * A step of the wall clock is marked on the sample that sees it, counted
 * and logged once: durations do not follow it (they come from mono_ms),
 * the stamps do.
 */
static void
note_clock_step(struct agent *agent, struct sample *s)
{
	s->clock_step_ms = clock_watch_step(&agent->clock, s->time_ms, s->mono_ms);
	if (s->clock_step_ms == 0) {
		return;
	}
	agent->clock_steps++;
	log_warn("the wall clock stepped %s%.3f s (sample %llu); durations and timers are not affected",
		 s->clock_step_ms > 0 ? "forward " : "back ", (double)llabs(s->clock_step_ms) / 1000.0,
		 (unsigned long long)s->seq);
}

int
agent_tick(struct agent *agent)
{
	struct sample *s = agent->sample;
	bool got = false, finished = false;

	if (!agent->started) {
		start(agent);
	}
	sample_clear(s);
	s->time_ms = clock_wall_ms();
	s->mono_ms = monotonic_ms(); /* a replay's source sets both from the recording */
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
	note_clock_step(agent, s);
	metric_set_put(&s->metrics, "agent.samples_total", (double)agent->seq);
	metric_set_put(&s->metrics, "agent.late_ticks_total", (double)agent->late_ticks);
	metric_set_put(&s->metrics, "agent.clock_steps_total", (double)agent->clock_steps);
	for (int i = 0; i < agent->sink_count; i++) {
		struct sink *sink = agent->sinks[i];
		if (sink->ops->add_metrics) {
			sink->ops->add_metrics(sink, &s->metrics);
		}
	}
	for (int i = 0; i < agent->stage_count; i++) {
		struct stage *st = agent->stages[i];
		int r = st->ops->process ? st->ops->process(st, s) : 0;
		if (r < 0) {
			log_debug("stage %s: %s", st->ops->name, strerror(-r));
		}
		if (st->ops->add_metrics) {
			st->ops->add_metrics(st, &s->metrics);
		}
	}
	/* final from here on: the first sink that writes the metrics as JSON formats them for all */
	metrics_text_seal(s->text);
	for (int i = 0; i < agent->sink_count; i++) {
		struct sink *sink = agent->sinks[i];
		if (!sink->ops->write) {
			continue;
		}
		int r = sink->ops->write(sink, s);
		if (r < 0) {
			log_debug("sink %s: %s", sink->ops->name, strerror(-r));
		}
	}
	return 0;
}

/* SIGHUP: every stage that can reload does. */
static void
reload(struct agent *agent)
{
	for (int i = 0; i < agent->stage_count; i++) {
		struct stage *st = agent->stages[i];
		if (st->ops->reload) {
			st->ops->reload(st);
		}
	}
	for (int i = 0; i < agent->stage_count; i++) {
		struct stage *st = agent->stages[i];
		if (st->ops->reloaded) {
			st->ops->reloaded(st);
		}
	}
}

/* Housekeeping of stages and sinks once per tick (reaping programs, reconnecting). */
static void
dispatch_all(struct agent *agent)
{
	for (int i = 0; i < agent->stage_count; i++) {
		struct stage *st = agent->stages[i];
		if (st->ops->dispatch) {
			st->ops->dispatch(st);
		}
	}
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
	int64_t now = monotonic_ms();
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
	int64_t deadline = monotonic_ms();
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
		int64_t wait = deadline - monotonic_ms();
		if (wait < 0) {
			wait = 0;
		}
		int n = poll(pfds, (nfds_t)nfds, (int)clock_poll_ms(wait > 1000 ? 1000 : wait));
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
						reload(agent);
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
		int64_t now = monotonic_ms();
		if (now < deadline) {
			/* long intervals: sinks still get their housekeeping (keepalive, reconnect) each second */
			if (now - last_dispatch >= 1000) {
				dispatch_all(agent);
				last_dispatch = now;
			}
			continue;
		}
		int finished = agent_tick(agent);
		dispatch_all(agent);
		last_dispatch = monotonic_ms();
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
