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

struct rules_stage_options {
	const char *device_id;           /* the board's id in events (copied; kept across reloads) */
	const char *expected_power_mode; /* what {{expected_power_mode}} renders (copied; kept across reloads) */
	bool keep_state; /* read the state file at start, write it after transitions; false in a dry run */
};

/**
 * Creates the stage on SETUP, owning LOADER (destroyed with the stage).
 * With keep_state, loads the state file when there is one: its alerts
 * reach the listeners before the first tick (replay_active).
 *
 * Counters it adds after each evaluation, after the loader's:
 * agent.alerts_firing, agent.alerts_fired_total, agent.alerts_resolved_total.
 */
struct stage *rules_stage_create(const struct rules_setup *setup, struct rules_loader *loader,
				 const struct rules_stage_options *opts);

#endif
