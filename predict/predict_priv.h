/* Inside predict/: the parts of the stage (predict.h), each pure on a sample's metrics. */
#ifndef TEGRAWATCH_PREDICT_PRIV_H
#define TEGRAWATCH_PREDICT_PRIV_H

#include "core/sample.h"
#include "predict.h"
#include "thermal_fit.h"

/** Puts nvpmodel.unexpected and jetson_clocks.active/.unexpected into S as E asks. */
void mode_guard_check(const struct power_mode_expectation *e, struct sample *s);

#define FORECAST_ZONES_MAX 16
#define ZONE_NAME_MAX 40

struct zone {
	char name[ZONE_NAME_MAX]; /* "tj" */
	bool passive;             /* its trip is the passive one (else hot) */
	bool seen;                /* in the last scan */
	char temp_metric[METRIC_NAME_MAX];
	char trip_metric[METRIC_NAME_MAX];
	char headroom_metric[METRIC_NAME_MAX];
	char steady_metric[METRIC_NAME_MAX];
	char eta_metric[METRIC_NAME_MAX];
	char error_metric[METRIC_NAME_MAX];
	struct thermal_fit fit;
};

/* Every zone's forecast, and the load-step detector they share. */
struct forecast {
	struct zone zones[FORECAST_ZONES_MAX];
	int zone_count;
	bool scanned;
	size_t scanned_count; /* the metric count of the sample last scanned */
	int64_t scanned_ms;
	/* the board's input power over ~3 s and ~1 min; since when they disagree (-1: they agree) */
	bool have_power;
	double power_short, power_long;
	int64_t power_ms;
	int64_t off_since_ms;
	uint64_t steps;
};

/** Adds headroom.ZONE_c, steady_temp.ZONE_c, throttle_eta.ZONE_s and throttle_eta_error.ZONE_s to S. */
void forecast_process(struct forecast *fc, struct sample *s);

#endif
