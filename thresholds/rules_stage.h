/*
 * The rules as a pipeline stage: the engine evaluating them on each sample
 * and the alert state file. Its alert events go to the agent's fan-out
 * (core/pipeline.h), which hands them to every stage and sink that listens:
 * the actions (alerts/, webhook/) as MQTT and the web server. A reload
 * (SIGHUP) asks the composition root for the rules again (struct
 * rules_loader) and swaps the engine, or keeps it when that fails.
 */
#ifndef TEGRAWATCH_RULES_STAGE_H
#define TEGRAWATCH_RULES_STAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/pipeline.h"
#include "rules.h"

/* What the stage runs on, from one configuration: borrowed, it stays until the loader replaces it. */
struct rules_setup {
	const struct rule_set *rules;
	const char *board_name;
	const char *state_file; /* "" = none */
	char **const *notify;   /* per severity, the actions of an alert whose rule names none */
	const size_t *notify_count;
};

struct rules_loader;

/* The composition root's side of a reload: the configuration is its to load. */
struct rules_loader_ops {
	/*
	 * SIGHUP: loads the configuration again and hands its actions to
	 * their listeners. 0 and *OUT, or -errno after logging why: then the
	 * running rules stay. The setup before stays valid until swapped().
	 */
	int (*reload)(struct rules_loader *ld, struct rules_setup *out);
	/* The stage runs on the new setup: the one before is no longer used. */
	void (*swapped)(struct rules_loader *ld);
	/* The reload counters (agent.config_*), added before the stage's own. */
	void (*add_metrics)(struct rules_loader *ld, struct metric_set *m);
	void (*destroy)(struct rules_loader *ld);
};

struct rules_loader {
	const struct rules_loader_ops *ops;
};

/*
 * What was running as an alert fires, from the composition root (it owns
 * the scan of the host's processes): the hooks run on the loop's thread,
 * DATA outlives the stage. NULL hooks: no event takes any.
 */
struct rules_processes {
	/* An alert starts pending: a scan now, the baseline of the CPU shares over the pending time. */
	void (*baseline)(void *data);
	/* An alert fires: a scan now and its top processes into *OUT; 0, or -errno (none taken). */
	int (*take)(void *data, struct top_processes *out);
	void *data;
};

struct rules_stage_options {
	const char *device_id;           /* the board's id in events (copied; kept across reloads) */
	const char *expected_power_mode; /* what {{expected_power_mode}} renders (copied; kept across reloads) */
	bool keep_state; /* read the state file at start, write it after transitions; false in a dry run */
	struct rules_processes processes; /* live only: replays and fixture roots carry what the sample brings */
};

/**
 * Creates the stage on SETUP, owning LOADER (destroyed with the stage).
 * With keep_state, loads the state file when there is one: its alerts
 * reach the listeners before the first tick (replay_active). With the
 * processes hooks, the first event of a tick that fires an alert
 * (alert_event_takes_processes) takes the top processes, puts them on the
 * sample (a recording keeps them) and so on every later event of that tick.
 *
 * Counters it adds after each evaluation, after the loader's:
 * agent.alerts_firing, agent.alerts_fired_total, agent.alerts_resolved_total.
 */
struct stage *rules_stage_create(const struct rules_setup *setup, struct rules_loader *loader,
				 const struct rules_stage_options *opts);

#endif
