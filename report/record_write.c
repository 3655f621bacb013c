/* The recording sink: one JSON line per sample, rotated by size. */
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
#include "record.h"

struct record_sink {
	struct sink base;
	char *path;
	char *previous; /* PATH.1 */
	FILE *file;
	uint64_t max_bytes, bytes;
	struct board_identity id;
	bool id_known;
	char *version;
	struct json json;
	uint64_t errors, rotations;
	bool warned;
};

static void
header_json(struct record_sink *rs)
{
	struct json *j = &rs->json;
	json_reset(j);
	json_object_begin(j);
	json_key(j, "tegrawatch_recording");
	json_int(j, RECORD_FORMAT_VERSION);
	json_key(j, "version");
	json_string(j, rs->version);
	json_key(j, "board");
	if (rs->id_known) {
		json_object_begin(j);
		board_identity_to_json(j, &rs->id, true);
		json_object_end(j);
	} else {
		json_null(j);
	}
	json_object_end(j);
	json_raw(j, "\n", 1);
}

/* Opens a fresh PATH (the old one, if any, becomes PATH.1) and writes its header. */
static int
open_fresh(struct record_sink *rs)
{
	if (rs->file) {
		fclose(rs->file);
		rs->file = NULL;
	}
	struct stat st;
	if (stat(rs->path, &st) == 0 && st.st_size > 0) {
		if (rename(rs->path, rs->previous) < 0) {
			return -errno;
		}
		rs->rotations++;
	}
	int fd = open(rs->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		return -errno;
	}
	rs->file = fdopen(fd, "w");
	if (!rs->file) {
		int e = errno;
		close(fd);
		return -e;
	}
	header_json(rs);
	rs->bytes = 0;
	if (fwrite(rs->json.out.buf, 1, rs->json.out.len, rs->file) != rs->json.out.len || fflush(rs->file) != 0) {
		return -EIO;
	}
	rs->bytes = rs->json.out.len;
	return 0;
}

static void
write_failed(struct record_sink *rs, int err)
{
	rs->errors++;
	if (!rs->warned) {
		rs->warned = true; /* once: a full disk would otherwise log every second */
		log_warn("record: %s: %s (samples are not recorded until it works again)", rs->path, strerror(-err));
	}
}

static int
record_write(struct sink *sink, const struct sample *s)
{
	struct record_sink *rs = (struct record_sink *)sink;
	struct json *j = &rs->json;
	json_reset(j);
	sample_to_json(j, s);
	json_raw(j, "\n", 1);
	int r = 0;
	if (!rs->file || (rs->max_bytes > 0 && rs->bytes + j->out.len > rs->max_bytes && rs->bytes > 0)) {
		/* the sample's text is rebuilt after the header took the buffer */
		r = open_fresh(rs);
		json_reset(j);
		sample_to_json(j, s);
		json_raw(j, "\n", 1);
	}
	/* flushed per line: a crash or a power cut loses at most the sample being written */
	if (r == 0 && (fwrite(j->out.buf, 1, j->out.len, rs->file) != j->out.len || fflush(rs->file) != 0)) {
		r = -EIO;
	}
	if (r < 0) {
		write_failed(rs, r);
		return r;
	}
	rs->warned = false;
	rs->bytes += j->out.len;
	return 0;
}

static void
record_add_metrics(struct sink *sink, struct metric_set *m)
{
	struct record_sink *rs = (struct record_sink *)sink;
	metric_set_put(m, "agent.record_errors_total", (double)rs->errors);
	metric_set_put(m, "agent.record_rotations_total", (double)rs->rotations);
}

static void
record_destroy(struct sink *sink)
{
	struct record_sink *rs = (struct record_sink *)sink;
	if (rs->file) {
		fclose(rs->file);
	}
	json_free(&rs->json);
	free(rs->path);
	free(rs->previous);
	free(rs->version);
	free(rs);
}

static const struct sink_ops record_ops = {
	.name = "record",
	.write = record_write,
	.add_metrics = record_add_metrics,
	.destroy = record_destroy,
};

int
record_sink_create(const char *path, uint64_t max_bytes, const struct agent_info *info, struct sink **out)
{
	struct record_sink *rs = xcalloc(1, sizeof(*rs));
	rs->base.ops = &record_ops;
	rs->path = xstrdup(path);
	size_t n = strlen(path) + 3;
	rs->previous = xcalloc(n, 1);
	snprintf(rs->previous, n, "%s.1", path);
	rs->max_bytes = max_bytes;
	rs->id = info->identity;
	rs->id_known = rs->id.model[0] || rs->id.soc[0] || rs->id.l4t[0];
	rs->version = xstrdup(info->version ? info->version : "");
	json_init(&rs->json);
	int r = open_fresh(rs);
	if (r < 0) {
		record_destroy(&rs->base);
		return r;
	}
	*out = &rs->base;
	return 0;
}
