/*
 * The alert engine: one state machine per (rule, metric instance), driven
 * by sample time only, so a replay at any speed gives the same timeline.
 * This file holds the objects (engine, rule states, instances), events and
 * the listener, reload and queries; evaluate.c holds the metric mapping and
 * the state machine itself. See README.md for the semantics.
 */
#include "engine_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/metric_dict.h"
#include "core/xalloc.h"
#include "template.h"

/* ---- fingerprints, instances ---------------------------------------- */

/* 64-bit FNV-1a of A '\0' B ['\0' C] as 16 hex digits: the alert fingerprint (persisted: never change it). */
static void
engine_fingerprint(const char *a, const char *b, const char *c, char out[ALERT_FINGERPRINT_LEN + 1])
{
	uint64_t h = FNV1A64_BASIS;

	h = fnv1a64(h, a, strlen(a) + 1); /* the NUL separates the parts */
	h = fnv1a64(h, b, strlen(b));
	if (c) {
		h = fnv1a64(h, "", 1);
		h = fnv1a64(h, c, strlen(c));
	}
	snprintf(out, ALERT_FINGERPRINT_LEN + 1, "%016llx", (unsigned long long)h);
}

static void
alert_reset(struct alert *a)
{
	a->state = ALERT_INACTIVE;
	a->severity = SEVERITY_NONE;
	a->since_ms = 0;
	a->starts_at_ms = 0;
	a->last_notify_ms = 0;
	a->threshold = NAN;
}

void
engine_forget_streaks(struct instance *in)
{
	for (int s = 0; s < SEVERITY_COUNT; s++) {
		in->hold_since[s] = NEVER;
		in->clear_since[s] = NEVER;
	}
}

bool
rule_matches(const struct rule *rule, const char *metric)
{
	if (metric_is_glob(rule->metric)) {
		return metric_glob_match(rule->metric, metric);
	}
	return strcmp(rule->metric, metric) == 0;
}

struct instance *
engine_instance_add(struct rule_state *rs, const char *metric)
{
	struct instance *in;

	if (rs->count >= ENGINE_INSTANCES_MAX || strlen(metric) >= METRIC_NAME_MAX) {
		return NULL;
	}
	if (rs->count == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 4;
		rs->inst = xrealloc(rs->inst, rs->cap, sizeof(*rs->inst));
	}
	in = &rs->inst[rs->count++];
	memset(in, 0, sizeof(*in));
	in->idx = -1;
	for (int s = 0; s < SEVERITY_COUNT; s++) {
		in->ref_idx[s] = -1;
	}
	engine_forget_streaks(in);
	in->last_seen_ms = NEVER;
	in->last_change_ms = NEVER;
	in->last_value = NAN;
	alert_reset(&in->value);
	alert_reset(&in->absent);
	snprintf(in->metric, sizeof(in->metric), "%s", metric);
	engine_fingerprint(rs->rule->name, metric, NULL, in->fp_value);
	engine_fingerprint(rs->rule->name, metric, "absent", in->fp_absent);
	return in;
}

struct instance *
rule_state_instance(struct rule_state *rs, const char *metric)
{
	for (size_t i = 0; i < rs->count; i++) {
		if (strcmp(rs->inst[i].metric, metric) == 0) {
			return &rs->inst[i];
		}
	}
	return engine_instance_add(rs, metric);
}

struct rule_state *
engine_find_rule(struct engine *e, const char *name)
{
	for (size_t i = 0; i < e->rs_count; i++) {
		if (strcmp(e->rs[i].rule->name, name) == 0) {
			return &e->rs[i];
		}
	}
	return NULL;
}

/* ---- create, destroy ------------------------------------------------- */

struct engine *
engine_create(const struct rule_set *rules, alert_callback listener, void *data)
{
	struct engine *e = xcalloc(1, sizeof(*e));

	e->rules = rules;
	e->listener = listener;
	e->listener_data = data;
	e->rs_count = rules ? rules->count : 0;
	e->rs = xcalloc(e->rs_count, sizeof(*e->rs));
	for (size_t i = 0; i < e->rs_count; i++) {
		struct rule_state *rs = &e->rs[i];

		rs->rule = &rules->rules[i];
		rs->is_glob = metric_is_glob(rs->rule->metric);
		rs->active_since_ms = NEVER;
		alert_reset(&rs->pattern_absent);
		engine_fingerprint(rs->rule->name, rs->rule->metric, "absent", rs->fp_pattern);
		if (rs->rule->mode_count > 0) {
			e->any_modes = true;
		}
		/* an exact rule is its own instance from the start, for absent_for */
		if (!rs->is_glob) {
			engine_instance_add(rs, rs->rule->metric);
		}
	}
	return e;
}

