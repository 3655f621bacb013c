/*
 * The screen model of `top`: which value goes where, for each view and
 * any size. Sections flow their items ("cells") into lines as wide as
 * the screen, so a wider screen shows more on a line; from 160 columns
 * the overview takes two columns. Pure: a top_data in, lines out.
 */
#include "top.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/xalloc.h"

/* Where a section writes: rows of a (sub)screen, cells flowed into the current line. */
struct out {
	struct top_screen *s;
	int row;      /* the line being filled */
	int col;      /* its length */
	int indent;   /* where a wrapped cell starts */
	int overflow; /* lines that did not fit */
};

static void
out_newline(struct out *o)
{
	if (o->col > 0 || o->row < 0) {
		o->row++;
	}
	o->col = 0;
	if (o->row >= o->s->height) {
		o->overflow++;
	}
}

/* A cell: parts (style, text) kept on one line, wrapped to a new line indented by o->indent. */
static void
out_cell(struct out *o, int nparts, const enum top_style *styles, char texts[][96])
{
	int len = 0;
	for (int i = 0; i < nparts; i++) {
		len += (int)strlen(texts[i]);
	}
	int sep = o->col > o->indent ? 2 : 0;
	if (o->col > o->indent && o->col + sep + len > o->s->width) {
		out_newline(o);
		sep = 0;
	}
	if (o->col < o->indent) {
		char pad[128];
		int n = o->indent - o->col < (int)sizeof(pad) - 1 ? o->indent - o->col : (int)sizeof(pad) - 1;
		memset(pad, ' ', (size_t)n);
		pad[n] = '\0';
		o->col += top_screen_add(o->s, o->row, TOP_STYLE_NORMAL, pad);
	}
	if (sep) {
		o->col += top_screen_add(o->s, o->row, TOP_STYLE_NORMAL, "  ");
	}
	for (int i = 0; i < nparts; i++) {
		o->col += top_screen_add(o->s, o->row, styles[i], texts[i]);
	}
}

static void cellf(struct out *o, enum top_style style, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
cellf(struct out *o, enum top_style style, const char *fmt, ...)
{
	char text[1][96];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text[0], sizeof(text[0]), fmt, ap);
	va_end(ap);
	out_cell(o, 1, &style, text);
}

/* A label starting a line of cells; the cells after it wrap under its end. */
static void
out_label(struct out *o, const char *label, int width)
{
	out_newline(o);
	char text[1][96];
	snprintf(text[0], sizeof(text[0]), "%-*s", width, label);
	enum top_style st = TOP_STYLE_HEAD;
	o->col += top_screen_add(o->s, o->row, st, text[0]);
	o->indent = o->col;
}

static bool
metric(const struct top_data *d, const char *name, double *v)
{
	return metric_set_get(&d->sample->metrics, name, v) && isfinite(*v);
}

