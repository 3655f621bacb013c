/* Per-metric history rings (see history.h). */
#include "history.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/core/xalloc.h"

struct ring {
	char name[METRIC_NAME_MAX];
	float *values;      /* capacity slots, indexed like the time ring */
	uint64_t born;      /* sample index of the first slot that belongs to this ring */
	uint64_t last_seen; /* sample index of the latest value */
	bool used;
};

struct history {
	size_t cap;
	size_t max_rings;
	int64_t *times; /* sample times, slot = index % cap */
	uint64_t count; /* samples added */
	struct ring *rings;
	size_t rings_used;
	uint32_t *index; /* open addressing: ring position + 1, 0 = empty */
	size_t index_mask;
	uint64_t dropped;
};

static uint32_t
name_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *s; s++) {
		h = (h ^ (unsigned char)*s) * 16777619u;
	}
	return h;
}

struct history *
history_create(size_t capacity)
{
	if (capacity < 1) {
		capacity = 1;
	}
	if (capacity > HISTORY_MAX_CAPACITY) {
		capacity = HISTORY_MAX_CAPACITY;
	}
	struct history *h = xcalloc(1, sizeof(*h));
	h->cap = capacity;
	h->max_rings = HISTORY_MAX_BYTES / (capacity * sizeof(float));
	if (h->max_rings > HISTORY_MAX_METRICS) {
		h->max_rings = HISTORY_MAX_METRICS;
	}
	if (h->max_rings < 1) {
		h->max_rings = 1;
	}
	h->times = xcalloc(capacity, sizeof(*h->times));
	h->rings = xcalloc(h->max_rings, sizeof(*h->rings));
	size_t slots = 16;
	while (slots < 2 * h->max_rings) {
		slots *= 2;
	}
	h->index = xcalloc(slots, sizeof(*h->index));
	h->index_mask = slots - 1;
	return h;
}

void
history_destroy(struct history *h)
{
	if (!h) {
		return;
	}
	for (size_t i = 0; i < h->max_rings; i++) {
		free(h->rings[i].values);
	}
	free(h->rings);
	free(h->index);
	free(h->times);
	free(h);
}

static struct ring *
find_ring(const struct history *h, const char *name)
{
	for (size_t i = name_hash(name) & h->index_mask;; i = (i + 1) & h->index_mask) {
		uint32_t v = h->index[i];
		if (v == 0) {
			return NULL;
		}
		struct ring *r = &h->rings[v - 1];
		if (strcmp(r->name, name) == 0) {
			return r;
		}
	}
}

static void
index_insert(struct history *h, size_t pos)
{
	size_t i = name_hash(h->rings[pos].name) & h->index_mask;
	while (h->index[i] != 0) {
		i = (i + 1) & h->index_mask;
	}
	h->index[i] = (uint32_t)(pos + 1);
}

static struct ring *
new_ring(struct history *h, const char *name)
{
	if (h->rings_used == h->max_rings) {
		return NULL;
	}
	size_t pos = 0;
	while (h->rings[pos].used) {
		pos++;
	}
	struct ring *r = &h->rings[pos];
	/* not zeroed: pages are touched only as samples arrive */
	r->values = xrealloc(NULL, h->cap, sizeof(*r->values));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->born = h->count;
	r->last_seen = h->count;
	r->used = true;
	h->rings_used++;
	index_insert(h, pos);
	return r;
}

/* Frees the rings whose metric was absent for a whole ring: they hold nothing. */
static void
evict(struct history *h)
{
	bool freed = false;
	for (size_t i = 0; i < h->max_rings; i++) {
		struct ring *r = &h->rings[i];
		if (r->used && h->count - r->last_seen > h->cap) {
			free(r->values);
			memset(r, 0, sizeof(*r));
			h->rings_used--;
			freed = true;
		}
	}
	if (freed) {
		memset(h->index, 0, (h->index_mask + 1) * sizeof(*h->index));
		for (size_t i = 0; i < h->max_rings; i++) {
			if (h->rings[i].used) {
				index_insert(h, i);
			}
		}
	}
}

void
history_add(struct history *h, const struct sample *s)
{
	size_t slot = (size_t)(h->count % h->cap);
	h->times[slot] = s->time_ms;
	for (size_t i = 0; i < h->max_rings; i++) {
		if (h->rings[i].used) {
			h->rings[i].values[slot] = NAN; /* absent unless the sample has it */
		}
	}
	const struct metric_set *set = &s->metrics;
	for (size_t i = 0; i < set->count; i++) {
		const struct metric *m = &set->items[i];
		struct ring *r = find_ring(h, m->name);
		if (!r) {
			r = new_ring(h, m->name);
			if (!r) {
				h->dropped++;
				continue;
			}
		}
		r->values[slot] = (float)m->value;
		r->last_seen = h->count;
	}
	h->count++;
	evict(h);
}

double
history_float_value(float f)
{
	if (!isfinite(f)) {
		return (double)f;
	}
	/* most values are whole numbers (mW, MHz, %) */
	if (fabsf(f) < 1e7f && f == truncf(f)) {
		return (double)f;
	}
	char buf[32];
	snprintf(buf, sizeof(buf), "%.7g", (double)f);
	double d = strtod(buf, NULL);
	if ((float)d == f) {
		return d;
	}
	snprintf(buf, sizeof(buf), "%.9g", (double)f);
	return strtod(buf, NULL);
}

int
history_window(const struct history *h, const char *name, int64_t window_ms, struct history_point **out, size_t *count)
{
	const struct ring *r = find_ring(h, name);
	if (!r) {
		return -ENOENT;
	}
	uint64_t first = h->count > h->cap ? h->count - h->cap : 0;
	if (r->born > first) {
		first = r->born;
	}
	struct history_point *pts = NULL;
	size_t n = 0;
	if (h->count > first) {
		pts = xrealloc(NULL, (size_t)(h->count - first), sizeof(*pts));
		int64_t newest = h->times[(h->count - 1) % h->cap];
		for (uint64_t k = first; k < h->count; k++) {
			size_t slot = (size_t)(k % h->cap);
			float v = r->values[slot];
			if (isnan(v)) {
				continue;
			}
			int64_t t = h->times[slot];
			if (window_ms > 0 && t <= newest - window_ms) {
				continue;
			}
			pts[n].time_ms = t;
			pts[n].value = history_float_value(v);
			n++;
		}
	}
	if (n == 0) {
		free(pts);
		pts = NULL;
	}
	*out = pts;
	*count = n;
	return 0;
}

static int
double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : (x > y ? 1 : 0);
}

void
history_stats(const struct history_point *points, size_t n, struct history_stats *out)
{
	out->count = n;
	if (n == 0) {
		out->min = out->mean = out->max = out->p95 = NAN;
		return;
	}
	double *v = xrealloc(NULL, n, sizeof(*v));
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		v[i] = points[i].value;
		sum += v[i];
	}
	qsort(v, n, sizeof(*v), double_cmp);
	out->min = v[0];
	out->max = v[n - 1];
	out->mean = sum / (double)n;
	size_t rank = (95 * n + 99) / 100; /* ceil(0.95 n), at least 1 */
	out->p95 = v[rank - 1];
	free(v);
}

size_t
history_capacity(const struct history *h)
{
	return h->cap;
}

size_t
history_metric_count(const struct history *h)
{
	return h->rings_used;
}

size_t
history_max_metrics(const struct history *h)
{
	return h->max_rings;
}

uint64_t
history_dropped(const struct history *h)
{
	return h->dropped;
}