void
engine_destroy(struct engine *engine)
{
	if (!engine) {
		return;
	}
	for (size_t i = 0; i < engine->rs_count; i++) {
		free(engine->rs[i].inst);
	}
	free(engine->rs);
	free(engine);
}

void
engine_set_board(struct engine *engine, const char *board, const char *device_id)
{
	snprintf(engine->board, sizeof(engine->board), "%s", board ? board : "");
	snprintf(engine->device_id, sizeof(engine->device_id), "%s", device_id ? device_id : "");
}

void
engine_set_expected_power_mode(struct engine *engine, const char *text)
{
	snprintf(engine->expected_power_mode, sizeof(engine->expected_power_mode), "%s", text ? text : "");
}

void
engine_set_notify(struct engine *engine, char **const notify[SEVERITY_COUNT], const size_t count[SEVERITY_COUNT])
{
	engine->notify = notify;
	engine->notify_count = count;
}

/* The actions EV goes to: its rule's for the severity, else notify:'s; none before it fires or once cancelled. */
static void
route(const struct engine *e, struct alert_event *ev)
{
	enum severity sev = ev->severity;
	if (ev->transition == TRANSITION_PENDING || ev->transition == TRANSITION_CANCELLED || sev <= SEVERITY_NONE ||
	    sev >= SEVERITY_COUNT) {
		return;
	}
	const struct rule *r = ev->rule;
	if (r->has_actions) {
		ev->actions = r->actions[sev];
		ev->action_count = r->action_count[sev];
	} else if (e->notify) {
		ev->actions = e->notify[sev];
		ev->action_count = e->notify_count[sev];
	}
}

/*
 * The fingerprint an event carries: the instance's (rule and metric)
 * scoped to the board, so the same rule and metric on two boards differ
 * where receivers group alerts by fingerprint.
 */
static void
event_fingerprint(const struct engine *e, const char *fp, char out[ALERT_FINGERPRINT_LEN + 1])
{
	if (e->board[0]) {
		engine_fingerprint(e->board, fp, NULL, out);
	} else {
		snprintf(out, ALERT_FINGERPRINT_LEN + 1, "%s", fp);
	}
}

uint64_t
engine_generation(const struct engine *engine)
{
	return engine->generation;
}

/* ---- events ---------------------------------------------------------- */

static void
format_duration(int64_t ms, char *buf, size_t size)
{
	int64_t h = ms / 3600000, m = (ms / 60000) % 60, s = (ms / 1000) % 60;
	int n = 0;

	buf[0] = '\0';
	if (ms % 1000 != 0 || ms == 0) {
		snprintf(buf, size, "%lldms", (long long)ms);
		return;
	}
	if (h) {
		n = snprintf(buf, size, "%lldh", (long long)h);
	}
	if (m && n >= 0 && (size_t)n < size) {
		n += snprintf(buf + n, size - (size_t)n, "%lldm", (long long)m);
	}
	if (s && n >= 0 && (size_t)n < size) {
		snprintf(buf + n, size - (size_t)n, "%llds", (long long)s);
	}
}

/* The causes of the reasons throttle_text() names, as data. */
static void
throttle_causes(const struct sample *s, const char *metric, struct alert_event *ev)
{
	const char *which = metric + strlen("throttle.");
	ev->throttle_cause_count = 0;
	if (!s) {
		return;
	}
	for (int i = 0; i < s->throttle.cause_count; i++) {
		const struct throttle_cause *c = &s->throttle.causes[i];
		if (strcmp(which, "active") == 0 || strcmp(which, throttle_reason_name(c->reason)) == 0) {
			ev->throttle_causes[ev->throttle_cause_count++] = *c;
		}
	}
}

static void
throttle_text(const struct sample *s, const char *metric, char *buf, size_t size)
{
	const char *which = metric + strlen("throttle.");
	size_t len = 0;

	buf[0] = '\0';
	if (!s) {
		return;
	}
	for (int r = 0; r < THROTTLE_REASON_COUNT; r++) {
		const char *name = throttle_reason_name((enum throttle_reason)r);
		int n;

		if (!s->throttle.reason[r]) {
			continue;
		}
		/* throttle.thermal shows its own reason; throttle.active all of them */
		if (strcmp(which, "active") != 0 && strcmp(which, name) != 0) {
			continue;
		}
		n = snprintf(buf + len, size - len, "%s%s: %s", len ? "; " : "", name, s->throttle.why[r]);
		if (n < 0 || (size_t)n >= size - len) {
			buf[size - 1] = '\0';
			return;
		}
		len += (size_t)n;
	}
}