static bool metricf(const struct top_data *d, double *v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool
metricf(const struct top_data *d, double *v, const char *fmt, ...)
{
	char name[METRIC_NAME_MAX + 32];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return n > 0 && n < METRIC_NAME_MAX && metric(d, name, v);
}

/*
 * Adds to the N names in NAMES the middles of the metric names
 * PREFIX<middle>SUFFIX, in the sample's order, without repeats, MAX names
 * at most. Returns how many NAMES holds.
 */
static int
names_between(const struct top_data *d, const char *prefix, const char *suffix, char names[][METRIC_NAME_MAX], int n,
	      int max)
{
	const struct metric_set *set = &d->sample->metrics;
	size_t lp = strlen(prefix), ls = strlen(suffix);
	for (size_t i = 0; i < set->count && n < max; i++) {
		const char *name = set->items[i].name;
		size_t len = strlen(name);
		if (len <= lp + ls || strncmp(name, prefix, lp) != 0 || strcmp(name + len - ls, suffix) != 0) {
			continue;
		}
		char mid[METRIC_NAME_MAX];
		snprintf(mid, sizeof(mid), "%.*s", (int)(len - lp - ls), name + lp);
		if (strchr(mid, '.')) {
			continue; /* another level: temp.x.y_c is no sensor x.y here */
		}
		int k = 0;
		while (k < n && strcmp(names[k], mid) != 0) {
			k++;
		}
		if (k == n) {
			memcpy(names[n++], mid, sizeof(mid));
		}
	}
	return n;
}

/* ---- sections ---- */

static void
section_cpu(struct out *o, const struct top_data *d)
{
	double v;
	out_label(o, "CPU", 5);
	if (metric(d, "cpu.load_pct", &v)) {
		cellf(o, v >= 90 ? TOP_STYLE_WARN : TOP_STYLE_NORMAL, "%3.0f%% avg", v);
	}
	for (int n = 0; n < 256; n++) {
		double load, freq, lo, hi, online = 1;
		bool have_online = metricf(d, &online, "cpu.%d.online", n);
		bool have_freq = metricf(d, &freq, "cpu.%d.freq_mhz", n);
		bool have_load = metricf(d, &load, "cpu.%d.load_pct", n);
		if (!have_online && !have_freq && !have_load) {
			if (n > 0) {
				break;
			}
			continue;
		}
		if (have_online && online == 0) {
			cellf(o, TOP_STYLE_DIM, "%2d off", n);
			continue;
		}
		char texts[3][96];
		enum top_style styles[3] = {TOP_STYLE_NORMAL, TOP_STYLE_NORMAL, TOP_STYLE_DIM};
		snprintf(texts[0], sizeof(texts[0]), "%2d", n);
		snprintf(texts[1], sizeof(texts[1]), " %3.0f%%", have_load ? load : 0);
		if (!have_load) {
			snprintf(texts[1], sizeof(texts[1]), "   -%%");
		}
		styles[1] = have_load && load >= 90 ? TOP_STYLE_WARN : TOP_STYLE_NORMAL;
		if (have_freq) {
			size_t l = strlen(texts[1]);
			snprintf(texts[1] + l, sizeof(texts[1]) - l, " %4.0f", freq);
		}
		texts[2][0] = '\0';
		if (metricf(d, &lo, "cpu.%d.min_freq_mhz", n) && metricf(d, &hi, "cpu.%d.max_freq_mhz", n)) {
			snprintf(texts[2], sizeof(texts[2]), " %.0f-%.0f", lo, hi);
		}
		out_cell(o, 3, styles, texts);
	}
}

static void
section_gpu(struct out *o, const struct top_data *d)
{
	double v, lo, hi;
	out_label(o, "GPU", 5);
	bool any = false;
	if (metric(d, "gpu.load_pct", &v)) {
		cellf(o, v >= 90 ? TOP_STYLE_WARN : TOP_STYLE_NORMAL, "%3.0f%%", v);
		any = true;
	}
	if (metric(d, "gpu.freq_mhz", &v)) {
		cellf(o, TOP_STYLE_NORMAL, "%.0f MHz", v);
		any = true;
	}
	if (metric(d, "gpu.min_freq_mhz", &lo) && metric(d, "gpu.max_freq_mhz", &hi)) {
		cellf(o, TOP_STYLE_DIM, "%.0f-%.0f", lo, hi);
	}
	if (!any) {
		cellf(o, TOP_STYLE_DIM, "-");
	}
	if (metric(d, "emc.load_pct", &v) || metric(d, "emc.freq_mhz", &v)) {
		cellf(o, TOP_STYLE_HEAD, " EMC");
		if (metric(d, "emc.load_pct", &v)) {
			cellf(o, TOP_STYLE_NORMAL, "%3.0f%%", v);
		}
		if (metric(d, "emc.freq_mhz", &v)) {
			cellf(o, TOP_STYLE_NORMAL, "%.0f MHz", v);
		}
	}
}

static void
section_engines(struct out *o, const struct top_data *d)
{
	char names[32][METRIC_NAME_MAX];
	int n = names_between(d, "engine.", ".on", names, 0, 32);
	n = names_between(d, "engine.", ".freq_mhz", names, n, 32);
	if (n == 0) {
		return;
	}
	out_label(o, "ENG", 5);
	for (int i = 0; i < n; i++) {
		double on = 1, load, freq;
		bool have_on = metricf(d, &on, "engine.%s.on", names[i]);
		if (have_on && on == 0) {
			cellf(o, TOP_STYLE_DIM, "%s off", names[i]);
		} else if (metricf(d, &load, "engine.%s.load_pct", names[i]) &&
			   metricf(d, &freq, "engine.%s.freq_mhz", names[i])) {
			cellf(o, TOP_STYLE_NORMAL, "%s %.0f%%@%.0f", names[i], load, freq);
		} else if (metricf(d, &freq, "engine.%s.freq_mhz", names[i])) {
			cellf(o, TOP_STYLE_NORMAL, "%s %.0f MHz", names[i], freq);
		} else {
			cellf(o, TOP_STYLE_NORMAL, "%s on", names[i]);
		}
	}
}

/* A zone's style: critical at or past its trip, warning within 10 C of it. */
static enum top_style
zone_style(const struct top_data *d, const char *zone, double temp)
{
	double headroom, trip;
	if (!metricf(d, &headroom, "headroom.%s_c", zone)) {
		if (!metricf(d, &trip, "trip.%s.passive_c", zone) && !metricf(d, &trip, "trip.%s.hot_c", zone)) {
			return TOP_STYLE_NORMAL;
		}
		headroom = trip - temp;
	}
	return headroom <= 0 ? TOP_STYLE_CRIT : headroom < 10 ? TOP_STYLE_WARN : TOP_STYLE_NORMAL;
}

static void
section_temps(struct out *o, const struct top_data *d)
{
	char zones[64][METRIC_NAME_MAX];
	int n = names_between(d, "temp.", "_c", zones, 0, 64);
	out_label(o, "TEMP", 5);
	for (int i = 0; i < n; i++) {
		double t, eta;
		metricf(d, &t, "temp.%s_c", zones[i]);
		if (metricf(d, &eta, "throttle_eta.%s_s", zones[i])) {
			cellf(o, zone_style(d, zones[i], t), "%s %.1f (%.0fs)", zones[i], t, eta);
		} else {
			cellf(o, zone_style(d, zones[i], t), "%s %.1f", zones[i], t);
		}
	}
	if (n == 0) {
		cellf(o, TOP_STYLE_DIM, "-");
	}
}

static void
section_power(struct out *o, const struct top_data *d)
{
	char rails[32][METRIC_NAME_MAX];
	int n = names_between(d, "power.", ".mw", rails, 0, 32);
	if (n == 0) {
		return;
	}
	out_label(o, "POWER", 6);
	for (int i = 0; i < n; i++) {
		double mw;
		metricf(d, &mw, "power.%s.mw", rails[i]);
		cellf(o, TOP_STYLE_NORMAL, "%s %.2f W", rails[i], mw / 1000);
	}
}

static void
section_fans(struct out *o, const struct top_data *d)
{
	char fans[16][METRIC_NAME_MAX];
	int n = names_between(d, "fan.", ".pwm", fans, 0, 16);
	n = names_between(d, "fan.", ".rpm", fans, n, 16);
	if (n == 0) {
		return;
	}
	out_label(o, "FAN", 5);
	for (int i = 0; i < n; i++) {
		double pwm, rpm, dead = 0;
		bool have_pwm = metricf(d, &pwm, "fan.%s.pwm", fans[i]);
		bool have_rpm = metricf(d, &rpm, "fan.%s.rpm", fans[i]);
		if (metricf(d, &dead, "fan.%s.dead", fans[i]) && dead) {
			cellf(o, TOP_STYLE_CRIT, "fan%s DEAD", fans[i]);
		} else if (have_pwm && have_rpm) {
			cellf(o, TOP_STYLE_NORMAL, "fan%s pwm %.0f %.0f rpm", fans[i], pwm, rpm);
		} else if (have_pwm) {
			cellf(o, TOP_STYLE_NORMAL, "fan%s pwm %.0f", fans[i], pwm);
		} else {
			cellf(o, TOP_STYLE_NORMAL, "%s %.0f rpm", fans[i], rpm);
		}
	}
}

static void
section_memory(struct out *o, const struct top_data *d)
{
	double used, total;
	out_label(o, "MEM", 5);
	if (metric(d, "ram.used_mb", &used) && metric(d, "ram.total_mb", &total) && total > 0) {
		cellf(o, used / total >= 0.9 ? TOP_STYLE_WARN : TOP_STYLE_NORMAL, "RAM %.0f/%.0f MiB (%.0f%%)", used,
		      total, 100 * used / total);
	}
	if (metric(d, "swap.used_mb", &used) && metric(d, "swap.total_mb", &total)) {
		cellf(o, TOP_STYLE_NORMAL, "swap %.0f/%.0f MiB", used, total);
	}
	if (metric(d, "ram.available_mb", &used)) {
		cellf(o, TOP_STYLE_NORMAL, "available %.0f MiB", used);
	}
}

/* A byte count from a number of MiB or of bytes, in the unit that keeps it short. */
static void
size_text(double bytes, char *buf, size_t size)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, size, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
}

