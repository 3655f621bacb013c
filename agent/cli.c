/* The command-line table and what reads it: getopt, --help, help and version. See cli.h. */
#include "cli.h"

#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "core/exit_codes.h"
#include "build_config.h"
#include "config.h"

const struct cli_command cli_commands[] = {
	{CLI_PARSE, "parse", "tegrastats lines (FILE or stdin) to JSON Lines", "[FILE]", true,
	 "Reads tegrastats lines from FILE (or stdin, or '-') and writes one JSON object\n"
	 "per line: {\"line\", \"ts\", \"metrics\"} or {\"line\", \"error\"}. Blank and '#' lines\n"
	 "are skipped."},
	{CLI_SNAPSHOT, "snapshot", "read the board once and print what it shows", "", false,
	 "Reads the board once through sysfs/procfs (two readings 250 ms apart, for\n"
	 "rates and deltas) and prints its identity, power mode, throttle state and\n"
	 "every metric."},
	{CLI_RUN, "run", "run the agent", "", false,
	 "Runs the agent: samples the board on a timer, evaluates the rules and\n"
	 "publishes (JSON Lines on stdout, MQTT and the web server as configured)."},
	{CLI_CHECK, "check", "validate a configuration", "", false,
	 "Validates a configuration, its included rule files and the TEGRAWATCH_*\n"
	 "environment overrides. Prints every mistake as FILE:LINE:COL: message and\n"
	 "exits 78, or prints a summary and exits 0."},
	{CLI_REPLAY, "replay", "run a recorded tegrastats log through the rules", "LOG", true,
	 "Runs a recorded tegrastats log through the rules as fast as possible and\n"
	 "prints the alert timeline."},
	{CLI_REPORT, "report", "what happened during a recorded run, or two compared", "RECORDING | --compare A B",
	 true,
	 "Tells what happened during a recorded run (a tegrastats log, or a file of\n"
	 "`tegrawatch run --record`): statistics of every metric, throttle episodes,\n"
	 "energy per rail, peaks against trip points, the alert timeline (with -c) and\n"
	 "recommendations. Without an output option it prints a summary; the fields\n"
	 "are in docs/report.md."},
	{CLI_TOP, "top", "the board at a glance, full screen, from the running agent", "", false,
	 "Shows the board at a glance in the terminal: CPU cores, GPU and EMC, engines,\n"
	 "temperatures with headroom, power rails, the power mode, the throttle state,\n"
	 "fans, memory and the alerts. It asks the running agent (/api/v1/snapshot) and\n"
	 "reads the board itself where none answers. Keys: 1-4 or tab/arrows for the\n"
	 "views, q to quit. Prints one screen as plain text with --once or when stdout\n"
	 "is not a terminal."},
	{CLI_HELP, "help", "this text; `help COMMAND` is `COMMAND --help`", "[COMMAND]", false,
	 "Shows the commands, a command's options, or prints a document made from the\noption table."},
	{CLI_VERSION, "version", "print the version", "", false, "Prints the version."},
};
const size_t cli_command_count = sizeof(cli_commands) / sizeof(cli_commands[0]);
_Static_assert(sizeof(cli_commands) / sizeof(cli_commands[0]) == CLI_COMMANDS, "one row per command");

#define ROOT_MAN                                                                                                       \
	"Prefix every path read (sysfs, procfs,\n.Pa /etc ,\n.Pa /var/lib ,\nthe device tree) with\n.Ar dir ;\na "     \
	"fixture tree, or a board tree that adds what a log lacks (trip points, clock ceilings, identity, power mode)."

