/* A sink writing one JSON document per sample to a stdio stream. */
#include "sink_jsonl.h"

#include <errno.h>
#include <stdlib.h>

#include "agent/core/sample_json.h"
#include "agent/core/xalloc.h"

struct jsonl_sink {
	struct sink base;
	FILE *out;
	struct json json;
};

static int
jsonl_write(struct sink *sink, const struct sample *s)
{
	struct jsonl_sink *js = (struct jsonl_sink *)sink;
	json_reset(&js->json);
	sample_to_json(&js->json, s);
	json_raw(&js->json, "\n", 1);
	if (fwrite(js->json.buf, 1, js->json.len, js->out) != js->json.len || fflush(js->out) != 0) {
		return -EIO;
	}
	return 0;
}

static void
jsonl_destroy(struct sink *sink)
{
	struct jsonl_sink *js = (struct jsonl_sink *)sink;
	json_free(&js->json);
	free(js);
}

static const struct sink_ops jsonl_sink_ops = {
	.name = "jsonl",
	.write = jsonl_write,
	.destroy = jsonl_destroy,
};

struct sink *
jsonl_sink_create(FILE *out)
{
	struct jsonl_sink *js = xcalloc(1, sizeof(*js));
	js->base.ops = &jsonl_sink_ops;
	js->out = out;
	json_init(&js->json);
	return &js->base;
}