/*
 * The box around the SoC (host/, issue 32): what the agent reads on the real
 * root only, so nothing shows under a fixture root or a replay.
 */
static void
section_host(struct out *o, const struct top_data *d)
{
	char names[16][METRIC_NAME_MAX];
	double v, avail, ro;
	int n = names_between(d, "filesystem.", ".used_pct", names, 0, 16);
	if (n > 0) {
		out_label(o, "DISK", 5);
	}
	for (int i = 0; i < n; i++) {
		char free_text[24] = "";
		metricf(d, &v, "filesystem.%s.used_pct", names[i]);
		bool readonly = metricf(d, &ro, "filesystem.%s.readonly", names[i]) && ro >= 1;
		if (metricf(d, &avail, "filesystem.%s.avail_mb", names[i])) {
			size_text(avail * 1048576.0, free_text, sizeof(free_text));
		}
		enum top_style st = readonly || v >= 97 ? TOP_STYLE_CRIT : v >= 90 ? TOP_STYLE_WARN : TOP_STYLE_NORMAL;
		cellf(o, st, "%s %.0f%%%s%s%s", names[i], v, free_text[0] ? " (" : "", free_text,
		      free_text[0] ? " free)" : "");
		if (readonly) {
			cellf(o, TOP_STYLE_CRIT, "%s READ-ONLY", names[i]);
		}
	}
	n = names_between(d, "network.", ".up", names, 0, 16);
	if (n > 0) {
		out_label(o, "NET", 5);
	}
	for (int i = 0; i < n; i++) {
		char rx[24] = "?", tx[24] = "?";
		double up = 0;
		metricf(d, &up, "network.%s.up", names[i]);
		if (metricf(d, &v, "network.%s.receive_bytes_total", names[i])) {
			size_text(v, rx, sizeof(rx));
		}
		if (metricf(d, &v, "network.%s.transmit_bytes_total", names[i])) {
			size_text(v, tx, sizeof(tx));
		}
		if (up >= 1) {
			cellf(o, TOP_STYLE_NORMAL, "%s up rx %s tx %s", names[i], rx, tx);
		} else {
			cellf(o, TOP_STYLE_WARN, "%s DOWN", names[i]);
		}
	}
	if (metric(d, "oom.kills_total", &v) && v > 0) {
		out_label(o, "OOM", 5);
		cellf(o, TOP_STYLE_WARN, "%.0f kill%s since boot", v, v == 1 ? "" : "s");
	}
}

