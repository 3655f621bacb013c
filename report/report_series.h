/*
 * Chart series for the HTML report, in bounded memory: at most
 * SERIES_BUCKETS_MAX time buckets of equal sample counts; when they are
 * full, neighbours merge and each bucket holds twice as many samples. A
 * bucket keeps each series' mean (the throttle state: its maximum, so an
 * episode never averages away).
 */
#ifndef TEGRAWATCH_REPORT_SERIES_H
#define TEGRAWATCH_REPORT_SERIES_H

#include "core/json.h"
#include "core/sample.h"

#define SERIES_BUCKETS_MAX 1024
#define SERIES_MAX 48

struct report_series;

struct report_series *series_create(void);
void series_destroy(struct report_series *rs);

/** Adds the charted metrics of S (temperatures, clocks and ceilings, loads, rails, the throttle state). */
void series_add(struct report_series *rs, const struct sample *s);

/** Writes {"t": [ms, ...], "keys": {NAME: [value or null, ...]}}. */
void series_to_json(const struct report_series *rs, struct json *j);

#endif
