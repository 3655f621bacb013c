/* Per-metric statistics: Welford for mean and std, float32 values and quickselect for exact percentiles. */
#include "report_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/xalloc.h"

void
stats_init(struct stats *st)
{
	memset(st, 0, sizeof(*st));
}

void
stats_free(struct stats *st)
{
	for (size_t i = 0; i < st->count; i++) {
		free(st->items[i].values);
	}
	free(st->items);
	free(st->index);
	memset(st, 0, sizeof(*st));
}

static uint32_t
name_hash(const char *s)
{
	uint64_t h = fnv1a64_str(s);
	return (uint32_t)(h ^ (h >> 32));
}

static void
index_insert(uint32_t *index, size_t cap, uint32_t hash, uint32_t item)
{
	size_t i = hash & (cap - 1);
	while (index[i]) {
		i = (i + 1) & (cap - 1);
	}
	index[i] = item + 1;
}

static void
index_grow(struct stats *st)
{
	size_t cap = st->index_cap ? st->index_cap * 2 : 256;
	uint32_t *index = xcalloc(cap, sizeof(*index));
	for (size_t i = 0; i < st->count; i++) {
		index_insert(index, cap, st->items[i].hash, (uint32_t)i);
	}
	free(st->index);
	st->index = index;
	st->index_cap = cap;
}

static struct stat_metric *
lookup(const struct stats *st, const char *name, uint32_t hash)
{
	if (!st->index_cap) {
		return NULL;
	}
	for (size_t i = hash & (st->index_cap - 1); st->index[i]; i = (i + 1) & (st->index_cap - 1)) {
		struct stat_metric *m = &st->items[st->index[i] - 1];
		if (m->hash == hash && strcmp(m->name, name) == 0) {
			return m;
		}
	}
	return NULL;
}

const struct stat_metric *
stats_find(const struct stats *st, const char *name)
{
	return lookup(st, name, name_hash(name));
}

static struct stat_metric *
add_metric(struct stats *st, const char *name, uint32_t hash)
{
	/* keep the index at most half full */
	if ((st->count + 1) * 2 > st->index_cap) {
		index_grow(st);
	}
	if (st->count == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 64;
		st->items = xrealloc(st->items, st->cap, sizeof(*st->items));
	}
	struct stat_metric *m = &st->items[st->count];
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->hash = hash;
	index_insert(st->index, st->index_cap, hash, (uint32_t)st->count);
	st->count++;
	return m;
}

/* Stores V; the first change of value writes out the copies of FIRST it stood for. */
static void
store_value(struct stat_metric *m, double v)
{
	if (!m->values) {
		if (v == m->first) {
			return;
		}
		m->cap = 64;
		while (m->cap < m->count) {
			m->cap *= 2;
		}
		m->values = xcalloc(m->cap, sizeof(*m->values));
		for (uint64_t i = 0; i + 1 < m->count; i++) {
			m->values[i] = (float)m->first;
		}
	}
	if (m->count > m->cap) {
		m->cap *= 2;
		m->values = xrealloc(m->values, m->cap, sizeof(*m->values));
	}
	m->values[m->count - 1] = (float)v;
}

void
stats_add(struct stats *st, const char *name, double value, int64_t at_ms)
{
	if (!isfinite(value)) {
		return;
	}
	uint32_t hash = name_hash(name);
	struct stat_metric *m = lookup(st, name, hash);
	if (!m) {
		m = add_metric(st, name, hash);
	}
	m->count++;
	if (m->count == 1) {
		m->first = m->min = m->max = value;
		m->max_at_ms = at_ms;
	} else {
		if (value < m->min) {
			m->min = value;
		}
		if (value > m->max) {
			m->max = value;
			m->max_at_ms = at_ms;
		}
	}
	double d = value - m->mean;
	m->mean += d / (double)m->count;
	m->m2 += d * (value - m->mean);
	store_value(m, value);
}

static void
swap_f(float *a, float *b)
{
	float t = *a;
	*a = *b;
	*b = t;
}

/* Puts the K-th smallest of V[0..N) at V[K], smaller ones before it (three-way: runs of equal values are cheap). */
static void
select_kth(float *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n; /* the answer lies in [lo, hi) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		/* median of three as the pivot */
		float a = v[lo], b = v[mid], c = v[hi - 1];
		float pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		size_t lt = lo, i = lo, gt = hi;
		while (i < gt) {
			if (v[i] < pivot) {
				swap_f(&v[lt++], &v[i++]);
			} else if (v[i] > pivot) {
				swap_f(&v[i], &v[--gt]);
			} else {
				i++;
			}
		}
		if (k < lt) {
			hi = lt;
		} else if (k >= gt) {
			lo = gt;
		} else {
			return; /* v[k] == pivot */
		}
	}
}

double
stats_percentile(float *v, size_t n, double p)
{
	double h = (double)(n - 1) * p;
	size_t k = (size_t)floor(h);
	select_kth(v, n, k);
	double lo = v[k];
	if (k + 1 >= n || h == (double)k) {
		return lo;
	}
	/* the next rank is the smallest value after V[K] */
	float next = v[k + 1];
	for (size_t i = k + 2; i < n; i++) {
		if (v[i] < next) {
			next = v[i];
		}
	}
	return lo + (h - (double)k) * ((double)next - lo);
}

/* float32 keeps 7 significant digits: print them, not the binary noise (95.031, not 95.03099823). */
static double
round7(double v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%.7g", v);
	return strtod(buf, NULL);
}

void
stats_finish(struct stats *st)
{
	for (size_t i = 0; i < st->count; i++) {
		struct stat_metric *m = &st->items[i];
		m->std = m->count > 0 ? sqrt(m->m2 / (double)m->count) : 0;
		if (!m->values) {
			m->p50 = m->p95 = m->p99 = m->first;
			continue;
		}
		m->p50 = round7(stats_percentile(m->values, m->count, 0.50));
		m->p95 = round7(stats_percentile(m->values, m->count, 0.95));
		m->p99 = round7(stats_percentile(m->values, m->count, 0.99));
	}
}

static const struct stats *sort_stats;

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(sort_stats->items[*(const size_t *)a].name, sort_stats->items[*(const size_t *)b].name);
}

void
stats_sorted(const struct stats *st, size_t *order)
{
	for (size_t i = 0; i < st->count; i++) {
		order[i] = i;
	}
	sort_stats = st; /* qsort has no context argument in C11 */
	qsort(order, st->count, sizeof(*order), cmp_name);
}