static void
section_alerts(struct out *o, const struct top_data *d, bool full)
{
	out_label(o, "ALERT", 6);
	if (!d->alerts_known) {
		cellf(o, TOP_STYLE_DIM, "none known: no agent (rules run in the agent)");
		return;
	}
	if (d->alert_count == 0) {
		cellf(o, TOP_STYLE_OK, "none");
		return;
	}
	for (int i = 0; i < d->alert_count; i++) {
		const struct top_alert *a = &d->alerts[i];
		enum top_style st = strcmp(a->status, "pending") == 0      ? TOP_STYLE_DIM
				    : strcmp(a->severity, "critical") == 0 ? TOP_STYLE_CRIT
									   : TOP_STYLE_WARN;
		if (!full) {
			cellf(o, st, "%s %s (%s)", a->rule, a->metric,
			      strcmp(a->status, "pending") == 0 ? "pending" : a->severity);
			continue;
		}
		out_newline(o);
		o->indent = 0;
		cellf(o, st, "%-8s %-8s %-20s %-24s", a->status, a->severity, a->rule, a->metric);
		if (isfinite(a->value)) {
			cellf(o, st, "%.15g", a->value);
		}
		cellf(o, TOP_STYLE_DIM, "since %s", a->since);
		if (a->summary[0]) {
			out_newline(o);
			o->indent = 2;
			cellf(o, TOP_STYLE_NORMAL, "%s", a->summary);
		}
	}
	if (d->alerts_omitted) {
		cellf(o, TOP_STYLE_DIM, "and %d more", d->alerts_omitted);
	}
}

