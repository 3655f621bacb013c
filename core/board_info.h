/*
 * What the agent knows about the board it watches: its identity and its
 * power modes, read once at start by tegra/ and shown by every output
 * (snapshot, MQTT info and discovery, the HTTP API, Prometheus labels,
 * webhook bodies, recordings), gathered with the agent's own names in
 * struct agent_info.
 */
#ifndef TEGRAWATCH_BOARD_INFO_H
#define TEGRAWATCH_BOARD_INFO_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"

struct board_identity {
	char model[128];  /* device-tree model, NULs stripped; "" unknown */
	char soc[32];     /* "tegra234" from the compatible list; "" unknown */
	char module[32];  /* "p3767-0005" from the compatible list; "" unknown */
	char l4t[24];     /* "36.4.3"; "" unknown */
	char jetpack[16]; /* "6.2", or "6.x" for an L4T newer than the table; "" unknown */
	/* device-tree serial-number, printable; "" unknown. Only in the HA device block and the device id */
	char serial[64];
};

#define NVPMODEL_MODES_MAX 16
#define NVPMODEL_NAME_MAX 48

struct nvpmodel_mode {
	int id;
	char name[NVPMODEL_NAME_MAX];
	/* ceilings set by the mode; 0 = not capped by this mode (-1 in the file) or not set */
	uint64_t gpu_max_hz;
	uint64_t cpu_max_khz; /* the highest MAX_FREQ over CPU clusters */
	uint64_t emc_max_hz;
	int cores_online; /* CPU_ONLINE entries with 1; -1 when not set */
};

struct nvpmodel_conf {
	int mode_count;
	int default_id; /* PM_CONFIG DEFAULT, -1 when absent */
	struct nvpmodel_mode modes[NVPMODEL_MODES_MAX];
};

/*
 * Who this agent is, for every output that says so: filled once by the
 * composition root (agent/setup.c), given to each module that needs it.
 * Borrowed during the call it is given to: a module that keeps a string
 * copies it.
 */
struct agent_info {
	struct board_identity identity;    /* "" fields when unknown */
	const struct nvpmodel_conf *modes; /* power modes, NULL when unknown */
	const char *board_name;            /* agent.board_name: the instance label, the Home Assistant name */
	const char *device_id;             /* the board's stable id (core/device_id.h), NULL when not needed */
	const char *version;               /* the agent's version, "0.1.0" */
	int64_t interval_ms;               /* the sampling interval */
	const char *generator_url;         /* where a webhook body links back to (the dashboard), or NULL */
};

/**
 * Writes "model", "soc", "module", "l4t" and "jetpack" into an object the
 * caller has opened: unknown ones as "" or, with NULL_UNKNOWN, as null.
 */
void board_identity_to_json(struct json *j, const struct board_identity *id, bool null_unknown);

struct json_reader;
/** Reads an object written by board_identity_to_json() into ID (cleared first; other members skipped). */
void board_identity_from_json(struct json_reader *r, struct board_identity *id);

#endif
