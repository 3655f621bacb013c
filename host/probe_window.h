/*
 * A probe's last N attempts and what they say: up (the last one was
 * answered), the share lost, the mean round-trip time of those answered.
 * Pure: no I/O, no clock; the probe source feeds it results.
 */
#ifndef TEGRAWATCH_PROBE_WINDOW_H
#define TEGRAWATCH_PROBE_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "probe_config.h"

struct probe_window {
	int size;                         /* attempts kept, 1..PROBE_WINDOW_MAX */
	int count;                        /* attempts in it so far, up to size */
	int next;                         /* where the next one goes */
	int64_t rtt_us[PROBE_WINDOW_MAX]; /* -1: no answer (timeout, refused, unreachable) */
};

struct probe_stats {
	bool up;            /* the last attempt was answered */
	int attempts;       /* in the window */
	int answered;       /* of those */
	double loss_pct;    /* 100 x (attempts - answered) / attempts */
	double rtt_mean_ms; /* mean of the answered ones; NAN when none was */
};

/** An empty window of SIZE attempts (clamped to 1..PROBE_WINDOW_MAX). */
void probe_window_init(struct probe_window *w, int size);

/** Adds an attempt: RTT_US >= 0 answered in that time, < 0 lost. The oldest goes when the window is full. */
void probe_window_add(struct probe_window *w, int64_t rtt_us);

/** The window's statistics into *OUT. Returns 0, or -ENODATA before the first attempt (*OUT untouched). */
int probe_window_stats(const struct probe_window *w, struct probe_stats *out);

#endif