/* {{oom_killed}}: the OOM killer's victims on S as the kernel log named them, "python3 (pid 4242), ..."; "" none */
static void
oom_killed_text(const struct sample *s, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; s && i < s->oom_killed.count && len < size; i++) {
		const struct oom_victim *v = &s->oom_killed.list[i];
		int n = snprintf(buf + len, size - len, "%s%s (pid %d)", i ? ", " : "", v->comm, (int)v->pid);
		len += n > 0 ? (size_t)n : 0;
	}
	if (s && s->oom_killed.more > 0 && len < size) {
		snprintf(buf + len, size - len, " and %d more", s->oom_killed.more);
	}
}

static const char *
default_summary(const struct rule *r)
{
	switch (r->op) {
	case RULE_CHANGES:
	case RULE_INCREASES:
		return "{{rule}} {{transition}}: {{metric}} = {{value}}";
	case RULE_ABOVE:
	case RULE_BELOW:
		break;
	}
	return "{{rule}} {{transition}}: {{metric}} = {{value}} (threshold {{threshold}})";
}

/*
 * A resolved alert in the past tense, with how long it lasted: the rule's
 * summary is written for the alert while it fires ("is throttling: REASON"),
 * and rendered at the end it read "is throttling: " with no reason.
 */
static void
render_resolved(const struct engine *e, struct alert_event *ev)
{
	char len[48] = "", value[80];
	if (ev->starts_at_ms > 0 && ev->ends_at_ms >= ev->starts_at_ms) {
		int64_t ms = (ev->ends_at_ms - ev->starts_at_ms + 500) / 1000 * 1000;
		char d[40];
		format_duration(ms, d, sizeof(d));
		snprintf(len, sizeof(len), " after %s", ms > 0 ? d : "less than a second");
	}
	if (isnan(ev->value)) {
		const char *words = metric_dict_absent_words(ev->metric);
		snprintf(value, sizeof(value), "%s", words ? words : "no longer reported");
	} else {
		char num[48];
		template_format_number(ev->value, num, sizeof(num));
		snprintf(value, sizeof(value), "now %s", num);
	}
	snprintf(ev->summary, sizeof(ev->summary), "%s%s%s ended%s (%s: %s)", e->board, e->board[0] ? ": " : "",
		 ev->rule->name, len, ev->metric, value);
}

/* Label values with {{fields}} ("{{metric.name}}"), rendered for one event; freed after its listener. */
#define LABEL_TEXT_MAX 256

struct label_render {
	struct alert_label *items;
	char (*text)[LABEL_TEXT_MAX];
};

static void
render_labels(const struct template_ctx *ctx, struct alert_event *ev, struct label_render *lr)
{
	const struct rule *r = ev->rule;
	bool templated = false;
	for (size_t i = 0; i < r->label_count && !templated; i++) {
		templated = strstr(r->labels[i].value, "{{") != NULL;
	}
	if (!templated) {
		return; /* the rule's own labels, as written */
	}
	lr->items = xcalloc(r->label_count, sizeof(*lr->items));
	lr->text = xcalloc(r->label_count, sizeof(*lr->text));
	for (size_t i = 0; i < r->label_count; i++) {
		template_render(r->labels[i].value, ctx, lr->text[i], sizeof(lr->text[i]));
		lr->items[i] = (struct alert_label){r->labels[i].key, lr->text[i]};
	}
	ev->labels = lr->items;
}

static void
label_render_free(struct label_render *lr)
{
	free(lr->items);
	free(lr->text);
}

