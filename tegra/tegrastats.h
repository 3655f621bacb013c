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

#include "core/metrics.h"
#include "core/parse_error.h"

struct tegrastats_stamp {
	bool present;                               /* the line started with "MM-DD-YYYY HH:MM:SS " */
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
 * partial sample escapes. A line cut off mid-token is an error. Where a
 * cut cannot be told from a complete token, no value is invented: a last
 * number cut short reads as a smaller number ("SYS5V 2053/205"), and a
 * last "NAME <int>" may be a cut "NAME <int>/<int>" or "NAME <int>%@<MHz>":
 * it is an error for rail names (VDD_*, VIN_*, POM_*, NC, ...), an engine
 * clock only for APE (always printed as bare MHz), and otherwise skipped as
 * an unknown token. A NUL byte anywhere in the line is an error. In a
 * line with JetPack 7 "a/b/c" rails a last two-value rail is an error (an
 * "a/b/c" cut), and a last lone "amW" rail is one unless the line already
 * had a lone one (then it is skipped as unknown, as everywhere else).
 */
int tegrastats_parse_line(const char *line, size_t len, struct metric_set *out, struct tegrastats_info *info,
			  struct parse_error *err);

/**
 * As tegrastats_parse_line() for a line read from a file or a pipe, with
 * its newline (LEN counts it): a line without one (the writer stopped
 * mid-line) is an error, since it may parse with tokens missing.
 */
int tegrastats_parse_record(const char *line, size_t len, struct metric_set *out, struct tegrastats_info *info,
			    struct parse_error *err);

/**
 * Normalises a tegrastats or thermal-zone sensor name into BUF as used in
 * `temp.NAME_c`: lower-cased, one trailing "-therm", "-thermal", "_tegra",
 * "-fan-est" or "-die" removed, so that zone types and tegrastats names
 * agree ("CPU-therm" -> "cpu", "thermal-fan-est" -> "thermal",
 * "Tdiode_tegra" -> "tdiode", "PMIC-Die" -> "pmic"), other characters
 * outside [a-z0-9_] turned into '_'. Returns the length, or 0 when no
 * letter or digit is left or BUF is too small.
 */
size_t tegra_sensor_name(const char *name, size_t len, char *buf, size_t size);

/** True for sensors that are documented placeholders (names starting "pmic"): never emitted. */
bool tegra_sensor_is_placeholder(const char *normalised);

#endif
