/*
 * The fleet sinks wired to the rest: the remote_write and otlp sections,
 * the board's identity and the device id, and the metric dictionary
 * (core/metric_dict.h, the names of /metrics) as their map of names.
 */
#include "fleet_setup.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/exit_codes.h"
#include "core/log.h"
#include "core/metric_dict.h"
#include "build_config.h"
#if HAVE_FLEET
#include "fleet/fleet.h"

/* The dictionary's series in the fleet sinks' words: the family, labels and scale /metrics gives. */
static bool
map_like_metrics(const char *name, struct fleet_series *out)
{
	struct metric_series ms;
	if (!metric_dict_series(name, &ms)) {
		return false;
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->family, sizeof(out->family), "%s", ms.family);
	out->counter = ms.kind == METRIC_KIND_COUNTER;
	out->help = ms.help;
	out->scale = ms.scale;
	for (size_t l = 0; l < ms.label_count && l < FLEET_LABELS_MAX; l++) {
		out->label_names[l] = ms.label_names[l];
		snprintf(out->label_values[l], sizeof(out->label_values[l]), "%s", ms.label_values[l]);
		out->label_count = l + 1;
	}
	return true;
}
#endif

int
fleet_sinks_add(struct agent *agent, const struct config *cfg, const struct agent_info *agent_info)
{
	bool rw = cfg->remote_write.url[0], otlp = cfg->otlp.url[0];
#if HAVE_FLEET
	struct fleet_info info = {.agent = *agent_info, .map = map_like_metrics};
	struct sink *sink;
	if (rw) {
		int r = remote_write_sink_create(&cfg->remote_write, &info, &sink);
		if (r < 0) {
			return r == -EINVAL ? EX_CONFIG : EX_UNAVAILABLE;
		}
		agent_add_sink(agent, sink);
	}
	if (otlp) {
		int r = otlp_sink_create(&cfg->otlp, &info, &sink);
		if (r < 0) {
			return r == -EINVAL ? EX_CONFIG : EX_UNAVAILABLE;
		}
		agent_add_sink(agent, sink);
	}
#else
	(void)agent;
	(void)agent_info;
	if (rw || otlp) {
		log_warn("this build has no HTTP client (built without libcurl): remote_write and otlp are ignored");
	}
#endif
	return 0;
}
