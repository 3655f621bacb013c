/*
 * A soak verdict: limits a recording must meet (`report --criteria FILE`,
 * docs/report.md#criteria), each checked against the report's statistics
 * with its evidence. The file is YAML, read through core/cfg_tree:
 *
 *   criteria:
 *     - metric: temp.tj_c
 *       max_below: 95
 *     - no_throttle: true
 *     - metric: power.vdd_in.mw
 *       p99_below: 7000
 *     - metric: throttle_eta.*_s
 *       min_above: 120
 *       if_absent: pass
 */
#ifndef TEGRAWATCH_CRITERIA_H
#define TEGRAWATCH_CRITERIA_H

#include <stdbool.h>
#include <stdio.h>

#include "core/diag.h"
#include "core/json.h"
#include "report.h"

enum criterion_stat {
	CRIT_MAX,
	CRIT_MIN,
	CRIT_MEAN,
	CRIT_P50,
	CRIT_P95,
	CRIT_P99,
	CRIT_THROTTLE_S, /* seconds throttled (no_throttle: below 0 s is "none at all") */
};

struct criterion {
	char name[128];               /* as written, or made from the rest: "temp.tj_c max below 95" */
	char metric[METRIC_NAME_MAX]; /* a name or a glob; "" for the throttle */
	enum criterion_stat stat;
	bool below; /* the statistic must be < limit; else > limit */
	double limit;
	bool absent_passes; /* if_absent: pass (no such metric in the run) */
};

struct criteria {
	struct criterion *items;
	size_t count;
};

/* What one criterion found. */
struct criterion_result {
	bool pass;
	bool measured;                /* the metric (or a match of the glob) was in the run */
	double value;                 /* the statistic, of the worst matching metric */
	char metric[METRIC_NAME_MAX]; /* which metric that was */
	int64_t at_ms;                /* max: when it was first reached; the throttle: the first episode; 0 */
	char evidence[256];
};

/** Loads PATH into *OUT. Returns 0, or -EINVAL / -errno after adding FILE:LINE:COL messages to DIAGS. */
int criteria_load(const char *path, struct criteria *out, struct diag_list *diags);

/** As criteria_load() for LEN bytes of YAML in BUF (NAME in messages). */
int criteria_load_buffer(const char *name, const char *buf, size_t len, struct criteria *out, struct diag_list *diags);

void criteria_free(struct criteria *c);

/** Checks every criterion of C against the finished report R into RES (C->count entries); true when all pass. */
bool criteria_evaluate(const struct criteria *c, const struct report *r, struct criterion_result *res);

/** {"passed": bool, "results": [...]} */
void criteria_json(const struct criteria *c, const struct criterion_result *res, struct json *j);

/** PASS/FAIL lines with the evidence. */
void criteria_text(const struct criteria *c, const struct criterion_result *res, FILE *out);

#endif
