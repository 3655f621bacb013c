/*
 * Engine internals shared by engine.c (evaluation, events, reload) and
 * alert_state.c (the state file). Not a public header.
 */
#ifndef TEGRAWATCH_ENGINE_IMPL_H
#define TEGRAWATCH_ENGINE_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

#define ENGINE_INSTANCES_MAX 256 /* per rule: a glob cannot grow without bound */
#define NEVER INT64_MIN          /* "not holding" / "never seen" */

/* One alert's lifecycle: the threshold/change alert or the absent alert. */
struct alert {
	enum alert_state state;
	enum severity severity; /* pending: the level pending; firing: the level firing */
	int64_t since_ms;       /* pending: when the condition began to hold */
	int64_t starts_at_ms;   /* firing: when it started firing (timeline) */
	int64_t starts_wall_ms; /* firing: the wall clock then: every event of the alert tells the same starts_at */
	int64_t starts_span_ms; /* the engine's span_offset_ms then (a later step moves starts_at with it) */
	int64_t last_notify_ms; /* firing: time of the last firing/escalation/repeat event */
	double threshold;       /* the threshold of the last event */
};

/*
 * A rule applied to one metric. The hot fields (read every sample) come
 * first; the names at the end are used only when an event is rendered.
 */
struct instance {
	int32_t idx;                         /* index in the sample's metric array; -1 missing */
	int32_t ref_idx[SEVERITY_COUNT];     /* index of the threshold reference per level; -1 none */
	int64_t hold_since[SEVERITY_COUNT];  /* condition of level holding since; NEVER = not holding */
	int64_t clear_since[SEVERITY_COUNT]; /* clear condition of level holding since */
	int64_t last_seen_ms;                /* NEVER until first seen */
	int64_t last_change_ms;              /* changes/increases: last change */
	double last_value;                   /* last value seen (changes/increases: the baseline) */
	bool has_baseline;                   /* changes/increases: last_value is a baseline */
	struct alert value;
	struct alert absent;
	char metric[METRIC_NAME_MAX];
	char fp_value[ALERT_FINGERPRINT_LEN + 1];
	char fp_absent[ALERT_FINGERPRINT_LEN + 1];
};

struct rule_state {
	const struct rule *rule;
	bool is_glob;
	bool active;             /* the rule applied (power mode) at the last sample */
	int64_t active_since_ms; /* start of the current active stretch; absence counts from here */
	struct instance *inst;
	size_t count;
	size_t cap;
	uint64_t dropped; /* metrics refused because the rule had ENGINE_INSTANCES_MAX */
	/* glob rules: absent alert of the rule itself while it never matched */
	struct alert pattern_absent;
	char fp_pattern[ALERT_FINGERPRINT_LEN + 1];
};

struct engine {
	const struct rule_set *rules;
	struct rule_state *rs;
	size_t rs_count;
	char board[128];
	char device_id[128];
	alert_callback listener; /* every event; NULL: none rendered */
	void *listener_data;
	char expected_power_mode[128]; /* {{expected_power_mode}} */
	char **const *notify;          /* the actions of an alert whose rule names none, per severity; NULL: none */
	const size_t *notify_count;
	/* the metric layout the instance indexes refer to */
	bool have_layout;
	uint64_t layout_sig;
	uint64_t layout_id; /* the set's own number for it (metric_set.layout), when it has one */
	size_t layout_count;
	uint64_t rebuilds;
	/*
	 * The timeline every duration is measured on: it moves with the samples'
	 * mono_ms (never back), from the first sample's wall time (so the state
	 * file's times line up). Alerts keep timeline times; events, the state
	 * file and listings give them on the wall clock of the latest sample.
	 */
	bool have_time;
	int64_t last_ms;        /* the latest sample on the timeline */
	int64_t last_mono_ms;   /* its mono_ms */
	int64_t wall_offset_ms; /* its time_ms - last_ms: timeline -> wall clock */
	/*
	 * wall_offset_ms as of the last step: it jitters by a millisecond from
	 * sample to sample (two clocks read one after the other), which must not
	 * change an alert's starts_at between its events; a step moves it.
	 */
	int64_t span_offset_ms;
	bool any_modes;
	char power_mode[POWER_MODE_NAME_MAX];
	const struct sample *cur; /* during engine_evaluate() only */
	uint64_t generation;      /* bumped on every transition */
};

/* The rule state called NAME, or NULL. */
struct rule_state *engine_find_rule(struct engine *e, const char *name);

/* True when METRIC is an instance of RULE's pattern. */
bool rule_matches(const struct rule *rule, const char *metric);

/* The instance for METRIC, created (NEVER seen) when missing; NULL at the cap. */
struct instance *rule_state_instance(struct rule_state *rs, const char *metric);

/* Adds an instance for METRIC (not looked up first); NULL at the cap. */
struct instance *engine_instance_add(struct rule_state *rs, const char *metric);

/* Forgets the `for` and clear streaks of IN (a gap, or the rule was off). */
void engine_forget_streaks(struct instance *in);

/*
 * Moves alert A through transition T at time AT and tells the listener.
 * SEV is the severity after the transition (the
 * last one for resolved/cancelled).
 */
void engine_alert_step(struct engine *e, const struct rule_state *rs, struct alert *a, const char *metric,
		       const char *fp, bool absent, enum alert_transition t, enum severity sev, double value,
		       double threshold, int64_t at);

/* Timeline time T on the wall clock of the latest sample; 0 (none) and NEVER stay as they are. */
int64_t engine_wall_ms(const struct engine *e, int64_t t);
/** When firing alert A started, on the wall clock: the same in each of its events; 0 when not firing. */
int64_t engine_starts_at(const struct engine *e, const struct alert *a);

/* Ends every alert of RS: pending ones cancel, firing ones resolve. */
void engine_end_all(struct engine *e, struct rule_state *rs, int64_t t, bool use_sample);

#endif