static void
view_thermal(struct out *o, const struct top_data *d)
{
	char zones[64][METRIC_NAME_MAX];
	int n = names_between(d, "temp.", "_c", zones, 0, 64);
	out_newline(o);
	o->col += top_screen_add(o->s, o->row, TOP_STYLE_HEAD,
				 "SENSOR          TEMP C  PASSIVE      HOT  HEADROOM   STEADY  TO THROTTLE");
	for (int i = 0; i < n; i++) {
		double t = NAN, passive = NAN, hot = NAN, headroom = NAN, steady = NAN, eta = NAN, err = NAN;
		metricf(d, &t, "temp.%s_c", zones[i]);
		metricf(d, &passive, "trip.%s.passive_c", zones[i]);
		metricf(d, &hot, "trip.%s.hot_c", zones[i]);
		metricf(d, &headroom, "headroom.%s_c", zones[i]);
		metricf(d, &steady, "steady_temp.%s_c", zones[i]);
		metricf(d, &eta, "throttle_eta.%s_s", zones[i]);
		metricf(d, &err, "throttle_eta_error.%s_s", zones[i]);
		char cols[5][16];
		const double vals[4] = {passive, hot, headroom, steady};
		for (int k = 0; k < 4; k++) {
			if (isfinite(vals[k])) {
				snprintf(cols[k], sizeof(cols[k]), "%.1f", vals[k]);
			} else {
				snprintf(cols[k], sizeof(cols[k]), "-");
			}
		}
		if (isfinite(eta) && isfinite(err)) {
			snprintf(cols[4], sizeof(cols[4]), "%.0f s +-%.0f", eta, err);
		} else if (isfinite(eta)) {
			snprintf(cols[4], sizeof(cols[4]), "%.0f s", eta);
		} else {
			snprintf(cols[4], sizeof(cols[4]), "-");
		}
		out_newline(o);
		o->indent = 0;
		cellf(o, zone_style(d, zones[i], t), "%-14.14s %7.1f %8s %8s %9s %8s  %s", zones[i], t, cols[0],
		      cols[1], cols[2], cols[3], cols[4]);
	}
	double v;
	if (metric(d, "thermal.hot_surface", &v)) {
		out_label(o, "HOT SURFACE", 12);
		cellf(o, v ? TOP_STYLE_CRIT : TOP_STYLE_OK, "%s", v ? "yes: a surface is hot to the touch" : "no");
	}
	char cdevs[32][METRIC_NAME_MAX];
	int nc = names_between(d, "cooling.", ".state", cdevs, 0, 32);
	if (nc > 0) {
		out_label(o, "COOLING", 8);
		for (int i = 0; i < nc; i++) {
			double state, max;
			metricf(d, &state, "cooling.%s.state", cdevs[i]);
			if (metricf(d, &max, "cooling.%s.max_state", cdevs[i])) {
				cellf(o, state > 0 ? TOP_STYLE_WARN : TOP_STYLE_NORMAL, "%s %.0f/%.0f", cdevs[i], state,
				      max);
			} else {
				cellf(o, state > 0 ? TOP_STYLE_WARN : TOP_STYLE_NORMAL, "%s %.0f", cdevs[i], state);
			}
		}
	}
	section_fans(o, d);
}

