/*
 * What the alert engine tests share: samples stamped at a time in a power
 * mode, rule levels relative to the board, a recorder of the events the
 * engine tells, and a feed of one metric's values over time.
 */
#ifndef TEGRAWATCH_TESTS_ENGINE_EVENTS_H
#define TEGRAWATCH_TESTS_ENGINE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/alert.h"
#include "core/sample.h"
#include "thresholds/engine.h"
#include "thresholds/rules.h"

/** Level S of R relative to the board: REF times SCALE plus OFFSET. */
void level_ref(struct rule *r, enum severity s, enum threshold_ref ref, double scale, double offset);

/** R applies in power mode MODE too. */
void add_mode(struct rule *r, const char *mode);

/** Clears S and stamps it T_MS (wall and monotonic: a replay) in power mode MODE. */
void at(struct sample *s, int64_t t_ms, const char *mode);

struct rec {
	enum alert_transition t;
	enum severity sev;
	enum severity prev;
	bool absent;
	bool restored;
	double value;
	double threshold;
	int64_t at_ms;
	int64_t starts_at_ms;
	int64_t ends_at_ms;
	char metric[METRIC_NAME_MAX];
	char fp[ALERT_FINGERPRINT_LEN + 1];
	char summary[ALERT_TEXT_MAX];
	char description[ALERT_TEXT_MAX];
	char throttle[ALERT_TEXT_MAX];
	struct throttle_cause causes[THROTTLE_CAUSES_MAX];
	int cause_count;
	char power_mode[POWER_MODE_NAME_MAX];
	char actions[64]; /* the names of ev->actions, joined by ',' */
};

struct recorder {
	struct rec *ev;
	size_t n;
	size_t cap;
	size_t count[TRANSITION_RESOLVED + 1];
};

/** The listener: keeps every event. */
void record(const struct alert_event *e, void *data);

/** As an action sees them: pending and cancelled are not alerts (yet, or any more). */
void record_alerts(const struct alert_event *e, void *data);

void rec_reset(struct recorder *r);

struct want {
	int64_t at_ms;
	enum alert_transition t;
	enum severity sev;
};

#define END_WANT { -1, TRANSITION_PENDING, SEVERITY_NONE }

/** The recorder holds exactly the events of W (up to END_WANT), in order. */
void expect_events(const struct recorder *r, const struct want *w);

/* One metric: values at given times; NAN = the metric is missing from that sample. */
struct pt {
	int64_t t_ms;
	double v;
};

#define END_PT { -1, 0 }

/** Evaluates one sample per point of PTS: METRIC at its value (NAN: missing), power mode MAXN. */
void feed(struct engine *e, struct sample *s, const char *metric, const struct pt *pts);

/** cmocka setup and teardown: *state is a sample. */
int setup(void **state);
int teardown(void **state);

#endif
