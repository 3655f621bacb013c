/*
 * The agent's configuration: one YAML file (plus included rule files)
 * decoded and validated in three steps: load (core/cfg_tree.c), decode
 * (key tables with defaults, here and in thresholds/rules_load.c),
 * validate. Environment variables TEGRAWATCH_<SECTION>_<KEY> override
 * single settings.
 */
#ifndef TEGRAWATCH_CONFIG_H
#define TEGRAWATCH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/diag.h"
#include "core/exit_codes.h"
#include "fleet/fleet_config.h"
#include "host/host_config.h"
#include "procs/procs_config.h"
#include "work/work.h"
#include "mqtt/mqtt_config.h"
#include "webhook/webhook_config.h"
#include "thresholds/rules.h"
#include "web/web_config.h"

#define CONFIG_DEFAULT_PATH "/etc/tegrawatch/tegrawatch.yaml"

enum action_type {
	ACTION_LOG,
	ACTION_EXEC,
	ACTION_WEBHOOK,
};

struct action_def {
	char *name;
	enum action_type type;
	char **argv; /* ACTION_EXEC: program and arguments, NULL-terminated; no shell */
	size_t argc;
	int64_t timeout_ms;            /* ACTION_EXEC: kill the program after this long (default 10 s) */
	struct webhook_config webhook; /* ACTION_WEBHOOK (webhook/webhook_config.h) */
};

enum json_lines_mode {
	JSON_LINES_AUTO, /* on, except when stdout is the journal */
	JSON_LINES_ON,
	JSON_LINES_OFF,
};

enum tegrastats_mode {
	TEGRASTATS_AUTO, /* run it when the binary exists */
	TEGRASTATS_ON,
	TEGRASTATS_OFF,
};

struct config {
	char *path; /* the main file */
	/* agent: */
	int64_t interval_ms;      /* agent.interval, default 1 s */
	char *root;               /* agent.root, default "" (the real /) */
	char *state_file;         /* agent.state_file, default /var/lib/tegrawatch/alerts.state; "" = off */
	char *board_name;         /* agent.board_name, default: the host name */
	int log_level;            /* agent.log_level as enum log_level, default LOG_WARN */
	int json_lines;           /* agent.json_lines: enum json_lines_mode, per-sample JSON on stdout */
	char *memory_max;         /* agent.memory_max: a size, "none" or "auto" (the cgroup's memory.max) */
	uint64_t memory_limit;    /* agent.memory_max resolved by the loader, bytes; 0 = none */
	bool memory_limit_cgroup; /* memory_limit came from the cgroup */

	char *expected_power_mode; /* agent.expected_power_mode: "MAXN_SUPER, jetson_clocks on"; "" = any */
	/* sources: */
	enum tegrastats_mode tegrastats; /* sources.tegrastats: auto|on|off */
	char *tegrastats_program;        /* sources.tegrastats_program, default "tegrastats" */
	enum tegrastats_mode nvml; /* sources.nvml: auto|on|off, the same three words (setup.c says what auto does) */
	int64_t processes_interval_ms; /* sources.processes_interval: the processes: scans' pace, default 5 s */
	struct mqtt_config mqtt;
	struct web_config web;
	struct fleet_config remote_write; /* fleet/fleet_config.h; url "" = off */
	struct fleet_config otlp;
	struct work_config work;   /* work/work.h; listen "" = no StatsD listener */
	struct host_config host;   /* host/host_config.h; the host source, on the real root only */
	struct procs_config procs; /* processes: (procs/procs_config.h); none listed = nothing read */
	/* actions: and notify: */
	struct action_def *actions; /* "log" is always defined first */
	size_t action_count;
	char **notify[SEVERITY_COUNT]; /* global binding: severity -> action names */
	size_t notify_count[SEVERITY_COUNT];
	/* rules: (from the file and its includes) */
	struct rule_set rules;
};

/**
 * Loads PATH with its includes, applies environment overrides and
 * validates everything. Every mistake found is added to DIAGS as
 * FILE:LINE:COL: message. Returns 0 and *OUT, or -EINVAL (or -errno for
 * I/O) when anything is wrong: then nothing is returned.
 */
int config_load(const char *path, struct config **out, struct diag_list *diags);

/**
 * As config_load() for LEN bytes of YAML in BUF (NAME is used in messages),
 * for tests and the fuzzer: no file is read, so `include:` is refused, and
 * the environment is not applied.
 */
int config_load_buffer(const char *name, const char *buf, size_t len, struct config **out, struct diag_list *diags);

/**
 * The defaults with the TEGRAWATCH_<SECTION>_<KEY> environment overrides
 * applied, for an agent started without a configuration file (its path is
 * ""). Returns 0 and *OUT, or -EINVAL after adding messages to DIAGS.
 */
int config_load_environment(struct config **out, struct diag_list *diags);

/**
 * The defaults with the environment overrides and the rule files DIR/\*.yaml
 * (the shipped rules), for a command given no configuration file where
 * none is installed: as config_load_environment(), its path is "".
 */
int config_load_rules_dir(const char *dir, struct config **out, struct diag_list *diags);

/** A configuration with every default and no rules (no file given). */
struct config *config_default(void);

void config_destroy(struct config *cfg);

/**
 * Names the settings of the agent, sources, mqtt and web sections (and
 * processes:) that differ between OLD and NEW and that a reload (SIGHUP) does not apply:
 * all of them but the keys marked CFG_F_RELOADED (agent.board_name and
 * agent.state_file, which the alert engine takes). Writes them to
 * BUF as "mqtt.host, web.listen" (cut short with "..." when BUF is full)
 * and returns how many there are.
 */
size_t config_restart_changes(const struct config *old, const struct config *new, char *buf, size_t size);

/** The action called NAME, or NULL. */
const struct action_def *config_find_action(const struct config *cfg, const char *name);

#endif
