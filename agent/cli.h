/*
 * The command line in one table (cli.c): every command and every option,
 * with what --help says, what the man page says and what the shell
 * completes. The commands parse their options through cli_getopt(); --help,
 * the man page's synopsis and options (`help --man-synopsis`,
 * `help --man-options`, pasted into docs/man/tegrawatch.1) and the bash
 * completion (`help --bash-completion`, configs/bash-completion/tegrawatch)
 * are written from it. The test cli-doc (tests/integration/cli_doc.py)
 * checks that the files are what the table gives and that every command
 * takes the options it lists; `cli_doc.py --write` rewrites them.
 * To add an option: a row in cli.c, a case in the command, then --write.
 */
#ifndef TEGRAWATCH_CLI_H
#define TEGRAWATCH_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* What an option's argument is: how the shell completes it. */
enum cli_arg {
	CLI_ARG_NONE,    /* a flag */
	CLI_ARG_FILE,    /* any file */
	CLI_ARG_YAML,    /* a configuration file */
	CLI_ARG_DIR,     /* a directory */
	CLI_ARG_PROGRAM, /* a program on $PATH */
	CLI_ARG_NUMBER,  /* nothing to complete */
};

/* What cli_getopt() returns for each option (short ones are their letter). */
enum cli_code {
	OPT_CONFIG = 'c',
	OPT_HELP = 'h',
	OPT_ROOT = 256,
	OPT_JSON,
	OPT_NO_JSON,
	OPT_REPLAY,
	OPT_SPEED,
	OPT_DEMO,
	OPT_INTERVAL,
	OPT_COUNT,
	OPT_NO_TEGRASTATS,
	OPT_TEGRASTATS,
	OPT_RECORD,
	OPT_RECORD_MAX_MB,
	OPT_DRY_RUN,
	OPT_PHASES,
	OPT_CSV,
	OPT_HTML,
	OPT_COMPARE,
	OPT_CRITERIA,
	OPT_VERBOSE, /* -v and -q: taken out by main.c before the command, anywhere on the line */
	OPT_QUIET,
	OPT_BASH_COMPLETION,
	OPT_MAN_SYNOPSIS,
	OPT_MAN_OPTIONS,
	OPT_URL,
	OPT_ONCE,
	OPT_VIEW,
};

struct cli_option {
	const char *command;   /* the command that takes it; "" for every command */
	enum cli_code code;    /* what cli_getopt() returns */
	char short_name;       /* 'c', or 0 */
	const char *long_name; /* "config" */
	enum cli_arg arg;      /* CLI_ARG_NONE: no argument */
	const char *arg_name;  /* "FILE" (--help; lower case in the man page) */
	const char *help;      /* one line for --help */
	const char *man;       /* the man page's text: mdoc(7) lines */
};

/* The commands, in the order of the table; main.c maps each to its function. */
enum cli_command_id {
	CLI_PARSE,
	CLI_SNAPSHOT,
	CLI_RUN,
	CLI_CHECK,
	CLI_REPLAY,
	CLI_REPORT,
	CLI_TOP,
	CLI_HELP,
	CLI_VERSION,
	CLI_COMMANDS /* how many */
};

struct cli_command {
	enum cli_command_id id;
	const char *name;
	const char *summary;  /* a few words for the list of commands */
	const char *operands; /* after the options: "[FILE]", "LOG", "RECORDING | --compare A B" */
	bool file_operands;   /* the shell completes file names for the operands */
	const char *help;     /* what it does, for --help: lines of at most 76 characters */
};

extern const struct cli_option cli_options[];
extern const size_t cli_option_count;
extern const struct cli_command cli_commands[];
extern const size_t cli_command_count;

/** The command called NAME ("--help", "-h", "--version" are help and version), or NULL. */
const struct cli_command *cli_command_find(const char *name);

/** OPT_VERBOSE or OPT_QUIET when ARG is one of the options main.c takes anywhere on the line, else 0. */
int cli_global_option(const char *arg);

/** Has the command NAME options of its own? */
bool cli_has_options(const char *name);

/**
 * getopt_long() over COMMAND's options from the table: the next option's
 * code, '?' for an unknown option or a missing argument (getopt says which),
 * or -1 when the options end (optind is the first operand).
 */
int cli_getopt(const char *command, int argc, char **argv);

/** The commands help and version. */
int cli_help(int argc, char **argv);
int cli_version(int argc, char **argv);

/** COMMAND's --help (its usage, what it does, its options), or with NULL the list of commands. */
void cli_usage(FILE *out, const char *command);

/* The generated documents (cli_doc.c): the man page's SYNOPSIS and OPTIONS sections, the bash completion. */
void cli_man_synopsis(FILE *out);
void cli_man_options(FILE *out);
void cli_bash_completion(FILE *out);

#endif
