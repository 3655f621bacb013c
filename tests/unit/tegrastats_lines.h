/*
 * What the tegrastats parser tests share: the parse of one line into a
 * metric set, and checks of what it holds against tables written by hand.
 */
#ifndef TEGRAWATCH_TESTS_TEGRASTATS_LINES_H
#define TEGRAWATCH_TESTS_TEGRASTATS_LINES_H

#include <stdbool.h>
#include <stddef.h>

#include "tegra/tegrastats.h"

struct kv {
	const char *name;
	double value;
};

/* cpu.N.online/load_pct/freq_mhz for an online core, and an "off" core */
#define ON(n, load, mhz)                                                             \
	{ "cpu." #n ".online", 1 }, { "cpu." #n ".load_pct", load },                   \
	{ "cpu." #n ".freq_mhz", mhz }
#define OFF(n) { "cpu." #n ".online", 0 }
#define RAIL(name, cur, avg) { "power." name ".mw", cur }, { "power." name ".avg_mw", avg }
/* JetPack 7: current, average, maximum */
#define RAIL3(name, cur, avg, max) RAIL(name, cur, avg), { "power." name ".max_mw", max }
#define TEMP(name, c) { "temp." name "_c", c }
/* JetPack 7: current, maximum */
#define TEMP2(name, c, max) TEMP(name, c), { "temp_max." name "_c", max }
#define ENG_OFF(name) { "engine." name ".on", 0 }
#define ENG_MHZ(name, mhz) { "engine." name ".on", 1 }, { "engine." name ".freq_mhz", mhz }
#define ENG_LOAD(name, pct, mhz)                                                     \
	{ "engine." name ".on", 1 }, { "engine." name ".load_pct", pct },              \
	{ "engine." name ".freq_mhz", mhz }
#define END { NULL, 0 }

/* what the last parse() filled, and a reference parse (the cut-off test) */
extern struct metric_set set;
extern struct metric_set full_set;

#define MAX_FILE_LINES 64
#define LINE_BYTES 2048

struct data_lines {
	size_t count;
	char text[MAX_FILE_LINES][LINE_BYTES];
};

/** Reads the data lines (not '#', not blank) of fixtures/tegrastats/NAME. */
void read_data_lines(const char *name, struct data_lines *out);

/** LINE parsed into `set` (cleared first). */
int parse(const char *line, struct tegrastats_info *info, struct parse_error *err);

/** parse() that must succeed. */
int parse_ok(const char *line, struct tegrastats_info *info);

void expect_metric(const char *name, double want);
void expect_absent(const char *name);

/** `set` holds exactly the metrics of KV (which has COUNT entries). */
void expect_exactly(const struct kv *kv, size_t count, const char *line);

#endif
