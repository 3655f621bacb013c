/*
 * Statistics over a window the history answered (min, mean, max, p95 of
 * tier 0's points; the same of tier 1's buckets, weighted by their
 * counts), for the API's history answers: pure, they read no ring.
 */
#include <math.h>
#include <stdlib.h>

#include "core/xalloc.h"
#include "history.h"

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

void
history_bucket_stats(const struct history_bucket *buckets, size_t n, struct history_stats *out)
{
	out->count = 0;
	out->min = out->mean = out->max = out->p95 = NAN;
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		const struct history_bucket *b = &buckets[i];
		if (out->count == 0 || b->min < out->min) {
			out->min = b->min;
		}
		if (out->count == 0 || b->max > out->max) {
			out->max = b->max;
		}
		sum += b->mean * b->count;
		out->count += b->count;
	}
	if (out->count > 0) {
		out->mean = sum / (double)out->count;
	}
}
