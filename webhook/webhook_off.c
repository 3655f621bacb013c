/* Webhooks in a build without libcurl: nothing is delivered, webhooks_create() says so. */
#include <errno.h>

#include "core/log.h"
#include "webhook.h"

struct webhooks *
webhooks_create(const struct agent_info *board)
{
	(void)board;
	log_error("webhook: this build has no webhook support (built without libcurl)");
	return NULL;
}

int
webhooks_set(struct webhooks *w, const char *name, const struct webhook_config *cfg)
{
	(void)w;
	(void)name;
	(void)cfg;
	return -ENOTSUP;
}

void
webhooks_prune(struct webhooks *w)
{
	(void)w;
}

void
webhooks_notify(struct webhooks *w, const char *name, const struct alert_event *ev)
{
	(void)w;
	(void)name;
	(void)ev;
}

void
webhooks_flush(struct webhooks *w)
{
	(void)w;
}

void
webhooks_add_metrics(struct webhooks *w, struct metric_set *m)
{
	(void)w;
	(void)m;
}

void
webhooks_destroy(struct webhooks *w)
{
	(void)w;
}

void
webhooks_set_backoff_for_tests(struct webhooks *w, int64_t base_ms, int64_t cap_ms)
{
	(void)w;
	(void)base_ms;
	(void)cap_ms;
}

int
webhooks_get_stats(struct webhooks *w, const char *name, struct webhook_stats *out)
{
	(void)w;
	(void)name;
	(void)out;
	return -ENOENT;
}
