/* A sink writing one JSON document per sample to a file descriptor, never blocking on a pipe. */
#include "sink_jsonl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/sample_json.h"
#include "core/xalloc.h"

struct jsonl_sink {
	struct sink base;
	int fd;
	bool gone; /* the reader closed the pipe: nothing more to write */
	struct json json;
	char *rest; /* the unwritten tail of a line a full pipe cut short */
	size_t rest_len, rest_cap;
	uint64_t dropped;
};

/* Writes what it can without blocking; keeps the tail of a cut line. Returns -EAGAIN when nothing fit. */
static int
put(struct jsonl_sink *js, const char *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(js->fd, buf + done, len - done);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && errno == EAGAIN) {
			break;
		}
		if (n < 0) {
			if (errno == EPIPE) {
				js->gone = true;
				log_warn(
					"json lines: the reader of stdout went away: no more samples are written there");
			}
			return -errno;
		}
		done += (size_t)n;
	}
	if (done == 0 && len > 0) {
		return -EAGAIN;
	}
	if (done < len) {
		/* keep the rest of this line: the next line only goes after it, so lines are never torn */
		if (len - done > js->rest_cap) {
			js->rest_cap = len - done;
			js->rest = xrealloc(js->rest, js->rest_cap, 1);
		}
		memcpy(js->rest, buf + done, len - done);
		js->rest_len = len - done;
	}
	return 0;
}

static int
jsonl_write(struct sink *sink, const struct sample *s)
{
	struct jsonl_sink *js = (struct jsonl_sink *)sink;
	if (js->gone) {
		return 0;
	}
	if (js->rest_len) {
		size_t len = js->rest_len;
		js->rest_len = 0;
		int r = put(js, js->rest, len);
		if (r == -EAGAIN) {
			js->rest_len = len;
		}
		if (r < 0 || js->rest_len) {
			js->dropped++; /* the reader is still behind: this sample is not written */
			return r == -EAGAIN ? 0 : r;
		}
	}
	json_reset(&js->json);
	sample_to_json(&js->json, s);
	json_raw(&js->json, "\n", 1);
	int r = put(js, js->json.out.buf, js->json.out.len);
	if (r == -EAGAIN) {
		js->dropped++;
		return 0;
	}
	return r;
}

static void
jsonl_add_metrics(struct sink *sink, struct metric_set *m)
{
	struct jsonl_sink *js = (struct jsonl_sink *)sink;
	metric_set_put(m, "agent.json_lines_dropped_total", (double)js->dropped);
}

static void
jsonl_destroy(struct sink *sink)
{
	struct jsonl_sink *js = (struct jsonl_sink *)sink;
	json_free(&js->json);
	free(js->rest);
	free(js);
}

static const struct sink_ops jsonl_sink_ops = {
	.name = "jsonl",
	.write = jsonl_write,
	.add_metrics = jsonl_add_metrics,
	.destroy = jsonl_destroy,
};

struct sink *
jsonl_sink_create(int fd, bool blocking)
{
	struct jsonl_sink *js = xcalloc(1, sizeof(*js));
	js->base.ops = &jsonl_sink_ops;
	js->fd = fd;
	json_init(&js->json);
	struct stat st;
	/* a pipe or socket is ours alone to make non-blocking; a terminal is shared with the shell */
	if (!blocking && fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		int flags = fcntl(fd, F_GETFL);
		if (flags >= 0) {
			fcntl(fd, F_SETFL, flags | O_NONBLOCK);
		}
	}
	return &js->base;
}

bool
jsonl_wanted_on(int fd)
{
	unsigned long long dev, ino;
	struct stat st;
	const char *js = getenv("JOURNAL_STREAM");
	if (js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(fd, &st) == 0 &&
	    (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino) {
		return false;
	}
	return true;
}