static void
render(const struct engine *e, struct alert_event *ev, struct label_render *lr)
{
	const struct rule *r = ev->rule;
	const char *mode = e->cur ? e->cur->power_mode : e->power_mode;
	char killed[OOM_VICTIMS_MAX * (TOP_COMM_MAX + 24) + 32];
	oom_killed_text(e->cur, killed, sizeof(killed));
	struct template_ctx ctx = {
		.metric = ev->metric,
		.value = ev->value,
		.threshold = ev->threshold,
		.board = e->board,
		.severity = severity_name(ev->severity),
		.rule = r->name,
		.power_mode = mode,
		.transition = alert_transition_name(ev->transition),
		.throttle = ev->throttle,
		.expected_power_mode = e->expected_power_mode,
		.oom_killed = killed,
		.labels = r->labels,
		.label_count = r->label_count,
	};

	ev->power_mode = mode;
	if (strncmp(ev->metric, "throttle.", 9) == 0) {
		throttle_text(e->cur, ev->metric, ev->throttle, sizeof(ev->throttle));
		throttle_causes(e->cur, ev->metric, ev);
	}
	if (ev->absent) {
		char dur[48];

		format_duration(r->absent_for_ms, dur, sizeof(dur));
		if (ev->transition == TRANSITION_RESOLVED) {
			snprintf(ev->summary, sizeof(ev->summary), "%s resolved: %s is back", r->name, ev->metric);
		} else {
			snprintf(ev->summary, sizeof(ev->summary), "%s %s: %s not seen for %s", r->name,
				 alert_transition_name(ev->transition), ev->metric, dur);
		}
	} else if (ev->transition == TRANSITION_RESOLVED) {
		render_resolved(e, ev);
	} else {
		template_render(r->summary ? r->summary : default_summary(r), &ctx, ev->summary, sizeof(ev->summary));
	}
	if (r->description) {
		template_render(r->description, &ctx, ev->description, sizeof(ev->description));
	}
	render_labels(&ctx, ev, lr);
}

struct transition {
	const struct rule_state *rs;
	const char *metric;
	const char *fingerprint;
	bool absent;
	enum alert_transition t;
	enum severity severity;
	enum severity previous;
	double value;
	double threshold;
	int64_t at_ms;
	int64_t starts_at_ms;
};

static void
emit(struct engine *e, const struct transition *tr)
{
	struct alert_event ev = {0};

	e->generation++;
	if (!e->listener) {
		return; /* nobody to tell: no text rendered */
	}
	memset(&ev, 0, sizeof(ev));
	ev.rule = tr->rs->rule;
	ev.rule_name = ev.rule->name;
	ev.labels = ev.rule->labels;
	ev.label_count = ev.rule->label_count;
	ev.metric = tr->metric;
	ev.transition = tr->t;
	ev.severity = tr->severity;
	ev.previous = tr->previous;
	ev.absent = tr->absent;
	ev.value = tr->value;
	ev.threshold = tr->threshold;
	ev.at_ms = tr->at_ms;
	ev.starts_at_ms = tr->starts_at_ms;
	ev.ends_at_ms = tr->t == TRANSITION_RESOLVED ? tr->at_ms : 0;
	event_fingerprint(e, tr->fingerprint, ev.fingerprint);
	ev.board = e->board;
	ev.device_id = e->device_id;
	struct label_render lr = {0};
	render(e, &ev, &lr);
	route(e, &ev);
	/* what ran: a recording's sample brings it; live, the rules stage takes it as the alert fires */
	if (e->cur && alert_event_takes_processes(&ev)) {
		ev.processes = e->cur->processes;
	}
	e->listener(&ev, e->listener_data);
	label_render_free(&lr);
}

/*
 * A span's end is the wall clock at its end, its start that minus the time
 * that really passed: after a step, starts_at moves with the clock and
 * ends_at - starts_at stays the alert's true length.
 */
int64_t
engine_wall_ms(const struct engine *e, int64_t t)
{
	return t == 0 || t == NEVER ? t : t + e->wall_offset_ms;
}

int64_t
engine_starts_at(const struct engine *e, const struct alert *a)
{
	return a->starts_at_ms == 0 ? 0 : a->starts_wall_ms + (e->span_offset_ms - a->starts_span_ms);
}

/*
 * Moves alert A through transition T at time AT and reports it. SEV is
 * the severity after the transition (the last one for resolve/cancel).
 */
