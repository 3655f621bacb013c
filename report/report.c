/* The report's accumulation: one sample at a time, memory independent of the length but for the percentiles. */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "report_series.h"

enum {
	SIG_LOADED = 1u << 0,
	SIG_GPU_CEILING = 1u << 1,
	SIG_CPU_CEILING = 1u << 2,
	SIG_CPU_BOUND = 1u << 3,
	SIG_SWAP_GROWTH = 1u << 4,
};

#define SWAP_GROWTH_MB 64.0

static void
span_init(struct report_span *sp)
{
	memset(sp, 0, sizeof(*sp));
	stats_init(&sp->stats);
}

void
report_init(struct report *r, const struct report_phase_def *phases, size_t phase_count, bool series)
{
	memset(r, 0, sizeof(*r));
	span_init(&r->all);
	if (phase_count > 0) {
		r->phase_defs = xcalloc(phase_count, sizeof(*r->phase_defs));
		memcpy(r->phase_defs, phases, phase_count * sizeof(*phases));
		r->phases = xcalloc(phase_count, sizeof(*r->phases));
		for (size_t i = 0; i < phase_count; i++) {
			span_init(&r->phases[i]);
		}
		r->phase_count = phase_count;
	}
	r->last_dt_ms = 1000;
	r->dict = xcalloc(1, sizeof(*r->dict));
	r->rail_def = metric_dict_by_pattern("power.RAIL.mw");
	r->gpu_power_def = metric_dict_by_pattern("gpu.N.power_mw");
	if (series) {
		r->series = series_create();
	}
}

void
report_free(struct report *r)
{
	stats_free(&r->all.stats);
	for (size_t i = 0; i < r->phase_count; i++) {
		stats_free(&r->phases[i].stats);
	}
	free(r->phases);
	free(r->phase_defs);
	free(r->dict);
	free(r->modes);
	free(r->cooling);
	free(r->work);
	free(r->idle);
	report_host_free(r);
	free(r->episodes);
	free(r->alerts);
	for (size_t i = 0; i < r->rec_count; i++) {
		free(r->recs[i].evidence);
	}
	free(r->recs);
	series_destroy(r->series);
	memset(r, 0, sizeof(*r));
}

void
report_set_board(struct report *r, const struct board_identity *id)
{
	r->board = *id;
	r->board_known = id->model[0] || id->soc[0] || id->l4t[0];
}

bool
report_metric_wanted(const char *name)
{
	return strncmp(name, "agent.", 6) != 0;
}

double
report_interval_s(const struct report *r)
{
	if (r->all.samples < 2) {
		return 1.0;
	}
	return r->credited_ms / 1000.0 / (double)(r->all.samples - 1);
}

/* Absolute phases are wall clock times; relative ones count the time that passed since the first sample. */
bool
report_in_phase(const struct report_phase_def *d, int64_t wall_ms, int64_t mono_ms)
{
	if (d->relative) {
		return mono_ms >= d->mono_start_ms && mono_ms < d->mono_end_ms;
	}
	return wall_ms >= d->start_ms && wall_ms < d->end_ms;
}

static void
span_energy(struct report_span *sp, const char *rail, double joules)
{
	for (size_t i = 0; i < sp->rails; i++) {
		if (strcmp(sp->energy[i].rail, rail) == 0) {
			sp->energy[i].joules += joules;
			return;
		}
	}
	if (sp->rails < REPORT_RAILS_MAX) {
		snprintf(sp->energy[sp->rails].rail, sizeof(sp->energy[0].rail), "%s", rail);
		sp->energy[sp->rails++].joules = joules;
	}
}

static void
span_credit(struct report_span *sp, const struct pending *p, double sec)
{
	sp->seconds += sec;
	if (p->throttled) {
		sp->throttle_seconds += sec;
	}
	for (int k = 0; k < THROTTLE_REASON_COUNT; k++) {
		if (p->reason[k]) {
			sp->reason_seconds[k] += sec;
		}
	}
	for (size_t i = 0; i < p->rails; i++) {
		span_energy(sp, p->rail[i], p->rail_mw[i] / 1000.0 * sec);
	}
}

