/*
 * Cooling health. A fan driven (PWM > 0) whose tachometer reads 0 rpm is
 * dead, stalled or unplugged: fan.N.dead. And the board's thermal
 * resistance, the junction's degrees above a reference per watt of input
 * power, kept per power mode as a slow average over samples where the
 * board is in thermal steady state, with a baseline (its first hours)
 * that survives restarts (cooling_state.c), so a heatsink clogging with
 * dust or a fan wearing out shows as thermal.resistance_rise_pct growing
 * over days.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "predict_priv.h"

#define FAN_MAX 8
#define SHORT_MS 60000.0    /* ~1 min and ... */
#define LONG_MS 300000.0    /* ~5 min averages: steady when they agree */
#define STEADY_C 0.5        /* the junction's averages within this ... */
#define STEADY_POWER 0.05   /* ... and the power's within 5 % */
#define MIN_POWER_MW 2000.0 /* below it the division amplifies the sensors' noise */
#define MIN_RISE_C 2.0      /* the junction must be this far above the reference */

/* fan.N.dead for every N with both fan.N.pwm and fan.N.rpm (names written out: no snprintf every sample). */
static void
check_fans(struct sample *s)
{
	static const char *const names[FAN_MAX][3] = {
		{"fan.0.pwm", "fan.0.rpm", "fan.0.dead"}, {"fan.1.pwm", "fan.1.rpm", "fan.1.dead"},
		{"fan.2.pwm", "fan.2.rpm", "fan.2.dead"}, {"fan.3.pwm", "fan.3.rpm", "fan.3.dead"},
		{"fan.4.pwm", "fan.4.rpm", "fan.4.dead"}, {"fan.5.pwm", "fan.5.rpm", "fan.5.dead"},
		{"fan.6.pwm", "fan.6.rpm", "fan.6.dead"}, {"fan.7.pwm", "fan.7.rpm", "fan.7.dead"},
	};
	for (int n = 0; n < FAN_MAX; n++) {
		double pwm, rpm;
		if (!metric_set_get(&s->metrics, names[n][0], &pwm)) {
			if (n > 0) {
				break; /* fans are numbered from 0 without gaps */
			}
			continue;
		}
		if (metric_set_get(&s->metrics, names[n][1], &rpm)) { /* without a tachometer: no verdict */
			metric_set_put(&s->metrics, names[n][2], pwm > 0 && rpm <= 0 ? 1 : 0);
		}
	}
}

/* The junction (tj, else the hottest zone) and the reference (tboard, else the coolest zone). */
static bool
junction_and_reference(const struct metric_set *ms, double *tj, double *ref)
{
	bool have_tj = metric_set_get(ms, "temp.tj_c", tj);
	bool have_board = metric_set_get(ms, "temp.tboard_c", ref);
	double hot = -INFINITY, cold = INFINITY;
	for (size_t i = 0; i < ms->count; i++) {
		const struct metric *m = &ms->items[i];
		if (m->len < 8 || memcmp(m->name, "temp.", 5) != 0 || memcmp(m->name + m->len - 2, "_c", 2) != 0) {
			continue;
		}
		hot = m->value > hot ? m->value : hot;
		cold = m->value < cold ? m->value : cold;
	}
	if (!have_tj) {
		*tj = hot;
	}
	if (!have_board) {
		*ref = cold;
	}
	return isfinite(*tj) && isfinite(*ref);
}

static struct mode_resistance *
mode_slot(struct cooling *c, const struct sample *s)
{
	char key[POWER_MODE_NAME_MAX];
	double id;
	if (s->power_mode[0]) {
		snprintf(key, sizeof(key), "%s", s->power_mode);
	} else if (metric_set_get(&s->metrics, "nvpmodel.id", &id)) {
		snprintf(key, sizeof(key), "id %d", (int)id);
	} else {
		snprintf(key, sizeof(key), "unknown");
	}
	for (int i = 0; i < c->mode_count; i++) {
		if (strcmp(c->modes[i].mode, key) == 0) {
			return &c->modes[i];
		}
	}
	if (c->mode_count == COOLING_MODES_MAX) {
		return NULL;
	}
	struct mode_resistance *m = &c->modes[c->mode_count++];
	memset(m, 0, sizeof(*m));
	snprintf(m->mode, sizeof(m->mode), "%s", key);
	return m;
}

