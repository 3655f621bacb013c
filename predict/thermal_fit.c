/*
 * One zone's first-order forecast (thermal_fit.h). Why blocks: a sensor
 * reads in 1/32 C steps with ~0.05 C of noise, while a board heating with
 * a 3-7 minute time constant moves by hundredths of a degree per second
 * near its steady state; 10 s means cut the noise by ~3 and keep the fit
 * at 30 points whatever the sampling interval. Why the half-window fit:
 * a first-order curve is a model, and a heatsink under a die has two time
 * constants; when the recent half of the window tells another story than
 * the whole, the difference goes into the uncertainty.
 */
#include "thermal_fit.h"

#include <math.h>
#include <string.h>

#define SMOOTH_MS 3000.0
#define Z90 1.645          /* two-sided 90 %: the reported error is a half-width */
#define RISING_A 0.995     /* a lag coefficient this close to 1: no bend to fit */
#define NOISE_FLOOR_C 0.02 /* a quantized sensor is never better than this */
#define NOISE_SIGMAS 3.0
#define STEADY_SD_MAX_C 3.0
#define RISING_MIN_C 1.0 /* a straight rise must climb this much over the window to be one */
#define ETA_MAX_S 7200.0 /* a 5 min window does not see further than 2 h: absent beyond */

void
thermal_fit_restart(struct thermal_fit *f, int64_t now_ms, int64_t skip_ms)
{
	f->started = true;
	f->start_ms = now_ms + skip_ms;
	f->nblocks = 0;
	f->block_sum = 0;
	f->block_n = 0;
	f->block_end_ms = f->start_ms + FIT_BLOCK_MS;
	memset(&f->model, 0, sizeof(f->model));
}

static double
noise_c(const struct thermal_fit *f)
{
	/* var(x[i] - 2x[i-1] + x[i-2]) = 6 sigma^2 for white noise */
	double s = sqrt(f->d2_sq / 6.0);
	return s > NOISE_FLOOR_C ? s : NOISE_FLOOR_C;
}

static void
push_block(struct thermal_fit *f)
{
	if (f->block_n == 0) {
		return;
	}
	if (f->nblocks == FIT_BLOCKS_MAX) {
		memmove(f->blocks, f->blocks + 1, (FIT_BLOCKS_MAX - 1) * sizeof(f->blocks[0]));
		f->nblocks--;
	}
	f->blocks[f->nblocks++] = f->block_sum / f->block_n;
	f->block_sum = 0;
	f->block_n = 0;
	if (f->nblocks >= FIT_BLOCKS_MIN) {
		thermal_fit_blocks(f->blocks, f->nblocks, FIT_BLOCK_MS / 1000.0, noise_c(f), &f->model);
	} else {
		f->model.kind = FIT_NONE;
	}
}

void
thermal_fit_add(struct thermal_fit *f, int64_t now_ms, double t_c)
{
	if (!f->started) {
		thermal_fit_restart(f, now_ms, 0);
	}
	if (f->nprev == 2) {
		double d2 = t_c - 2 * f->prev[1] + f->prev[0];
		/* a running mean over ~50 readings; the first ones seed it */
		f->d2_sq += (d2 * d2 - f->d2_sq) / 50.0;
	}
	f->prev[0] = f->prev[1];
	f->prev[1] = t_c;
	f->nprev = f->nprev < 2 ? f->nprev + 1 : 2;
	if (!f->have_smooth || now_ms <= f->smooth_ms) {
		f->smooth_c = t_c;
	} else {
		double dt = (double)(now_ms - f->smooth_ms);
		f->smooth_c += (t_c - f->smooth_c) * dt / (dt + SMOOTH_MS);
	}
	f->smooth_ms = now_ms;
	f->have_smooth = true;
	if (now_ms < f->start_ms) {
		return;
	}
	if (now_ms >= f->block_end_ms + 2 * FIT_BLOCK_MS) {
		/* a gap (the agent stopped, a cut in a recording): the curve before it is another one */
		thermal_fit_restart(f, now_ms, 0);
	}
	while (now_ms >= f->block_end_ms) {
		push_block(f);
		f->block_end_ms += FIT_BLOCK_MS;
	}
	f->block_sum += t_c;
	f->block_n++;
}

