/*
 * tegrawatch: the options every command takes, then the command. The
 * commands and their options are one table (cli.c); each command lives in
 * its own cmd_*.c; setup.c builds the agent.
 */
#include <stdio.h>
#include <string.h>

#include "core/exit_codes.h"
#include "core/log.h"
#include "cli.h"
#include "commands.h"
#include "setup.h"

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
		int opt = cli_global_option(argv[i]);
		if (opt == OPT_VERBOSE) {
			level = level >= LOG_INFO ? LOG_DEBUG : LOG_INFO;
			given = true;
		} else if (opt == OPT_QUIET) {
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
		cli_usage(stderr, NULL);
		return EX_USAGE;
	}
	/* what runs each command of the table */
	static int (*const run[CLI_COMMANDS])(int, char **) = {
		[CLI_PARSE] = cmd_parse, [CLI_SNAPSHOT] = cmd_snapshot, [CLI_RUN] = cmd_run,
		[CLI_CHECK] = cmd_check, [CLI_REPLAY] = cmd_replay,     [CLI_REPORT] = cmd_report,
		[CLI_TOP] = cmd_top,     [CLI_HELP] = cli_help,         [CLI_VERSION] = cli_version,
	};
	const struct cli_command *c = cli_command_find(argv[1]);
	if (c) {
		return run[c->id](argc - 1, argv + 1);
	}
	fprintf(stderr, "tegrawatch: unknown command '%s'\n\n", argv[1]);
	cli_usage(stderr, NULL);
	return EX_USAGE;
}
