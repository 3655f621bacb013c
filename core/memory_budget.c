/* The memory budget (see memory_budget.h): the limit's syntax, the breakdown in words, a log line, metrics. */
#include "memory_budget.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "xalloc.h"

#define MIB (1024.0 * 1024.0)

int
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
memory_budget_describe(const struct memory_budget *b, char *buf, size_t size)
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

void
memory_budget_log(const struct memory_budget *b)
{
	char text[320];
	memory_budget_describe(b, text, sizeof(text));
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
