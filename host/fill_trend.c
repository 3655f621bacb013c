/* Time to full from the recent trend (see fill_trend.h). */
#include "fill_trend.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

void
fill_trend_init(struct fill_trend *t, int64_t window_ms)
{
	memset(t, 0, sizeof(*t));
	t->window_ms = window_ms > 0 ? window_ms : 1;
}

/* drops the first N points */
static void
drop_first(struct fill_trend *t, size_t n)
{
	memmove(t->t_ms, t->t_ms + n, (t->count - n) * sizeof(t->t_ms[0]));
	memmove(t->used, t->used + n, (t->count - n) * sizeof(t->used[0]));
	t->count -= n;
}

void
fill_trend_add(struct fill_trend *t, int64_t now_ms, double used_bytes)
{
	if (!isfinite(used_bytes)) {
		return;
	}
	size_t old = 0;
	while (old < t->count && t->t_ms[old] < now_ms - t->window_ms) {
		old++;
	}
	drop_first(t, old);
	int64_t spacing = t->window_ms / (FILL_TREND_POINTS - 1);
	size_t n = t->count;
	bool replace = n > 0 && (now_ms <= t->t_ms[n - 1] || (n >= 2 && now_ms - t->t_ms[n - 2] < spacing));
	if (!replace && n == FILL_TREND_POINTS) {
		drop_first(t, 1); /* only when scans come faster than the spacing allows: the oldest goes */
		n--;
	}
	size_t at = replace ? n - 1 : n;
	t->t_ms[at] = replace && now_ms < t->t_ms[at] ? t->t_ms[at] : now_ms;
	t->used[at] = used_bytes;
	t->count = at + 1;
}

int
fill_trend_eta_s(const struct fill_trend *t, double avail_bytes, double *eta_s)
{
	if (avail_bytes <= 0) {
		*eta_s = 0; /* full now, whatever the trend */
		return 0;
	}
	size_t n = t->count;
	if (n < FILL_TREND_MIN_POINTS || (t->t_ms[n - 1] - t->t_ms[0]) * 6 < t->window_ms) {
		return -EAGAIN;
	}
	/* centred on the first point: used bytes of a large disk lose no digits to the sums */
	double mt = 0, mu = 0;
	for (size_t i = 0; i < n; i++) {
		mt += (double)(t->t_ms[i] - t->t_ms[0]) / 1000.0;
		mu += t->used[i] - t->used[0];
	}
	mt /= (double)n;
	mu /= (double)n;
	double sxx = 0, sxy = 0;
	for (size_t i = 0; i < n; i++) {
		double dt = (double)(t->t_ms[i] - t->t_ms[0]) / 1000.0 - mt;
		sxx += dt * dt;
		sxy += dt * (t->used[i] - t->used[0] - mu);
	}
	if (sxx <= 0) {
		return -EAGAIN;
	}
	double slope = sxy / sxx; /* bytes a second */
	if (!(slope > 0)) {
		return -ENODATA;
	}
	double rss = 0;
	for (size_t i = 0; i < n; i++) {
		double dt = (double)(t->t_ms[i] - t->t_ms[0]) / 1000.0 - mt;
		double r = t->used[i] - t->used[0] - mu - slope * dt;
		rss += r * r;
	}
	/* the slope's standard error: a line through noise has a slope of about its size */
	double se = sqrt(rss / (double)(n - 2) / sxx);
	if (slope <= 2 * se) {
		return -ENODATA;
	}
	double eta = ceil(avail_bytes / slope);
	if (!(eta <= FILL_TREND_HORIZON_S)) {
		return -ENODATA;
	}
	*eta_s = eta;
	return 0;
}