void
engine_alert_step(struct engine *e, const struct rule_state *rs, struct alert *a, const char *metric, const char *fp,
		  bool absent, enum alert_transition t, enum severity sev, double value, double threshold, int64_t at)
{
	struct transition tr = {
		.rs = rs,
		.metric = metric,
		.fingerprint = fp,
		.absent = absent,
		.t = t,
		.severity = sev,
		.previous = SEVERITY_NONE,
		.value = value,
		.threshold = threshold,
		.at_ms = engine_wall_ms(e, at),
		.starts_at_ms = engine_starts_at(e, a),
	};

	switch (t) {
	case TRANSITION_PENDING:
		a->state = ALERT_PENDING;
		a->severity = sev;
		a->starts_at_ms = 0;
		tr.starts_at_ms = 0;
		break;
	case TRANSITION_CANCELLED:
		tr.previous = SEVERITY_NONE;
		tr.starts_at_ms = 0;
		alert_reset(a);
		break;
	case TRANSITION_FIRING:
		a->state = ALERT_FIRING;
		a->severity = sev;
		a->starts_at_ms = at;
		a->starts_wall_ms = tr.at_ms;
		a->starts_span_ms = e->span_offset_ms;
		a->last_notify_ms = at;
		tr.starts_at_ms = tr.at_ms;
		break;
	case TRANSITION_ESCALATED:
	case TRANSITION_DEESCALATED:
		tr.previous = a->severity;
		a->severity = sev;
		a->last_notify_ms = at;
		break;
	case TRANSITION_REPEAT:
		tr.previous = a->severity;
		a->last_notify_ms = at;
		break;
	case TRANSITION_RESOLVED:
		tr.previous = a->severity;
		alert_reset(a);
		break;
	}
	if (a->state != ALERT_INACTIVE) {
		a->threshold = threshold;
	}
	emit(e, &tr);
}

/* ---- ending alerts (power mode left, reload) ------------------------------ */

/* Ends every alert of RS (pending ones cancel, firing ones resolve). */
void
engine_end_all(struct engine *e, struct rule_state *rs, int64_t t, bool use_sample)
{
	const struct metric *items = use_sample && e->cur ? e->cur->metrics.items : NULL;

	for (size_t i = 0; i < rs->count; i++) {
		struct instance *in = &rs->inst[i];
		double v = items && in->idx >= 0 ? items[in->idx].value : NAN;

		if (in->value.state == ALERT_PENDING) {
			engine_alert_step(e, rs, &in->value, in->metric, in->fp_value, false, TRANSITION_CANCELLED,
					  in->value.severity, v, in->value.threshold, t);
		} else if (in->value.state == ALERT_FIRING) {
			engine_alert_step(e, rs, &in->value, in->metric, in->fp_value, false, TRANSITION_RESOLVED,
					  in->value.severity, v, in->value.threshold, t);
		}
		if (in->absent.state == ALERT_FIRING) {
			engine_alert_step(e, rs, &in->absent, in->metric, in->fp_absent, true, TRANSITION_RESOLVED,
					  in->absent.severity, v, NAN, t);
		}
		engine_forget_streaks(in);
		in->has_baseline = false;
	}
	if (rs->pattern_absent.state == ALERT_FIRING) {
		engine_alert_step(e, rs, &rs->pattern_absent, rs->rule->metric, rs->fp_pattern, true,
				  TRANSITION_RESOLVED, rs->pattern_absent.severity, NAN, NAN, t);
	}
}

/* ---- reload ------------------------------------------------------------ */

static void
copy_instance_state(struct instance *to, const struct instance *from)
{
	memcpy(to->hold_since, from->hold_since, sizeof(to->hold_since));
	memcpy(to->clear_since, from->clear_since, sizeof(to->clear_since));
	to->last_seen_ms = from->last_seen_ms;
	to->last_change_ms = from->last_change_ms;
	to->last_value = from->last_value;
	to->has_baseline = from->has_baseline;
	to->value = from->value;
	to->absent = from->absent;
}

