/* The log and exec actions on the alert fan-out: alerts/actions.c does them, this hands it the events. */
#include "actions_stage.h"

#include <stdlib.h>

#include "core/xalloc.h"

struct actions_stage {
	struct stage base;
	struct actions *act;
};

static void
actions_stage_notify(struct stage *st, const struct alert_event *ev)
{
	struct actions_stage *as = (struct actions_stage *)st;
	actions_notify(as->act, ev);
}

static int
actions_stage_dispatch(struct stage *st)
{
	struct actions_stage *as = (struct actions_stage *)st;
	actions_poll(as->act);
	return 0;
}

static void
actions_stage_add_metrics(struct stage *st, struct metric_set *m)
{
	struct actions_stage *as = (struct actions_stage *)st;
	struct actions_stats stats;
	actions_get_stats(as->act, &stats);
	metric_set_put(m, "agent.action_runs_total", (double)stats.runs);
	metric_set_put(m, "agent.action_failures_total", (double)stats.failures);
	metric_set_put(m, "agent.action_timeouts_total", (double)stats.timeouts);
	metric_set_put(m, "agent.action_dropped_total", (double)stats.dropped);
	metric_set_put(m, "agent.action_leftovers_total", (double)stats.leftovers);
}

static void
actions_stage_destroy(struct stage *st)
{
	struct actions_stage *as = (struct actions_stage *)st;
	actions_destroy(as->act); /* running programs get their grace */
	free(as);
}

static const struct stage_ops actions_stage_ops = {
	.name = "actions",
	.add_metrics = actions_stage_add_metrics,
	.notify = actions_stage_notify,
	.dispatch = actions_stage_dispatch,
	.destroy = actions_stage_destroy,
};

struct stage *
actions_stage_create(void)
{
	struct actions_stage *as = xcalloc(1, sizeof(*as));
	as->base.ops = &actions_stage_ops;
	as->act = actions_create();
	return &as->base;
}

void
actions_stage_set(struct stage *st, const struct alert_action *defs, size_t count)
{
	struct actions_stage *as = (struct actions_stage *)st;
	actions_set(as->act, defs, count);
}
