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

#include "agent.h"
#include "alert_json.h"
#include "alerting.h"
#include "commands.h"
#include "config.h"
#include "json.h"
#include "log.h"
#include "sample_json.h"
#include "tegra/board.h"
#include "tegra/sources.h"

#define EX_USAGE 64
#define EX_IOERR 74

struct timeline {
	bool as_json;
	unsigned long events;
	struct json json;
};

static void
print_event(const struct alert_event *ev, void *data)
{
	struct timeline *tl = data;
	char ts[32];
	iso_local_time(ev->at_ms, ts, sizeof(ts));
	tl->events++;
	if (tl->as_json) {
		struct json *j = &tl->json;
		json_reset(j);
		alert_event_to_json(j, ev);
		puts(j->buf);
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
	printf("%s  %-24s %-9s %-12s %s = %s%s\n", ts, ev->rule->name, severity_name(ev->severity),
	       alert_transition_name(ev->transition), ev->metric, value, threshold);
}

int
cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"dry-run", no_argument, NULL, 'n'},
		{"root", required_argument, NULL, 'r'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *config_path = NULL, *root = NULL;
	bool dry_run = false;
	struct timeline tl = {0};
	int c;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config_path = optarg;
			break;
		case 'n':
			dry_run = true;
			break;
		case 'r':
			root = optarg;
			break;
		case 'j':
			tl.as_json = true;
			break;
		case 'h':
			printf("Usage: tegrawatch replay LOG [-c FILE] [--dry-run] [--root DIR] [--json]\n");
			return 0;
		default:
			return EX_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "tegrawatch replay: give exactly one recorded tegrastats log\n");
		return EX_USAGE;
	}
	const char *log_path = argv[optind];

	struct config *cfg;
	int r = load_config_or_default(config_path, true, &cfg);
	if (r != 0) {
		return r;
	}
	if (root) {
		free(cfg->root);
		cfg->root = strdup(root);
	}
	struct agent_options aopts = {.interval_ms = (int)cfg->interval_ms};
	struct agent *agent = agent_create(&aopts);
	struct board *b = NULL;
	struct source *src;
	if (cfg->root && cfg->root[0] && board_open(cfg->root, &b) == 0 && sysfs_source_create(b, &src) == 0) {
		agent_add_source(agent, src);
	}
	r = replay_source_create(log_path, 0, &src);
	if (r < 0) {
		fprintf(stderr, "tegrawatch replay: %s: %s\n", log_path, strerror(-r));
		agent_destroy(agent);
		board_destroy(b);
		config_destroy(cfg);
		return EX_IOERR;
	}
	agent_add_source(agent, src);
	json_init(&tl.json);
	struct alerting *al = alerting_create(cfg, !dry_run);
	alerting_on(al, print_event, &tl);
	agent_add_sink(agent, alerting_sink(al));
	r = agent_run(agent);
	uint64_t samples = agent_sample_count(agent);
	agent_destroy(agent);
	alerting_destroy(al);
	board_destroy(b);
	json_free(&tl.json);
	fflush(stdout);
	fprintf(stderr, "tegrawatch replay: %llu samples, %lu alert events%s\n", (unsigned long long)samples,
		tl.events, dry_run ? " (dry run: no action was run)" : "");
	if (fflush(stdout) != 0 || r < 0) {
		return EX_IOERR;
	}
	return 0;
}
