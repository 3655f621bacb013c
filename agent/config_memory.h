/*
 * The memory budget of a configuration (core/memory_budget.h): the loader
 * sums what each module reports for its own settings (web history, the
 * MQTT spool, webhook queues, the fleet spools) plus a fixed base, and
 * refuses a budget over agent.memory_max.
 */
#ifndef TEGRAWATCH_CONFIG_MEMORY_H
#define TEGRAWATCH_CONFIG_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "core/cfg_tree.h"
#include "core/diag.h"
#include "core/memory_budget.h"

/** The budget of CFG when sampling every INTERVAL_MS; the limit is CFG's (resolved by the loader). */
void config_memory_budget(const struct config *cfg, int64_t interval_ms, struct memory_budget *out);

/**
 * The loader's cross-section step: resolves agent.memory_max into
 * cfg->memory_limit and refuses a budget over it, located at the setting
 * that costs the most (web.history, mqtt.spool_records) or agent.memory_max.
 */
void config_memory_validate(struct config *cfg, const struct cfg_node *root, const char *path, bool env,
			    struct diag_list *diags);

#endif