static void
view_power(struct out *o, const struct top_data *d)
{
	char rails[32][METRIC_NAME_MAX];
	int n = names_between(d, "power.", ".mw", rails, 0, 32);
	out_newline(o);
	o->col += top_screen_add(o->s, o->row, TOP_STYLE_HEAD,
				 "RAIL                  NOW W    AVG W    MAX W    ENERGY J       V       A");
	for (int i = 0; i < n; i++) {
		const char *suffix[6] = {"mw", "avg_mw", "max_mw", "", "mv", "ma"};
		char cols[6][24];
		for (int k = 0; k < 6; k++) {
			double v;
			bool have = k == 3 ? metricf(d, &v, "energy.%s.joules_total", rails[i])
					   : metricf(d, &v, "power.%s.%s", rails[i], suffix[k]);
			if (!have) {
				snprintf(cols[k], sizeof(cols[k]), "-");
			} else if (k == 3) {
				snprintf(cols[k], sizeof(cols[k]), "%.0f", v);
			} else {
				snprintf(cols[k], sizeof(cols[k]), "%.2f", v / 1000);
			}
		}
		out_newline(o);
		o->indent = 0;
		cellf(o, TOP_STYLE_NORMAL, "%-18.18s %8s %8s %8s %11s %7s %7s", rails[i], cols[0], cols[1], cols[2],
		      cols[3], cols[4], cols[5]);
	}
	double v;
	out_label(o, "MODE", 6);
	cellf(o, TOP_STYLE_NORMAL, "%s", d->sample->power_mode[0] ? d->sample->power_mode : "unknown");
	if (metric(d, "nvpmodel.id", &v)) {
		cellf(o, TOP_STYLE_DIM, "(id %.0f)", v);
	}
	if (metric(d, "nvpmodel.mismatch", &v) && v) {
		cellf(o, TOP_STYLE_WARN, "clocks do not match the mode");
	}
	out_label(o, "THROTTLE", 9);
	const struct throttle_state *t = &d->sample->throttle;
	cellf(o, t->active ? TOP_STYLE_CRIT : TOP_STYLE_OK, "%s", t->active ? "yes" : "no");
	if (metric(d, "throttle.seconds_total", &v)) {
		cellf(o, TOP_STYLE_DIM, "%.0f s in all", v);
	}
	for (int r = 0; r < THROTTLE_REASON_COUNT; r++) {
		if (t->reason[r]) {
			out_newline(o);
			o->indent = 2;
			cellf(o, TOP_STYLE_CRIT, "%s:", throttle_reason_name((enum throttle_reason)r));
			o->indent = 4;
			cellf(o, TOP_STYLE_NORMAL, "%s", t->why[r]);
		}
	}
	if (t->context[0]) {
		out_newline(o);
		o->indent = 2;
		cellf(o, TOP_STYLE_DIM, "%s", t->context);
	}
}

/* ---- the frame: title, status, the body, the keys ---- */

static void
jetson_clocks_cell(struct out *o, const struct top_data *d)
{
	double v;
	int jc = metric(d, "jetson_clocks.active", &v) ? (v != 0)
						       : sample_jetson_clocks(&d->sample->metrics, NULL, NULL);
	cellf(o, jc == 1 ? TOP_STYLE_WARN : TOP_STYLE_NORMAL, "jetson_clocks %s", jc < 0 ? "?" : jc ? "on" : "off");
}

static void
status_line(struct out *o, const struct top_data *d)
{
	const struct throttle_state *t = &d->sample->throttle;
	double v;
	cellf(o, TOP_STYLE_NORMAL, "mode %s", d->sample->power_mode[0] ? d->sample->power_mode : "unknown");
	jetson_clocks_cell(o, d);
	if (!t->active) {
		cellf(o, TOP_STYLE_OK, "not throttled");
	} else {
		char why[96] = "";
		for (int r = 0; r < THROTTLE_REASON_COUNT; r++) {
			if (t->reason[r]) {
				size_t l = strlen(why);
				snprintf(why + l, sizeof(why) - l, "%s%s", l ? ", " : "",
					 throttle_reason_name((enum throttle_reason)r));
			}
		}
		cellf(o, TOP_STYLE_CRIT, "THROTTLED: %s", why[0] ? why : "active");
	}
	if (metric(d, "thermal.hot_surface", &v) && v) {
		cellf(o, TOP_STYLE_CRIT, "HOT SURFACE");
	}
	int firing = 0;
	for (int i = 0; i < d->alert_count; i++) {
		firing += strcmp(d->alerts[i].status, "firing") == 0;
	}
	if (firing) {
		cellf(o, TOP_STYLE_CRIT, "%d alert%s firing", firing, firing == 1 ? "" : "s");
	}
}

