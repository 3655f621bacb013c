/*
 * Evaluation of one sample: the state machine of every (rule, metric
 * instance), and the mapping from instances to the sample's metrics.
 *
 * Speed: instances remember the index of their metric (and of their
 * threshold references) in the sample's metric array. The mapping is
 * rebuilt only when the set of metric names changes, detected by a hash
 * of the names in order; a steady stream of samples costs one hash pass
 * plus a few comparisons per instance.
 */
#include "core/clock.h"
#include "engine_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/hash.h"

static int64_t
elapsed(int64_t now, int64_t since)
{
	return since == NEVER || now < since ? -1 : now - since;
}

static bool
repeat_due(const struct rule *r, const struct alert *a, int64_t t)
{
	return r->repeat_ms > 0 && a->state == ALERT_FIRING && elapsed(t, a->last_notify_ms) >= r->repeat_ms;
}

static enum severity
severity_or_warning(enum severity s)
{
	return s == SEVERITY_NONE ? SEVERITY_WARNING : s;
}

/* ---- the metric layout ------------------------------------------------ */

/*
 * A hash of the metric names in order, eight bytes at a time: this runs on
 * every sample, so it must cost much less than the rebuild it saves.
 */
static uint64_t
layout_signature(const struct metric_set *set)
{
	uint64_t h = FNV1A64_BASIS ^ (uint64_t)set->count;

	for (size_t i = 0; i < set->count; i++) {
		const char *n = set->items[i].name;
		size_t len = strnlen(n, METRIC_NAME_MAX);
		uint64_t w;
		size_t k = 0;

		for (; k + 8 <= len; k += 8) {
			memcpy(&w, n + k, 8);
			h = (h ^ w) * 0x9e3779b97f4a7c15ull;
			h ^= h >> 29;
		}
		w = (uint64_t)len << 56; /* the length ends each name, so "ab"+"c" != "a"+"bc" */
		memcpy(&w, n + k, len - k);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h;
}

/* The name of the metric a threshold reference reads for METRIC, or false. */
static bool
ref_name(enum threshold_ref ref, const char *metric, char *out, size_t size)
{
	size_t len = strlen(metric);
	const char *kind = NULL;
	int n;

	switch (ref) {
	case REF_NONE:
		return false;
	case REF_PASSIVE_TRIP:
		kind = "passive";
		break;
	case REF_HOT_TRIP:
		kind = "hot";
		break;
	case REF_CRITICAL_TRIP:
		kind = "critical";
		break;
	case REF_CEILING:
	case REF_HW_MAX:
		/* X.freq_mhz -> X.max_freq_mhz / X.hw_max_freq_mhz */
		if (len <= 9 || strcmp(metric + len - 9, ".freq_mhz") != 0) {
			return false;
		}
		n = snprintf(out, size, "%.*s.%s", (int)(len - 9), metric,
			     ref == REF_CEILING ? "max_freq_mhz" : "hw_max_freq_mhz");
		return n > 0 && (size_t)n < size;
	}
	/* temp.SENSOR_c -> trip.SENSOR.KIND_c */
	if (len <= 7 || strncmp(metric, "temp.", 5) != 0 || strcmp(metric + len - 2, "_c") != 0) {
		return false;
	}
	n = snprintf(out, size, "trip.%.*s.%s_c", (int)(len - 7), metric + 5, kind);
	return n > 0 && (size_t)n < size;
}

static int32_t
metric_index(const struct metric_set *set, const char *name)
{
	const struct metric *m = metric_set_find(set, name);
	return m ? (int32_t)(m - set->items) : -1;
}

static void
map_refs(const struct rule *r, struct instance *in, const struct metric_set *set)
{
	for (int s = SEVERITY_WARNING; s < SEVERITY_COUNT; s++) {
		char name[METRIC_NAME_MAX + 32];

		in->ref_idx[s] = -1;
		if (r->level[s].set && ref_name(r->level[s].ref, in->metric, name, sizeof(name))) {
			in->ref_idx[s] = metric_index(set, name);
		}
	}
}

static void
map_rule(struct rule_state *rs, const struct metric_set *set)
{
	size_t hint = 0;

	for (size_t i = 0; i < rs->count; i++) {
		rs->inst[i].idx = -1;
	}
	if (!rs->is_glob) {
		/* no instance only when the name is too long to be a metric */
		if (rs->count > 0) {
			rs->inst[0].idx = metric_index(set, rs->inst[0].metric);
			map_refs(rs->rule, &rs->inst[0], set);
		}
		return;
	}
	for (size_t m = 0; m < set->count; m++) {
		const char *name = set->items[m].name;
		struct instance *in = NULL;

		if (!metric_glob_match(rs->rule->metric, name)) {
			continue;
		}
		/* instances were created in metric order: look where the last one was found first */
		for (size_t k = 0; k < rs->count && !in; k++) {
			size_t j = (hint + k) % rs->count;
			if (strcmp(rs->inst[j].metric, name) == 0) {
				in = &rs->inst[j];
				hint = j + 1;
			}
		}
		if (!in) {
			in = engine_instance_add(rs, name);
			if (!in) {
				rs->dropped++;
				continue;
			}
		}
		in->idx = (int32_t)m;
		map_refs(rs->rule, in, set);
	}
}

static void
map_layout(struct engine *e, const struct metric_set *set)
{
	/* the set's own number for its names: no signature to take while it stays */
	if (e->have_layout && set->layout != 0 && set->layout == e->layout_id && set->count == e->layout_count) {
		return;
	}
	uint64_t sig = layout_signature(set);

	e->layout_id = set->layout;
	if (e->have_layout && sig == e->layout_sig && set->count == e->layout_count) {
		return;
	}
	for (size_t i = 0; i < e->rs_count; i++) {
		map_rule(&e->rs[i], set);
	}
	e->have_layout = true;
	e->layout_sig = sig;
	e->layout_count = set->count;
	e->rebuilds++;
}

/* ---- evaluation ------------------------------------------------------- */

/* The threshold of level SEV for IN, or false when the level is off for it. */
static bool
level_value(const struct rule *r, int sev, const struct instance *in, const struct metric *items, double *out)
{
	const struct threshold *th = &r->level[sev];

	if (!th->set) {
		return false;
	}
	if (th->ref == REF_NONE) {
		*out = th->offset;
		return true;
	}
	if (in->ref_idx[sev] >= 0 && !isnan(items[in->ref_idx[sev]].value)) {
		*out = items[in->ref_idx[sev]].value * th->scale + th->offset;
		return true;
	}
	if (th->has_fallback) {
		*out = th->fallback;
		return true;
	}
	return false;
}

/*
 * The clear condition of level SEV. The margin applies to every level;
 * an absolute clear value is where the lowest level resolves, and a
 * higher level de-escalates at the same distance below its own threshold.
 */
static bool
clear_holds(const struct rule *r, bool above, double v, const double thr[], int sev, int lowest)
{
	double margin = r->clear;

	if (r->clear_is_value) {
		if (sev == lowest) {
			return above ? v < r->clear : v > r->clear;
		}
		margin = above ? thr[lowest] - r->clear : r->clear - thr[lowest];
		if (margin < 0) {
			margin = 0;
		}
	}
	return above ? v < thr[sev] - margin : v > thr[sev] + margin;
}

static void
streak(int64_t *since, bool holds, int64_t t)
{
	if (!holds) {
		*since = NEVER;
	} else if (*since == NEVER) {
		*since = t;
	}
}

static void
eval_threshold(struct engine *e, const struct rule_state *rs, struct instance *in, double v, int64_t t)
{
	const struct rule *r = rs->rule;
	const struct metric *items = e->cur->metrics.items;
	bool above = r->op == RULE_ABOVE;
	double thr[SEVERITY_COUNT] = {NAN, NAN, NAN};
	bool have[SEVERITY_COUNT] = {false, false, false};
	bool est[SEVERITY_COUNT] = {false, false, false};
	bool cleared[SEVERITY_COUNT] = {false, false, false};
	int lowest = 0, top_cond = 0, top_est = 0;
	struct alert *a = &in->value;

	for (int s = SEVERITY_WARNING; s < SEVERITY_COUNT; s++) {
		have[s] = level_value(r, s, in, items, &thr[s]);
		if (have[s] && lowest == 0) {
			lowest = s;
		}
	}
	for (int s = SEVERITY_WARNING; s < SEVERITY_COUNT; s++) {
		bool cond = have[s] && (above ? v >= thr[s] : v <= thr[s]);
		bool clr = have[s] && clear_holds(r, above, v, thr, s, lowest);

		streak(&in->hold_since[s], cond, t);
		streak(&in->clear_since[s], clr, t);
		if (cond) {
			top_cond = s;
			if (elapsed(t, in->hold_since[s]) >= r->for_ms) {
				est[s] = true;
				top_est = s;
			}
		}
		cleared[s] = clr && elapsed(t, in->clear_since[s]) >= r->clear_for_ms;
	}

	switch (a->state) {
	case ALERT_INACTIVE:
	case ALERT_PENDING:
		if (top_est) {
			engine_alert_step(e, rs, a, in->metric, in->fp_value, false, TRANSITION_FIRING,
					  (enum severity)top_est, v, thr[top_est], t);
		} else if (top_cond && a->state == ALERT_INACTIVE) {
			a->since_ms = in->hold_since[top_cond];
			engine_alert_step(e, rs, a, in->metric, in->fp_value, false, TRANSITION_PENDING,
					  (enum severity)top_cond, v, thr[top_cond], t);
		} else if (top_cond) {
			/* still pending; the level may have moved */
			a->severity = (enum severity)top_cond;
			a->threshold = thr[top_cond];
		} else if (a->state == ALERT_PENDING) {
			engine_alert_step(e, rs, a, in->metric, in->fp_value, false, TRANSITION_CANCELLED, a->severity,
					  v, a->threshold, t);
		}
		break;
	case ALERT_FIRING:
		if (a->severity == SEVERITY_WARNING && est[SEVERITY_CRITICAL]) {
			engine_alert_step(e, rs, a, in->metric, in->fp_value, false, TRANSITION_ESCALATED,
					  SEVERITY_CRITICAL, v, thr[SEVERITY_CRITICAL], t);
		} else if (lowest && cleared[lowest]) {
			engine_alert_step(e, rs, a, in->metric, in->fp_value, false, TRANSITION_RESOLVED, a->severity,
					  v, thr[lowest], t);
		} else if (a->severity == SEVERITY_CRITICAL && lowest == SEVERITY_WARNING &&
			   cleared[SEVERITY_CRITICAL]) {
			engine_alert_step(e, rs, a, in->metric, in->fp_value, false, TRANSITION_DEESCALATED,
					  SEVERITY_WARNING, v, thr[SEVERITY_CRITICAL], t);
		} else if (repeat_due(r, a, t)) {
			engine_alert_step(e, rs, a, in->metric, in->fp_value, false, TRANSITION_REPEAT, a->severity, v,
					  a->threshold, t);
		}
		break;
	}
}

static void
eval_change(struct engine *e, const struct rule_state *rs, struct instance *in, double v, int64_t t)
{
	const struct rule *r = rs->rule;
	struct alert *a = &in->value;
	bool changed;

	if (!in->has_baseline) {
		in->has_baseline = true;
		in->last_value = v;
		return;
	}
	changed = r->op == RULE_CHANGES ? v != in->last_value : v > in->last_value;
	/* a counter that went down was reset: it is the new baseline, not an event */
	in->last_value = v;
	if (changed) {
		in->last_change_ms = t;
	}
	if (a->state != ALERT_FIRING) {
		if (changed) {
			engine_alert_step(e, rs, a, in->metric, in->fp_value, false, TRANSITION_FIRING,
					  severity_or_warning(r->event_severity), v, NAN, t);
		}
		return;
	}
	if (!changed && elapsed(t, in->last_change_ms) >= r->clear_for_ms) {
		engine_alert_step(e, rs, a, in->metric, in->fp_value, false, TRANSITION_RESOLVED, a->severity, v, NAN,
				  t);
	} else if (repeat_due(r, a, t)) {
		engine_alert_step(e, rs, a, in->metric, in->fp_value, false, TRANSITION_REPEAT, a->severity, v, NAN, t);
	}
}

static int64_t
later(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static void
eval_absent(struct engine *e, const struct rule_state *rs, struct instance *in, bool present, double v, int64_t t)
{
	const struct rule *r = rs->rule;
	struct alert *a = &in->absent;

	if (present) {
		in->last_seen_ms = t;
		if (a->state == ALERT_FIRING) {
			engine_alert_step(e, rs, a, in->metric, in->fp_absent, true, TRANSITION_RESOLVED, a->severity,
					  v, NAN, t);
		}
		return;
	}
	if (a->state == ALERT_FIRING) {
		if (r->absent_for_ms <= 0) {
			/* reloaded without absent_for: nothing asks for it any more */
			engine_alert_step(e, rs, a, in->metric, in->fp_absent, true, TRANSITION_RESOLVED, a->severity,
					  NAN, NAN, t);
		} else if (repeat_due(r, a, t)) {
			engine_alert_step(e, rs, a, in->metric, in->fp_absent, true, TRANSITION_REPEAT, a->severity,
					  NAN, NAN, t);
		}
		return;
	}
	if (r->absent_for_ms > 0 && elapsed(t, later(in->last_seen_ms, rs->active_since_ms)) >= r->absent_for_ms) {
		engine_alert_step(e, rs, a, in->metric, in->fp_absent, true, TRANSITION_FIRING,
				  severity_or_warning(r->absent_severity), NAN, NAN, t);
	}
}

static void
eval_pattern_absent(struct engine *e, struct rule_state *rs, int64_t t)
{
	const struct rule *r = rs->rule;
	struct alert *a = &rs->pattern_absent;

	if (rs->count > 0 || r->absent_for_ms <= 0) {
		if (a->state == ALERT_FIRING) {
			double v =
				rs->count && rs->inst[0].idx >= 0 ? e->cur->metrics.items[rs->inst[0].idx].value : NAN;
			engine_alert_step(e, rs, a, r->metric, rs->fp_pattern, true, TRANSITION_RESOLVED, a->severity,
					  v, NAN, t);
		}
		return;
	}
	if (a->state == ALERT_FIRING) {
		if (repeat_due(r, a, t)) {
			engine_alert_step(e, rs, a, r->metric, rs->fp_pattern, true, TRANSITION_REPEAT, a->severity,
					  NAN, NAN, t);
		}
	} else if (elapsed(t, rs->active_since_ms) >= r->absent_for_ms) {
		engine_alert_step(e, rs, a, r->metric, rs->fp_pattern, true, TRANSITION_FIRING,
				  severity_or_warning(r->absent_severity), NAN, NAN, t);
	}
}

static bool
mode_matches(const struct rule *r, const char *mode, bool have_id, double id)
{
	if (r->mode_count == 0) {
		return true;
	}
	for (size_t i = 0; i < r->mode_count && i < RULE_MODES_MAX; i++) {
		const char *want = r->modes[i];

		if (!want) {
			continue;
		}
		if (mode[0] && strcasecmp(want, mode) == 0) {
			return true;
		}
		if (have_id && rule_mode_is_id(want) && strtod(want, NULL) == id) {
			return true;
		}
	}
	return false;
}

static void
eval_rule(struct engine *e, struct rule_state *rs, bool have_id, double id, int64_t t)
{
	const struct rule *r = rs->rule;
	const struct metric *items = e->cur->metrics.items;
	bool changes = r->op == RULE_CHANGES || r->op == RULE_INCREASES;

	if (!mode_matches(r, e->cur->power_mode, have_id, id)) {
		if (rs->active) {
			engine_end_all(e, rs, t, true);
			rs->active = false;
		}
		return;
	}
	if (!rs->active) {
		rs->active = true;
		rs->active_since_ms = t;
	}
	if (rs->is_glob) {
		eval_pattern_absent(e, rs, t);
	}
	for (size_t i = 0; i < rs->count; i++) {
		struct instance *in = &rs->inst[i];
		double v = in->idx >= 0 ? items[in->idx].value : NAN;
		bool present = !isnan(v);

		eval_absent(e, rs, in, present, v, t);
		if (!present) {
			/* no observation: neither a pending nor a clear streak survives a gap */
			engine_forget_streaks(in);
			if (in->value.state == ALERT_PENDING) {
				engine_alert_step(e, rs, &in->value, in->metric, in->fp_value, false,
						  TRANSITION_CANCELLED, in->value.severity, NAN, in->value.threshold,
						  t);
			} else if (in->value.state == ALERT_FIRING && r->resolve_when_absent &&
				   elapsed(t, later(in->last_seen_ms, rs->active_since_ms)) >= r->clear_for_ms) {
				/* the metric's absence is the all-clear (no throttle predicted) */
				engine_alert_step(e, rs, &in->value, in->metric, in->fp_value, false,
						  TRANSITION_RESOLVED, in->value.severity, NAN, in->value.threshold, t);
			}
			continue;
		}
		if (changes) {
			eval_change(e, rs, in, v, t);
		} else {
			in->last_value = v;
			eval_threshold(e, rs, in, v, t);
		}
	}
}

/*
 * The sample on the timeline: as much later as its mono_ms says (a wall
 * clock step moves neither way; a recording whose time goes back costs no
 * time).
 */
static int64_t
timeline(struct engine *e, const struct sample *s)
{
	int64_t t = s->time_ms;

	if (e->have_time) {
		int64_t ran = s->mono_ms - e->last_mono_ms;
		t = e->last_ms + (ran > 0 ? ran : 0);
	}
	e->have_time = true;
	e->last_ms = t;
	e->last_mono_ms = s->mono_ms;
	e->wall_offset_ms = s->time_ms - t;
	int64_t moved = e->wall_offset_ms - e->span_offset_ms;
	if (moved >= CLOCK_STEP_MIN_MS || moved <= -CLOCK_STEP_MIN_MS) {
		e->span_offset_ms = e->wall_offset_ms;
	}
	return t;
}

void
engine_evaluate(struct engine *engine, const struct sample *s)
{
	int64_t t = timeline(engine, s);
	double id = 0;
	bool have_id = false;

	engine->cur = s;
	_Static_assert(sizeof(engine->power_mode) == sizeof(s->power_mode), "power mode names differ in size");
	memcpy(engine->power_mode, s->power_mode, sizeof(engine->power_mode));
	engine->power_mode[sizeof(engine->power_mode) - 1] = '\0';
	map_layout(engine, &s->metrics);
	if (engine->any_modes) {
		have_id = metric_set_get(&s->metrics, "nvpmodel.id", &id);
	}
	for (size_t i = 0; i < engine->rs_count; i++) {
		eval_rule(engine, &engine->rs[i], have_id, id, t);
	}
	engine->cur = NULL;
}
