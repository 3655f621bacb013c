/*
 * Webhooks on the alert fan-out. The stage keeps the names of the
 * configuration's webhook actions so that an event's other actions (log,
 * exec) never reach the delivery side, which would take them for unknown
 * webhooks.
 */
#include "webhook_stage.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/xalloc.h"
#include "webhook.h"

struct webhook_stage {
	struct stage base;
	struct webhooks *w; /* NULL until a webhook action is set */
	char **names;       /* the webhook actions of the configuration */
	size_t name_count;
};

static bool
is_webhook(const struct webhook_stage *ws, const char *name)
{
	for (size_t i = 0; i < ws->name_count; i++) {
		if (strcmp(ws->names[i], name) == 0) {
			return true;
		}
	}
	return false;
}

static void
webhook_stage_notify(struct stage *st, const struct alert_event *ev)
{
	struct webhook_stage *ws = (struct webhook_stage *)st;
	for (size_t i = 0; ws->w && i < ev->action_count; i++) {
		if (is_webhook(ws, ev->actions[i])) {
			webhooks_notify(ws->w, ev->actions[i], ev);
		}
	}
}

static int
webhook_stage_process(struct stage *st, struct sample *s)
{
	(void)s;
	struct webhook_stage *ws = (struct webhook_stage *)st;
	if (ws->w) {
		webhooks_flush(ws->w); /* this tick's notifications, batched */
	}
	return 0;
}

static int
webhook_stage_dispatch(struct stage *st)
{
	struct webhook_stage *ws = (struct webhook_stage *)st;
	if (ws->w) {
		webhooks_flush(ws->w); /* the re-sends that are due, and what a reload resolved */
	}
	return 0;
}

static void
webhook_stage_add_metrics(struct stage *st, struct metric_set *m)
{
	struct webhook_stage *ws = (struct webhook_stage *)st;
	if (ws->w) {
		webhooks_add_metrics(ws->w, m); /* webhook.NAME.sent_total, ... */
	}
}

static void
free_names(struct webhook_stage *ws)
{
	for (size_t i = 0; i < ws->name_count; i++) {
		free(ws->names[i]);
	}
	free(ws->names);
	ws->names = NULL;
	ws->name_count = 0;
}

static void
webhook_stage_destroy(struct stage *st)
{
	struct webhook_stage *ws = (struct webhook_stage *)st;
	webhooks_destroy(ws->w); /* pending notifications get a few seconds */
	free_names(ws);
	free(ws);
}

static const struct stage_ops webhook_stage_ops = {
	.name = "webhooks",
	.process = webhook_stage_process,
	.add_metrics = webhook_stage_add_metrics,
	.notify = webhook_stage_notify,
	.dispatch = webhook_stage_dispatch,
	.destroy = webhook_stage_destroy,
};

struct stage *
webhook_stage_create(void)
{
	struct webhook_stage *ws = xcalloc(1, sizeof(*ws));
	ws->base.ops = &webhook_stage_ops;
	return &ws->base;
}

void
webhook_stage_set(struct stage *st, const struct agent_info *board, const struct webhook_action *actions, size_t count)
{
	struct webhook_stage *ws = (struct webhook_stage *)st;
	free_names(ws);
	ws->names = xcalloc(count, sizeof(*ws->names));
	for (size_t i = 0; i < count; i++) {
		ws->names[i] = xstrdup(actions[i].name);
	}
	ws->name_count = count;
	if (count == 0 && !ws->w) {
		return; /* no thread for nothing */
	}
	if (!ws->w) {
		ws->w = webhooks_create(board);
		if (!ws->w) {
			log_error("webhook actions configured, but this build cannot deliver them");
			return;
		}
	}
	for (size_t i = 0; i < count; i++) {
		webhooks_set(ws->w, actions[i].name, actions[i].cfg);
	}
	webhooks_prune(ws->w);
}
