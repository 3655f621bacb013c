/*
 * The composition root: the only code that knows every module. Turns a
 * validated configuration and the command line into a running pipeline
 * (sources, the throttle and rules stages, sinks), for `run` and `replay`.
 */
#ifndef TEGRAWATCH_SETUP_H
#define TEGRAWATCH_SETUP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/agent.h"
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
	int json_lines;         /* enum json_lines_mode from --json/--no-json; AUTO = agent.json_lines */
	struct sink *extra;     /* one more sink (replay's timeline), owned from now on; may be NULL */
	struct source *source;  /* with replay: reads it instead of the tegrastats replay (report's recording
				   reader); owned from now on; may be NULL */
};

/**
 * Builds the agent for CFG (owned from now on, also on failure) and OPTS.
 * Returns 0 and *OUT, or an exit status (sysexits) after saying why.
 */
int setup_agent(struct config *cfg, const struct setup_options *opts, struct agent **out);

/** The demo board's directory (installed or in the source tree), or NULL. */
const char *setup_demo_dir(void);

#endif
