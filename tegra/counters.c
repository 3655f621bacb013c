/*
 * The counters stage: what a Prometheus rate() needs and one sample cannot
 * give. From every sample (never only the scraped one), after the
 * throttle stage:
 *   energy.RAIL.joules_total      each rail's power.RAIL.mw times the time since the previous sample
 *   throttle.seconds_total        time spent throttled (any reason)
 *   throttle.REASON.seconds_total time spent throttled for that reason (like DCGM's violation counters)
 * A sample's readings stand for the interval that ends with it (the first
 * sample adds nothing). Time is sample time, so replays count like live runs;
 * a clock that goes back adds nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "sources.h"

#define RAILS_MAX 32

struct rail_energy {
	char name[METRIC_NAME_MAX]; /* "energy.vdd_in.joules_total" */
	double joules;
};

struct counters {
	struct stage base;
	bool have_last;
	int64_t last_ms;
	struct rail_energy rails[RAILS_MAX];
	size_t rail_count;
	double throttled_s;
	double reason_s[THROTTLE_REASON_COUNT];
};

/* The energy slot of power.RAIL.mw (M), or NULL when M is not that or the table is full. */
static struct rail_energy *
rail_of(struct counters *c, const struct metric *m)
{
	/* the first letter first: this runs over every metric of every sample */
	const char *name = m->name;
	size_t len = m->len;
	if (name[0] != 'p' || len < 10 || strncmp(name, "power.", 6) != 0 || strcmp(name + len - 3, ".mw") != 0) {
		return NULL;
	}
	char rail[METRIC_NAME_MAX], want[METRIC_NAME_MAX];
	memcpy(rail, name + 6, len - 9);
	rail[len - 9] = '\0';
	size_t n = metric_name_join(want, "energy.", rail, ".joules_total");
	if (n == 0) {
		return NULL;
	}
	for (size_t i = 0; i < c->rail_count; i++) {
		if (strcmp(c->rails[i].name, want) == 0) {
			return &c->rails[i];
		}
	}
	if (c->rail_count == RAILS_MAX) {
		return NULL;
	}
	struct rail_energy *r = &c->rails[c->rail_count++];
	memcpy(r->name, want, n + 1);
	r->joules = 0;
	return r;
}

static int
counters_process(struct stage *st, struct sample *s)
{
	struct counters *c = (struct counters *)st;
	/* on the monotonic clock: a wall clock step is not an hour at this power */
	double dt_s = c->have_last && s->mono_ms > c->last_ms ? (double)(s->mono_ms - c->last_ms) / 1000.0 : 0;
	if (!c->have_last || s->mono_ms > c->last_ms) {
		c->last_ms = s->mono_ms;
	}
	c->have_last = true;
	size_t count = s->metrics.count; /* the loop adds metrics: read only the sources' */
	for (size_t i = 0; i < count; i++) {
		struct rail_energy *r = rail_of(c, &s->metrics.items[i]);
		if (r && s->metrics.items[i].value >= 0) {
			r->joules += s->metrics.items[i].value / 1000.0 * dt_s;
		}
	}
	if (s->throttle.active) {
		c->throttled_s += dt_s;
	}
	for (int k = 0; k < THROTTLE_REASON_COUNT; k++) {
		if (s->throttle.reason[k]) {
			c->reason_s[k] += dt_s;
		}
	}
	for (size_t i = 0; i < c->rail_count; i++) {
		metric_set_put(&s->metrics, c->rails[i].name, c->rails[i].joules);
	}
	metric_set_put(&s->metrics, "throttle.seconds_total", c->throttled_s);
	for (int k = 0; k < THROTTLE_REASON_COUNT; k++) {
		metric_set_put3(&s->metrics, c->reason_s[k], "throttle.", throttle_reason_name((enum throttle_reason)k),
				".seconds_total");
	}
	return 0;
}

static void
counters_destroy(struct stage *st)
{
	free(st);
}

static const struct stage_ops counters_ops = {
	.name = "counters",
	.process = counters_process,
	.destroy = counters_destroy,
};

struct stage *
counters_stage_create(void)
{
	struct counters *c = xcalloc(1, sizeof(*c));
	c->base.ops = &counters_ops;
	return &c->base;
}
