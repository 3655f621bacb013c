/*
 * The report's outputs and its place in the pipeline: the sink that feeds
 * a report (and a CSV file) while a recording plays, the CSV writer, the
 * terminal summary, the HTML page and the comparison of two reports.
 */
#ifndef TEGRAWATCH_REPORT_OUT_H
#define TEGRAWATCH_REPORT_OUT_H

#include <stdio.h>

#include "core/pipeline.h"
#include "report.h"

struct csv_writer;

/**
 * Starts a CSV of one row per sample and one column per metric (the
 * columns in the order the names first appear; a name that appears late
 * leaves the earlier rows' cells empty), written to PATH by csv_finish().
 * Returns 0 and *OUT, or -errno.
 */
int csv_create(const char *path, struct csv_writer **out);
/** Adds one row. 0 or -errno. */
int csv_add(struct csv_writer *w, const struct sample *s);
/** Writes PATH (header, then the rows) whole or not at all (core/atomic_file.h). 0 or -errno. */
int csv_finish(struct csv_writer *w);
/** Frees W; without csv_finish() PATH is not touched. NULL is a no-op. */
void csv_destroy(struct csv_writer *w);

/**
 * A sink feeding R (borrowed: it outlives the agent) with every sample and
 * alert event, and W (borrowed, may be NULL) with every sample; the first
 * CSV error is kept in *CSV_ERR. Cannot fail.
 */
struct sink *report_sink_create(struct report *r, struct csv_writer *w, int *csv_err);

/** Prints a readable summary of the finished report R (SOURCE names the recording). */
void report_print_text(const struct report *r, const char *source, FILE *out);

/** Writes the comparison of the finished reports A and B as one JSON object (docs/report.md). */
void report_compare_json(const struct report *a, const struct report *b, const char *name_a, const char *name_b,
			 struct json *j);

/** The comparison's verdict in words ("B ran 10.0 C cooler at the junction ..."), into BUF. */
void report_compare_verdict(const struct report *a, const struct report *b, char *buf, size_t size);

/** Writes the self-contained HTML page for REPORT_JSON (a report or a comparison) to OUT. 0 or -errno. */
int report_write_html(const char *report_json, size_t len, FILE *out);

#endif
