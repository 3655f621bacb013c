/*
 * tegrawatch: the command table and the options every command takes.
 * Each command lives in its own cmd_*.c; setup.c builds the agent.
 */
#include <stdio.h>
#include <string.h>

#include "core/exit_codes.h"
#include "core/log.h"
#include "build_config.h"
#include "commands.h"
#include "setup.h"

static const char usage_text[] =
	"Usage: tegrawatch COMMAND [OPTIONS]\n"
	"\n"
	"Commands:\n"
	"  parse [FILE]             read tegrastats lines from FILE or stdin and write one JSON\n"
	"                           object per line: {\"line\",\"ts\",\"metrics\"} or {\"line\",\"error\"}\n"
	"  snapshot [--root DIR] [--json]\n"
	"                           read the board once through sysfs/procfs (two readings, for\n"
	"                           rates and deltas) and print its identity, metrics and throttle state\n"
	"  run [OPTIONS]            run the agent: sample on a timer, evaluate the rules, write JSON Lines\n"
	"      -c, --config FILE    configuration (default /etc/tegrawatch/tegrawatch.yaml when it exists)\n"
	"      --replay FILE        use a recorded tegrastats log as the source\n"
	"      --speed N            replay speed factor (default 1 = real time; 0 = as fast as possible)\n"
	"      --demo               run the built-in demo board (a replay of configs/demo/)\n"
	"      --root DIR           prefix for every path read (sysfs, procfs, /etc, /var/lib)\n"
	"      --interval MS        sampling interval (default 1000)\n"
	"      --count N            stop after N samples\n"
	"      --no-tegrastats      do not start the tegrastats binary next to sysfs\n"
	"      --tegrastats PROGRAM run PROGRAM --interval MS as the live tegrastats source\n"
	"      --record FILE        write every sample to FILE for `report` (--record-max-mb N: rotate)\n"
	"  check [-c FILE]          validate a configuration: exit 0, or print every error and exit 78\n"
	"  replay LOG [-c FILE] [--dry-run] [--root DIR] [--json]\n"
	"                           run a recorded log through the rules as fast as possible and print\n"
	"                           the alert timeline; --dry-run runs no action\n"
	"  report RECORDING [--root DIR] [-c FILE] [--phases FILE] [--json FILE] [--csv FILE] [--html FILE]\n"
	"  report --compare A B [--json FILE] [--html FILE]\n"
	"                           what happened during a recorded run: statistics, throttle episodes,\n"
	"                           energy, peaks against trips, alerts, recommendations (docs/report.md)\n"
	"  help                     show this text\n"
	"  version                  print the version\n"
	"\n"
	"Options for every command: -v (more log output), -q (errors only).\n"
	"Metric names are listed in docs/metrics.md.\n";

static void
usage(FILE *out)
{
	fputs(usage_text, out);
}

static int
cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

static int
cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("tegrawatch %s\n", TEGRAWATCH_VERSION);
	return 0;
}

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{"parse", cmd_parse},     {"snapshot", cmd_snapshot}, {"run", cmd_run},       {"check", cmd_check},
	{"replay", cmd_replay},   {"help", cmd_help},         {"--help", cmd_help},   {"-h", cmd_help},
	{"version", cmd_version}, {"--version", cmd_version}, {"report", cmd_report},
};

/*
 * Takes the options every command has (-v, -q) out of ARGV wherever they
 * stand, up to a "--", so `tegrawatch -v run` and `run --demo -v` both work.
 */
static int
take_global_options(int argc, char **argv)
{
	int level = LOG_WARN, out = 1;
	bool given = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < argc) {
				argv[out++] = argv[i++];
			}
			break;
		}
		if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
			level = level >= LOG_INFO ? LOG_DEBUG : LOG_INFO;
			given = true;
		} else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0) {
			level = LOG_ERROR;
			given = true;
		} else {
			argv[out++] = argv[i];
		}
	}
	argv[out] = NULL;
	setup_log_level((enum log_level)level, given);
	return out;
}

int
main(int argc, char **argv)
{
	argc = take_global_options(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return EX_USAGE;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) == 0) {
			return commands[i].run(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "tegrawatch: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return EX_USAGE;
}
