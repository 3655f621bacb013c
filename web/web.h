/*
 * The HTTP server: dashboard, JSON API, event stream and Prometheus
 * /metrics (docs/http.md). libmicrohttpd runs it on its own thread; the
 * sampling loop only hands over finished samples and alert events, which
 * are rendered once into immutable, refcounted pieces that the handlers
 * read. Nothing the handlers do can make the loop wait on the network.
 */
#ifndef TEGRAWATCH_WEB_H
#define TEGRAWATCH_WEB_H

#include <stddef.h>
#include <stddef.h>
#include <stdint.h>

#include "core/board_info.h"
#include "core/pipeline.h"
#include "web_config.h"

/*
 * POST /api/v1/work (docs/work.md): the body (at most 4 KiB of JSON) is
 * handed to post(data, ...) on the server's thread: 0, or -errno with why
 * in ERR (answered 400). The server calls release(data) when it stops,
 * also when it does not start.
 */
struct web_work_hook {
	int (*post)(void *data, const char *body, size_t len, char *err, size_t err_size);
	void *data;
	void (*release)(void *data);
};

/**
 * Starts the server on CFG->listen (checked by web_config_section: an
 * address it cannot parse, or a non-loopback one without authentication,
 * is refused again here with -EINVAL) and returns it as a sink: write()
 * publishes each sample (snapshot, history, event stream), notify() each
 * alert event (active list, recent transitions, event stream), destroy()
 * stops the server (open event streams are ended) and frees it. Other
 * failures are -errno: -EADDRINUSE, -EADDRNOTAVAIL, -EACCES from bind (not
 * logged: the caller says what to do about it), -EIO when libmicrohttpd
 * does not start, -EINVAL for an unreadable secret file, -ELIBACC when
 * libmicrohttpd cannot be loaded (it is loaded here, not at start) (all
 * logged).
 * INFO gives the identity, the version and the interval (ring sizes,
 * /healthz); WORK (copied; NULL: the route answers 404) takes the work
 * reports. Returns 0 and *OUT.
 */
int web_server_start(const struct web_config *cfg, const struct agent_info *info, const struct web_work_hook *work,
		     struct sink **out);

#endif
