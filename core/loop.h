/*
 * The agent's loop (struct agent, agent_*()): ticks the sources on a timer
 * (or at the pace a replay sets) and drives each sample through the stages to the sinks
 * (the order is in pipeline.h). Single-threaded; sources and sinks with
 * fds are polled.
 */
#ifndef TEGRAWATCH_LOOP_H
#define TEGRAWATCH_LOOP_H

#include <stdint.h>

#include "pipeline.h"

struct agent_options {
	int interval_ms;      /* default tick, e.g. 1000 */
	uint64_t max_samples; /* stop after this many samples; 0 = run until told */
};

struct agent;

/** Creates an agent with no source, stage or sink. Cannot fail (aborts on OOM). */
struct agent *agent_create(const struct agent_options *opts);
/** Frees the agent with its sources, stages and sinks; NULL is a no-op. */
void agent_destroy(struct agent *agent);

/**
 * Adds SRC, ST or SINK, owned by the agent from then on (also when adding
 * fails: it is destroyed). Sources are read and stages run in the order
 * added; sinks are independent of each other. Returns 0 or -ENOSPC.
 */
int agent_add_source(struct agent *agent, struct source *src);
int agent_add_stage(struct agent *agent, struct stage *st);
int agent_add_sink(struct agent *agent, struct sink *sink);

/** One tick now, without the loop (tests): 1 when a source is finished for good, else 0. */
int agent_tick(struct agent *agent);

/**
 * Runs until SIGINT/SIGTERM, until a source is finished (end of a replay)
 * or until max_samples. SIGHUP calls every stage's reload. Returns 0, or
 * -errno when the loop itself failed.
 */
int agent_run(struct agent *agent);

/** Samples produced so far. */
uint64_t agent_sample_count(const struct agent *agent);

#endif
