/*
 * The agent: one loop that ticks the sources on a timer (or at the pace a
 * replay sets), derives the throttle state and hands each sample to the
 * sinks. Single-threaded; sources and sinks with fds are polled.
 */
#ifndef TEGRAWATCH_AGENT_H
#define TEGRAWATCH_AGENT_H

#include <stdint.h>

#include "sink.h"
#include "source.h"

struct agent_options {
	int interval_ms;      /* default tick, e.g. 1000 */
	uint64_t max_samples; /* stop after this many samples; 0 = run until told */
};

struct agent;

struct agent *agent_create(const struct agent_options *opts);
/** Frees the agent with its sources and sinks; NULL is a no-op. */
void agent_destroy(struct agent *agent);

/** Adds SRC (owned by the agent from now on). Sources are read in the order added. */
int agent_add_source(struct agent *agent, struct source *src);
/** Adds SINK (owned by the agent from now on). */
int agent_add_sink(struct agent *agent, struct sink *sink);

/**
 * Runs until SIGINT/SIGTERM, until a source is finished (end of a replay)
 * or until max_samples. Returns 0, or -errno when the loop itself failed.
 */
int agent_run(struct agent *agent);

/** Sets what SIGHUP does (reload the configuration). Without it SIGHUP is ignored. */
void agent_set_reload(struct agent *agent, int (*reload)(void *data), void *data);

/**
 * Sets a function that adds the agent's own metrics (reload failures,
 * firing alerts, ...) to each sample before the sinks see it.
 */
void agent_set_decorate(struct agent *agent, void (*decorate)(struct sample *s, void *data), void *data);

/** Samples produced so far. */
uint64_t agent_sample_count(const struct agent *agent);

#endif
