/*
 * The agent's memory budget: what its buffers may hold at most, summed
 * from the sizes each module reports for its own settings (web history,
 * the MQTT spool, webhook queues) plus a fixed base, against a limit
 * (agent.memory_max: a size, "none", or "auto" = the cgroup's memory.max).
 * The configuration loader refuses a budget over the limit, `run` states
 * it at start and reports it in the metrics. docs/configuration.md gives
 * the formula and the measurements behind it.
 */
#ifndef TEGRAWATCH_MEMORY_BUDGET_H
#define TEGRAWATCH_MEMORY_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cfg_tree.h"
#include "core/diag.h"
#include "core/pipeline.h"
#include "config.h"

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

/** The budget of CFG when sampling every INTERVAL_MS; the limit is CFG's (resolved by the loader). */
void memory_budget_compute(const struct config *cfg, int64_t interval_ms, struct memory_budget *out);

/**
 * The loader's cross-section step: resolves agent.memory_max into
 * cfg->memory_limit and refuses a budget over it, located at the setting
 * that costs the most (web.history, mqtt.spool_records) or agent.memory_max.
 */
void memory_budget_validate(struct config *cfg, const struct cfg_node *root, const char *path, bool env,
			    struct diag_list *diags);

/** Logs the breakdown at info level (at start). */
void memory_budget_log(const struct memory_budget *b);

/** A sink that adds agent.memory_budget_bytes (and its parts) and agent.memory_max_bytes to every sample. */
struct sink *memory_budget_sink_create(const struct memory_budget *b);

#endif