static void
credit_mode(struct report *r, const char *mode, double sec)
{
	const char *name = mode[0] ? mode : "unknown";
	for (size_t i = 0; i < r->mode_count; i++) {
		if (strcmp(r->modes[i].name, name) == 0) {
			r->modes[i].seconds += sec;
			return;
		}
	}
	r->modes = xrealloc(r->modes, r->mode_count + 1, sizeof(*r->modes));
	snprintf(r->modes[r->mode_count].name, sizeof(r->modes[0].name), "%s", name);
	r->modes[r->mode_count++].seconds = sec;
}

/* The pending sample stands for DT_MS: everything it says is counted for that long. */
static void
credit(struct report *r, int64_t dt_ms)
{
	const struct pending *p = &r->pending;
	double sec = (double)dt_ms / 1000.0;
	span_credit(&r->all, p, sec);
	for (size_t i = 0; i < r->phase_count; i++) {
		if (report_in_phase(&r->phase_defs[i], p->time_ms, p->mono_ms)) {
			span_credit(&r->phases[i], p, sec);
		}
	}
	credit_mode(r, p->mode, sec);
	struct report_signals *g = &r->sig;
	g->loaded_s += p->signals & SIG_LOADED ? sec : 0;
	g->gpu_ceiling_s += p->signals & SIG_GPU_CEILING ? sec : 0;
	g->cpu_ceiling_s += p->signals & SIG_CPU_CEILING ? sec : 0;
	g->cpu_bound_s += p->signals & SIG_CPU_BOUND ? sec : 0;
	g->swap_growth_s += p->signals & SIG_SWAP_GROWTH ? sec : 0;
}

static double
get(const struct metric_set *m, const char *name)
{
	double v;
	return metric_set_get(m, name, &v) ? v : NAN;
}

/* The conditions the advice looks for (docs/report.md lists them); NaN compares false, so absent means no. */
static unsigned
signals_of(struct report *r, const struct sample *s)
{
	const struct metric_set *m = &s->metrics;
	struct report_signals *g = &r->sig;
	unsigned bits = 0;
	double gpu_load = get(m, "gpu.load_pct"), cpu_load = get(m, "cpu.load_pct");
	bool loaded = gpu_load >= 50 || cpu_load >= 50;
	if (loaded) {
		bits |= SIG_LOADED;
	}
	double f = get(m, "gpu.freq_mhz"), ceil = get(m, "gpu.max_freq_mhz"), hw = get(m, "gpu.hw_max_freq_mhz");
	if (gpu_load >= 90 && ceil < hw * 0.99 && f >= ceil * 0.95 && !s->throttle.active) {
		bits |= SIG_GPU_CEILING;
		g->gpu_ceiling_mhz = ceil;
		g->gpu_hw_max_mhz = hw;
	}
	for (int n = 0; n < 64; n++) {
		char name[48];
		snprintf(name, sizeof(name), "cpu.%d.load_pct", n);
		double load = get(m, name);
		if (isnan(load)) {
			if (n >= 16) {
				break;
			}
			continue;
		}
		snprintf(name, sizeof(name), "cpu.%d.freq_mhz", n);
		double cf = get(m, name);
		snprintf(name, sizeof(name), "cpu.%d.max_freq_mhz", n);
		double cc = get(m, name);
		snprintf(name, sizeof(name), "cpu.%d.hw_max_freq_mhz", n);
		double ch = get(m, name);
		if (load >= 90 && cc < ch * 0.99 && cf >= cc * 0.95 && !s->throttle.active) {
			bits |= SIG_CPU_CEILING;
			g->cpu_ceiling_mhz = cc;
			g->cpu_hw_max_mhz = ch;
			break;
		}
	}
	if (cpu_load >= 90 && gpu_load <= 20) {
		bits |= SIG_CPU_BOUND;
	}
	double swap = get(m, "swap.used_mb");
	if (!isnan(swap) && !g->swap_start_known) {
		g->swap_start_mb = swap;
		g->swap_start_known = true;
	}
	if (loaded && !isnan(swap)) {
		if (swap > g->swap_max_loaded_mb) {
			g->swap_max_loaded_mb = swap;
		}
		double used = get(m, "ram.used_mb"), total = get(m, "ram.total_mb");
		if (total > 0 && used / total * 100 > g->ram_max_pct_loaded) {
			g->ram_max_pct_loaded = used / total * 100;
		}
		if (swap - g->swap_start_mb >= SWAP_GROWTH_MB) {
			bits |= SIG_SWAP_GROWTH;
		}
	}
	return bits;
}

