/* What the alert engine tests share (see engine_events.h). */
#include "engine_events.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/xalloc.h"
#include "helpers.h"

void
level_ref(struct rule *r, enum severity s, enum threshold_ref ref, double scale, double offset)
{
	r->level[s].set = true;
	r->level[s].ref = ref;
	r->level[s].scale = scale;
	r->level[s].offset = offset;
}

void
add_mode(struct rule *r, const char *mode)
{
	r->modes[r->mode_count++] = xstrdup(mode);
}

void
at(struct sample *s, int64_t t_ms, const char *mode)
{
	sample_clear(s);
	s->time_ms = t_ms;
	s->mono_ms = t_ms; /* as a replay: durations follow the stamps */
	snprintf(s->power_mode, sizeof(s->power_mode), "%s", mode);
}

void
record(const struct alert_event *e, void *data)
{
	struct recorder *r = data;
	struct rec *x;

	r->count[e->transition]++;
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->ev = realloc(r->ev, r->cap * sizeof(*r->ev));
		assert_non_null(r->ev);
	}
	x = &r->ev[r->n++];
	memset(x, 0, sizeof(*x));
	x->t = e->transition;
	x->sev = e->severity;
	x->prev = e->previous;
	x->absent = e->absent;
	x->restored = e->restored;
	x->value = e->value;
	x->threshold = e->threshold;
	x->at_ms = e->at_ms;
	x->starts_at_ms = e->starts_at_ms;
	x->ends_at_ms = e->ends_at_ms;
	snprintf(x->metric, sizeof(x->metric), "%s", e->metric);
	snprintf(x->fp, sizeof(x->fp), "%s", e->fingerprint);
	snprintf(x->summary, sizeof(x->summary), "%s", e->summary);
	snprintf(x->description, sizeof(x->description), "%s", e->description);
	snprintf(x->throttle, sizeof(x->throttle), "%s", e->throttle);
	memcpy(x->causes, e->throttle_causes, sizeof(x->causes));
	x->cause_count = e->throttle_cause_count;
	snprintf(x->power_mode, sizeof(x->power_mode), "%s", e->power_mode);
	for (size_t i = 0; i < e->action_count; i++) {
		size_t len = strlen(x->actions);
		snprintf(x->actions + len, sizeof(x->actions) - len, "%s%s", i ? "," : "", e->actions[i]);
	}
}

void
record_alerts(const struct alert_event *e, void *data)
{
	if (e->transition != TRANSITION_PENDING && e->transition != TRANSITION_CANCELLED) {
		record(e, data);
	}
}

void
rec_reset(struct recorder *r)
{
	free(r->ev);
	memset(r, 0, sizeof(*r));
}

void
expect_events(const struct recorder *r, const struct want *w)
{
	size_t n = 0;

	while (w[n].at_ms >= 0) {
		n++;
	}
	for (size_t i = 0; i < r->n && i < n; i++) {
		if (r->ev[i].at_ms != w[i].at_ms || r->ev[i].t != w[i].t || r->ev[i].sev != w[i].sev) {
			fail_msg("event %zu: got %s %s at %lld, want %s %s at %lld", i, alert_transition_name(r->ev[i].t),
				 severity_name(r->ev[i].sev), (long long)r->ev[i].at_ms, alert_transition_name(w[i].t),
				 severity_name(w[i].sev), (long long)w[i].at_ms);
		}
	}
	assert_int_equal(r->n, n);
}

void
feed(struct engine *e, struct sample *s, const char *metric, const struct pt *pts)
{
	for (size_t i = 0; pts[i].t_ms >= 0; i++) {
		at(s, pts[i].t_ms, "MAXN");
		if (!isnan(pts[i].v)) {
			th_put(s, metric, pts[i].v);
		}
		engine_evaluate(e, s);
	}
}

int
setup(void **state)
{
	struct sample *s = calloc(1, sizeof(*s));
	if (!s) {
		return -1;
	}
	*state = s;
	return 0;
}

int
teardown(void **state)
{
	free(*state);
	return 0;
}
