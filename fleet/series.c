/* The series of one batch (see series.h). */
#include "series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/numfmt.h"
#include "core/xalloc.h"

/* Names and series known at most; past this the tables start again empty (names that churn). */
#define KNOWN_MAX 8192

struct name_entry {
	char *name;
	struct series *series; /* NULL: the map leaves this metric out */
};

void
series_table_init(struct series_table *t, fleet_map_fn map)
{
	memset(t, 0, sizeof(*t));
	t->map = map;
}

static void
forget_all(struct series_table *t)
{
	for (size_t i = 0; i < t->count; i++) {
		struct series *s = t->all[i];
		free(s->key);
		buf_free(&s->cached);
		free(s->ts_ms);
		free(s->values);
		free(s);
	}
	for (size_t i = 0; i < t->name_count; i++) {
		free(t->names[i].name);
	}
	t->count = t->name_count = t->batch_count = 0;
}

void
series_table_free(struct series_table *t)
{
	forget_all(t);
	free(t->all);
	free(t->names);
	free(t->batch);
	memset(t, 0, sizeof(*t));
}

void
series_table_batch_reset(struct series_table *t)
{
	for (size_t i = 0; i < t->batch_count; i++) {
		t->batch[i]->npoints = 0;
		t->batch[i]->batch_at = 0;
	}
	t->batch_count = 0;
	if (t->count > KNOWN_MAX || t->name_count > KNOWN_MAX) {
		forget_all(t);
	}
}

/* The identity of S: family, then each label name and value, NUL-separated. */
static char *
make_key(const struct fleet_series *s, size_t *len)
{
	struct buf k;
	buf_init(&k);
	buf_add(&k, s->family, strlen(s->family) + 1);
	for (size_t l = 0; l < s->label_count; l++) {
		buf_add(&k, s->label_names[l], strlen(s->label_names[l]) + 1);
		buf_add(&k, s->label_values[l], strlen(s->label_values[l]) + 1);
	}
	*len = k.len;
	return buf_take(&k, NULL);
}

static size_t
key_len(const struct series *s)
{
	const char *p = s->key;
	for (size_t i = 0; i < 1 + 2 * s->s.label_count; i++) {
		p += strlen(p) + 1;
	}
	return (size_t)(p - s->key);
}

static struct series *
find_or_add(struct series_table *t, const struct fleet_series *fs)
{
	size_t len;
	char *key = make_key(fs, &len);
	size_t lo = 0, hi = t->count;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		size_t mlen = key_len(t->all[mid]);
		size_t m = mlen < len ? mlen : len;
		int c = memcmp(t->all[mid]->key, key, m);
		if (c < 0 || (c == 0 && mlen < len)) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (lo < t->count && key_len(t->all[lo]) == len && memcmp(t->all[lo]->key, key, len) == 0) {
		free(key);
		return t->all[lo];
	}
	if (t->count == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->all = xrealloc(t->all, t->cap, sizeof(*t->all));
	}
	struct series *s = xcalloc(1, sizeof(*s));
	s->s = *fs;
	s->key = key;
	s->order = t->count;
	buf_init(&s->cached);
	memmove(&t->all[lo + 1], &t->all[lo], (t->count - lo) * sizeof(*t->all));
	t->all[lo] = s;
	t->count++;
	return s;
}

static void
add_point(struct series_table *t, struct series *s, int64_t time_ms, double value)
{
	if (s->npoints && s->ts_ms[s->npoints - 1] == time_ms) {
		return; /* a second metric on this series in the same sample: the first wins */
	}
	if (!s->batch_at) {
		if (t->batch_count == t->batch_cap) {
			t->batch_cap = t->batch_cap ? 2 * t->batch_cap : 64;
			t->batch = xrealloc(t->batch, t->batch_cap, sizeof(*t->batch));
		}
		t->batch[t->batch_count++] = s;
		s->batch_at = t->batch_count;
	}
	if (s->npoints == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->ts_ms = xrealloc(s->ts_ms, s->cap, sizeof(*s->ts_ms));
		s->values = xrealloc(s->values, s->cap, sizeof(*s->values));
	}
	s->ts_ms[s->npoints] = time_ms;
	s->values[s->npoints] = value;
	s->npoints++;
}

void
series_table_add(struct series_table *t, const struct fleet_series *s, int64_t time_ms, double value)
{
	add_point(t, find_or_add(t, s), time_ms, value);
}

_Static_assert(METRIC_INFO_LABELS_MAX <= FLEET_LABELS_MAX, "an info family's labels fit a series");

void
series_of_info(const struct metric_info_def *def, const struct metric_info_facts *facts, struct fleet_series *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->family, sizeof(out->family), "%s", def->family);
	out->help = def->help;
	out->scale = 1;
	out->label_count = def->label_count;
	for (size_t l = 0; l < def->label_count; l++) {
		out->label_names[l] = def->labels[l].name;
		snprintf(out->label_values[l], sizeof(out->label_values[l]), "%s",
			 metric_info_fact(facts, def->labels[l].fact));
	}
}

void
series_table_add_sample_info(struct series_table *t, const struct metric_info_facts *facts, int64_t time_ms)
{
	size_t n;
	const struct metric_info_def *defs = metric_dict_info(&n);
	for (size_t i = 0; i < n; i++) {
		if (defs[i].per_sample && metric_info_present(&defs[i], facts)) {
			struct fleet_series s;
			series_of_info(&defs[i], facts, &s);
			series_table_add(t, &s, time_ms, 1);
		}
	}
}

/*
 * VALUE times SCALE as /metrics writes it (15 digits): 4754 mW are 4.754 W
 * there, not the 4.7540000000000004 the product is, and an energy sum is
 * 34.911 J, not 34.91099999999999: a series must not hold two values for
 * one sample depending on how it was read.
 */
static double
scaled(double value, double scale)
{
	double v = value * scale;
	if (!isfinite(v) || v == floor(v)) {
		return v;
	}
	char text[NUMFMT_MAX];
	numfmt_g15(text, v);
	return strtod(text, NULL);
}

void
series_table_add_metric(struct series_table *t, const char *name, int64_t time_ms, double value)
{
	size_t lo = 0, hi = t->name_count;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(t->names[mid].name, name) < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (lo == t->name_count || strcmp(t->names[lo].name, name) != 0) {
		struct fleet_series fs;
		memset(&fs, 0, sizeof(fs));
		struct series *s = t->map(name, &fs) ? find_or_add(t, &fs) : NULL;
		if (t->name_count == t->name_cap) {
			t->name_cap = t->name_cap ? 2 * t->name_cap : 64;
			t->names = xrealloc(t->names, t->name_cap, sizeof(*t->names));
		}
		memmove(&t->names[lo + 1], &t->names[lo], (t->name_count - lo) * sizeof(*t->names));
		t->names[lo] = (struct name_entry){.name = xstrdup(name), .series = s};
		t->name_count++;
	}
	struct series *s = t->names[lo].series;
	if (s) {
		add_point(t, s, time_ms, scaled(value, s->s.scale));
	}
}
