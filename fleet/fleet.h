/*
 * The fleet sinks: every sample pushed to the fleet's own engines, a
 * Prometheus remote-write receiver (remote_write:) and an OpenTelemetry
 * OTLP/HTTP receiver (otlp:), in batches, from a bounded spool (memory
 * and optionally a file, as MQTT's), in order, with the samples' own
 * timestamps; retried with jittered back-off through outages. Both run in
 * the agent's poll loop (no thread) over core/http_client.h. docs/fleet.md.
 */
#ifndef TEGRAWATCH_FLEET_H
#define TEGRAWATCH_FLEET_H

#include <stdbool.h>
#include <stdint.h>

#include "core/board_info.h"
#include "core/pipeline.h"
#include "fleet_config.h"

#define FLEET_LABELS_MAX 6
#define FLEET_FAMILY_MAX (METRIC_NAME_MAX + 16)
#define FLEET_LABEL_VALUE_MAX 128 /* a board model fits */

/* Where a canonical metric goes: the family, labels and scale /metrics gives it. */
struct fleet_series {
	char family[FLEET_FAMILY_MAX]; /* tegrawatch_temperature_celsius */
	bool counter;                  /* else a gauge */
	const char *help;              /* static text */
	size_t label_count;
	const char *label_names[FLEET_LABELS_MAX]; /* static text */
	char label_values[FLEET_LABELS_MAX][FLEET_LABEL_VALUE_MAX];
	double scale; /* the metric's value times this is the series' value */
};

/*
 * The metric dictionary as the sinks read it (given by the composition
 * root, so remote write and OTLP name every metric as /metrics does).
 * False leaves the metric out.
 */
typedef bool (*fleet_map_fn)(const char *name, struct fleet_series *out);

/* Who is sending: the same for every series. */
struct fleet_info {
	/* device_id: instance, host.id, service.instance.id; board_name: board, host.name; identity and
	 * version: the build info; interval_ms: the agent's, for the spool's memory window */
	struct agent_info agent;
	fleet_map_fn map;
};

/**
 * Creates the remote-write sink for CFG (copied) and INFO (copied).
 * Returns 0 and *OUT; -EINVAL for a configuration it cannot use (a secret
 * file unreadable since `check`), -ENOENT when libcurl or libsnappy
 * cannot be loaded (logged). An unusable spool file is logged and
 * replaced by the memory spool.
 */
int remote_write_sink_create(const struct fleet_config *cfg, const struct fleet_info *info, struct sink **out);

/** The same for the OTLP/HTTP sink (zlib instead of libsnappy, for gzip). */
int otlp_sink_create(const struct fleet_config *cfg, const struct fleet_info *info, struct sink **out);

#endif
