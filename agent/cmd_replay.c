/*
 * `tegrawatch replay LOG -c FILE [--dry-run]`: runs a recorded tegrastats
 * log through the rules as fast as it can and prints the alert timeline,
 * so rules can be tested before they are deployed.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/exit_codes.h"
#include "core/sample_json.h"
#include "core/xalloc.h"
#include "cli.h"
#include "commands.h"
#include "setup.h"

/* The timeline is a sink that takes alert events only. */
struct timeline {
	struct sink base;
	bool as_json;
	unsigned long *events;
	struct json json;
};

static void
print_event(struct sink *sink, const struct alert_event *ev)
{
	struct timeline *tl = (struct timeline *)sink;
	char ts[32];
	rfc3339_utc(ev->at_ms, ts, sizeof(ts));
	(*tl->events)++;
	if (tl->as_json) {
		struct json *j = &tl->json;
		json_reset(j);
		alert_event_to_json(j, ev);
		puts(j->out.buf);
		return;
	}
	char value[48];
	if (ev->absent || isnan(ev->value)) {
		snprintf(value, sizeof(value), "absent");
	} else {
		snprintf(value, sizeof(value), "%.6g", ev->value);
	}
	char threshold[48] = "";
	if (!isnan(ev->threshold)) {
		snprintf(threshold, sizeof(threshold), " (threshold %.6g)", ev->threshold);
	}
	printf("%s  %-24s %-9s %-12s %s = %s%s\n", ts, ev->rule_name, severity_name(ev->severity),
	       alert_transition_name(ev->transition), ev->metric, value, threshold);
}

static void
timeline_destroy(struct sink *sink)
{
	struct timeline *tl = (struct timeline *)sink;
	json_free(&tl->json);
	free(tl);
}

static const struct sink_ops timeline_ops = {
	.name = "timeline",
	.notify = print_event,
	.destroy = timeline_destroy,
};

int
cmd_replay(int argc, char **argv)
{
	const char *config_path = NULL, *root = NULL;
	bool dry_run = false, as_json = false;
	int c;
	while ((c = cli_getopt("replay", argc, argv)) != -1) {
		switch (c) {
		case OPT_CONFIG:
			config_path = optarg;
			break;
		case OPT_DRY_RUN:
			dry_run = true;
			break;
		case OPT_ROOT:
			root = optarg;
			break;
		case OPT_JSON:
			as_json = true;
			break;
		case OPT_HELP:
			cli_usage(stdout, "replay");
			return 0;
		default:
			return EX_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "tegrawatch replay: give exactly one recorded tegrastats log\n");
		return EX_USAGE;
	}
	struct config *cfg;
	int r = setup_load_config(config_path, &cfg);
	if (r != 0) {
		return r;
	}
	size_t rules = cfg->rules.count;
	unsigned long events = 0;
	struct timeline *tl = xcalloc(1, sizeof(*tl));
	tl->base.ops = &timeline_ops;
	tl->as_json = as_json;
	tl->events = &events;
	json_init(&tl->json);
	struct setup_options so = {
		.replay = argv[optind],
		.speed = 0,
		.root = root,
		.dry_run = dry_run,
		.extra = &tl->base,
	};
	struct agent *agent;
	r = setup_agent(cfg, &so, &agent);
	if (r != 0) {
		return r;
	}
	r = agent_run(agent);
	uint64_t samples = agent_sample_count(agent);
	agent_destroy(agent);
	fflush(stdout);
	fprintf(stderr, "tegrawatch replay: %llu samples, %lu alert events from %zu rule%s%s\n",
		(unsigned long long)samples, events, rules, rules == 1 ? "" : "s",
		dry_run ? " (dry run: no action was run)" : "");
	if (fflush(stdout) != 0 || r < 0) {
		return EX_IOERR;
	}
	return 0;
}
