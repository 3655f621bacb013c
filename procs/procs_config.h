/*
 * The processes: section (docs/configuration.md#processes): the
 * application's processes to watch, each by one of
 *
 *   - name: inference                  comm: trtexec          its name in /proc/PID/stat
 *   - name: recorder                   cmdline: "python3 .*record\.py"   a POSIX extended regex
 *   - name: broker                     pidfile: /run/mosquitto.pid
 *   - name: camera                     unit: nvargus-daemon.service       a systemd unit's cgroup
 *
 * A list at the top of the file; its pace is sources.processes_interval.
 * Pure: decoding and checks (a regex is compiled to check it), no I/O.
 */
#ifndef TEGRAWATCH_PROCS_CONFIG_H
#define TEGRAWATCH_PROCS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/cfg_decode.h"

#define PROCS_MAX 16         /* entries: about ten metrics each in every sample */
#define PROCS_SEGMENT_MAX 32 /* a name's metric segment, NUL included: process.SEGMENT.cpu_seconds_total fits */
#define PROCS_INTERVAL_DEFAULT_MS 5000

enum procs_match {
	PROCS_COMM,    /* /proc/PID/stat's name, exactly */
	PROCS_CMDLINE, /* the arguments joined by spaces match the regex */
	PROCS_PIDFILE, /* the pid a file names */
	PROCS_UNIT,    /* the processes of a systemd unit's cgroup */
};

struct procs_watch {
	char *name;                      /* as written: the "name" label */
	char segment[PROCS_SEGMENT_MAX]; /* its metric segment: process.SEGMENT.up */
	enum procs_match match;
	char *value; /* the comm, regex, pid file or unit (".service" added when it had no type) */
	char *where; /* "FILE:LINE:COL" of the entry, for messages at run time */
};

struct procs_config {
	struct procs_watch *items;
	size_t count;
};

/** "comm", "cmdline", "pidfile" or "unit". */
const char *procs_match_name(enum procs_match m);

/**
 * Decodes the processes: list NODE into CFG (replacing what it held),
 * reporting every mistake at its place through DEC. Returns 0 or -EINVAL.
 */
int procs_config_decode(struct cfg_decoder *dec, const struct cfg_node *node, struct procs_config *cfg);

/** Frees what CFG holds and empties it; a zeroed CFG is fine. */
void procs_config_free(struct procs_config *cfg);

/** True when A and B watch the same processes the same way (a reload compares them). */
bool procs_config_equal(const struct procs_config *a, const struct procs_config *b);

/** The metric segment of NAME into BUF (PROCS_SEGMENT_MAX): lower case, other characters '_'. False when it does not fit. */
bool procs_segment(const char *name, char *buf);

#endif
