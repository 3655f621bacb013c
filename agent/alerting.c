/* The alerting stage: config + engine + actions + state file. */
#include "alerting.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "log.h"

#define EXTRA_CALLBACKS 4

struct alerting {
	struct sink base; /* the stage is also the sink: no separate allocation */
	struct config *cfg;
	struct engine *engine;
	struct actions *actions;
	bool run_actions;
	bool dirty; /* a transition happened since the state was saved */
	struct {
		alert_callback cb;
		void *data;
	} extra[EXTRA_CALLBACKS];
	int extra_count;
	uint64_t reload_failures;
	uint64_t reloads;
	/*
	 * The configuration the agent started with, kept after the first
	 * reload: its agent/sources/mqtt/web settings are the ones running,
	 * and a reload is compared with them.
	 */
	struct config *boot_cfg;
	bool restart_needed; /* the last reload changed settings only a restart applies */
};

static void
mark_dirty(const struct alert_event *ev, void *data)
{
	(void)ev;
	((struct alerting *)data)->dirty = true;
}

static struct engine *
make_engine(struct alerting *al, const struct config *cfg)
{
	struct engine *engine = engine_create(&cfg->rules);
	engine_set_board(engine, cfg->board_name);
	engine_on(engine, SEVERITY_NONE, mark_dirty, al);
	if (al->run_actions) {
		engine_on(engine, SEVERITY_NONE, actions_on_alert, al->actions);
	}
	for (int i = 0; i < al->extra_count; i++) {
		engine_on(engine, SEVERITY_NONE, al->extra[i].cb, al->extra[i].data);
	}
	return engine;
}

static int
alerting_write(struct sink *sink, const struct sample *s)
{
	struct alerting *al = (struct alerting *)sink;
	engine_evaluate(al->engine, s);
	if (al->dirty && al->run_actions && al->cfg->state_file[0]) {
		int r = engine_save_state(al->engine, al->cfg->state_file);
		if (r < 0) {
			log_warn("cannot save alert state to %s: %s", al->cfg->state_file, strerror(-r));
		}
	}
	al->dirty = false;
	return 0;
}

static int
alerting_dispatch(struct sink *sink)
{
	struct alerting *al = (struct alerting *)sink;
	if (al->actions) {
		actions_poll(al->actions);
	}
	return 0;
}

static void
alerting_sink_destroy(struct sink *sink)
{
	(void)sink; /* owned by the stage: alerting_destroy() frees it */
}

static const struct sink_ops alerting_sink_ops = {
	.name = "alerting",
	.write = alerting_write,
	.dispatch = alerting_dispatch,
	.destroy = alerting_sink_destroy,
};

struct alerting *
alerting_create(struct config *cfg, bool run_actions)
{
	struct alerting *al = calloc(1, sizeof(*al));
	if (!al) {
		abort();
	}
	al->base.ops = &alerting_sink_ops;
	al->cfg = cfg;
	al->run_actions = run_actions;
	if (run_actions) {
		al->actions = actions_create(cfg);
	}
	al->engine = make_engine(al, cfg);
	if (run_actions && cfg->state_file[0]) {
		struct diag_list diags;
		diag_list_init(&diags);
		int r = engine_load_state(al->engine, cfg->state_file, &diags);
		for (size_t i = 0; i < diags.count; i++) {
			char buf[512];
			diag_format(&diags.items[i], buf, sizeof(buf));
			log_warn("%s", buf);
		}
		if (r < 0) {
			log_warn("cannot load alert state from %s: %s", cfg->state_file, strerror(-r));
		}
		diag_list_free(&diags);
	}
	return al;
}

void
alerting_destroy(struct alerting *al)
{
	if (!al) {
		return;
	}
	engine_destroy(al->engine);
	actions_destroy(al->actions);
	config_destroy(al->cfg);
	config_destroy(al->boot_cfg);
	free(al);
}

struct sink *
alerting_sink(struct alerting *al)
{
	return &al->base;
}

int
alerting_on(struct alerting *al, alert_callback cb, void *data)
{
	if (al->extra_count == EXTRA_CALLBACKS) {
		return -ENOSPC;
	}
	al->extra[al->extra_count].cb = cb;
	al->extra[al->extra_count].data = data;
	al->extra_count++;
	return engine_on(al->engine, SEVERITY_NONE, cb, data);
}

int
alerting_reload(struct alerting *al)
{
	if (!al->cfg->path[0]) {
		log_warn("SIGHUP: the agent was started without a configuration file: nothing to reload");
		return 0;
	}
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg = NULL;
	int r = config_load(al->cfg->path, &cfg, &diags);
	if (r < 0) {
		al->reload_failures++;
		log_error("reload of %s failed; the previous configuration keeps running", al->cfg->path);
		for (size_t i = 0; i < diags.count; i++) {
			char buf[512];
			diag_format(&diags.items[i], buf, sizeof(buf));
			log_error("%s", buf);
		}
		diag_list_free(&diags);
		return -EINVAL;
	}
	diag_list_free(&diags);
	char changed[256];
	size_t n = config_restart_changes(al->boot_cfg ? al->boot_cfg : al->cfg, cfg, changed, sizeof(changed));
	al->restart_needed = n > 0;
	if (n > 0) {
		log_warn("reload of %s: %s changed; a reload does not apply %s: restart the agent", cfg->path,
			 changed, n == 1 ? "it" : "them");
	}
	if (al->actions) {
		actions_set_config(al->actions, cfg);
	}
	struct engine *engine = make_engine(al, cfg);
	engine_adopt(engine, al->engine);
	engine_destroy(al->engine);
	if (al->boot_cfg) {
		config_destroy(al->cfg);
	} else {
		al->boot_cfg = al->cfg;
	}
	al->engine = engine;
	al->cfg = cfg;
	al->reloads++;
	log_warn("reloaded %s: %zu rules", cfg->path, cfg->rules.count);
	return 0;
}

void
alerting_foreach_active(const struct alerting *al, alert_callback fn, void *data)
{
	engine_foreach_active(al->engine, fn, data);
}

const struct config *
alerting_config(const struct alerting *al)
{
	return al->cfg;
}

uint64_t
alerting_reload_failures(const struct alerting *al)
{
	return al->reload_failures;
}

void
alerting_decorate(struct sample *s, void *data)
{
	struct alerting *al = data;
	struct metric_set *m = &s->metrics;
	metric_set_put(m, "agent.config_reloads_total", (double)al->reloads);
	metric_set_put(m, "agent.config_reload_failures_total", (double)al->reload_failures);
	metric_set_put(m, "agent.config_restart_needed", al->restart_needed ? 1 : 0);
	metric_set_put(m, "agent.alerts_firing", (double)engine_firing_count(al->engine));
	if (al->actions) {
		struct actions_stats st;
		actions_get_stats(al->actions, &st);
		metric_set_put(m, "agent.action_runs_total", (double)st.runs);
		metric_set_put(m, "agent.action_failures_total", (double)st.failures);
		metric_set_put(m, "agent.action_timeouts_total", (double)st.timeouts);
		metric_set_put(m, "agent.action_dropped_total", (double)st.dropped);
	}
}