/* Ends the open episode at END_MS (wall), END_MONO_MS: its start is the end less the time that passed. */
static void
end_episode(struct report *r, int64_t end_ms, int64_t end_mono_ms)
{
	if (r->episode_count > 0 && r->episodes[r->episode_count - 1].end_ms == 0) {
		struct report_episode *e = &r->episodes[r->episode_count - 1];
		e->end_ms = end_ms;
		e->start_ms = end_ms - (end_mono_ms - e->mono_start_ms);
	}
}

/* Whether some zone's forecast said "a throttle within REPORT_PREDICT_S", and since when. */
static void
track_warning(struct report *r, const struct sample *s)
{
	bool now = false;
	for (size_t i = 0; i < s->metrics.count && !now; i++) {
		const struct metric *m = &s->metrics.items[i];
		now = m->len > 13 && memcmp(m->name, "throttle_eta.", 13) == 0 && m->value < REPORT_PREDICT_S;
	}
	if (r->warning && !now && s->mono_ms - r->warn_last_mono_ms > REPORT_PREDICT_GAP_MS) {
		r->warning = false;
	}
	if (now) {
		if (!r->warning) {
			r->warning = true;
			r->warn_since_mono_ms = s->mono_ms;
		}
		r->warn_last_mono_ms = s->mono_ms;
	}
}

static void
track_episode(struct report *r, const struct sample *s)
{
	const struct throttle_state *t = &s->throttle;
	if (!t->active) {
		if (r->in_episode) {
			r->in_episode = false;
			end_episode(r, s->time_ms, s->mono_ms);
		}
		return;
	}
	if (!r->in_episode) {
		r->in_episode = true;
		if (r->episode_count == REPORT_EPISODES_MAX) {
			r->episodes_dropped++;
			return;
		}
		r->episodes = xrealloc(r->episodes, r->episode_count + 1, sizeof(*r->episodes));
		struct report_episode *e = &r->episodes[r->episode_count++];
		memset(e, 0, sizeof(*e));
		e->start_ms = s->time_ms;
		e->mono_start_ms = s->mono_ms;
		e->predicted_s = r->warning ? (double)(s->mono_ms - r->warn_since_mono_ms) / 1000.0 : -1;
	}
	struct report_episode *e = &r->episodes[r->episode_count - 1];
	if (e->end_ms != 0) {
		return; /* over the limit: the kept ones are closed */
	}
	e->samples++;
	for (int k = 0; k < THROTTLE_REASON_COUNT; k++) {
		if (t->reason[k] && !e->reason[k]) {
			e->reason[k] = true;
			snprintf(e->why[k], sizeof(e->why[k]), "%s", t->why[k]);
		}
	}
}

static void
span_add(struct report_span *sp, const struct sample *s)
{
	if (sp->samples == 0) {
		sp->first_ms = s->time_ms;
	}
	sp->samples++;
	sp->last_ms = s->time_ms;
	const struct metric_set *m = &s->metrics;
	for (size_t i = 0; i < m->count; i++) {
		if (report_metric_wanted(m->items[i].name)) {
			stats_add(&sp->stats, m->items[i].name, m->items[i].value, s->time_ms);
		}
	}
}

