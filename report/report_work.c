/*
 * The report's work section: joules per unit of the application's work
 * (work.NAME.count_total in the recording, docs/work.md) over the run, per
 * power mode and per phase. Energy is the board's input rail, integrated
 * like the report's energy (each sample's power over the interval it stands
 * for); "above idle" takes off the input power the run showed while no
 * work was reported for 30 s and the GPU was under 10 %, per power mode.
 * Pure.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/xalloc.h"
#include "report.h"

#define IDLE_AFTER_MS 30000
#define IDLE_GPU_PCT 10.0

static struct report_work_sum *
sum_of(struct report *r, const char *name, const char *scope)
{
	for (size_t i = 0; i < r->work_count; i++) {
		struct report_work_sum *w = &r->work[i];
		if (strcmp(w->name, name) == 0 && strcmp(w->scope, scope) == 0) {
			return w;
		}
	}
	r->work = xrealloc(r->work, r->work_count + 1, sizeof(*r->work));
	struct report_work_sum *w = &r->work[r->work_count++];
	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "%s", name);
	snprintf(w->scope, sizeof(w->scope), "%s", scope);
	return w;
}

static struct report_idle *
idle_of(struct report *r, const char *mode)
{
	for (size_t i = 0; i < r->idle_count; i++) {
		if (strcmp(r->idle[i].mode, mode) == 0) {
			return &r->idle[i];
		}
	}
	r->idle = xrealloc(r->idle, r->idle_count + 1, sizeof(*r->idle));
	struct report_idle *d = &r->idle[r->idle_count++];
	memset(d, 0, sizeof(*d));
	snprintf(d->mode, sizeof(d->mode), "%s", mode);
	return d;
}

static void
credit(struct report_work_sum *w, double units, double joules, double secs, const char *mode)
{
	w->units += units;
	w->joules += joules;
	w->seconds += secs;
	snprintf(w->mode, sizeof(w->mode), "%s", mode); /* a phase spans modes: the idle of the last one */
}

void
report_work_add(struct report *r, const struct sample *s)
{
	struct report_work_prev *p = &r->work_prev;
	double mw = NAN;
	sample_input_power(&s->metrics, &mw, NULL);
	bool worked = false;
	double dt = p->valid ? (double)(s->mono_ms - p->mono_ms) : 0;
	bool interval = p->valid && dt > 0 && dt <= REPORT_GAP_MS;
	const char *mode = p->mode[0] ? p->mode : "unknown";
	for (size_t i = 0; i < s->metrics.count; i++) {
		const struct metric *m = &s->metrics.items[i];
		if (m->len < 18 || memcmp(m->name, "work.", 5) != 0 ||
		    memcmp(m->name + m->len - 12, ".count_total", 12) != 0) {
			continue;
		}
		char name[METRIC_NAME_MAX];
		snprintf(name, sizeof(name), "%.*s", (int)(m->len - 17), m->name + 5);
		size_t k = 0;
		while (k < p->names && strcmp(p->name[k], name) != 0) {
			k++;
		}
		if (k == p->names) {
			if (k == REPORT_WORK_NAMES) {
				continue;
			}
			snprintf(p->name[p->names], sizeof(p->name[0]), "%s", name);
			p->count[p->names++] = m->value;
			continue;
		}
		/* a count that went down was restarted: its new value is a baseline */
		double du = m->value >= p->count[k] ? m->value - p->count[k] : 0;
		p->count[k] = m->value;
		worked = worked || du > 0;
		if (!interval) {
			continue;
		}
		/* the previous sample's power stands for the interval that ends here (left rectangles) */
		double joules = isfinite(p->mw) ? p->mw / 1000.0 * dt / 1000.0 : 0;
		credit(sum_of(r, name, ""), du, joules, dt / 1000.0, mode);
		credit(sum_of(r, name, mode), du, joules, dt / 1000.0, mode);
		for (size_t ph = 0; ph < r->phase_count; ph++) {
			if (report_in_phase(&r->phase_defs[ph], p->time_ms, p->mono_ms)) {
				credit(sum_of(r, name, r->phase_defs[ph].name), du, joules, dt / 1000.0, mode);
			}
		}
	}
	if (worked || !p->valid) {
		p->worked_ms = s->mono_ms;
	}
	double gpu;
	bool gpu_idle = !metric_set_get(&s->metrics, "gpu.load_pct", &gpu) || gpu <= IDLE_GPU_PCT;
	if (interval && p->names > 0 && gpu_idle && isfinite(p->mw) && s->mono_ms - p->worked_ms >= IDLE_AFTER_MS) {
		struct report_idle *d = idle_of(r, mode);
		d->joules += p->mw / 1000.0 * dt / 1000.0;
		d->seconds += dt / 1000.0;
	}
	p->valid = true;
	p->mono_ms = s->mono_ms;
	p->time_ms = s->time_ms;
	p->mw = mw;
	snprintf(p->mode, sizeof(p->mode), "%s", s->power_mode);
}

