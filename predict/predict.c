/* The predict stage: the guard, the thermal forecast and cooling health, in that order. */
#include "predict.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "predict_priv.h"

struct predict_stage {
	struct stage base;
	struct power_mode_expectation expect;
	struct forecast forecast;
};

static int
predict_process(struct stage *st, struct sample *s)
{
	struct predict_stage *ps = (struct predict_stage *)st;
	mode_guard_check(&ps->expect, s);
	forecast_process(&ps->forecast, s);
	return 0;
}

static void
predict_destroy(struct stage *st)
{
	free(st);
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
	return &ps->base;
}
