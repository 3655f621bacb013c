/*
 * tegrawatch run: the agent. Reads the command line and the configuration,
 * lets setup.c build the pipeline, and runs it until stopped.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/exit_codes.h"
#include "core/log.h"
#include "build_config.h"
#include "cli.h"
#include "commands.h"
#include "setup.h"

int
cmd_run(int argc, char **argv)
{
	double record_max_mb = 0;
	struct setup_options so = {.speed = 1.0, .outputs = true};
	const char *config_path = NULL;
	char demo_log[4096], demo_root[4096], demo_config[4096];
	bool demo = false;
	int c;
	char *end;
	while ((c = cli_getopt("run", argc, argv)) != -1) {
		switch (c) {
		case OPT_REPLAY:
			so.replay = optarg;
			break;
		case OPT_SPEED:
			so.speed = strtod(optarg, &end);
			if (*end || so.speed < 0 || so.speed > 1e6) {
				log_error("run: --speed wants a number >= 0, not '%s'", optarg);
				return EX_USAGE;
			}
			break;
		case OPT_DEMO: {
			const char *dir = setup_demo_dir();
			if (!dir) {
				log_error("run: the demo board is not installed (no %s or %s)",
					  TEGRAWATCH_DEMO_DIR_INSTALLED, TEGRAWATCH_DEMO_DIR_SOURCE);
				return EX_UNAVAILABLE;
			}
			snprintf(demo_log, sizeof(demo_log), "%s/tegrastats.log", dir);
			snprintf(demo_root, sizeof(demo_root), "%s/root", dir);
			snprintf(demo_config, sizeof(demo_config), "%s/tegrawatch.yaml", dir);
			so.root = demo_root;
			demo = true;
			break;
		}
		case OPT_ROOT:
			so.root = optarg;
			break;
		case OPT_INTERVAL:
			so.interval_ms = (int)strtol(optarg, &end, 10);
			if (*end || so.interval_ms < 10 || so.interval_ms > 3600000) {
				log_error("run: --interval wants milliseconds (10..3600000)");
				return EX_USAGE;
			}
			break;
		case OPT_COUNT:
			so.max_samples = strtoull(optarg, &end, 10);
			if (*end) {
				log_error("run: --count wants a number");
				return EX_USAGE;
			}
			break;
		case OPT_NO_TEGRASTATS:
			so.no_tegrastats = true;
			break;
		case OPT_TEGRASTATS:
			so.tegrastats = optarg;
			break;
		case OPT_CONFIG:
			config_path = optarg;
			break;
		case OPT_JSON:
			so.json_lines = JSON_LINES_ON;
			break;
		case OPT_NO_JSON:
			so.json_lines = JSON_LINES_OFF;
			break;
		case OPT_RECORD:
			so.record = optarg;
			break;
		case OPT_RECORD_MAX_MB:
			record_max_mb = strtod(optarg, &end);
			if (*end || !(record_max_mb >= 0) || record_max_mb > 1e6) {
				log_error("run: --record-max-mb wants a number of MiB >= 0");
				return EX_USAGE;
			}
			break;
		case OPT_HELP:
			cli_usage(stdout, "run");
			return 0;
		default:
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		log_error("run: unexpected argument '%s'", argv[optind]);
		return EX_USAGE;
	}
	/* --replay FILE next to --demo: the demo board with another recording */
	if (demo && !so.replay) {
		so.replay = demo_log;
	}
	/* the demo brings its own configuration, with the shipped rules */
	if (demo && !config_path) {
		config_path = demo_config;
	}
	/* a person watching the demo in a terminal gets a short status there; the samples with --json */
	if (demo && so.json_lines == JSON_LINES_AUTO && isatty(STDOUT_FILENO)) {
		so.json_lines = JSON_LINES_OFF;
	}
	so.demo = demo;
	so.record_max_bytes = (uint64_t)(record_max_mb * 1048576);
	struct config *cfg;
	int r = setup_load_config(config_path, &cfg);
	if (r != 0) {
		return r;
	}
	struct agent *agent;
	r = setup_agent(cfg, &so, &agent);
	if (r != 0) {
		return r;
	}
	r = agent_run(agent);
	agent_destroy(agent);
	if (r < 0) {
		log_error("run: %s", strerror(-r));
		return EX_SOFTWARE;
	}
	return 0;
}
