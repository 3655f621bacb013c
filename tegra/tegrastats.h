/*
 * tegrastats line parser. Pure: no I/O, no allocation. Turns one line of
 * `tegrastats` output (any JetPack from R24 to JetPack 7) into canonical
 * metrics. Tokens are recognised by name and value shape, never by
 * position; unknown tokens are skipped and counted.
 */
#ifndef TEGRAWATCH_TEGRASTATS_H
#define TEGRAWATCH_TEGRASTATS_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/metrics.h"
#include "agent/parse_error.h"

struct tegrastats_stamp {
	bool present; /* the line started with "MM-DD-YYYY HH:MM:SS " */
	int year, month, day, hour, minute, second; /* local time */
};

struct tegrastats_info {
	struct tegrastats_stamp stamp;
	unsigned tokens;         /* tokens understood */
	unsigned unknown_tokens; /* tokens skipped because unknown */
};

/**
 * Parses LINE (LEN bytes, need not be NUL-terminated; a trailing "\r\n" is
 * ignored) and adds its metrics to OUT, which the caller has cleared.
 * Returns 0 and fills *INFO, or -EINVAL and fills *ERR (column 1-based,
 * line 0) when the line cannot be read: then OUT is left empty, so no
 * partial sample escapes. A line cut off mid-token is an error.
 */
int tegrastats_parse_line(const char *line, size_t len, struct metric_set *out,
			  struct tegrastats_info *info, struct parse_error *err);

/**
 * Normalises a tegrastats or thermal-zone sensor name into BUF as used in
 * `temp.NAME_c`: lower-cased, a trailing "-therm", "-thermal" or "_tegra"
 * removed ("CPU-therm" -> "cpu", "thermal-fan-est" -> "thermal"), other
 * characters outside [a-z0-9_] turned into '_'. Returns the length, or 0
 * when nothing usable is left or BUF is too small.
 */
size_t tegra_sensor_name(const char *name, size_t len, char *buf, size_t size);

/** True for sensors that are documented placeholders (PMIC): never emitted. */
bool tegra_sensor_is_placeholder(const char *normalised);

#endif
