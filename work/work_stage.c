/*
 * The work stage (work.h): the board's energy divided by the application's
 * units of work, from the samples alone (so a recording replays to the
 * same figures). Energy and units are exponentially weighted sums over
 * ~1 min, so a rate of one unit every 10 s still gives a figure every
 * sample. What is counted is honest and blunt: the whole board's input
 * rail, idle power and every other process included; "above idle" takes
 * off the input power measured while no work was reported.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "work_priv.h"

#define WINDOW_MS 60000.0
#define IDLE_AFTER_MS 30000   /* no unit for this long: the board idles (for this agent) */
#define IDLE_GPU_PCT 10.0     /* ... and the GPU is not busy with something unreported */
#define IDLE_KNOWN_MS 60000.0 /* a baseline needs a minute of idle */
#define GAP_MS 60000          /* a longer gap starts the sums again */
#define RAILS_MAX 4           /* rails besides the input, per name */
#define MODES_MAX 8

struct work_name {
	char name[WORK_NAME_MAX];
	char count_metric[METRIC_NAME_MAX], rate[METRIC_NAME_MAX], jpu[METRIC_NAME_MAX], above[METRIC_NAME_MAX];
	char rail_metric[RAILS_MAX][METRIC_NAME_MAX];
	bool have_last;
	double last;                /* count_total at the previous sample */
	double units, joules, secs; /* weighted sums */
	double rail_joules[RAILS_MAX];
};

struct idle_mode {
	char mode[POWER_MODE_NAME_MAX];
	double mw, ms;
};

struct work_stage {
	struct stage base;
	struct work_name names[WORK_NAMES_MAX];
	int count;
	char rails[RAILS_MAX][METRIC_NAME_MAX]; /* power.RAIL.mw besides the input, in the order found */
	char rail_names[RAILS_MAX][METRIC_NAME_MAX];
	int rail_count;
	size_t scanned_count;
	bool have_last;
	int64_t last_ms, last_work_ms;
	struct idle_mode modes[MODES_MAX];
	int mode_count;
};

static struct work_name *
name_slot(struct work_stage *ws, const char *name, size_t len)
{
	for (int i = 0; i < ws->count; i++) {
		if (strlen(ws->names[i].name) == len && memcmp(ws->names[i].name, name, len) == 0) {
			return &ws->names[i];
		}
	}
	if (ws->count == WORK_NAMES_MAX || len >= WORK_NAME_MAX) {
		return NULL;
	}
	struct work_name *w = &ws->names[ws->count++];
	memset(w, 0, sizeof(*w));
	memcpy(w->name, name, len);
	int n = (int)len;
	snprintf(w->count_metric, sizeof(w->count_metric), "work.%.*s.count_total", n, name);
	snprintf(w->rate, sizeof(w->rate), "work.%.*s.rate_per_s", n, name);
	snprintf(w->jpu, sizeof(w->jpu), "work.%.*s.joules_per_unit", n, name);
	snprintf(w->above, sizeof(w->above), "work.%.*s.above_idle_joules_per_unit", n, name);
	return w;
}

/* The names (work.NAME.count_total) and the rails, again whenever the sample's layout changed. */
static void
scan(struct work_stage *ws, const struct metric_set *ms)
{
	const char *input = NULL;
	double mw;
	sample_input_power(ms, &mw, &input);
	ws->rail_count = 0;
	for (size_t i = 0; i < ms->count; i++) {
		const struct metric *m = &ms->items[i];
		if (m->len > 18 && memcmp(m->name, "work.", 5) == 0 &&
		    memcmp(m->name + m->len - 12, ".count_total", 12) == 0) {
			name_slot(ws, m->name + 5, m->len - 17);
		} else if (m->len > 9 && memcmp(m->name, "power.", 6) == 0 &&
			   memcmp(m->name + m->len - 3, ".mw", 3) == 0 && ws->rail_count < RAILS_MAX) {
			size_t rl = m->len - 9;
			if (input && strlen(input) == rl && memcmp(input, m->name + 6, rl) == 0) {
				continue;
			}
			snprintf(ws->rails[ws->rail_count], METRIC_NAME_MAX, "%s", m->name);
			snprintf(ws->rail_names[ws->rail_count], METRIC_NAME_MAX, "%.*s", (int)rl, m->name + 6);
			ws->rail_count++;
		}
	}
	for (int i = 0; i < ws->count; i++) {
		struct work_name *w = &ws->names[i];
		for (int r = 0; r < ws->rail_count; r++) {
			/* through a local buffer: gcc's -Wrestrict (ASan, -O0) cannot tell the two parts of *ws apart */
			char name[METRIC_NAME_MAX];
			int n = snprintf(name, sizeof(name), "work.%s.%s.joules_per_unit", w->name, ws->rail_names[r]);
			if (n < 0 || n >= METRIC_NAME_MAX) {
				name[0] = '\0'; /* too long a name: that figure is left out */
			}
			memcpy(w->rail_metric[r], name, sizeof(name));
		}
	}
	ws->scanned_count = ms->count;
}

