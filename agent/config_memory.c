/*
 * The memory budget across sections (config_memory.h): each module's size
 * for its settings summed, and the loader's check against agent.memory_max.
 */
#include "config_memory.h"

#include <inttypes.h>
#include <stdio.h>

#include "core/cfg_decode.h"
#include "core/cgroup_memory.h"
#include "mqtt/mqtt_config.h"
#include "web/web_config.h"
#include "webhook/webhook_config.h"

#define MIB (1024.0 * 1024.0)

void
config_memory_budget(const struct config *cfg, int64_t interval_ms, struct memory_budget *out)
{
	struct memory_budget b = {
		.base = MEMORY_BASE_BYTES,
		.web = web_config_memory_bytes(&cfg->web, interval_ms),
		.mqtt = mqtt_config_memory_bytes(&cfg->mqtt, interval_ms),
		.fleet = fleet_config_memory_bytes(&cfg->remote_write, interval_ms) +
			 fleet_config_memory_bytes(&cfg->otlp, interval_ms),
		.limit = cfg->memory_limit,
		.from_cgroup = cfg->memory_limit_cgroup,
	};
	for (size_t i = 0; i < cfg->action_count; i++) {
		if (cfg->actions[i].type == ACTION_WEBHOOK) {
			b.webhooks += webhook_config_memory_bytes(&cfg->actions[i].webhook);
		}
	}
	b.total = b.base + b.web + b.mqtt + b.webhooks + b.fleet;
	*out = b;
}

static struct cfg_place
place_of(const struct cfg_node *root, const char *section, const char *path, bool env)
{
	const struct cfg_node *map = root && root->type == CFG_MAP ? cfg_map_get(root, section) : NULL;
	return (struct cfg_place){
		.section = section,
		.map = map && map->type == CFG_MAP ? map : NULL,
		.file = path,
		.environment = env,
	};
}

void
config_memory_validate(struct config *cfg, const struct cfg_node *root, const char *path, bool env,
		       struct diag_list *diags)
{
	struct cfg_place agent = place_of(root, "agent", path, env);
	uint64_t bytes;
	bool auto_limit;
	if (memory_max_parse(cfg->memory_max, &bytes, &auto_limit) < 0) {
		cfg_report_key(diags, &agent, "memory_max",
			       "agent.memory_max: expected a size like 64M or 1G (K, M, G, T are powers of 1024), "
			       "none or auto, got '%s'",
			       cfg->memory_max);
		return;
	}
	cfg->memory_limit = auto_limit ? cgroup_memory_limit("") : bytes;
	cfg->memory_limit_cgroup = auto_limit && cfg->memory_limit > 0;
	struct memory_budget b;
	config_memory_budget(cfg, cfg->interval_ms, &b);
	if (b.limit == 0 || b.total <= b.limit) {
		return;
	}
	/* point at the setting that costs the most */
	struct cfg_place place = agent;
	const char *key = "memory_max", *name = "agent.memory_max";
	if (b.fleet > b.web && b.fleet > b.mqtt && b.fleet > b.webhooks) {
		bool rw = cfg->remote_write.url[0] != '\0';
		place = place_of(root, rw ? "remote_write" : "otlp", path, env);
		key = "spool_records";
		name = rw ? "remote_write.spool_records" : "otlp.spool_records";
	} else if (b.web >= b.mqtt && b.web >= b.webhooks) {
		place = place_of(root, "web", path, env);
		key = "history";
		name = "web.history";
	} else if (b.mqtt >= b.webhooks) {
		place = place_of(root, "mqtt", path, env);
		bool file = cfg->mqtt.spool_file[0] != '\0';
		key = file ? "inflight" : "spool_records";
		name = file ? "mqtt.inflight" : "mqtt.spool_records";
	}
	char text[320];
	memory_budget_describe(&b, text, sizeof(text));
	cfg_report_key(
		diags, &place, key,
		"%s: the memory budget, %s, exceeds agent.memory_max, %.1f MiB%s: shorten web.history or "
		"web.minute_history or lengthen agent.interval, lower mqtt.spool_records (or set mqtt.spool_file) or webhook "
		"queue_max, or raise the limit",
		name, text, (double)b.limit / MIB, b.from_cgroup ? " (the cgroup's memory.max)" : "");
}
