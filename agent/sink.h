/*
 * Sinks: where samples go (JSON Lines on stdout now; MQTT, web and
 * webhooks later). A small vtable driven by the loop in agent/loop.c.
 */
#ifndef TEGRAWATCH_SINK_H
#define TEGRAWATCH_SINK_H

#include "sample.h"

struct sink;

struct sink_ops {
	const char *name;
	/* Hands one finished sample to the sink. 0 or -errno; never blocks long. */
	int (*write)(struct sink *sink, const struct sample *sample);
	/* Optional: fd the loop polls, or -1. */
	int (*get_fd)(struct sink *sink);
	/* Optional: called when get_fd() is ready and about once a second. */
	int (*dispatch)(struct sink *sink);
	/* Optional: poll() events wanted on get_fd() (POLLIN | POLLOUT); POLLIN without it. */
	short (*poll_events)(struct sink *sink);
	void (*destroy)(struct sink *sink);
};

struct sink {
	const struct sink_ops *ops;
};

static inline void
sink_destroy(struct sink *sink)
{
	if (sink) {
		sink->ops->destroy(sink);
	}
}

#endif