const struct cli_option cli_options[] = {
	{"", OPT_VERBOSE, 'v', "verbose", CLI_ARG_NONE, NULL, "more log output (twice: debug)",
	 "More log output; twice for debug messages."},
	{"", OPT_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, "errors only", "Errors only."},
	{"", OPT_HELP, 'h', "help", CLI_ARG_NONE, NULL, "show the usage and the options",
	 "Print the usage and the options of the command."},

	{"snapshot", OPT_ROOT, 0, "root", CLI_ARG_DIR, "DIR", "prefix for every path read (a fixture tree)", ROOT_MAN},
	{"snapshot", OPT_JSON, 0, "json", CLI_ARG_NONE, NULL, "one JSON object instead of text",
	 "Print one JSON object instead of text."},

	{"run", OPT_CONFIG, 'c', "config", CLI_ARG_YAML, "FILE",
	 "configuration (default " CONFIG_DEFAULT_PATH " when it exists)",
	 "The configuration; default\n.Pa " CONFIG_DEFAULT_PATH "\nwhen it exists, otherwise the built-in defaults "
	 "with the shipped rules\n.Pq Pa /usr/share/tegrawatch/rules.d ,\nor those of the source tree; a warning says "
	 "how many."},
	{"run", OPT_REPLAY, 0, "replay", CLI_ARG_FILE, "FILE", "use a recorded tegrastats log as the source",
	 "Use a recorded tegrastats log as the source, paced by its time stamps."},
	{"run", OPT_SPEED, 0, "speed", CLI_ARG_NUMBER, "N",
	 "replay speed factor (default 1 = real time; 0 = as fast as possible)",
	 "Replay speed factor: 1 (the default) is real time, 0 as fast as possible."},
	{"run", OPT_DEMO, 0, "demo", CLI_ARG_NONE, NULL,
	 "run the built-in demo board (a replay of configs/demo/, in a loop);\nin a terminal a status line a minute, "
	 "the samples with --json",
	 "Replay the demo board installed under\n.Pa /usr/share/tegrawatch/demo\nwith its configuration (the shipped "
	 "rules plus one), again from the start at its end (its times go on) unless\n.Fl \\-speed Ar 0 .\nIn a "
	 "terminal it prints where to look and a status line a minute of the recording instead of the samples\n"
	 ".Pq Fl \\-json No prints those ;\nits dashboard takes the next free port when\n.Cm web.listen Ns 's\nis "
	 "taken. With\n.Fl \\-replay Ar file\nit plays\n.Ar file\non the demo board."},
	{"run", OPT_ROOT, 0, "root", CLI_ARG_DIR, "DIR", "prefix for every path read (sysfs, procfs, /etc, /var/lib)",
	 ROOT_MAN},
	{"run", OPT_INTERVAL, 0, "interval", CLI_ARG_NUMBER, "MS", "sampling interval (default 1000)",
	 "The sampling interval in milliseconds, 10 to 3600000; default 1000."},
	{"run", OPT_COUNT, 0, "count", CLI_ARG_NUMBER, "N", "stop after N samples", "Stop after\n.Ar n\nsamples."},
	{"run", OPT_NO_TEGRASTATS, 0, "no-tegrastats", CLI_ARG_NONE, NULL,
	 "do not start the tegrastats binary next to sysfs", "Do not start\n.Xr tegrastats 1\nnext to sysfs."},
	{"run", OPT_TEGRASTATS, 0, "tegrastats", CLI_ARG_PROGRAM, "PROGRAM",
	 "run PROGRAM --interval MS as the live tegrastats source",
	 "Run\n.Ar program\n.Fl \\-interval Ar ms\nas the live tegrastats source."},
	{"run", OPT_JSON, 0, "json", CLI_ARG_NONE, NULL,
	 "one JSON document per sample on stdout (default: agent.json_lines;\nauto = on unless stdout is the journal)",
	 "Write one JSON document per sample on standard output.\nThe default is\n.Cm agent.json_lines :\n.Cm auto\n"
	 "writes them unless standard output is the journal.\nA reader that stops reading never stops the agent: lines "
	 "it cannot take are\ndropped and counted\n.Pq Cm agent.json_lines_dropped_total ;\nonly a replay as fast as "
	 "possible waits for its reader."},
	{"run", OPT_NO_JSON, 0, "no-json", CLI_ARG_NONE, NULL, "no JSON on stdout",
	 "Write no JSON on standard output."},
	{"run", OPT_RECORD, 0, "record", CLI_ARG_FILE, "FILE",
	 "write every sample to FILE (JSON Lines) for `tegrawatch report`",
	 "Write every sample to\n.Ar file ,\none JSON object per line after a header line, for\n.Cm report ."},
	{"run", OPT_RECORD_MAX_MB, 0, "record-max-mb", CLI_ARG_NUMBER, "N",
	 "start a new FILE past N MiB, keeping the previous one as FILE.1\n(default 0 = never)",
	 "With\n.Fl \\-record ,\na new file starts past\n.Ar n\nMiB and the previous one is kept as\n.Ar file Ns .1 ;\n0 "
	 "(the default) never."},

	{"check", OPT_CONFIG, 'c', "config", CLI_ARG_YAML, "FILE",
	 "the configuration (default " CONFIG_DEFAULT_PATH ")",
	 "The configuration to check; default\n.Pa " CONFIG_DEFAULT_PATH " ."},

	{"replay", OPT_CONFIG, 'c', "config", CLI_ARG_YAML, "FILE",
	 "the configuration whose rules and actions run (default " CONFIG_DEFAULT_PATH ",\nelse the shipped rules)",
	 "The configuration whose rules and actions are used; default\n.Pa " CONFIG_DEFAULT_PATH "\nwhen it exists, "
	 "otherwise the shipped rules (as for\n.Cm run ;\nsaid on standard error with their number)."},
	{"replay", OPT_DRY_RUN, 0, "dry-run", CLI_ARG_NONE, NULL, "run no action; only print the timeline",
	 "Run no action; only print the timeline."},
	{"replay", OPT_ROOT, 0, "root", CLI_ARG_DIR, "DIR", "a board tree that adds what a log lacks (trip points...)",
	 ROOT_MAN},
	{"replay", OPT_JSON, 0, "json", CLI_ARG_NONE, NULL, "one JSON object per alert event",
	 "One JSON object per alert event."},

	{"report", OPT_ROOT, 0, "root", CLI_ARG_DIR, "DIR", "read the board below DIR too (trip points, identity...)",
	 ROOT_MAN},
	{"report", OPT_CONFIG, 'c', "config", CLI_ARG_YAML, "FILE",
	 "run the rules of FILE over the recording (a dry run) for the alert timeline",
	 "Run the rules of\n.Ar file\nover the recording (a dry run: no action) for the alert timeline."},
	{"report", OPT_PHASES, 0, "phases", CLI_ARG_FILE, "FILE", "CSV of start,end,name: every statistic per phase",
	 "A CSV of start,end,name: every statistic and the energy per phase; not with\n.Fl \\-compare ."},
	{"report", OPT_JSON, 0, "json", CLI_ARG_FILE, "FILE", "the report as JSON ('-' = stdout)",
	 "Write the report as JSON to\n.Ar file\n.Pq Ql \\- : standard output ."},
	{"report", OPT_CSV, 0, "csv", CLI_ARG_FILE, "FILE", "one CSV row per sample",
	 "Write one CSV row per sample to\n.Ar file ;\nnot with\n.Fl \\-compare ."},
	{"report", OPT_HTML, 0, "html", CLI_ARG_FILE, "FILE", "one self-contained page with charts",
	 "Write one self-contained page with charts to\n.Ar file\n(no external asset: it opens offline)."},
	{"report", OPT_COMPARE, 0, "compare", CLI_ARG_NONE, NULL,
	 "B against A: every metric, throttle time, energy, a verdict",
	 "Compare two recordings: B minus A for every metric, throttle time and energy,\nand a verdict."},
	{"report", OPT_CRITERIA, 0, "criteria", CLI_ARG_YAML, "FILE",
	 "limits the run must meet (Tj max below, no throttle...): pass/fail, exit 1 on a failure",
	 "Check the limits of\n.Ar file\n(a YAML list: max_below, p99_below, min_above, no_throttle, ...), each passed or\n"
	 "failed with its evidence, in every output; the exit status is 1 when one fails; not with\n.Fl \\-compare ."},

	{"top", OPT_CONFIG, 'c', "config", CLI_ARG_YAML, "FILE", "ask the agent at this configuration's web.listen",
	 "Ask the agent at the\n.Cm web.listen\nof\n.Ar file ;\ndefault that of\n.Pa " CONFIG_DEFAULT_PATH
	 "\nwhen it exists, else 127.0.0.1:9474."},
	{"top", OPT_URL, 0, "url", CLI_ARG_NUMBER, "URL",
	 "ask the agent at URL (http://HOST:PORT); never read the board",
	 "Ask the agent at\n.Ar url\n.Pq Li http://host:port ;\nwhile it does not answer, say so and ask again at every "
	 "refresh instead of reading the board."},
	{"top", OPT_ROOT, 0, "root", CLI_ARG_DIR, "DIR", "where no agent answers: read the board below DIR", ROOT_MAN},
	{"top", OPT_ONCE, 0, "once", CLI_ARG_NONE, NULL,
	 "print one screen as plain text and exit (also when stdout is not a terminal)",
	 "Print one screen as plain text, every section whole, and exit; also what happens when standard output is not a "
	 "terminal or TERM is dumb."},
	{"top", OPT_INTERVAL, 0, "interval", CLI_ARG_NUMBER, "MS", "refresh every MS milliseconds (default 1000)",
	 "Refresh every\n.Ar ms\nmilliseconds, 100 to 60000; default 1000."},
	{"top", OPT_VIEW, 0, "view", CLI_ARG_NUMBER, "NAME", "start with view NAME: overview, thermal, power or alerts",
	 "Start with (or, with\n.Fl \\-once ,\nprint) the view\n.Ar name :\n.Cm overview , thermal , power\nor\n.Cm alerts ."},

	{"help", OPT_BASH_COMPLETION, 0, "bash-completion", CLI_ARG_NONE, NULL, "print the bash completion script",
	 "Print the bash completion script (installed as\n.Pa /usr/share/bash-completion/completions/tegrawatch ) ."},
	{"help", OPT_MAN_SYNOPSIS, 0, "man-synopsis", CLI_ARG_NONE, NULL, "print this man page's SYNOPSIS (mdoc)",
	 "Print the SYNOPSIS section of this page, in\n.Xr mdoc 7 ."},
	{"help", OPT_MAN_OPTIONS, 0, "man-options", CLI_ARG_NONE, NULL, "print this man page's OPTIONS (mdoc)",
	 "Print the OPTIONS section of this page, in\n.Xr mdoc 7 ."},
};
const size_t cli_option_count = sizeof(cli_options) / sizeof(cli_options[0]);

