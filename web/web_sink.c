/*
 * The web server as the loop sees it: a sink whose write() and notify()
 * publish into the server state (server_state.c) on the loop's thread;
 * the HTTP threads read what was published (http_mhd.c).
 */
#include <stddef.h>

#include "core/clock.h"
#include "server_priv.h"

static struct web_server *
server_of(struct sink *sink)
{
	return (struct web_server *)((char *)sink - offsetof(struct web_server, sink));
}

static int
web_sink_write(struct sink *sink, const struct sample *s)
{
	server_publish_sample(&server_of(sink)->st, s);
	return 0;
}

static void
web_sink_notify(struct sink *sink, const struct alert_event *ev)
{
	server_publish_alert(&server_of(sink)->st, ev);
}

static void
web_sink_add_metrics(struct sink *sink, struct metric_set *m)
{
	struct web_server *srv = server_of(sink);
	int64_t now = monotonic_ms();
	conn_guard_add_metrics(&srv->st.guard, m, now);
	auth_limit_add_metrics(&srv->auth.limit, m, now);
}

static void
web_sink_destroy(struct sink *sink)
{
	web_server_free(server_of(sink));
}

const struct sink_ops web_sink_ops = {
	.name = "web",
	.write = web_sink_write,
	.notify = web_sink_notify,
	.add_metrics = web_sink_add_metrics,
	.destroy = web_sink_destroy,
};
