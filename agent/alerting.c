/*
 * Wires the alert side from a configuration, and loads it again on SIGHUP:
 * its rules to the rules stage (thresholds/), its log and exec actions to
 * the actions stage (alerts/), its webhook actions to the webhook stage
 * (webhook/), and the host's process table to the rules stage's hooks
 * (what was running as an alert fires). Composition only: what each does is its module's, and alert
 * events reach the actions through the agent's fan-out, never from here.
 */
#include "alerting.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "alerts/actions_stage.h"
#include "core/log.h"
#include "core/xalloc.h"
#include "thresholds/rules_stage.h"
#include "webhook/webhook_stage.h"

/*
 * The rules stage's loader (owned by it). It points at the two action
 * stages, which the same agent owns, to give them a reload's actions; it
 * never touches them when destroyed, so the agent may destroy in any order.
 */
struct alerting {
	struct rules_loader base;
	struct config *cfg;      /* the running configuration */
	struct config *previous; /* the one a reload replaced, until the stage has swapped */
	/*
	 * The configuration the agent started with: its agent/sources/mqtt/web
	 * settings are the ones running, and a reload is compared with them.
	 */
	struct config *boot_cfg;
	struct stage *actions;  /* log and exec; NULL in a dry run */
	struct stage *webhooks; /* NULL in a dry run */
	char device_id[128];    /* the board's id in webhook bodies, kept across reloads */
	uint64_t reloads;
	uint64_t reload_failures;
	bool restart_needed;      /* the last reload changed settings only a restart applies */
	struct proc_table *procs; /* the top processes of firing alerts; NULL: none taken */
};

static void
setup_of(const struct config *cfg, struct rules_setup *out)
{
	*out = (struct rules_setup){
		.rules = &cfg->rules,
		.board_name = cfg->board_name,
		.state_file = cfg->state_file,
		.notify = cfg->notify,
		.notify_count = cfg->notify_count,
	};
}

/* CFG's actions to the stages that do them: log and exec to one, webhooks to the other. */
static void
give_actions(struct alerting *al, const struct config *cfg)
{
	if (!al->actions && !al->webhooks) {
		return; /* a dry run */
	}
	struct alert_action *runs = xcalloc(cfg->action_count, sizeof(*runs));
	struct webhook_action *hooks = xcalloc(cfg->action_count, sizeof(*hooks));
	size_t run_count = 0, hook_count = 0;
	for (size_t i = 0; i < cfg->action_count; i++) {
		const struct action_def *def = &cfg->actions[i];
		if (def->type == ACTION_WEBHOOK) {
			hooks[hook_count++] = (struct webhook_action){.name = def->name, .cfg = &def->webhook};
		} else {
			runs[run_count++] = (struct alert_action){
				.name = def->name,
				.argv = def->type == ACTION_EXEC ? def->argv : NULL,
				.timeout_ms = def->timeout_ms,
			};
		}
	}
	if (al->webhooks) {
		/* the board as receivers see it: its name, and the device id MQTT uses */
		char url[128] = "";
		if (cfg->web.listen[0]) {
			snprintf(url, sizeof(url), "http://%s/", cfg->web.listen);
		}
		struct agent_info board = {
			.board_name = cfg->board_name, .device_id = al->device_id, .generator_url = url};
		webhook_stage_set(al->webhooks, &board, hooks, hook_count);
	}
	if (al->actions) {
		actions_stage_set(al->actions, runs, run_count);
	}
	free(runs);
	free(hooks);
}

