/*
 * Prometheus Remote-Write 1.0: a WriteRequest of TimeSeries, each its
 * labels (sorted by name, __name__ first) and its samples in time order.
 *
 *   WriteRequest { repeated TimeSeries timeseries = 1; }
 *   TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
 *   Label        { string name = 1; string value = 2; }
 *   Sample       { double value = 1; int64 timestamp = 2; }   (ms since the epoch)
 *
 * A series' labels are encoded once and kept with it. Next to the metrics
 * go the info families of /metrics (core/metric_dict.h: the sample's
 * power mode, the board, the version; the fleet test compares every name
 * with a scrape), 1 at every sample.
 */
#include "encode.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "pb.h"

#define TARGET_MAX (3 + 32) /* job, instance, board and the configured labels */

struct label {
	const char *name, *value;
};

struct rw_encoder {
	struct fleet_encoder base;
	struct label target[TARGET_MAX]; /* the labels every series carries */
	size_t target_count;
	char **owned; /* copies the labels point at */
	size_t owned_count;
	struct fleet_series *fixed_info; /* the info families fixed from the start: the board's, the version's */
	size_t fixed_info_count;
};

static int
label_cmp(const void *a, const void *b)
{
	return strcmp(((const struct label *)a)->name, ((const struct label *)b)->name);
}

/* The labels of S: __name__, its own, then the target labels it does not have already; sorted. */
static void
encode_labels(const struct rw_encoder *e, const struct fleet_series *s, struct buf *out)
{
	struct label all[1 + FLEET_LABELS_MAX + TARGET_MAX];
	size_t n = 0;
	all[n++] = (struct label){"__name__", s->family};
	for (size_t l = 0; l < s->label_count; l++) {
		all[n++] = (struct label){s->label_names[l], s->label_values[l]};
	}
	for (size_t t = 0; t < e->target_count; t++) {
		bool taken = false;
		for (size_t l = 0; l < s->label_count; l++) {
			taken = taken || strcmp(s->label_names[l], e->target[t].name) == 0;
		}
		if (!taken) {
			all[n++] = e->target[t];
		}
	}
	qsort(all, n, sizeof(all[0]), label_cmp);
	for (size_t i = 0; i < n; i++) {
		if (!all[i].value[0]) {
			continue; /* Prometheus: an empty label is no label */
		}
		size_t m = pb_open(out, 1);
		pb_string(out, 1, all[i].name);
		pb_string(out, 2, all[i].value);
		pb_close(out, m);
	}
}

static void
rw_write(struct fleet_encoder *base, struct buf *out)
{
	struct rw_encoder *e = (struct rw_encoder *)base;
	const struct series_table *t = &base->series;
	for (size_t i = 0; i < t->batch_count; i++) {
		struct series *s = t->batch[i];
		if (!s->cached.len) {
			encode_labels(e, &s->s, &s->cached);
		}
		size_t ts = pb_open(out, 1);
		buf_add(out, s->cached.buf, s->cached.len);
		for (size_t p = 0; p < s->npoints; p++) {
			size_t m = pb_open(out, 2);
			pb_double(out, 1, s->values[p]);
			pb_uint(out, 2, (uint64_t)s->ts_ms[p]);
			pb_close(out, m);
		}
		pb_close(out, ts);
	}
}

static void
rw_add_record(struct fleet_encoder *base, const struct sample_record_reader *r)
{
	struct rw_encoder *e = (struct rw_encoder *)base;
	const struct metric_info_facts facts = {.power_mode = r->power_mode};
	series_table_add_sample_info(&base->series, &facts, r->time_ms);
	for (size_t i = 0; i < e->fixed_info_count; i++) {
		series_table_add(&base->series, &e->fixed_info[i], r->time_ms, 1);
	}
}

static void
rw_destroy(struct fleet_encoder *base)
{
	struct rw_encoder *e = (struct rw_encoder *)base;
	series_table_free(&base->series);
	for (size_t i = 0; i < e->owned_count; i++) {
		free(e->owned[i]);
	}
	free(e->owned);
	free(e->fixed_info);
	free(e);
}

static const struct fleet_encoder_ops rw_ops = {
	.add_record = rw_add_record,
	.write = rw_write,
	.destroy = rw_destroy,
};

static const char *
keep(struct rw_encoder *e, const char *s)
{
	e->owned = xrealloc(e->owned, e->owned_count + 1, sizeof(*e->owned));
	e->owned[e->owned_count] = xstrdup(s ? s : "");
	return e->owned[e->owned_count++];
}

struct fleet_encoder *
rw_encoder_create(const struct fleet_config *cfg, const struct fleet_info *info)
{
	struct rw_encoder *e = xcalloc(1, sizeof(*e));
	e->base.ops = &rw_ops;
	series_table_init(&e->base.series, info->map);
	e->target[e->target_count++] = (struct label){"job", keep(e, cfg->job)};
	e->target[e->target_count++] = (struct label){"instance", keep(e, info->agent.device_id)};
	e->target[e->target_count++] = (struct label){"board", keep(e, info->agent.board_name)};
	for (size_t i = 0; i < cfg->label_count && e->target_count < TARGET_MAX; i++) {
		e->target[e->target_count++] =
			(struct label){keep(e, cfg->label_names[i]), keep(e, cfg->label_values[i])};
	}
	size_t n;
	const struct metric_info_def *defs = metric_dict_info(&n);
	const struct metric_info_facts facts = {.board = &info->agent.identity, .version = info->agent.version};
	e->fixed_info = xcalloc(n, sizeof(*e->fixed_info));
	for (size_t i = 0; i < n; i++) {
		if (!defs[i].per_sample) {
			series_of_info(&defs[i], &facts, &e->fixed_info[e->fixed_info_count++]);
		}
	}
	return &e->base;
}