static struct idle_mode *
idle_of(struct work_stage *ws, const char *mode)
{
	const char *key = mode[0] ? mode : "unknown";
	for (int i = 0; i < ws->mode_count; i++) {
		if (strcmp(ws->modes[i].mode, key) == 0) {
			return &ws->modes[i];
		}
	}
	if (ws->mode_count == MODES_MAX) {
		return NULL;
	}
	struct idle_mode *m = &ws->modes[ws->mode_count++];
	memset(m, 0, sizeof(*m));
	snprintf(m->mode, sizeof(m->mode), "%s", key);
	return m;
}

static int
work_process(struct stage *st, struct sample *s)
{
	struct work_stage *ws = (struct work_stage *)st;
	if (s->metrics.count != ws->scanned_count) {
		scan(ws, &s->metrics);
	}
	/* the clock runs from the first sample, named work or not: a name's first units fall in an interval */
	double dt = ws->have_last ? (double)(s->mono_ms - ws->last_ms) : 0;
	bool restart = !ws->have_last || dt <= 0 || dt > GAP_MS;
	if (!ws->have_last) {
		ws->last_work_ms = s->mono_ms;
	}
	ws->have_last = true;
	ws->last_ms = s->mono_ms;
	if (ws->count == 0) {
		return 0;
	}
	double in_mw;
	bool have_in = sample_input_power(&s->metrics, &in_mw, NULL);
	double keep = restart ? 0 : exp(-dt / WINDOW_MS);
	double rail_mw[RAILS_MAX];
	for (int r = 0; r < ws->rail_count; r++) {
		if (!metric_set_get(&s->metrics, ws->rails[r], &rail_mw[r])) {
			rail_mw[r] = NAN;
		}
	}
	bool worked = false;
	for (int i = 0; i < ws->count; i++) {
		struct work_name *w = &ws->names[i];
		double total;
		if (!metric_set_get(&s->metrics, w->count_metric, &total)) {
			continue;
		}
		/* A name absent from the previous sample had 0 units there (count_total counts from the agent's
		 * start): its first units belong to this interval. A count that went down is a restarted
		 * application's or agent's: a new baseline. */
		double before = w->have_last ? w->last : 0;
		double du = !restart && total >= before ? total - before : 0;
		w->last = total;
		w->have_last = true;
		worked = worked || du > 0;
		double secs = restart ? 0 : dt / 1000.0;
		w->units = w->units * keep + du;
		w->secs = w->secs * keep + secs;
		w->joules = w->joules * keep + (have_in ? in_mw / 1000.0 * secs : 0);
		for (int r = 0; r < ws->rail_count; r++) {
			w->rail_joules[r] =
				w->rail_joules[r] * keep + (isfinite(rail_mw[r]) ? rail_mw[r] / 1000.0 * secs : 0);
		}
	}
	if (worked) {
		ws->last_work_ms = s->mono_ms;
	}
	double gpu;
	bool gpu_idle = !metric_set_get(&s->metrics, "gpu.load_pct", &gpu) || gpu <= IDLE_GPU_PCT;
	struct idle_mode *idle = idle_of(ws, s->power_mode);
	if (idle && have_in && !restart && gpu_idle && s->mono_ms - ws->last_work_ms >= IDLE_AFTER_MS) {
		idle->mw = idle->ms == 0 ? in_mw : idle->mw + (in_mw - idle->mw) * dt / (dt + WINDOW_MS);
		idle->ms += dt;
	}
	bool idle_known = idle && idle->ms >= IDLE_KNOWN_MS;
	if (idle_known) {
		metric_set_put(&s->metrics, "work.idle_mw", round(idle->mw));
	}
	for (int i = 0; i < ws->count; i++) {
		struct work_name *w = &ws->names[i];
		if (w->secs <= 0) {
			continue;
		}
		metric_set_put(&s->metrics, w->rate, round(w->units / w->secs * 1000) / 1000);
		if (w->units < 1e-6) {
			continue; /* nothing done lately: no energy per unit to tell */
		}
		if (have_in) {
			metric_set_put(&s->metrics, w->jpu, round(w->joules / w->units * 10000) / 10000);
			if (idle_known) {
				double above = (w->joules - idle->mw / 1000.0 * w->secs) / w->units;
				metric_set_put(&s->metrics, w->above, round(above * 10000) / 10000);
			}
		}
		for (int r = 0; r < ws->rail_count; r++) {
			if (w->rail_metric[r][0] && isfinite(rail_mw[r])) {
				metric_set_put(&s->metrics, w->rail_metric[r],
					       round(w->rail_joules[r] / w->units * 10000) / 10000);
			}
		}
	}
	return 0;
}

static void
work_stage_destroy(struct stage *st)
{
	free(st);
}

static const struct stage_ops work_stage_ops = {
	.name = "work",
	.process = work_process,
	.destroy = work_stage_destroy,
};

struct stage *
work_stage_create(void)
{
	struct work_stage *ws = xcalloc(1, sizeof(*ws));
	ws->base.ops = &work_stage_ops;
	return &ws->base;
}