const struct cli_command *
cli_command_find(const char *name)
{
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		name = "help";
	} else if (strcmp(name, "--version") == 0) {
		name = "version";
	}
	for (size_t i = 0; i < cli_command_count; i++) {
		if (strcmp(cli_commands[i].name, name) == 0) {
			return &cli_commands[i];
		}
	}
	return NULL;
}

/* Does OPT belong to the command NAME (or to every command)? */
static bool
cli_option_of(const struct cli_option *opt, const char *name)
{
	return !opt->command[0] || strcmp(opt->command, name) == 0;
}

int
cli_getopt(const char *command, int argc, char **argv)
{
	/* a command's getopt tables are built at its first call; getopt starts again for each new argument list (the
	 * unit tests run several commands, and one command several times, in one process) */
	static struct option longopts[64];
	static char shortopts[64];
	static const char *built;
	static char **parsing;
	if (parsing != argv) {
		parsing = argv;
		optind = 0; /* a full getopt reset */
	}
	if (built != command) {
		size_t n = 0, s = 0;
		for (size_t i = 0; i < cli_option_count && n + 1 < sizeof(longopts) / sizeof(longopts[0]); i++) {
			const struct cli_option *o = &cli_options[i];
			if (!cli_option_of(o, command) || o->code == OPT_VERBOSE || o->code == OPT_QUIET) {
				continue;
			}
			longopts[n++] = (struct option){o->long_name, o->arg ? required_argument : no_argument, NULL,
							(int)o->code};
			if (o->short_name && s + 3 < sizeof(shortopts)) {
				shortopts[s++] = o->short_name;
				if (o->arg) {
					shortopts[s++] = ':';
				}
			}
		}
		longopts[n] = (struct option){0};
		shortopts[s] = '\0';
		built = command;
		optind = 0;
	}
	return getopt_long(argc, argv, shortopts, longopts, NULL);
}

