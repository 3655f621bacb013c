/*
 * The HTTP server: dashboard, JSON API, event stream and Prometheus
 * /metrics (docs/http.md). libmicrohttpd runs it on its own thread; the
 * sampling loop only hands over finished samples and alert events, which
 * are rendered once into immutable, refcounted pieces that the handlers
 * read. Nothing the handlers do can make the loop wait on the network.
 */
#ifndef TEGRAWATCH_WEB_H
#define TEGRAWATCH_WEB_H

#include <stdint.h>

#include "agent/config.h"
#include "agent/sink.h"

struct alert_event;
struct web_server;

/* What the server reports about the board and the agent (strings are copied; NULL = ""). */
struct web_info {
	const char *model;
	const char *soc;
	const char *module;
	const char *l4t;
	const char *jetpack;
	const char *version;  /* the agent's version */
	int64_t interval_ms;  /* the sampling interval (ring sizes, /healthz) */
};

/**
 * Starts the server on CFG->listen. Refuses (-EINVAL, with a log message
 * saying why) a listen address it cannot parse, a non-loopback address
 * without token_file or basic auth, and unreadable or empty secret files:
 * `tegrawatch run` exits 78 then. Other failures (-EADDRINUSE, -EACCES
 * from bind, -EIO when libmicrohttpd does not start) are -errno.
 * Returns 0 and *OUT.
 */
int web_server_start(const struct web_config *cfg, const struct web_info *info, struct web_server **out);

/**
 * The server as a sink for the agent: write(sample) publishes a new
 * snapshot, adds the sample to the history and to the event stream.
 * Owned by the server: the agent's destroy of it does nothing, and the
 * agent must be destroyed before the server.
 */
struct sink *web_server_sink(struct web_server *srv);

/** An alert_callback (for alerting_on()): active alerts, recent transitions, the event stream. */
void web_server_on_alert(const struct alert_event *ev, void *data);

/**
 * Adds an alert that is already active (restored from the state file) to
 * the active list, without a transition in the event stream or the recent
 * list. For alerting_foreach_active().
 */
void web_server_seed_alert(const struct alert_event *ev, void *data);

/** The port actually bound (listen port 0 picks one). */
int web_server_port(const struct web_server *srv);

/** Stops the server (open event streams are ended) and frees it; NULL is a no-op. */
void web_server_destroy(struct web_server *srv);

#endif