static void
title_line(struct top_screen *s, const struct top_data *d)
{
	char text[512];
	snprintf(text, sizeof(text), " tegrawatch top  %s  [%s]  %s", d->ts, d->source,
		 d->id.model[0] ? d->id.model : "unknown board");
	top_screen_add(s, 0, TOP_STYLE_TITLE, text);
	int len = (int)strlen(s->lines[0].text);
	while (len < s->width) {
		len += top_screen_add(s, 0, TOP_STYLE_TITLE, " ");
	}
}

static void
keys_line(struct top_screen *s, enum top_view v)
{
	int row = s->height - 1;
	for (int k = 0; k < TOP_VIEWS; k++) {
		char text[32];
		snprintf(text, sizeof(text), "%d %s", k + 1, top_view_name((enum top_view)k));
		top_screen_add(s, row, k == (int)v ? TOP_STYLE_TITLE : TOP_STYLE_NORMAL, text);
		top_screen_add(s, row, TOP_STYLE_NORMAL, "  ");
	}
	top_screen_add(s, row, TOP_STYLE_DIM, "tab/arrows: next  q: quit");
}

const char *
top_view_name(enum top_view v)
{
	static const char *const names[TOP_VIEWS] = {"overview", "thermal", "power", "alerts"};
	return (unsigned)v < TOP_VIEWS ? names[v] : "?";
}

/* The overview's sections into BODY: one column, or two from 160 columns on. */
static int
overview(struct top_screen *body, const struct top_data *d)
{
	static void (*const left[])(struct out *, const struct top_data *) = {
		section_cpu, section_gpu, section_engines, section_memory, section_fans, section_host};
	static void (*const right[])(struct out *, const struct top_data *) = {section_temps, section_power};
	bool two = body->width >= 160;
	int half = (body->width - 2) / 2;
	struct top_screen *cols[2] = {top_screen_create(two ? half : body->width, body->height), NULL};
	if (two) {
		cols[1] = top_screen_create(body->width - half - 2, body->height);
	}
	struct out o = {.s = cols[0], .row = -1};
	for (size_t i = 0; i < sizeof(left) / sizeof(left[0]); i++) {
		left[i](&o, d);
	}
	struct out o2 = {.s = two ? cols[1] : cols[0], .row = -1};
	struct out *r = two ? &o2 : &o;
	for (size_t i = 0; i < sizeof(right) / sizeof(right[0]); i++) {
		right[i](r, d);
	}
	section_alerts(r, d, false);
	top_screen_blit(body, 0, 0, cols[0]);
	if (two) {
		top_screen_blit(body, 0, half + 2, cols[1]);
	}
	top_screen_destroy(cols[0]);
	top_screen_destroy(cols[1]);
	return o.overflow + o2.overflow;
}

void
top_render(struct top_screen *s, const struct top_data *d, enum top_view v)
{
	top_screen_clear(s);
	title_line(s, d);
	int row = 1;
	if (s->height >= 4) {
		struct top_screen *line = top_screen_create(s->width, 1);
		struct out o = {.s = line, .row = 0};
		status_line(&o, d);
		top_screen_blit(s, row++, 0, line);
		top_screen_destroy(line);
	}
	if (d->notice[0] && row < s->height - 1) {
		top_screen_add(s, row++, TOP_STYLE_WARN, d->notice);
	}
	if (s->height >= 3) {
		keys_line(s, v);
	}
	int body_rows = s->height - 1 - row;
	if (body_rows <= 0) {
		return;
	}
	struct top_screen *body = top_screen_create(s->width, body_rows);
	int overflow = 0;
	if (!d->have_sample) {
		top_screen_add(body, 0, TOP_STYLE_DIM, "waiting for the first sample...");
	} else if (v == TOP_VIEW_OVERVIEW) {
		overflow = overview(body, d);
	} else {
		struct out o = {.s = body, .row = -1};
		if (v == TOP_VIEW_THERMAL) {
			view_thermal(&o, d);
		} else if (v == TOP_VIEW_POWER) {
			view_power(&o, d);
		} else {
			section_alerts(&o, d, true);
		}
		overflow = o.overflow;
	}
	if (overflow > 0) {
		struct top_line *last = &body->lines[body_rows - 1];
		last->text[0] = '\0';
		last->span_count = 0;
		top_screen_add(body, body_rows - 1, TOP_STYLE_DIM, "... more below: a taller terminal shows it");
	}
	top_screen_blit(s, row, 0, body);
	top_screen_destroy(body);
}