/* "  -c, --config FILE" as --help shows it */
static int
option_label(const struct cli_option *o, char *buf, size_t size)
{
	char shortpart[8] = "    ";
	if (o->short_name) {
		snprintf(shortpart, sizeof(shortpart), "-%c, ", o->short_name);
	}
	return snprintf(buf, size, "  %s--%s%s%s", shortpart, o->long_name, o->arg ? " " : "",
			o->arg ? o->arg_name : "");
}

static void
print_options(FILE *out, const char *command, bool every)
{
	char label[64];
	int width = 0;
	for (size_t i = 0; i < cli_option_count; i++) {
		const struct cli_option *o = &cli_options[i];
		if (!cli_option_of(o, command) || (!o->command[0]) != every) {
			continue;
		}
		int n = option_label(o, label, sizeof(label));
		width = n > width ? n : width;
	}
	for (size_t i = 0; i < cli_option_count; i++) {
		const struct cli_option *o = &cli_options[i];
		if (!cli_option_of(o, command) || (!o->command[0]) != every) {
			continue;
		}
		option_label(o, label, sizeof(label));
		fprintf(out, "%-*s  ", width, label);
		/* a help of several lines goes on under itself */
		for (const char *p = o->help; *p; p++) {
			fputc(*p, out);
			if (*p == '\n') {
				fprintf(out, "%-*s  ", width, "");
			}
		}
		fputc('\n', out);
	}
}