void
report_add_sample(struct report *r, const struct sample *s)
{
	if (r->finished) {
		return;
	}
	if (r->pending.valid) {
		int64_t dt = s->mono_ms - r->pending.mono_ms; /* a wall clock step is not a gap */
		if (dt <= 0 || dt > REPORT_GAP_MS) {
			r->gaps += dt > REPORT_GAP_MS;
			dt = r->last_dt_ms; /* a pause, or a recording's time going back: the last normal interval */
		} else {
			r->last_dt_ms = dt;
		}
		r->credited_ms += (double)dt;
		credit(r, dt);
	} else {
		for (size_t i = 0; i < r->phase_count; i++) {
			struct report_phase_def *d = &r->phase_defs[i];
			if (d->relative) {
				d->start_ms = s->time_ms + (int64_t)llround(d->start_s * 1000);
				d->end_ms = s->time_ms + (int64_t)llround(d->end_s * 1000);
				d->mono_start_ms = s->mono_ms + (int64_t)llround(d->start_s * 1000);
				d->mono_end_ms = s->mono_ms + (int64_t)llround(d->end_s * 1000);
			}
		}
	}
	struct pending *p = &r->pending;
	p->valid = true;
	p->time_ms = s->time_ms;
	p->mono_ms = s->mono_ms;
	snprintf(p->mode, sizeof(p->mode), "%s", s->power_mode);
	p->throttled = s->throttle.active;
	memcpy(p->reason, s->throttle.reason, sizeof(p->reason));
	p->rails = 0;
	/* the current power of each rail (not its average or maximum): the dictionary's power.RAIL.mw */
	const struct metric_def *const *defs = metric_dict_classify(r->dict, &s->metrics);
	for (size_t i = 0; i < s->metrics.count && p->rails < REPORT_RAILS_MAX; i++) {
		const struct metric *m = &s->metrics.items[i];
		if (defs[i] == r->rail_def && isfinite(m->value) &&
		    metric_dict_capture(r->rail_def, m->name, 0, p->rail[p->rails], sizeof(p->rail[0]))) {
			p->rail_mw[p->rails++] = m->value;
		} else if (defs[i] == r->gpu_power_def && isfinite(m->value) &&
			   metric_dict_capture(r->gpu_power_def, m->name, 0, p->rail[p->rails] + 3,
					       sizeof(p->rail[0]) - 3)) {
			memcpy(p->rail[p->rails], "gpu",
			       3); /* an NVML GPU's power, gpu.N.power_mw, is the rail "gpuN" */
			p->rail_mw[p->rails++] = m->value;
		}
	}
	p->signals = signals_of(r, s);
	span_add(&r->all, s);
	for (size_t i = 0; i < r->phase_count; i++) {
		if (report_in_phase(&r->phase_defs[i], s->time_ms, s->mono_ms)) {
			span_add(&r->phases[i], s);
		}
	}
	track_warning(r, s);
	track_episode(r, s);
	report_cooling_add(r, s);
	report_work_add(r, s);
	report_host_add(r, s);
	if (r->series) {
		series_add(r->series, s);
	}
}

void
report_add_alert(struct report *r, const struct alert_event *ev)
{
	if (ev->restored || r->finished) {
		return;
	}
	if (r->alert_count == REPORT_ALERTS_MAX) {
		r->alerts_dropped++;
		return;
	}
	r->alerts = xrealloc(r->alerts, r->alert_count + 1, sizeof(*r->alerts));
	struct report_alert *a = &r->alerts[r->alert_count++];
	memset(a, 0, sizeof(*a));
	a->at_ms = ev->at_ms;
	snprintf(a->rule, sizeof(a->rule), "%s", ev->rule_name);
	snprintf(a->metric, sizeof(a->metric), "%s", ev->metric ? ev->metric : "");
	a->transition = ev->transition;
	a->severity = ev->severity;
	a->value = ev->absent ? NAN : ev->value;
	a->threshold = ev->threshold;
	/* cut to fit: the full text is in the alert's own outputs */
	size_t n = strnlen(ev->summary, sizeof(a->summary) - 1);
	memcpy(a->summary, ev->summary, n);
	a->summary[n] = '\0';
	a->processes = ev->processes;
}

void
report_finish(struct report *r)
{
	if (r->finished) {
		return;
	}
	int64_t last_ms = r->all.last_ms;
	int64_t dt = (int64_t)llround(report_interval_s(r) * 1000);
	if (r->pending.valid) {
		credit(r, dt);
	}
	if (r->in_episode) {
		end_episode(r, last_ms + dt, r->pending.mono_ms + dt);
	}
	stats_finish(&r->all.stats);
	for (size_t i = 0; i < r->phase_count; i++) {
		stats_finish(&r->phases[i].stats);
	}
	r->finished = true;
	report_advise(r);
}
