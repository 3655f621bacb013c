/*
 * tegrawatch check [-c FILE]: load and validate a configuration the way
 * the agent would, print every mistake, exit 0 or EX_CONFIG (78).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "core/exit_codes.h"
#include "commands.h"
#include "config.h"
#include "core/diag.h"

static const char check_usage[] = "Usage: tegrawatch check [-c FILE]\n"
				  "Validates FILE (default " CONFIG_DEFAULT_PATH "), its included rule files and the\n"
				  "TEGRAWATCH_* environment overrides. Prints every mistake as FILE:LINE:COL: message\n"
				  "and exits 78, or prints a summary and exits 0.\n";

int
cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *path = CONFIG_DEFAULT_PATH;
	int c;
	optind = 0; /* full getopt reset: callers may have parsed before */
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'h':
			fputs(check_usage, stdout);
			return 0;
		default:
			fputs(check_usage, stderr);
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tegrawatch check: unexpected argument '%s'\n", argv[optind]);
		return EX_USAGE;
	}
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg = NULL;
	int r = config_load(path, &cfg, &diags);
	diag_list_print(&diags, stderr);
	diag_list_free(&diags);
	if (r < 0) {
		return EX_CONFIG;
	}
	size_t actions = cfg->action_count - 1; /* the built-in log is not counted */
	printf("%s: ok, %zu rule%s, %zu action%s\n", path, cfg->rules.count, cfg->rules.count == 1 ? "" : "s", actions,
	       actions == 1 ? "" : "s");
	config_destroy(cfg);
	return 0;
}
