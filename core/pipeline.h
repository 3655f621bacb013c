/*
 * The pipeline: sources fill a sample, stages process it in order, sinks
 * take it. Three small vtables driven by one loop (core/loop.c);
 * the core reaches every module only through these ops.
 *
 * One tick, in order:
 *   1. the sample is cleared and stamped; every source reads into it;
 *   2. the agent adds its own counters (agent.samples_total, ...) and each
 *      sink's add_metrics (its state before this tick: connected, queued),
 *      so the rules can watch them;
 *   3. each stage processes the sample (throttle, then rules), and adds its
 *      own counters right after (agent.alerts_firing counts this tick's
 *      alerts); every alert event a stage emits goes at once to the notify
 *      op of every stage and every sink that has one (one fan-out: the
 *      alert actions, stages after the rules, hear what the sinks hear);
 *   4. every sink writes the finished sample.
 * Every object is owned by the agent once added and destroyed by it, in
 * any order: nothing here points at another pipeline object.
 */
#ifndef TEGRAWATCH_PIPELINE_H
#define TEGRAWATCH_PIPELINE_H

#include <stdint.h>

#include "alert.h"
#include "sample.h"

struct source;

struct source_ops {
	const char *name;
	/*
	 * Adds this source's metrics for the current tick to SAMPLE.
	 * Returns 0, -EAGAIN when it has nothing new this tick, -ENODATA when
	 * it is finished for good (end of a replay), or another -errno.
	 */
	int (*read)(struct source *src, struct sample *sample);
	/* Optional: fd the loop polls for input, or -1. */
	int (*get_fd)(struct source *src);
	/* Optional: called when get_fd() is readable. 0 or -errno. */
	int (*dispatch)(struct source *src);
	/*
	 * Optional: milliseconds until this source wants the next tick, for
	 * sources that set the pace (replays); -1 to follow the interval.
	 */
	int64_t (*next_tick_ms)(struct source *src);
	void (*destroy)(struct source *src);
};

struct source {
	const struct source_ops *ops;
};

/* Where a stage sends its alert events: every stage and sink with a notify op. */
struct alert_fanout {
	void (*emit)(void *data, const struct alert_event *ev);
	void *data;
};

static inline void
alert_fanout_emit(const struct alert_fanout *out, const struct alert_event *ev)
{
	out->emit(out->data, ev);
}

struct stage;

struct stage_ops {
	const char *name;
	/*
	 * Optional: processes SAMPLE in place (adds derived metrics and state); alert events go to st->out.
	 * 0 or -errno. Without it a stage only listens (the alert actions: notify, add_metrics, dispatch).
	 */
	int (*process)(struct stage *st, struct sample *sample);
	/* Optional: adds the stage's counters, right after process(). */
	void (*add_metrics)(struct stage *st, struct metric_set *m);
	/* Optional: once before the first tick, emits the alerts already active (ev->restored set). */
	void (*replay_active)(struct stage *st);
	/* Optional: takes every alert event, as a sink's notify does (the alert actions); never blocks. */
	void (*notify)(struct stage *st, const struct alert_event *ev);
	/* Optional: housekeeping about once a second and after each tick (reaping programs). */
	int (*dispatch)(struct stage *st);
	/* Optional: SIGHUP. Alert events of the reload (rules removed) go to st->out. 0 or -errno. */
	int (*reload)(struct stage *st);
	/* Optional: after every stage's reload (a reload is announced before and done after). */
	void (*reloaded)(struct stage *st);
	void (*destroy)(struct stage *st);
};

struct stage {
	const struct stage_ops *ops;
	const struct alert_fanout *out; /* where its alert events go: set by agent_add_stage(), for good */
};

struct sink;

struct sink_ops {
	const char *name;
	/* Optional: takes one finished sample. 0 or -errno; never blocks long. */
	int (*write)(struct sink *sink, const struct sample *sample);
	/* Optional: takes one alert event, as it happens (never blocks). */
	void (*notify)(struct sink *sink, const struct alert_event *ev);
	/* Optional: adds the sink's counters to the sample before the stages see it. */
	void (*add_metrics)(struct sink *sink, struct metric_set *m);
	/* Optional: fd the loop polls, or -1. */
	int (*get_fd)(struct sink *sink);
	/* Optional: called when get_fd() is ready and about once a second. */
	int (*dispatch)(struct sink *sink);
	/* Optional: poll() events wanted on get_fd() (POLLIN | POLLOUT); POLLIN without it. */
	short (*poll_events)(struct sink *sink);
	void (*destroy)(struct sink *sink);
};

struct sink {
	const struct sink_ops *ops;
};

/** Destroy helpers; NULL is a no-op. */
static inline void
source_destroy(struct source *src)
{
	if (src) {
		src->ops->destroy(src);
	}
}

static inline void
stage_destroy(struct stage *st)
{
	if (st) {
		st->ops->destroy(st);
	}
}

static inline void
sink_destroy(struct sink *sink)
{
	if (sink) {
		sink->ops->destroy(sink);
	}
}

#endif