int
cli_global_option(const char *arg)
{
	for (size_t i = 0; i < cli_option_count; i++) {
		const struct cli_option *o = &cli_options[i];
		if (o->code != OPT_VERBOSE && o->code != OPT_QUIET) {
			continue;
		}
		if ((arg[0] == '-' && arg[1] == o->short_name && !arg[2]) ||
		    (arg[0] == '-' && arg[1] == '-' && strcmp(arg + 2, o->long_name) == 0)) {
			return (int)o->code;
		}
	}
	return 0;
}

bool
cli_has_options(const char *command)
{
	for (size_t i = 0; i < cli_option_count; i++) {
		if (cli_options[i].command[0] && strcmp(cli_options[i].command, command) == 0) {
			return true;
		}
	}
	return false;
}

void
cli_usage(FILE *out, const char *command)
{
	const struct cli_command *c = command ? cli_command_find(command) : NULL;
	if (!c) {
		fprintf(out, "Usage: tegrawatch COMMAND [OPTIONS]\n\nCommands:\n");
		for (size_t i = 0; i < cli_command_count; i++) {
			fprintf(out, "  %-10s%s\n", cli_commands[i].name, cli_commands[i].summary);
		}
		fprintf(out, "\nOptions of every command, anywhere on the line:\n");
		print_options(out, "", true);
		/* a source build installs no manual: name the page of the tree it was built from, while it is there */
		bool tree = access(TEGRAWATCH_SOURCE_ROOT "/docs/man/tegrawatch.1", R_OK) == 0;
		fprintf(out, "\n`tegrawatch COMMAND --help` lists the options of COMMAND; %s has it all.\n",
			tree ? "`man -l " TEGRAWATCH_SOURCE_ROOT "/docs/man/tegrawatch.1`" : "`man tegrawatch`");
		fprintf(out, "Metric names are listed in %s.\n",
			tree ? TEGRAWATCH_SOURCE_ROOT "/docs/metrics.md" : TEGRAWATCH_DOC_DIR "/metrics.md");
		return;
	}
	fprintf(out, "Usage: tegrawatch %s%s%s%s\n%s\n", c->name, cli_has_options(c->name) ? " [OPTIONS]" : "",
		c->operands[0] ? " " : "", c->operands, c->help);
	if (cli_has_options(c->name)) {
		fprintf(out, "\nOptions:\n");
		print_options(out, c->name, false);
	}
	fprintf(out, "\nOptions of every command:\n");
	print_options(out, c->name, true);
}

int
cli_help(int argc, char **argv)
{
	int c;
	void (*doc)(FILE *) = NULL;
	while ((c = cli_getopt("help", argc, argv)) != -1) {
		switch (c) {
		case OPT_BASH_COMPLETION:
			doc = cli_bash_completion;
			break;
		case OPT_MAN_SYNOPSIS:
			doc = cli_man_synopsis;
			break;
		case OPT_MAN_OPTIONS:
			doc = cli_man_options;
			break;
		case OPT_HELP:
			cli_usage(stdout, "help");
			return 0;
		default:
			return EX_USAGE;
		}
	}
	if (optind < argc) {
		/* `tegrawatch help run` is `tegrawatch run --help` */
		if (!cli_command_find(argv[optind])) {
			fprintf(stderr, "tegrawatch help: unknown command '%s'\n", argv[optind]);
			return EX_USAGE;
		}
		cli_usage(stdout, argv[optind]);
		return 0;
	}
	if (doc) {
		doc(stdout);
	} else {
		cli_usage(stdout, NULL);
	}
	return 0;
}

int
cli_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("tegrawatch %s\n", TEGRAWATCH_VERSION);
	return 0;
}
