/*
 * work/: joules per unit of the application's work (docs/work.md). The
 * application says what it did: StatsD counter lines ("inference:1|c") in
 * UDP datagrams to a loopback port (the work source), or POST
 * /api/v1/work {"name": "inference", "count": 5} on the web server. A
 * ledger counts them (thread-safe: the web server's thread adds too); the
 * work stage divides the board's energy by them. Includes core/ only;
 * agent/ wires it.
 */
#ifndef TEGRAWATCH_WORK_H
#define TEGRAWATCH_WORK_H

#include <stdbool.h>
#include <stddef.h>

#include "core/cfg_decode.h"
#include "core/pipeline.h"

#define WORK_NAMES_MAX 32
#define WORK_NAME_MAX 25 /* 24 characters and the NUL: work.NAME.above_idle_joules_per_unit fits a metric name */

/* work: the StatsD listener. listen "" = off (POST /api/v1/work works whenever the web server runs). */
struct work_config {
	char *listen; /* "127.0.0.1:9475": a loopback address only */
};

/** The key table and checks: a loopback HOST:PORT or "". */
extern const struct cfg_section work_config_section;

struct work_ledger;

/** A ledger with one reference. Cannot fail. */
struct work_ledger *work_ledger_create(void);

/** Another reference to L (for another thread's owner). */
struct work_ledger *work_ledger_ref(struct work_ledger *l);

/** Drops a reference; the last one frees L. NULL is a no-op. */
void work_ledger_unref(struct work_ledger *l);

/**
 * Adds COUNT units of work NAME (LEN bytes; normalised: lower case, '.'
 * and '-' become '_'; then [a-z0-9_], 1 to 24 characters). COUNT must be
 * finite, above 0 and at most 1e9. Thread-safe. Returns 0, -EINVAL (with
 * why in ERR) or -ENOSPC (32 names already).
 */
int work_ledger_add(struct work_ledger *l, const char *name, size_t len, double count, char *err, size_t err_size);

/**
 * POST /api/v1/work: LEN bytes of JSON {"name": "inference", "count": 5}
 * ("count" optional, 1) added to the ledger DATA. For the web server's
 * thread. Returns 0, or -EINVAL / -ENOSPC with why in ERR.
 */
int work_post_json(void *data, const char *body, size_t len, char *err, size_t err_size);

/** work_ledger_unref() for a void pointer (the web server's release hook). */
void work_ledger_release(void *data);

/**
 * Parses one StatsD line (LEN bytes, no newline): "NAME:VALUE|c" with an
 * optional "|@RATE" (the value is divided by it) and "|#tags" (ignored).
 * Writes the raw NAME span and the count. Pure. Returns 0 or -EINVAL with
 * why in ERR (a gauge, a timer or anything but a counter is refused).
 */
int work_parse_statsd(const char *line, size_t len, const char **name, size_t *name_len, double *count, char *err,
		      size_t err_size);

/**
 * A source reading StatsD datagrams on LISTEN (a loopback UDP HOST:PORT)
 * into LEDGER (a reference is taken), and putting work.NAME.count_total
 * (units since the agent started) for every name into each sample. It
 * never makes a sample by itself. Bad lines are counted
 * (agent.work_bad_lines_total) and logged at most once a minute. Returns 0
 * and *OUT, or -errno (the port is taken, ...).
 */
int work_source_create(const char *listen, struct work_ledger *ledger, struct source **out);

/**
 * The work stage: from work.NAME.count_total and the rails, per name
 * work.NAME.rate_per_s, work.NAME.joules_per_unit (the board's input
 * rail, idle included), work.NAME.above_idle_joules_per_unit, and
 * work.NAME.RAIL.joules_per_unit for the other rails, over ~1 min; and
 * work.idle_mw, the input power measured while no work was reported.
 * Cannot fail.
 */
struct stage *work_stage_create(void);

#endif
