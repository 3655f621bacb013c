/*
 * The series of one batch: canonical metric names mapped once to their
 * series (fleet_map_fn), and the points of every series the batch
 * touches, grouped, in time order. Two names that land on one series at
 * the same time keep the first, as /metrics does. Pure: no I/O.
 */
#ifndef TEGRAWATCH_FLEET_SERIES_H
#define TEGRAWATCH_FLEET_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/metric_dict.h"
#include "fleet.h"

struct series {
	struct fleet_series s;
	char *key;         /* family and label values, NUL-separated: the series' identity */
	size_t order;      /* when it was created: families and series keep that order */
	struct buf cached; /* an encoder's bytes for this series (remote write: its labels) */
	size_t npoints, cap;
	int64_t *ts_ms;
	double *values;
	size_t batch_at; /* its place in the batch list + 1; 0 when the batch has no point of it */
};

struct series_table {
	fleet_map_fn map;
	struct series **all; /* sorted by key */
	size_t count, cap;
	struct name_entry *names; /* sorted by name: name -> series, NULL for a metric left out */
	size_t name_count, name_cap;
	struct series **batch; /* the series with points, in first-seen order */
	size_t batch_count, batch_cap;
};

void series_table_init(struct series_table *t, fleet_map_fn map);
void series_table_free(struct series_table *t);

/** Forgets the points of the last batch (the series and names stay known). */
void series_table_batch_reset(struct series_table *t);

/** Adds the point (TIME_MS, VALUE times its scale) of metric NAME to its series. */
void series_table_add_metric(struct series_table *t, const char *name, int64_t time_ms, double value);

/** Adds the point (TIME_MS, VALUE) to the series S describes (info series that no metric name gives). */
void series_table_add(struct series_table *t, const struct fleet_series *s, int64_t time_ms, double value);

/** The series of the info family DEF (core/metric_dict.h) with its labels' values from FACTS. */
void series_of_info(const struct metric_info_def *def, const struct metric_info_facts *facts, struct fleet_series *out);

/** Adds the point (TIME_MS, 1) of every per-sample info family FACTS give (the sample's power mode). */
void series_table_add_sample_info(struct series_table *t, const struct metric_info_facts *facts, int64_t time_ms);

#endif
