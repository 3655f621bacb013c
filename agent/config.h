/*
 * The agent's configuration: one YAML file (plus included rule files)
 * decoded and validated in three steps: load (agent/cfg_tree.c), decode
 * (key tables with defaults, here and in thresholds/rules_load.c),
 * validate. Environment variables TEGRAWATCH_<SECTION>_<KEY> override
 * single settings.
 */
#ifndef TEGRAWATCH_CONFIG_H
#define TEGRAWATCH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "thresholds/rules.h"

#define CONFIG_DEFAULT_PATH "/etc/tegrawatch/tegrawatch.yaml"
#define EX_CONFIG 78

enum action_type {
	ACTION_LOG,
	ACTION_EXEC,
};

struct action_def {
	char *name;
	enum action_type type;
	char **argv;        /* ACTION_EXEC: program and arguments, NULL-terminated; no shell */
	size_t argc;
	int64_t timeout_ms; /* ACTION_EXEC: kill the program after this long (default 10 s) */
};

enum tegrastats_mode {
	TEGRASTATS_AUTO, /* run it when the binary exists */
	TEGRASTATS_ON,
	TEGRASTATS_OFF,
};

enum mqtt_protocol {
	MQTT_PROTOCOL_311,
	MQTT_PROTOCOL_5,
};

/* The MQTT password when no password_file is set (never a file setting). */
#define MQTT_PASSWORD_ENV "TEGRAWATCH_MQTT_PASSWORD"

/* mqtt: publishing (issue 4). host "" = MQTT off. */
struct mqtt_config {
	char *host;
	int port;                 /* 1883 */
	char *prefix;             /* topic prefix, "tegrawatch" */
	char *device_id;          /* "" = the host name */
	char *client_id;          /* "" = "tegrawatch-" + device id */
	int protocol;             /* enum mqtt_protocol: "3.1.1" or "5" */
	int64_t keepalive_ms;     /* 30 s */
	int qos;                  /* QoS of state samples: 0 or 1 (alerts always 1) */
	char *username;           /* "" = none */
	char *password_file;      /* "" = none; TEGRAWATCH_MQTT_PASSWORD also works */
	int tls;                  /* bool */
	char *ca_file;
	char *cert_file;          /* client certificate, "" = none */
	char *key_file;
	int tls_insecure;         /* bool: skip host name verification (warned at start) */
	int64_t backoff_base_ms;  /* 1 s */
	int64_t backoff_cap_ms;   /* 60 s */
	int inflight;             /* QoS 1 messages handed to libmosquitto at once, 100 */
	int spool_records;        /* memory spool while the broker is away, 3600 */
	char *spool_file;         /* "" = memory only */
	int spool_file_max_mb;    /* 64 */
	char **metric_topics;     /* globs of metrics published on PREFIX/ID/metric/NAME; NULL = off */
	size_t metric_topic_count;
	int ha_discovery;         /* bool, true */
	char *ha_prefix;          /* "homeassistant" */
};

/* web: the HTTP server (issue 5). listen "" = off. */
struct web_config {
	char *listen;                 /* "127.0.0.1:9474" */
	char *token_file;             /* bearer token, "" = none */
	char *basic_auth_user;        /* "" = none */
	char *basic_auth_password_file;
	int64_t history_ms;           /* 1 h of history per metric */
	int max_connections;          /* 32 */
	int max_connections_per_ip;   /* 8 */
	int64_t connection_timeout_ms;/* 10 s */
};

struct config {
	char *path;              /* the main file */
	/* agent: */
	int64_t interval_ms;     /* agent.interval, default 1 s */
	char *root;              /* agent.root, default "" (the real /) */
	char *state_file;        /* agent.state_file, default /var/lib/tegrawatch/alerts.state; "" = off */
	char *board_name;        /* agent.board_name, default: the host name */
	int log_level;           /* agent.log_level as enum log_level, default LOG_WARN */
	/* sources: */
	enum tegrastats_mode tegrastats; /* sources.tegrastats: auto|on|off */
	char *tegrastats_program;        /* sources.tegrastats_program, default "tegrastats" */
	struct mqtt_config mqtt;
	struct web_config web;
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
int config_load_buffer(const char *name, const char *buf, size_t len, struct config **out,
		       struct diag_list *diags);

/**
 * The defaults with the TEGRAWATCH_<SECTION>_<KEY> environment overrides
 * applied, for an agent started without a configuration file (its path is
 * ""). Returns 0 and *OUT, or -EINVAL after adding messages to DIAGS.
 */
int config_load_environment(struct config **out, struct diag_list *diags);

/** A configuration with every default and no rules (no file given). */
struct config *config_default(void);

void config_destroy(struct config *cfg);

/**
 * Names the settings of the agent, sources, mqtt and web sections that
 * differ between OLD and NEW and that a reload (SIGHUP) does not apply:
 * all of them but the keys marked CFG_F_RELOADED (agent.board_name and
 * agent.state_file, which the alert engine takes). Writes them to
 * BUF as "mqtt.host, web.listen" (cut short with "..." when BUF is full)
 * and returns how many there are.
 */
size_t config_restart_changes(const struct config *old, const struct config *new, char *buf, size_t size);

/** The action called NAME, or NULL. */
const struct action_def *config_find_action(const struct config *cfg, const char *name);

#endif
