/*
 * tegrawatch check [-c FILE]: load and validate a configuration the way
 * the agent would, print every mistake, exit 0 or EX_CONFIG (78).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/exit_codes.h"
#include "cli.h"
#include "commands.h"
#include "config.h"
#include "build_config.h"
#include "core/diag.h"

int
cmd_check(int argc, char **argv)
{
	const char *path = CONFIG_DEFAULT_PATH;
	bool named = false;
	int c;
	while ((c = cli_getopt("check", argc, argv)) != -1) {
		switch (c) {
		case OPT_CONFIG:
			path = optarg;
			named = true;
			break;
		case OPT_HELP:
			cli_usage(stdout, "check");
			return 0;
		default:
			cli_usage(stderr, "check");
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tegrawatch check: unexpected argument '%s'\n", argv[optind]);
		return EX_USAGE;
	}
	if (!named && access(path, F_OK) != 0 && errno == ENOENT) {
		/* a source build installs none: say what was looked for, and what to name */
		bool example = access(TEGRAWATCH_CONFIG_SOURCE, R_OK) == 0;
		fprintf(stderr,
			"tegrawatch check: no configuration named, and none at %s (installing the package puts one "
			"there): name one with -c FILE%s%s\n",
			path, example ? ", e.g. the example of the source tree: -c " : "",
			example ? TEGRAWATCH_CONFIG_SOURCE : "");
		return EX_NOINPUT;
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