static double
ewma(double avg, double x, double dt_ms, double tau_ms)
{
	return avg + (x - avg) * dt_ms / (dt_ms + tau_ms);
}

/* The mode's slow statistics, when a state file keeps them (a dry run shows the recorded ones instead). */
static void
put_slow(const struct cooling *c, const struct mode_resistance *m, struct sample *s)
{
	if (!c->keep || !m) {
		return;
	}
	if (m->steady_ms >= COOLING_SHOWN_MS) {
		metric_set_put(&s->metrics, "thermal.resistance_c_per_w", round(m->avg * 1000) / 1000);
	}
	if (m->baseline_frozen) {
		metric_set_put(&s->metrics, "thermal.resistance_baseline_c_per_w", round(m->baseline * 1000) / 1000);
		metric_set_put(&s->metrics, "thermal.resistance_rise_pct",
			       round((m->avg / m->baseline - 1) * 1000) / 10);
	}
}

void
cooling_process(struct cooling *c, struct sample *s)
{
	check_fans(s);
	double tj, ref, mw;
	if (!junction_and_reference(&s->metrics, &tj, &ref) || !sample_input_power(&s->metrics, &mw, NULL)) {
		c->have_last = false;
		return;
	}
	struct mode_resistance *m = mode_slot(c, s);
	double dt = c->have_last ? (double)(s->mono_ms - c->last_ms) : 0;
	if (!c->have_last || dt <= 0 || dt > 60000) {
		/* the first reading, or after a gap: the averages start again */
		c->tj_short = c->tj_long = tj;
		c->p_short = c->p_long = mw;
		c->have_last = true;
		c->last_ms = s->mono_ms;
		c->steady_since_ms = s->mono_ms;
		put_slow(c, m, s);
		return;
	}
	c->last_ms = s->mono_ms;
	c->tj_short = ewma(c->tj_short, tj, dt, SHORT_MS);
	c->tj_long = ewma(c->tj_long, tj, dt, LONG_MS);
	c->p_short = ewma(c->p_short, mw, dt, SHORT_MS);
	c->p_long = ewma(c->p_long, mw, dt, LONG_MS);
	bool steady = fabs(c->tj_short - c->tj_long) < STEADY_C &&
		      fabs(c->p_short - c->p_long) < STEADY_POWER * c->p_long && c->p_long >= MIN_POWER_MW &&
		      c->tj_long - ref >= MIN_RISE_C;
	if (!steady) {
		c->steady_since_ms = s->mono_ms;
	}
	/* steady for the long average's length: the averages then describe one state, not a transient */
	if (m && s->mono_ms - c->steady_since_ms >= (int64_t)LONG_MS) {
		double r = (c->tj_long - ref) / (c->p_long / 1000.0);
		metric_set_put(&s->metrics, "thermal.resistance_now_c_per_w", round(r * 1000) / 1000);
		cooling_add(m, r, dt);
		c->dirty = true;
	}
	put_slow(c, m, s);
}

void
cooling_add(struct mode_resistance *m, double r, double dt_ms)
{
	if (m->steady_ms == 0) {
		m->avg = r;
	} else {
		m->avg = ewma(m->avg, r, dt_ms, COOLING_SLOW_MS);
	}
	m->steady_ms += dt_ms;
	if (!m->baseline_frozen) {
		m->baseline_sum += r * dt_ms;
		m->baseline_ms += dt_ms;
		if (m->baseline_ms >= COOLING_BASELINE_MS) {
			m->baseline = m->baseline_sum / m->baseline_ms;
			m->baseline_frozen = true;
		}
	}
}
