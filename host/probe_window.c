/* A probe's window of attempts (probe_window.h). */
#include "probe_window.h"

#include <errno.h>
#include <math.h>

void
probe_window_init(struct probe_window *w, int size)
{
	w->size = size < 1 ? 1 : size > PROBE_WINDOW_MAX ? PROBE_WINDOW_MAX : size;
	w->count = 0;
	w->next = 0;
}

void
probe_window_add(struct probe_window *w, int64_t rtt_us)
{
	w->rtt_us[w->next] = rtt_us < 0 ? -1 : rtt_us;
	w->next = (w->next + 1) % w->size;
	if (w->count < w->size) {
		w->count++;
	}
}

int
probe_window_stats(const struct probe_window *w, struct probe_stats *out)
{
	if (w->count == 0) {
		return -ENODATA;
	}
	int answered = 0;
	double sum_us = 0;
	for (int i = 0; i < w->count; i++) {
		int64_t v = w->rtt_us[i];
		if (v >= 0) {
			answered++;
			sum_us += (double)v;
		}
	}
	int last = (w->next + w->size - 1) % w->size;
	out->up = w->rtt_us[last] >= 0;
	out->attempts = w->count;
	out->answered = answered;
	out->loss_pct = 100.0 * (double)(w->count - answered) / (double)w->count;
	out->rtt_mean_ms = answered ? sum_us / answered / 1000.0 : NAN;
	return 0;
}
