/* The predict stage: the guard, the thermal forecast and cooling health, in that order. */
#include "predict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/xalloc.h"
#include "predict_priv.h"

#define SAVE_EVERY_MS (10 * 60 * 1000) /* a crash loses at most 10 min of a statistic measured over days */

struct predict_stage {
	struct stage base;
	struct power_mode_expectation expect;
	struct forecast forecast;
	struct cooling cooling;
	char *state_path; /* NULL: the thermal statistics are not kept */
};

static void
save_state(struct predict_stage *ps)
{
	int r = cooling_state_save(&ps->cooling, ps->state_path);
	if (r < 0) {
		log_warn("cannot save the thermal state to %s: %s", ps->state_path, strerror(-r));
	}
	ps->cooling.dirty = false;
}

static int
predict_process(struct stage *st, struct sample *s)
{
	struct predict_stage *ps = (struct predict_stage *)st;
	mode_guard_check(&ps->expect, s);
	forecast_process(&ps->forecast, s);
	cooling_process(&ps->cooling, s);
	if (ps->state_path && ps->cooling.dirty && s->mono_ms - ps->cooling.saved_ms >= SAVE_EVERY_MS) {
		ps->cooling.saved_ms = s->mono_ms;
		save_state(ps);
	}
	return 0;
}

static void
predict_destroy(struct stage *st)
{
	struct predict_stage *ps = (struct predict_stage *)st;
	if (ps->state_path && ps->cooling.dirty) {
		save_state(ps);
	}
	free(ps->state_path);
	free(ps);
}

static const struct stage_ops predict_ops = {
	.name = "predict",
	.process = predict_process,
	.destroy = predict_destroy,
};

struct stage *
predict_stage_create(const struct predict_options *opts)
{
	struct predict_stage *ps = xcalloc(1, sizeof(*ps));
	ps->base.ops = &predict_ops;
	ps->expect = opts->expect;
	if (opts->state_path && opts->state_path[0]) {
		ps->state_path = xstrdup(opts->state_path);
		ps->cooling.keep = true;
		cooling_state_load(&ps->cooling, ps->state_path);
	}
	return &ps->base;
}
