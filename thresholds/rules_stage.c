/*
 * The rules stage: the engine, its alert state file and its counters. Every
 * event goes to the fan-out; which actions it calls is in the event
 * (ev->actions, routed by the engine), for the listeners to pick.
 */
#include "rules_stage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/xalloc.h"
#include "engine.h"

struct rules_stage {
	struct stage base;
	struct rules_setup setup;
	struct rules_loader *loader;
	struct engine *engine;
	bool keep_state;
	char device_id[128];           /* the board's id in events (core/device_id.h), kept across reloads */
	char expected_power_mode[128]; /* {{expected_power_mode}}, resolved at start, kept across reloads */
	bool dirty;                    /* a transition happened since the state was saved */
	struct rules_processes processes;
	struct sample *cur;       /* during rules_process() only */
	uint64_t fired, resolved; /* alerts that started firing / resolved (restored ones not again) */
};

/*
 * The engine's listener: every event of it (a sample's, a reload's, the
 * restored ones) goes to the agent's fan-out, which hands it to every
 * stage and sink that listens, the actions included: one route for all.
 */
static void
on_event(const struct alert_event *ev, void *data)
{
	struct rules_stage *rs = data;
	if (!ev->restored) {
		rs->dirty = true;
		rs->fired += ev->transition == TRANSITION_FIRING;
		rs->resolved += ev->transition == TRANSITION_RESOLVED;
	}
	const struct rules_processes *p = &rs->processes;
	struct sample *s = rs->cur;
	if (p->baseline && s && ev->transition == TRANSITION_PENDING) {
		p->baseline(p->data);
	} else if (p->take && s && alert_event_takes_processes(ev) && s->processes.cpu_count == 0 &&
		   s->processes.memory_count == 0 && p->take(p->data, &s->processes) == 0) {
		/* what ran as it fired, on the sample (a recording keeps it) and on every later event of the tick */
		struct alert_event *with = xmalloc(sizeof(*with));
		*with = *ev;
		with->processes = s->processes;
		alert_fanout_emit(rs->base.out, with);
		free(with);
		return;
	}
	alert_fanout_emit(rs->base.out, ev);
}

static struct engine *
make_engine(struct rules_stage *rs, const struct rules_setup *setup)
{
	struct engine *engine = engine_create(setup->rules, on_event, rs);
	engine_set_board(engine, setup->board_name, rs->device_id);
	engine_set_expected_power_mode(engine, rs->expected_power_mode);
	engine_set_notify(engine, setup->notify, setup->notify_count);
	return engine;
}

static int
rules_process(struct stage *st, struct sample *s)
{
	struct rules_stage *rs = (struct rules_stage *)st;
	rs->cur = s;
	engine_evaluate(rs->engine, s);
	rs->cur = NULL;
	if (rs->dirty && rs->keep_state && rs->setup.state_file[0]) {
		int r = engine_save_state(rs->engine, rs->setup.state_file);
		if (r < 0) {
			log_warn("cannot save alert state to %s: %s", rs->setup.state_file, strerror(-r));
		}
	}
	rs->dirty = false;
	return 0;
}

static int
rules_reload(struct stage *st)
{
	struct rules_stage *rs = (struct rules_stage *)st;
	struct rules_setup next;
	int r = rs->loader->ops->reload(rs->loader, &next);
	if (r < 0) {
		return r;
	}
	struct engine *engine = make_engine(rs, &next);
	engine_adopt(engine, rs->engine); /* alerts of removed rules resolve now, on their old rules */
	engine_destroy(rs->engine);
	rs->engine = engine;
	rs->setup = next;
	rs->loader->ops->swapped(rs->loader);
	return 0;
}

/* Alerts restored from the state file reach the listeners as already active. */
static void
rules_replay_active(struct stage *st)
{
	struct rules_stage *rs = (struct rules_stage *)st;
	engine_announce_active(rs->engine);
}

static void
rules_destroy(struct stage *st)
{
	struct rules_stage *rs = (struct rules_stage *)st;
	engine_destroy(rs->engine);
	rs->loader->ops->destroy(rs->loader); /* the rules the engine borrowed go with it */
	free(rs);
}

static void
rules_add_metrics(struct stage *st, struct metric_set *m)
{
	struct rules_stage *rs = (struct rules_stage *)st;
	rs->loader->ops->add_metrics(rs->loader, m);
	metric_set_put(m, "agent.alerts_firing", (double)engine_firing_count(rs->engine));
	metric_set_put(m, "agent.alerts_fired_total", (double)rs->fired);
	metric_set_put(m, "agent.alerts_resolved_total", (double)rs->resolved);
}

static const struct stage_ops rules_ops = {
	.name = "rules",
	.process = rules_process,
	.add_metrics = rules_add_metrics,
	.replay_active = rules_replay_active,
	.reload = rules_reload,
	.destroy = rules_destroy,
};

/* The alerts a restart left in the state file, for rules that still exist; bad lines are warned of. */
static void
load_state(struct rules_stage *rs)
{
	const char *path = rs->setup.state_file;
	struct diag_list diags;
	diag_list_init(&diags);
	int r = engine_load_state(rs->engine, path, &diags);
	for (size_t i = 0; i < diags.count; i++) {
		char buf[512];
		diag_format(&diags.items[i], buf, sizeof(buf));
		log_warn("%s", buf);
	}
	if (r < 0) {
		log_warn("cannot load alert state from %s: %s", path, strerror(-r));
	}
	diag_list_free(&diags);
}

struct stage *
rules_stage_create(const struct rules_setup *setup, struct rules_loader *loader, const struct rules_stage_options *opts)
{
	struct rules_stage *rs = xcalloc(1, sizeof(*rs));
	rs->base.ops = &rules_ops;
	rs->setup = *setup;
	rs->loader = loader;
	rs->keep_state = opts->keep_state;
	rs->processes = opts->processes;
	snprintf(rs->device_id, sizeof(rs->device_id), "%s", opts->device_id ? opts->device_id : "");
	snprintf(rs->expected_power_mode, sizeof(rs->expected_power_mode), "%s",
		 opts->expected_power_mode ? opts->expected_power_mode : "");
	rs->engine = make_engine(rs, setup);
	if (rs->keep_state && setup->state_file[0]) {
		load_state(rs);
	}
	return &rs->base;
}
