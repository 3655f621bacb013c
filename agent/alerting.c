/*
 * The alerting stage: config + engine + actions + state file. It routes
 * each alert event to the actions bound to its severity (the rule's, else
 * `notify:`): log and exec run in alerts/, webhooks are handed to their
 * delivery (webhook/, its own thread).
 */
#include "alerting.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alerts/actions.h"
#include "core/log.h"
#include "core/xalloc.h"
#include "thresholds/engine.h"
#include "webhook/webhook.h"

struct alerting {
	struct stage base;
	struct config *cfg;
	struct engine *engine;
	struct actions *actions;          /* log and exec; NULL in a dry run */
	const struct config *actions_cfg; /* the actions and notify: routed by (the new one from a reload on) */
	struct webhooks *webhooks;        /* delivery of every webhook action; NULL when none is configured */
	char generator_url[128];
	bool run_actions;
	char device_id[128];           /* the board's id in events (core/device_id.h), kept across reloads */
	char expected_power_mode[128]; /* {{expected_power_mode}}, resolved at start, kept across reloads */
	bool dirty;                    /* a transition happened since the state was saved */
	uint64_t reload_failures;
	uint64_t reloads;
	uint64_t fired, resolved; /* alerts that started firing / resolved (restored ones not again) */
	/*
	 * The configuration the agent started with, kept after the first
	 * reload: its agent/sources/mqtt/web settings are the ones running,
	 * and a reload is compared with them.
	 */
	struct config *boot_cfg;
	bool restart_needed;      /* the last reload changed settings only a restart applies */
	struct proc_table *procs; /* the top processes of firing alerts; NULL: none taken */
	struct sample *cur;       /* during alerting_process() only */
};

/*
 * The engine's listener: every event of it (a sample's, a reload's, the
 * restored ones) goes to the agent's fan-out, which hands it to every
 * sink and to this stage's notify, the actions: one route for all.
 */
static void
on_event(const struct alert_event *ev, void *data)
{
	struct alerting *al = data;
	if (!ev->restored) {
		al->dirty = true;
		al->fired += ev->transition == TRANSITION_FIRING;
		al->resolved += ev->transition == TRANSITION_RESOLVED;
	}
	struct sample *s = al->cur;
	if (al->procs && s && ev->transition == TRANSITION_PENDING) {
		proc_table_refresh(al->procs); /* the baseline: CPU shares over the pending time */
	} else if (al->procs && s && alert_event_takes_processes(ev) && s->processes.cpu_count == 0 &&
		   s->processes.memory_count == 0 && proc_table_refresh(al->procs) == 0) {
		/* what ran as it fired, on the sample (a recording keeps it) and on every later event of the tick */
		proc_table_top(al->procs, &s->processes);
		struct alert_event *with = xmalloc(sizeof(*with));
		*with = *ev;
		with->processes = s->processes;
		alert_fanout_emit(al->base.out, with);
		free(with);
		return;
	}
	alert_fanout_emit(al->base.out, ev);
}

/* Webhook actions of CFG to the delivery side; those no longer configured go (a reload). */
static void
set_webhooks(struct alerting *al, const struct config *cfg)
{
	bool any = false;
	for (size_t i = 0; i < cfg->action_count; i++) {
		any = any || cfg->actions[i].type == ACTION_WEBHOOK;
	}
	if (!any && !al->webhooks) {
		return;
	}
	if (!al->webhooks) {
		/* the board as receivers see it: its name, and the device id MQTT uses */
		const char *listen = cfg->web.listen;
		if (listen[0]) {
			snprintf(al->generator_url, sizeof(al->generator_url), "http://%s/", listen);
		}
		struct agent_info board = {
			.board_name = cfg->board_name,
			.device_id = al->device_id,
			.generator_url = al->generator_url,
		};
		al->webhooks = webhooks_create(&board);
		if (!al->webhooks) {
			log_error("webhook actions configured, but this build cannot deliver them");
			return;
		}
	}
	for (size_t i = 0; i < cfg->action_count; i++) {
		const struct action_def *def = &cfg->actions[i];
		if (def->type == ACTION_WEBHOOK) {
			webhooks_set(al->webhooks, def->name, &def->webhook);
		}
	}
	webhooks_prune(al->webhooks);
}

/*
 * Runs the actions bound to EV's severity (the rule's, else `notify:`).
 * Pending and cancelled events run none. An alert restored after a restart
 * (ev->restored) runs no log or exec action again; webhooks decide by
 * their format (alertmanager-api sends it again).
 */
static void
run_actions(struct alerting *al, const struct alert_event *ev)
{
	if (ev->transition == TRANSITION_PENDING || ev->transition == TRANSITION_CANCELLED) {
		return; /* not yet (or no longer) an alert */
	}
	enum severity sev = ev->severity;
	if (sev <= SEVERITY_NONE || sev >= SEVERITY_COUNT) {
		return;
	}
	const struct rule *r = ev->rule;
	char **names = r->has_actions ? r->actions[sev] : al->actions_cfg->notify[sev];
	size_t count = r->has_actions ? r->action_count[sev] : al->actions_cfg->notify_count[sev];
	for (size_t i = 0; i < count; i++) {
		const struct action_def *def = config_find_action(al->actions_cfg, names[i]);
		if (!def) {
			continue; /* validated at load; a reload may have removed it */
		}
		switch (def->type) {
		case ACTION_LOG:
			if (!ev->restored) { /* logged before the restart */
				actions_log(ev);
			}
			break;
		case ACTION_EXEC:
			if (!ev->restored) { /* the program ran before the restart */
				actions_exec(al->actions, def->name, def->argv, def->timeout_ms, ev);
			}
			break;
		case ACTION_WEBHOOK:
			if (al->webhooks) {
				webhooks_notify(al->webhooks, def->name, ev);
			}
			break;
		}
	}
}

