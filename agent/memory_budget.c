/* The memory budget (see memory_budget.h): sizes from each module, a limit, a check, a log line, metrics. */
#include "memory_budget.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_memory.h"
#include "core/cfg_decode.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/xalloc.h"
#include "mqtt/mqtt_config.h"
#include "webhook/webhook_config.h"
#include "web/web_config.h"

#define MIB (1024.0 * 1024.0)

/*
 * Parses agent.memory_max: "auto", "none", or a size in bytes with an
 * optional K, M, G or T (powers of 1024, as systemd's MemoryMax=). Sets
 * *BYTES (0 for none) and *AUTO. Returns 0 or -EINVAL.
 */
static int
memory_max_parse(const char *text, uint64_t *bytes, bool *auto_limit)
{
	if (!text || strcmp(text, "auto") == 0 || text[0] == '\0') {
		*bytes = 0;
		*auto_limit = true;
		return 0;
	}
	if (strcmp(text, "none") == 0 || strcmp(text, "max") == 0) {
		*bytes = 0;
		*auto_limit = false;
		return 0;
	}
	if (!isdigit((unsigned char)text[0])) {
		return -EINVAL;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	unsigned shift = 0;
	switch (*end) {
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		break;
	}
	end += shift ? 1 : 0;
	if (shift && strcmp(end, "iB") == 0) {
		end += 2;
	}
	if (errno || *end || (shift && v > (UINT64_MAX >> shift))) {
		return -EINVAL;
	}
	*bytes = (uint64_t)v << shift;
	*auto_limit = false;
	return 0;
}

void
memory_budget_compute(const struct config *cfg, int64_t interval_ms, struct memory_budget *out)
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

static void
describe(const struct memory_budget *b, char *buf, size_t size)
{
	char fleet[64] = "";
	if (b->fleet) {
		snprintf(fleet, sizeof(fleet), ", remote_write and otlp spools %.1f", (double)b->fleet / MIB);
	}
	snprintf(buf, size,
		 "%.1f MiB (base %.1f, web history and connections %.1f, MQTT spool and messages in flight %.1f, "
		 "webhook queues %.1f%s)",
		 (double)b->total / MIB, (double)b->base / MIB, (double)b->web / MIB, (double)b->mqtt / MIB,
		 (double)b->webhooks / MIB, fleet);
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
memory_budget_validate(struct config *cfg, const struct cfg_node *root, const char *path, bool env,
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
	memory_budget_compute(cfg, cfg->interval_ms, &b);
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
	describe(&b, text, sizeof(text));
	cfg_report_key(
		diags, &place, key,
		"%s: the memory budget, %s, exceeds agent.memory_max, %.1f MiB%s: shorten web.history or "
		"web.minute_history or lengthen agent.interval, lower mqtt.spool_records (or set mqtt.spool_file) or webhook "
		"queue_max, or raise the limit",
		name, text, (double)b.limit / MIB, b.from_cgroup ? " (the cgroup's memory.max)" : "");
}

void
memory_budget_log(const struct memory_budget *b)
{
	char text[320];
	describe(b, text, sizeof(text));
	if (b->limit) {
		log_info("memory budget: %s of %.1f MiB (agent.memory_max%s)", text, (double)b->limit / MIB,
			 b->from_cgroup ? ": the cgroup's memory.max" : "");
	} else {
		log_info("memory budget: %s; no limit (agent.memory_max, or the cgroup's memory.max)", text);
	}
}

/* ---- the metrics ---- */

struct budget_sink {
	struct sink base;
	struct memory_budget b;
};

static void
budget_add_metrics(struct sink *sink, struct metric_set *m)
{
	const struct memory_budget *b = &((struct budget_sink *)sink)->b;
	metric_set_put(m, "agent.memory_budget_bytes", (double)b->total);
	metric_set_put(m, "agent.memory_budget_web_bytes", (double)b->web);
	metric_set_put(m, "agent.memory_budget_mqtt_bytes", (double)b->mqtt);
	metric_set_put(m, "agent.memory_budget_webhooks_bytes", (double)b->webhooks);
	metric_set_put(m, "agent.memory_budget_fleet_bytes", (double)b->fleet);
	metric_set_put(m, "agent.memory_max_bytes", (double)b->limit);
}

static void
budget_destroy(struct sink *sink)
{
	free(sink);
}

static const struct sink_ops budget_ops = {
	.name = "memory-budget",
	.add_metrics = budget_add_metrics,
	.destroy = budget_destroy,
};

struct sink *
memory_budget_sink_create(const struct memory_budget *b)
{
	struct budget_sink *s = xcalloc(1, sizeof(*s));
	s->base.ops = &budget_ops;
	s->b = *b;
	return &s->base;
}