/* One least-squares fit of B[i+k] = a B[i] + b over N blocks. */
static void
fit_lagged(const double *b, int n, double block_s, double noise, struct fit_model *m)
{
	memset(m, 0, sizeof(*m));
	int k = n / 4 > 1 ? n / 4 : 1;
	int pairs = n - k;
	if (pairs < 3) {
		return;
	}
	double mx = 0, my = 0;
	for (int i = 0; i < pairs; i++) {
		mx += b[i];
		my += b[i + k];
	}
	mx /= pairs;
	my /= pairs;
	double sxx = 0, sxy = 0, lo = b[0], hi = b[0];
	for (int i = 0; i < pairs; i++) {
		sxx += (b[i] - mx) * (b[i] - mx);
		sxy += (b[i] - mx) * (b[i + k] - my);
	}
	for (int i = 1; i < n; i++) {
		lo = b[i] < lo ? b[i] : lo;
		hi = b[i] > hi ? b[i] : hi;
	}
	double recent = (b[n - 1] + b[n - 2] + b[n - 3]) / 3;
	/* flat within a few block-noise widths: steady at the recent mean */
	if (hi - lo < 4 * noise || sxx <= 0) {
		m->kind = FIT_STEADY;
		m->tss_c = recent;
		return;
	}
	double a = sxy / sxx;
	if (a <= 0) {
		m->kind = FIT_STEADY; /* the blocks do not follow each other: noise around a level */
		m->tss_c = recent;
		return;
	}
	if (a >= RISING_A) {
		/* no bend yet: a straight line through the blocks, only if it rises */
		double slope = (b[n - 1] - b[0]) / ((n - 1) * block_s);
		if (b[n - 1] - b[0] >= RISING_MIN_C) {
			m->kind = FIT_RISING;
			m->slope_c_per_s = slope;
		}
		return;
	}
	double s2 = 0;
	for (int i = 0; i < pairs; i++) {
		double r = b[i + k] - my - a * (b[i] - mx);
		s2 += r * r;
	}
	s2 /= pairs > 2 ? pairs - 2 : 1;
	double one = 1 - a;
	m->kind = FIT_CURVE;
	m->tss_c = (my - a * mx) / one;
	m->tau_s = -k * block_s / log(a);
	/* delta method on T_ss = (my - a mx) / (1 - a): my and a are uncorrelated once centred */
	double var = s2 / (pairs * one * one) + (my - mx) * (my - mx) * s2 / (sxx * one * one * one * one);
	m->tss_sd_c = sqrt(var);
}

void
thermal_fit_blocks(const double *blocks, int n, double block_s, double noise_c, struct fit_model *out)
{
	/* the noise of a block mean, of ~block_s readings a second or fewer: a conservative third */
	double block_noise = noise_c / 3;
	fit_lagged(blocks, n, block_s, block_noise, out);
	if (n >= 8) { /* 4 blocks a half: the least that still has 3 lagged pairs */
		struct fit_model half;
		fit_lagged(blocks + n - n / 2, n / 2, block_s, block_noise, &half);
		out->have_half = true;
		out->half_kind = half.kind;
		out->half_tss_c = half.kind == FIT_RISING ? half.slope_c_per_s : half.tss_c;
		out->half_tau_s = half.tau_s;
	}
}

/* Seconds from NOW_C to TRIP_C on the curve towards TSS_C with TAU_S; -1 when it never gets there. */
static double
eta_curve(double tss_c, double tau_s, double now_c, double trip_c)
{
	if (tss_c <= trip_c || now_c >= trip_c) {
		return now_c >= trip_c ? 0 : -1;
	}
	return tau_s * log((tss_c - now_c) / (tss_c - trip_c));
}

/* What the recent half of the window predicts, -1 for never. */
static double
eta_half(const struct fit_model *m, double now_c, double trip_c)
{
	switch (m->half_kind) {
	case FIT_CURVE:
		return eta_curve(m->half_tss_c, m->half_tau_s, now_c, trip_c);
	case FIT_RISING:
		return (trip_c - now_c) / m->half_tss_c; /* half_tss_c holds the slope */
	case FIT_STEADY:
	case FIT_NONE:
		break;
	}
	return -1;
}

void
thermal_fit_forecast(const struct thermal_fit *f, double trip_c, struct fit_forecast *out)
{
	memset(out, 0, sizeof(*out));
	const struct fit_model *m = &f->model;
	if (!f->have_smooth) {
		return;
	}
	double now_c = f->smooth_c;
	/* an average lags a moving temperature by its time constant: move it on by the curve's slope */
	if (m->kind == FIT_CURVE) {
		now_c += (m->tss_c - now_c) * (SMOOTH_MS / 1000.0) / m->tau_s;
	} else if (m->kind == FIT_RISING) {
		now_c += m->slope_c_per_s * (SMOOTH_MS / 1000.0);
	}
	/* a steady temperature the fit cannot pin down within 3 C is not worth showing */
	if ((m->kind == FIT_CURVE && m->tss_sd_c <= STEADY_SD_MAX_C) || m->kind == FIT_STEADY) {
		out->have_steady = true;
		out->steady_c = m->tss_c;
	}
	if (f->prev[1] >= trip_c) {
		/* at the trip now: the time to it is 0 whatever the fit says */
		out->have_eta = true;
		return;
	}
	double eta, err;
	if (m->kind == FIT_CURVE) {
		eta = eta_curve(m->tss_c, m->tau_s, now_c, trip_c);
		if (eta < 0) {
			return; /* will not throttle at this load */
		}
		/* the same slope now, a steady temperature 1.645 standard errors higher */
		double slope = (m->tss_c - now_c) / m->tau_s;
		double hi = m->tss_c + Z90 * m->tss_sd_c;
		double e_stat = eta - eta_curve(hi, (hi - now_c) / slope, now_c, trip_c);
		double e_model = eta;
		if (m->have_half) {
			double h = eta_half(m, now_c, trip_c);
			e_model = h < 0 ? eta : fabs(eta - h);
		}
		/* a noisy reading crosses before the curve does: by up to ~3 sigma of the sensor */
		double e_noise = NOISE_SIGMAS * noise_c(f) / slope;
		err = sqrt(e_stat * e_stat + e_model * e_model + e_noise * e_noise);
	} else if (m->kind == FIT_RISING) {
		eta = (trip_c - now_c) / m->slope_c_per_s;
		err = eta; /* it may bend any time: only "not before about this" is known */
	} else {
		return;
	}
	if (eta > ETA_MAX_S) {
		return;
	}
	out->have_eta = true;
	out->eta_s = eta;
	out->eta_error_s = err < ETA_MAX_S ? err : ETA_MAX_S;
}
