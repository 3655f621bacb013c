/*
 * The forecast of one thermal zone: where its temperature is heading at the
 * present load and when it reaches its trip. Pure: fed one reading at a
 * time with its time, no I/O, no clock (docs/prediction.md has the method).
 *
 * Readings are averaged into 10 s blocks; the last 30 blocks (5 min) since
 * the load last stepped are fitted with a first-order response
 * T(t) = T_ss - (T_ss - T0) e^(-t/tau), as the regression
 * B[i+k] = a B[i] + b over lagged block means (a = e^(-k 10 s/tau),
 * T_ss = b / (1 - a)). The fit is refreshed when a block closes; the ETA is
 * recomputed at every reading from the fit and the smoothed temperature.
 */
#ifndef TEGRAWATCH_THERMAL_FIT_H
#define TEGRAWATCH_THERMAL_FIT_H

#include <stdbool.h>
#include <stdint.h>

#define FIT_BLOCK_MS 10000 /* one block: 10 s of readings */
#define FIT_BLOCKS_MAX 30  /* the window: 5 min */
#define FIT_BLOCKS_MIN 6   /* a fit needs 1 min of blocks */
#define FIT_SKIP_MS 15000  /* after a load step: the fast part of the response is left out */

enum fit_kind {
	FIT_NONE,   /* not enough blocks, or nothing a first-order curve explains */
	FIT_CURVE,  /* converging to T_ss with time constant tau */
	FIT_STEADY, /* flat within the noise: T_ss is the recent mean */
	FIT_RISING, /* rising with no bend in sight: only a straight line */
};

struct fit_model {
	enum fit_kind kind;
	double tss_c;         /* steady temperature (CURVE, STEADY) */
	double tau_s;         /* time constant (CURVE) */
	double tss_sd_c;      /* standard error of tss_c (CURVE) */
	double slope_c_per_s; /* RISING: the line's slope */
	/* the same fit over the recent half of the window, to see the model disagree with itself */
	bool have_half;
	enum fit_kind half_kind;
	double half_tss_c, half_tau_s;
};

struct thermal_fit {
	int64_t start_ms; /* block 0 starts here; readings before it are skipped */
	bool started;
	double blocks[FIT_BLOCKS_MAX]; /* block means, oldest first */
	int nblocks;
	int64_t block_end_ms;
	double block_sum;
	int block_n;
	/* the sensor's noise, from second differences of the readings (a trend does not count) */
	double prev[2];
	int nprev;
	double d2_sq; /* running mean of the squared second difference */
	/* the temperature now, smoothed over ~3 s */
	double smooth_c;
	int64_t smooth_ms;
	bool have_smooth;
	struct fit_model model;
};

struct fit_forecast {
	bool have_steady;
	double steady_c;
	bool have_eta; /* absent: no fit, or the steady temperature stays below the trip */
	double eta_s;
	double eta_error_s; /* half-width of a ~90 % interval */
};

/** Resets F: its window starts again SKIP_MS after NOW_MS (a load step, or the first reading). */
void thermal_fit_restart(struct thermal_fit *f, int64_t now_ms, int64_t skip_ms);

/** Adds the reading T_C at NOW_MS (non-decreasing; a gap of more than 2 blocks restarts the window). */
void thermal_fit_add(struct thermal_fit *f, int64_t now_ms, double t_c);

/** The forecast against TRIP_C from the latest fit and the smoothed temperature. */
void thermal_fit_forecast(const struct thermal_fit *f, double trip_c, struct fit_forecast *out);

/** Fits BLOCKS (N block means, oldest first, BLOCK_S apart) into *OUT. Exposed for tests. */
void thermal_fit_blocks(const double *blocks, int n, double block_s, double noise_c, struct fit_model *out);

#endif
