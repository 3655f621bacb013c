/*
 * Sources: where samples come from (sysfs, a live tegrastats pipe, a
 * recorded log). A small vtable driven by the loop in agent/loop.c.
 */
#ifndef TEGRAWATCH_SOURCE_H
#define TEGRAWATCH_SOURCE_H

#include <stdint.h>

#include "sample.h"

struct source;

struct source_ops {
	const char *name;
	/*
	 * Adds this source's metrics for the current tick to SAMPLE.
	 * Returns 0, -EAGAIN when it has nothing new this tick, -ENODATA when
	 * it is finished for good (end of a replay), or another -errno.
	 */
	int (*read)(struct source *src, struct sample *sample);
	/* Optional: fd the loop polls for input, or -1. */
	int (*get_fd)(struct source *src);
	/* Optional: called when get_fd() is readable. 0 or -errno. */
	int (*dispatch)(struct source *src);
	/*
	 * Optional: milliseconds until this source wants the next tick, for
	 * sources that set the pace (replays); -1 to follow the interval.
	 */
	int64_t (*next_tick_ms)(struct source *src);
	void (*destroy)(struct source *src);
};

struct source {
	const struct source_ops *ops;
};

/** Destroys SRC; NULL is a no-op. */
static inline void
source_destroy(struct source *src)
{
	if (src) {
		src->ops->destroy(src);
	}
}

#endif
