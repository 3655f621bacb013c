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

#define COOLING_MODES_MAX 16
#define COOLING_SLOW_MS (6.0 * 3600 * 1000)     /* the average follows over ~6 h of steady time */
#define COOLING_BASELINE_MS (6.0 * 3600 * 1000) /* the baseline: the first 6 h of steady time in a mode */
#define COOLING_SHOWN_MS (10.0 * 60 * 1000)     /* shown once a mode has 10 min of steady time */

/* The thermal resistance of one power mode: a slow average and the baseline it is compared with. */
struct mode_resistance {
	char mode[POWER_MODE_NAME_MAX];
	double avg;       /* C/W, exponential average over steady time */
	double steady_ms; /* steady time seen in this mode, all runs */
	double baseline_sum, baseline_ms;
	bool baseline_frozen;
	double baseline;
};

struct cooling {
	struct mode_resistance modes[COOLING_MODES_MAX];
	int mode_count;
	/* ~1 and ~5 min averages of the junction and the input power: steady when they agree */
	bool have_last;
	int64_t last_ms;
	double tj_short, tj_long, p_short, p_long;
	int64_t steady_since_ms;
	bool keep;  /* a state file keeps the slow statistics: only then are they shown */
	bool dirty; /* changed since the state file was written */
	int64_t saved_ms;
};

/** Puts fan.N.dead and the thermal.resistance_* metrics into S. */
void cooling_process(struct cooling *c, struct sample *s);

/** Adds R (C/W) seen for DT_MS of steady time to M's average and, while it is being measured, its baseline. */
void cooling_add(struct mode_resistance *m, double r, double dt_ms);

/** Parses a thermal state file's TEXT (modified) into C; PATH is for messages. Returns the bad lines, or -EINVAL. */
int cooling_state_parse(char *text, struct cooling *c, const char *path);

/** Loads PATH into C (a missing file is nothing). 0 or -errno, said in the log. */
int cooling_state_load(struct cooling *c, const char *path);

/** Writes C to PATH whole (core/atomic_file.h: fsync, rename, fsync of the directory). 0 or -errno. */
int cooling_state_save(const struct cooling *c, const char *path);

#endif