static void
alerting_notify(struct stage *st, const struct alert_event *ev)
{
	struct alerting *al = (struct alerting *)st;
	if (al->actions) {
		run_actions(al, ev);
	}
}

static struct engine *
make_engine(struct alerting *al, const struct config *cfg)
{
	struct engine *engine = engine_create(&cfg->rules, on_event, al);
	engine_set_board(engine, cfg->board_name, al->device_id);
	engine_set_expected_power_mode(engine, al->expected_power_mode);
	return engine;
}

static int
alerting_process(struct stage *st, struct sample *s)
{
	struct alerting *al = (struct alerting *)st;
	al->cur = s;
	engine_evaluate(al->engine, s);
	al->cur = NULL;
	if (al->webhooks) {
		webhooks_flush(al->webhooks); /* this tick's webhook notifications, batched */
	}
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
alerting_dispatch(struct stage *st)
{
	struct alerting *al = (struct alerting *)st;
	if (al->actions) {
		actions_poll(al->actions);
		if (al->webhooks) {
			webhooks_flush(al->webhooks); /* the re-sends that are due */
		}
	}
	return 0;
}

static int
alerting_reload(struct stage *st)
{
	struct alerting *al = (struct alerting *)st;
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
		log_warn("reload of %s: %s changed; a reload does not apply %s: restart the agent", cfg->path, changed,
			 n == 1 ? "it" : "them");
	}
	if (al->actions) { /* running programs go on */
		al->actions_cfg = cfg;
		set_webhooks(al, cfg);
	}
	struct engine *engine = make_engine(al, cfg);
	engine_adopt(engine, al->engine); /* alerts of removed rules resolve now */
	engine_destroy(al->engine);
	if (al->boot_cfg) {
		config_destroy(al->cfg);
	} else {
		al->boot_cfg = al->cfg;
	}
	al->engine = engine;
	al->cfg = cfg;
	al->reloads++;
	log_info("reloaded %s: %zu rules", cfg->path, cfg->rules.count);
	return 0;
}

/* Alerts restored from the state file reach the sinks and the actions as already active. */
static void
alerting_replay_active(struct stage *st)
{
	struct alerting *al = (struct alerting *)st;
	engine_announce_active(al->engine);
}

static void
alerting_destroy(struct stage *st)
{
	struct alerting *al = (struct alerting *)st;
	engine_destroy(al->engine);
	proc_table_unref(al->procs);
	webhooks_destroy(al->webhooks); /* pending notifications get a few seconds */
	actions_destroy(al->actions);
	config_destroy(al->cfg);
	config_destroy(al->boot_cfg);
	free(al);
}

static void
alerting_add_metrics(struct stage *st, struct metric_set *m)
{
	struct alerting *al = (struct alerting *)st;
	metric_set_put(m, "agent.config_reloads_total", (double)al->reloads);
	metric_set_put(m, "agent.config_reload_failures_total", (double)al->reload_failures);
	metric_set_put(m, "agent.config_restart_needed", al->restart_needed ? 1 : 0);
	metric_set_put(m, "agent.alerts_firing", (double)engine_firing_count(al->engine));
	metric_set_put(m, "agent.alerts_fired_total", (double)al->fired);
	metric_set_put(m, "agent.alerts_resolved_total", (double)al->resolved);
	if (al->actions) {
		struct actions_stats as;
		actions_get_stats(al->actions, &as);
		metric_set_put(m, "agent.action_runs_total", (double)as.runs);
		metric_set_put(m, "agent.action_failures_total", (double)as.failures);
		metric_set_put(m, "agent.action_timeouts_total", (double)as.timeouts);
		metric_set_put(m, "agent.action_dropped_total", (double)as.dropped);
		metric_set_put(m, "agent.action_leftovers_total", (double)as.leftovers);
		if (al->webhooks) {
			webhooks_add_metrics(al->webhooks, m); /* webhook.NAME.sent_total, ... */
		}
	}
}

static const struct stage_ops alerting_ops = {
	.name = "rules",
	.process = alerting_process,
	.add_metrics = alerting_add_metrics,
	.replay_active = alerting_replay_active,
	.notify = alerting_notify,
	.dispatch = alerting_dispatch,
	.reload = alerting_reload,
	.destroy = alerting_destroy,
};

struct stage *
alerting_stage_create(struct config *cfg, const char *device_id, bool run_actions)
{
	struct alerting *al = xcalloc(1, sizeof(*al));
	al->base.ops = &alerting_ops;
	al->cfg = cfg;
	al->run_actions = run_actions;
	snprintf(al->device_id, sizeof(al->device_id), "%s", device_id);
	if (run_actions) {
		al->actions_cfg = cfg;
		set_webhooks(al, cfg);
		al->actions = actions_create();
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
	return &al->base;
}

void
alerting_stage_set_expected_power_mode(struct stage *st, const char *text)
{
	struct alerting *al = (struct alerting *)st;
	snprintf(al->expected_power_mode, sizeof(al->expected_power_mode), "%s", text);
	engine_set_expected_power_mode(al->engine, al->expected_power_mode);
}

void
alerting_stage_set_processes(struct stage *st, struct proc_table *t)
{
	struct alerting *al = (struct alerting *)st;
	proc_table_unref(al->procs);
	al->procs = proc_table_ref(t);
}
