/*
 * Throttle detection: one state per sample with named reasons, derived
 * from the sample's metrics only (pure, no I/O), so it works the same on
 * sysfs samples, live tegrastats and replays.
 */
#ifndef TEGRAWATCH_THROTTLE_H
#define TEGRAWATCH_THROTTLE_H

#include <stddef.h>

#include "core/sample.h"

struct throttle_detector;

struct throttle_detector *throttle_detector_create(void);
void throttle_detector_destroy(struct throttle_detector *det);

/**
 * Evaluates S->metrics against the previous samples seen by DET, writes
 * S->throttle and adds `throttle.active` and one `throttle.REASON` (0/1)
 * metric per reason to S->metrics.
 */
void throttle_detector_update(struct throttle_detector *det, struct sample *s);

/**
 * What the first reading showed of events from before the detector
 * watched (an OC counter already above 0), as "oc3 had counted 1 event
 * before the first reading" in BUF. Returns how many counters; 0 and "".
 */
size_t throttle_detector_history(const struct throttle_detector *det, char *buf, size_t size);

/* What a cooling device does when engaged (docs/throttling.md, "Which trips throttle"). */
enum cooling_kind {
	COOLING_CLOCK,   /* lowers a clock: cpufreq, devfreq, *-throttle-alert, *-balanced, and any unknown type */
	COOLING_FAN,     /* a fan: cools, slows nothing */
	COOLING_WARNING, /* hot-surface-alert: a touch warning, slows nothing */
};

/**
 * The kind of a cooling device by its type, LEN bytes of TYPE: the sysfs
 * `type` ("hot-surface-alert") or its metric segment ("hot_surface_alert").
 */
enum cooling_kind cooling_kind_of(const char *type, size_t len);

#endif
