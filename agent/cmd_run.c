/*
 * tegrawatch run: the agent. Reads the command line and the configuration,
 * lets setup.c build the pipeline, and runs it until stopped.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/exit_codes.h"
#include "core/log.h"
#include "build_config.h"
#include "commands.h"
#include "setup.h"

static const char run_usage[] =
	"Usage: tegrawatch run [OPTIONS]\n"
	"Runs the agent: samples the board on a timer, evaluates the rules and publishes\n"
	"(JSON Lines on stdout, MQTT and the web server as configured).\n"
	"  -c, --config FILE    configuration (default " CONFIG_DEFAULT_PATH " when it exists)\n"
	"  --replay FILE        use a recorded tegrastats log as the source\n"
	"  --speed N            replay speed factor (default 1 = real time; 0 = as fast as possible)\n"
	"  --demo               run the built-in demo board (a replay of configs/demo/)\n"
	"  --root DIR           prefix for every path read (sysfs, procfs, /etc, /var/lib)\n"
	"  --interval MS        sampling interval (default 1000)\n"
	"  --count N            stop after N samples\n"
	"  --no-tegrastats      do not start the tegrastats binary next to sysfs\n"
	"  --tegrastats PROGRAM run PROGRAM --interval MS as the live tegrastats source\n"
	"  --json, --no-json    one JSON document per sample on stdout, or none (default: agent.json_lines,\n"
	"                       auto = on unless stdout is the journal)\n"
	"  --record FILE        write every sample to FILE (JSON Lines, docs/report.md) for `tegrawatch report`\n"
	"  --record-max-mb N    start a new FILE past N MiB, keeping the previous one as FILE.1 (default 0 = never)\n";

int
cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"replay", required_argument, NULL, 'R'},
		{"speed", required_argument, NULL, 's'},
		{"demo", no_argument, NULL, 'd'},
		{"root", required_argument, NULL, 'r'},
		{"interval", required_argument, NULL, 'i'},
		{"count", required_argument, NULL, 'n'},
		{"no-tegrastats", no_argument, NULL, 'T'},
		{"tegrastats", required_argument, NULL, 't'},
		{"config", required_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'J'},
		{"no-json", no_argument, NULL, 'N'},
		{"record", required_argument, NULL, 'W'},
		{"record-max-mb", required_argument, NULL, 'M'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	double record_max_mb = 0;
	struct setup_options so = {.speed = 1.0, .outputs = true};
	const char *config_path = NULL;
	char demo_log[4096], demo_root[4096], demo_config[4096];
	bool demo = false;
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'R':
			so.replay = optarg;
			break;
		case 's':
			so.speed = strtod(optarg, &end);
			if (*end || so.speed < 0 || so.speed > 1e6) {
				fprintf(stderr, "tegrawatch run: --speed wants a number >= 0, not '%s'\n", optarg);
				return EX_USAGE;
			}
			break;
		case 'd': {
			const char *dir = setup_demo_dir();
			if (!dir) {
				fprintf(stderr, "tegrawatch run: the demo board is not installed (no %s or %s)\n",
					TEGRAWATCH_DEMO_DIR_INSTALLED, TEGRAWATCH_DEMO_DIR_SOURCE);
				return EX_UNAVAILABLE;
			}
			snprintf(demo_log, sizeof(demo_log), "%s/tegrastats.log", dir);
			snprintf(demo_root, sizeof(demo_root), "%s/root", dir);
			snprintf(demo_config, sizeof(demo_config), "%s/tegrawatch.yaml", dir);
			so.replay = demo_log;
			so.root = demo_root;
			demo = true;
			break;
		}
		case 'r':
			so.root = optarg;
			break;
		case 'i':
			so.interval_ms = (int)strtol(optarg, &end, 10);
			if (*end || so.interval_ms < 10 || so.interval_ms > 3600000) {
				fprintf(stderr, "tegrawatch run: --interval wants milliseconds (10..3600000)\n");
				return EX_USAGE;
			}
			break;
		case 'n':
			so.max_samples = strtoull(optarg, &end, 10);
			if (*end) {
				fprintf(stderr, "tegrawatch run: --count wants a number\n");
				return EX_USAGE;
			}
			break;
		case 'T':
			so.no_tegrastats = true;
			break;
		case 't':
			so.tegrastats = optarg;
			break;
		case 'c':
			config_path = optarg;
			break;
		case 'J':
			so.json_lines = JSON_LINES_ON;
			break;
		case 'N':
			so.json_lines = JSON_LINES_OFF;
			break;
		case 'W':
			so.record = optarg;
			break;
		case 'M':
			record_max_mb = strtod(optarg, &end);
			if (*end || !(record_max_mb >= 0) || record_max_mb > 1e6) {
				fprintf(stderr, "tegrawatch run: --record-max-mb wants a number of MiB >= 0\n");
				return EX_USAGE;
			}
			break;
		case 'h':
			fputs(run_usage, stdout);
			return 0;
		default:
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tegrawatch run: unexpected argument '%s'\n", argv[optind]);
		return EX_USAGE;
	}
	/* the demo brings its own configuration, with the shipped rules */
	if (demo && !config_path) {
		config_path = demo_config;
	}
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
