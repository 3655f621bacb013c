/*
 * The agent's memory budget: what its buffers may hold at most, summed
 * from the sizes each module reports for its own settings (web history,
 * the MQTT spool, webhook queues) plus a fixed base, against a limit
 * (agent.memory_max: a size, "none", or "auto" = the cgroup's memory.max).
 * The configuration loader sums the parts (agent/config_memory.c) and
 * refuses a budget over the limit, `run` states it at start and reports it
 * in the metrics. docs/configuration.md gives the formula and the
 * measurements behind it.
 */
#ifndef TEGRAWATCH_MEMORY_BUDGET_H
#define TEGRAWATCH_MEMORY_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline.h"

/* The agent without its buffers: measured 1.9-2.3 MiB RssAnon on the demo, doubled for stacks and slack. */
#define MEMORY_BASE_BYTES (4u * 1024u * 1024u)

struct memory_budget {
	uint64_t base;
	uint64_t web;      /* history and connections */
	uint64_t mqtt;     /* the spool in memory and the messages in flight */
	uint64_t webhooks; /* every webhook action's queue */
	uint64_t fleet;    /* the remote_write and otlp spools in memory and a request each */
	uint64_t total;
	uint64_t limit;   /* bytes; 0 = none */
	bool from_cgroup; /* the limit is the cgroup's memory.max (agent.memory_max: auto) */
};

/**
 * Parses agent.memory_max: "auto", "none", or a size in bytes with an
 * optional K, M, G or T (powers of 1024, as systemd's MemoryMax=). Sets
 * *BYTES (0 for none) and *AUTO_LIMIT. Returns 0 or -EINVAL.
 */
int memory_max_parse(const char *text, uint64_t *bytes, bool *auto_limit);

/** The breakdown in MiB, as the log line and the loader's message say it. */
void memory_budget_describe(const struct memory_budget *b, char *buf, size_t size);

/** Logs the breakdown at info level (at start). */
void memory_budget_log(const struct memory_budget *b);

/** A sink that adds agent.memory_budget_bytes (and its parts) and agent.memory_max_bytes to every sample. */
struct sink *memory_budget_sink_create(const struct memory_budget *b);

#endif