static int
alerting_reload(struct rules_loader *ld, struct rules_setup *out)
{
	struct alerting *al = (struct alerting *)ld;
	if (!al->cfg->path[0]) {
		log_warn("SIGHUP: the agent was started without a configuration file: nothing to reload");
		return -ENOENT;
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
	size_t n = config_restart_changes(al->boot_cfg, cfg, changed, sizeof(changed));
	al->restart_needed = n > 0;
	if (n > 0) {
		log_warn("reload of %s: %s changed; a reload does not apply %s: restart the agent", cfg->path, changed,
			 n == 1 ? "it" : "them");
	}
	give_actions(al, cfg); /* before the alerts of removed rules resolve; running programs go on */
	al->previous = al->cfg;
	al->cfg = cfg;
	setup_of(cfg, out);
	return 0;
}

static void
alerting_swapped(struct rules_loader *ld)
{
	struct alerting *al = (struct alerting *)ld;
	if (al->previous != al->boot_cfg) {
		config_destroy(al->previous);
	}
	al->previous = NULL;
	al->reloads++;
	log_info("reloaded %s: %zu rules", al->cfg->path, al->cfg->rules.count);
}

static void
alerting_add_metrics(struct rules_loader *ld, struct metric_set *m)
{
	struct alerting *al = (struct alerting *)ld;
	metric_set_put(m, "agent.config_reloads_total", (double)al->reloads);
	metric_set_put(m, "agent.config_reload_failures_total", (double)al->reload_failures);
	metric_set_put(m, "agent.config_restart_needed", al->restart_needed ? 1 : 0);
}

static void
alerting_destroy(struct rules_loader *ld)
{
	struct alerting *al = (struct alerting *)ld;
	proc_table_unref(al->procs);
	if (al->cfg != al->boot_cfg) {
		config_destroy(al->cfg);
	}
	config_destroy(al->boot_cfg);
	free(al);
}

/* The rules stage's processes hooks (thresholds/rules_stage.h), on the table AL holds. */
static void
processes_baseline(void *data)
{
	struct alerting *al = data;
	proc_table_refresh(al->procs); /* a failure keeps the last scan: the shares then span more */
}

static int
processes_take(void *data, struct top_processes *out)
{
	struct alerting *al = data;
	int r = proc_table_refresh(al->procs);
	if (r == 0) {
		proc_table_top(al->procs, out);
	}
	return r;
}

static const struct rules_loader_ops alerting_ops = {
	.reload = alerting_reload,
	.swapped = alerting_swapped,
	.add_metrics = alerting_add_metrics,
	.destroy = alerting_destroy,
};

int
alerting_add(struct agent *agent, struct config *cfg, const char *device_id, const char *expected_power_mode,
	     bool run_actions, struct proc_table *procs)
{
	struct alerting *al = xcalloc(1, sizeof(*al));
	al->base.ops = &alerting_ops;
	al->procs = procs ? proc_table_ref(procs) : NULL;
	al->cfg = al->boot_cfg = cfg;
	snprintf(al->device_id, sizeof(al->device_id), "%s", device_id);
	struct stage *actions = NULL, *webhooks = NULL;
	if (run_actions) {
		al->webhooks = webhooks = webhook_stage_create();
		al->actions = actions = actions_stage_create();
		give_actions(al, cfg);
	}
	struct rules_setup setup;
	setup_of(cfg, &setup);
	struct rules_stage_options opts = {
		.device_id = device_id,
		.expected_power_mode = expected_power_mode,
		.keep_state = run_actions,
	};
	if (procs) {
		opts.processes =
			(struct rules_processes){.baseline = processes_baseline, .take = processes_take, .data = al};
	}
	int r = agent_add_stage(agent, rules_stage_create(&setup, &al->base, &opts));
	if (r < 0) {
		stage_destroy(actions); /* the rules stage went with AL */
		stage_destroy(webhooks);
		return r;
	}
	/* after the rules: their counters follow the rules stage's, their notify hears its events */
	if (actions && (r = agent_add_stage(agent, actions)) < 0) {
		al->actions = NULL;
	}
	if (webhooks && agent_add_stage(agent, webhooks) < 0) {
		al->webhooks = NULL;
		r = -ENOSPC;
	}
	return r < 0 ? r : 0;
}