void
engine_adopt(struct engine *engine, struct engine *old)
{
	int64_t t;

	if (!old || old == engine) {
		return;
	}
	engine->have_time = old->have_time;
	engine->last_ms = old->last_ms;
	engine->last_mono_ms = old->last_mono_ms;
	engine->wall_offset_ms = old->wall_offset_ms;
	snprintf(engine->power_mode, sizeof(engine->power_mode), "%s", old->power_mode);
	t = old->last_ms;

	for (size_t i = 0; i < old->rs_count; i++) {
		struct rule_state *ors = &old->rs[i];
		struct rule_state *nrs = engine_find_rule(engine, ors->rule->name);

		if (!nrs) {
			/* the rule is gone: its alerts end through the new engine's listener */
			engine_end_all(engine, ors, t, false);
			continue;
		}
		nrs->active = ors->active;
		nrs->active_since_ms = ors->active_since_ms;
		nrs->dropped = ors->dropped;
		for (size_t k = 0; k < ors->count; k++) {
			struct instance *oi = &ors->inst[k];
			struct instance *ni =
				rule_matches(nrs->rule, oi->metric) ? rule_state_instance(nrs, oi->metric) : NULL;
			if (ni) {
				copy_instance_state(ni, oi);
				continue;
			}
			/* no longer matched by the rule's pattern: end its alerts */
			struct rule_state one = *ors;
			one.inst = oi;
			one.count = 1;
			alert_reset(&one.pattern_absent);
			engine_end_all(engine, &one, t, false);
		}
		if (ors->pattern_absent.state == ALERT_FIRING) {
			if (nrs->is_glob && strcmp(nrs->rule->metric, ors->rule->metric) == 0) {
				nrs->pattern_absent = ors->pattern_absent;
			} else {
				engine_alert_step(engine, ors, &ors->pattern_absent, ors->rule->metric, ors->fp_pattern,
						  true, TRANSITION_RESOLVED, ors->pattern_absent.severity, NAN, NAN, t);
			}
		}
	}
	/* OLD hands its alerts over: nothing stays active there */
	for (size_t i = 0; i < old->rs_count; i++) {
		for (size_t k = 0; k < old->rs[i].count; k++) {
			alert_reset(&old->rs[i].inst[k].value);
			alert_reset(&old->rs[i].inst[k].absent);
		}
		alert_reset(&old->rs[i].pattern_absent);
	}
	engine->generation++;
}

/* ---- queries ----------------------------------------------------------- */

size_t
engine_firing_count(const struct engine *engine)
{
	size_t n = 0;

	for (size_t i = 0; i < engine->rs_count; i++) {
		const struct rule_state *rs = &engine->rs[i];

		for (size_t k = 0; k < rs->count; k++) {
			n += rs->inst[k].value.state == ALERT_FIRING;
			n += rs->inst[k].absent.state == ALERT_FIRING;
		}
		n += rs->pattern_absent.state == ALERT_FIRING;
	}
	return n;
}

size_t
engine_instance_count(const struct engine *engine)
{
	size_t n = 0;

	for (size_t i = 0; i < engine->rs_count; i++) {
		n += engine->rs[i].count;
	}
	return n;
}

uint64_t
engine_dropped_instances(const struct engine *engine)
{
	uint64_t n = 0;

	for (size_t i = 0; i < engine->rs_count; i++) {
		n += engine->rs[i].dropped;
	}
	return n;
}

uint64_t
engine_layout_rebuilds(const struct engine *engine)
{
	return engine->rebuilds;
}

static void
announce(const struct engine *e, const struct rule_state *rs, const struct alert *a, const char *metric, const char *fp,
	 bool absent, double v)
{
	struct alert_event ev = {0};

	if (a->state == ALERT_INACTIVE || !e->listener) {
		return;
	}
	memset(&ev, 0, sizeof(ev));
	ev.rule = rs->rule;
	ev.rule_name = ev.rule->name;
	ev.labels = ev.rule->labels;
	ev.label_count = ev.rule->label_count;
	ev.metric = metric;
	ev.transition = a->state == ALERT_FIRING ? TRANSITION_FIRING : TRANSITION_PENDING;
	ev.severity = a->severity;
	ev.previous = SEVERITY_NONE;
	ev.absent = absent;
	ev.value = absent ? NAN : v;
	ev.threshold = a->threshold;
	ev.at_ms = engine_wall_ms(e, e->last_ms);
	ev.starts_at_ms = a->state == ALERT_FIRING ? engine_starts_at(e, a) : 0;
	event_fingerprint(e, fp, ev.fingerprint);
	ev.board = e->board;
	ev.device_id = e->device_id;
	ev.restored = true;
	struct label_render lr = {0};
	render(e, &ev, &lr);
	route(e, &ev);
	e->listener(&ev, e->listener_data);
	label_render_free(&lr);
}

void
engine_announce_active(const struct engine *engine)
{
	for (size_t i = 0; i < engine->rs_count; i++) {
		const struct rule_state *rs = &engine->rs[i];

		for (size_t k = 0; k < rs->count; k++) {
			const struct instance *in = &rs->inst[k];

			announce(engine, rs, &in->value, in->metric, in->fp_value, false, in->last_value);
			announce(engine, rs, &in->absent, in->metric, in->fp_absent, true, NAN);
		}
		announce(engine, rs, &rs->pattern_absent, rs->rule->metric, rs->fp_pattern, true, NAN);
	}
}
