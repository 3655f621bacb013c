/*
 * The composition root: the only code that knows every module. Turns a
 * validated configuration and the command line into a running pipeline
 * (sources, the throttle and rules stages, sinks), for `run` and `replay`.
 */
#ifndef TEGRAWATCH_SETUP_H
#define TEGRAWATCH_SETUP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/loop.h"
#include "core/board_info.h"
#include "core/log.h"
#include "config.h"

struct setup_options {
	const char *replay;     /* a recorded tegrastats log; NULL = the live board */
	double speed;           /* replay pace factor, 0 = as fast as possible */
	const char *root;       /* prefix of every path read; NULL = agent.root */
	int interval_ms;        /* 0 = agent.interval */
	uint64_t max_samples;   /* 0 = no limit */
	bool no_tegrastats;     /* --no-tegrastats */
	const char *tegrastats; /* --tegrastats PROGRAM, or NULL */
	bool dry_run;           /* rules run, actions and the state file do not */
	bool outputs;           /* JSON Lines, MQTT and web as configured (run); off for replay */
	bool demo;              /* run --demo: the replay loops, the dashboard takes the next free port when its own is
				   taken, a short status on stdout (demo.h) */
	int json_lines;         /* enum json_lines_mode from --json/--no-json; AUTO = agent.json_lines */
	struct sink *extra;     /* one more sink (replay's timeline), owned from now on; may be NULL */
	struct source *source;  /* with replay: reads it instead of the tegrastats replay (report's recording
				   reader); owned from now on; may be NULL */

	/* --record FILE: every sample to FILE, the identity of the board read in its header */
	const char *record;
	uint64_t record_max_bytes; /* --record-max-mb: a new FILE past this size; 0 = never */
	/* when not NULL: set to the identity of the board read (all "" when none was) */
	struct board_identity *board;
};

/**
 * The log level of -v/-q (FROM_COMMAND_LINE) or the default: set now; a
 * level given on the command line wins over agent.log_level.
 */
void setup_log_level(enum log_level level, bool from_command_line);

/**
 * Loads PATH (or the default file when it exists, else the defaults with
 * the environment overrides and the shipped rules, said in a warning),
 * prints every mistake and applies agent.log_level (setup_log_level).
 * Returns 0 and *OUT, or EX_CONFIG.
 */
int setup_load_config(const char *path, struct config **out);

/**
 * Builds the agent for CFG (owned from now on, also on failure) and OPTS,
 * on the board below --root, else agent.root, else the live one (opened
 * once, for the sources and every output that names it). Returns 0 and
 * *OUT, or an exit status (sysexits) after saying why.
 */
int setup_agent(struct config *cfg, const struct setup_options *opts, struct agent **out);

struct board;

/** Says once (a warning) when B, read below ROOT (NULL or "": /), is not a Jetson, and what is read instead. */
void setup_say_not_jetson(const struct board *b, const char *root);

/** The shipped rules' directory (installed under the data directory, or in the source tree), or NULL. */
const char *setup_rules_dir(void);

/** The demo board's directory (installed or in the source tree), or NULL. */
const char *setup_demo_dir(void);

#endif
