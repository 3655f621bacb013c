/*
 * Threshold rules as the engine sees them: decoded and validated, no YAML
 * left. thresholds/rules_load.c builds them from a cfg_tree; tests build
 * them directly.
 */
#ifndef TEGRAWATCH_RULES_H
#define TEGRAWATCH_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/alert.h"
#include "core/metrics.h"

enum rule_op {
	RULE_ABOVE,     /* value >= threshold fires */
	RULE_BELOW,     /* value <= threshold fires */
	RULE_CHANGES,   /* value differs from the previous sample (power mode changed) */
	RULE_INCREASES, /* value greater than the previous sample (event counters) */
};

/*
 * A threshold: a number, or a reference to a board value resolved per
 * metric instance, scaled and offset: REF * scale + offset. When the
 * reference is missing for an instance, FALLBACK applies if set; without
 * one the level is skipped for that instance.
 */
enum threshold_ref {
	REF_NONE,          /* plain number: offset */
	REF_PASSIVE_TRIP,  /* trip.SENSOR.passive_c of a temp.SENSOR_c metric */
	REF_HOT_TRIP,      /* trip.SENSOR.hot_c */
	REF_CRITICAL_TRIP, /* trip.SENSOR.critical_c */
	REF_CEILING,       /* X.max_freq_mhz of an X.freq_mhz metric (current clock ceiling) */
	REF_HW_MAX,        /* X.hw_max_freq_mhz of an X.freq_mhz metric */
};

struct threshold {
	bool set; /* this severity level is used */
	enum threshold_ref ref;
	double scale;  /* 1 unless "ceiling * 0.9" */
	double offset; /* the number, or the "+/- N" */
	bool has_fallback;
	double fallback;
};

#define RULE_MODES_MAX 8

struct rule {
	char *name;   /* unique, [a-z0-9_.-]+ */
	char *metric; /* exact name or glob with '*' (matches within and across segments) */
	enum rule_op op;
	struct threshold level[SEVERITY_COUNT]; /* [SEVERITY_WARNING], [SEVERITY_CRITICAL] */
	enum severity event_severity; /* RULE_CHANGES/RULE_INCREASES: severity of the event (default warning) */
	int64_t for_ms;               /* condition must hold this long before firing; 0 = at once */
	bool clear_is_value;          /* clear holds an absolute value instead of a margin */
	double clear;                 /* hysteresis margin (>= 0) or absolute clear value */
	int64_t clear_for_ms;         /* the clear condition must hold this long before resolving */
	int64_t absent_for_ms;        /* alert when the metric is not seen this long; 0 = off */
	enum severity absent_severity;
	int resolve_when_absent; /* a firing alert resolves once the metric is gone for clear_for (0/1) */
	int64_t repeat_ms;       /* re-notify a firing alert at most this often; 0 = off */
	/* power modes (nvpmodel names) the rule applies in; none = all */
	char *modes[RULE_MODES_MAX];
	size_t mode_count;
	struct alert_label *labels;
	size_t label_count;
	char *summary;     /* template (see rule_template_check()); NULL = a default per op */
	char *description; /* template, may be NULL */
	/* actions bound per severity for this rule (names of configured actions); NULL lists = global binding */
	char **actions[SEVERITY_COUNT];
	size_t action_count[SEVERITY_COUNT];
	bool has_actions;
	/* where it was defined, for messages */
	char *file;
	int line;
	int column;
};

struct rule_set {
	struct rule *rules;
	size_t count;
};

/** Frees every rule and the array; NULL is a no-op. */
void rule_set_free(struct rule_set *set);

/** True when a `when: nvpmodel:` entry is a mode id (digits only) rather than a name. */
bool rule_mode_is_id(const char *mode);

/**
 * Checks a summary/description template: every {{...}} must name a known
 * field (metric, value, threshold, board, severity, rule, power_mode,
 * labels.KEY, transition, throttle; spaces inside the braces allowed).
 * Returns true, or false with *BAD_OFFSET at the bad "{{".
 */
bool rule_template_check(const char *tmpl, size_t *bad_offset);

#endif