/* The idle power of MODE in W, or of the whole run when the mode never idled; NAN when nothing idled. */
static double
idle_w(const struct report *r, const char *mode)
{
	double j = 0, s = 0;
	for (size_t i = 0; i < r->idle_count; i++) {
		if (strcmp(r->idle[i].mode, mode) == 0 && r->idle[i].seconds > 0) {
			return r->idle[i].joules / r->idle[i].seconds;
		}
		j += r->idle[i].joules;
		s += r->idle[i].seconds;
	}
	return s > 0 ? j / s : NAN;
}

bool
report_work_figures(const struct report *r, const struct report_work_sum *w, double *j_per_unit, double *above)
{
	if (w->units <= 0) {
		return false;
	}
	*j_per_unit = w->joules / w->units;
	double idle = idle_w(r, w->mode);
	*above = isfinite(idle) ? (w->joules - idle * w->seconds) / w->units : NAN;
	return true;
}

static void
figures_json(const struct report *r, const struct report_work_sum *w, struct json *j)
{
	double jpu, above;
	json_object_begin(j);
	json_key(j, "units");
	json_number(j, w->units);
	json_key(j, "seconds");
	json_number(j, round(w->seconds * 1000) / 1000);
	json_key(j, "joules");
	json_number(j, round(w->joules * 1000) / 1000);
	bool have = report_work_figures(r, w, &jpu, &above);
	json_key(j, "j_per_unit");
	if (have) {
		json_number(j, round(jpu * 1e6) / 1e6);
	} else {
		json_null(j);
	}
	json_key(j, "above_idle_j_per_unit");
	if (have && isfinite(above)) {
		json_number(j, round(above * 1e6) / 1e6);
	} else {
		json_null(j);
	}
	json_object_end(j);
}

/* Every scope of NAME that is a power mode (WANT_MODE) or a phase. */
static void
scopes_json(const struct report *r, const char *name, bool want_mode, struct json *j)
{
	json_object_begin(j);
	for (size_t i = 0; i < r->work_count; i++) {
		const struct report_work_sum *w = &r->work[i];
		if (strcmp(w->name, name) != 0 || !w->scope[0]) {
			continue;
		}
		bool is_phase = false;
		for (size_t ph = 0; ph < r->phase_count; ph++) {
			is_phase = is_phase || strcmp(r->phase_defs[ph].name, w->scope) == 0;
		}
		if (is_phase != want_mode) {
			json_key(j, w->scope);
			figures_json(r, w, j);
		}
	}
	json_object_end(j);
}

void
report_work_json(const struct report *r, struct json *j)
{
	json_object_begin(j);
	json_key(j, "idle_w");
	json_object_begin(j);
	for (size_t i = 0; i < r->idle_count; i++) {
		json_key(j, r->idle[i].mode);
		json_number(j, round(r->idle[i].joules / r->idle[i].seconds * 1000) / 1000);
	}
	json_object_end(j);
	json_key(j, "names");
	json_object_begin(j);
	for (size_t i = 0; i < r->work_count; i++) {
		const struct report_work_sum *w = &r->work[i];
		if (w->scope[0]) {
			continue;
		}
		json_key(j, w->name);
		json_object_begin(j);
		json_key(j, "run");
		figures_json(r, w, j);
		json_key(j, "power_modes");
		scopes_json(r, w->name, true, j);
		json_key(j, "phases");
		scopes_json(r, w->name, false, j);
		json_object_end(j);
	}
	json_object_end(j);
	json_object_end(j);
}

void
report_work_text(const struct report *r, FILE *out)
{
	bool header = false;
	for (size_t i = 0; i < r->work_count; i++) {
		const struct report_work_sum *w = &r->work[i];
		double jpu, above;
		if (!report_work_figures(r, w, &jpu, &above)) {
			continue;
		}
		if (!header) {
			fprintf(out,
				"\nWork (the board's input energy per unit, idle included; above idle without it)\n");
			header = true;
		}
		fprintf(out, "  %-24s %-14s %10.0f units  %8.4f J per %s", w->name,
			w->scope[0] ? w->scope : "whole run", w->units, jpu, w->name);
		if (isfinite(above)) {
			fprintf(out, "  (%.4f J above idle)", above);
		}
		fputc('\n', out);
	}
}

const struct report_work_sum *
report_work_run(const struct report *r, const char *name)
{
	for (size_t i = 0; i < r->work_count; i++) {
		if (!r->work[i].scope[0] && strcmp(r->work[i].name, name) == 0) {
			return &r->work[i];
		}
	}
	return NULL;
}
