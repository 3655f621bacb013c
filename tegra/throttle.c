/*
 * Throttle detection from a sample's metrics (see docs/throttling.md).
 * Pure: the detector only remembers what it needs between samples (the
 * previous OC counters and the GPU clock reached under load).
 */
#include "throttle.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/text.h"
#include "core/xalloc.h"
#include "sources.h"

#define OC_MAX 16
/* GPU load at which a governor should run the clock at its ceiling */
#define HIGH_LOAD_PCT 90.0
/* tegrastats-only rule: a drop of more than 20 % under load while hot */
#define GPU_DROP_RATIO 0.8
#define GPU_LOADED_PCT 70.0
#define HOT_C 75.0
/* a clock counts as capped when below 90 % of its ceiling */
#define CAP_RATIO 0.9
/* a measured clock below 75 % of its request (or pinned floor) is held down: a latched throttle */
#define LATCHED_RATIO 0.75

struct throttle_detector {
	bool oc_seen[OC_MAX];
	double oc_prev[OC_MAX];
	double oc_first[OC_MAX]; /* the count at the first reading: events from before the agent watched */
	double gpu_peak_mhz;     /* highest GPU clock seen under load */
	double mode_id;          /* nvpmodel id the peak belongs to */
	bool have_mode;
};

struct throttle_detector *
throttle_detector_create(void)
{
	return xcalloc(1, sizeof(struct throttle_detector));
}

void
throttle_detector_destroy(struct throttle_detector *det)
{
	free(det);
}

/* Appends "; "-separated text to a fixed buffer, truncating quietly. */
static void appendf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strnlen(buf, size);
	if (len + 3 >= size) {
		return;
	}
	if (len > 0) {
		memcpy(buf + len, "; ", 3);
		len += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

static void
set_reason(struct throttle_state *t, enum throttle_reason r)
{
	t->reason[r] = true;
	t->active = true;
}

/* The same cause as data: KIND of SOURCE (LEN bytes) at VALUE against LIMIT. */
static void
add_cause(struct throttle_state *t, enum throttle_reason r, const char *kind, const char *source, int len, double value,
	  double limit)
{
	if (t->cause_count == THROTTLE_CAUSES_MAX) {
		return;
	}
	struct throttle_cause *c = &t->causes[t->cause_count++];
	c->reason = r;
	c->kind = kind;
	size_t n = len < 0 ? strlen(source) : (size_t)len;
	if (n >= sizeof(c->source)) {
		n = sizeof(c->source) - 1; /* a long name is cut; the sentence keeps it whole */
	}
	memcpy(c->source, source, n);
	c->source[n] = '\0';
	c->value = value;
	c->limit = limit;
}

/* The hot-surface alert: a touch warning, never a throttle (thermal.hot_surface). */
struct hot_surface {
	bool seen; /* a hot-surface trip or alert device exists */
	bool on;
	char why[96];
};

/*
 * Zones at or above their passive (or hot) trip point: the board reports
 * those only for trips that lower a clock. Zones at or above a trip bound
 * to the hot-surface alert go to HS.
 */
static void
check_trips(const struct metric_set *ms, struct throttle_state *t, struct hot_surface *hs)
{
	for (size_t i = 0; i < ms->count; i++) {
		const struct metric *m = &ms->items[i];
		/* the first letter first: this runs over every metric of every sample */
		if (m->name[0] != 't' || !text_has_prefix(m->name, "trip.")) {
			continue;
		}
		size_t len = m->len;
		const char *kind;
		size_t kind_len;
		if (TEXT_ENDS_LIT(m->name, len, ".passive_c")) {
			kind = "passive";
			kind_len = strlen(".passive_c");
		} else if (TEXT_ENDS_LIT(m->name, len, ".hot_c")) {
			kind = "hot";
			kind_len = strlen(".hot_c");
		} else if (TEXT_ENDS_LIT(m->name, len, ".hot_surface_c")) {
			kind = NULL;
			kind_len = strlen(".hot_surface_c");
			hs->seen = true;
		} else {
			continue;
		}
		const char *sensor = m->name + 5;
		size_t sensor_len = len - 5 - kind_len;
		char sensor_name[METRIC_NAME_MAX], temp_name[METRIC_NAME_MAX];
		memcpy(sensor_name, sensor, sensor_len);
		sensor_name[sensor_len] = '\0';
		double temp;
		if (!metric_name_join(temp_name, "temp.", sensor_name, "_c") || !metric_set_get(ms, temp_name, &temp) ||
		    temp < m->value) {
			continue;
		}
		if (!kind) {
			/* no live temperature: the context changes only when the state does (MQTT's throttle topic) */
			if (!hs->on) {
				snprintf(hs->why, sizeof(hs->why), "%.*s over its %.1f C hot-surface trip",
					 (int)sensor_len, sensor, m->value);
			}
			hs->on = true;
			continue;
		}
		set_reason(t, THROTTLE_THERMAL);
		add_cause(t, THROTTLE_THERMAL, "trip", sensor, (int)sensor_len, temp, m->value);
		appendf(t->why[THROTTLE_THERMAL], THROTTLE_WHY_MAX, "%.*s at %.1f C >= %s trip %.1f C", (int)sensor_len,
			sensor, temp, kind, m->value);
	}
}

/* True when TEXT (LEN bytes) holds WORD, '-' and '_' alike. */
static bool
holds_word(const char *text, size_t len, const char *word)
{
	size_t wlen = strlen(word);
	for (size_t i = 0; i + wlen <= len; i++) {
		size_t k = 0;
		while (k < wlen && (text[i + k] == word[k] || (word[k] == '_' && text[i + k] == '-'))) {
			k++;
		}
		if (k == wlen) {
			return true;
		}
	}
	return false;
}

enum cooling_kind
cooling_kind_of(const char *type, size_t len)
{
	/*
	 * Orin binds its 70 C trips to hot-surface-alert alone: NVIDIA's power
	 * mode indicator shows it as "Caution - Hot surface", not as throttled.
	 * Fans ("pwm-fan", "pwmfan") cool. Every other type (cpufreq-cpuN,
	 * devfreq-*, *-throttle-alert, Xavier's *-balanced, names not seen
	 * yet) is taken to lower a clock, as before bindings were read.
	 */
	if (holds_word(type, len, "hot_surface")) {
		return COOLING_WARNING;
	}
	if (holds_word(type, len, "fan") || holds_word(type, len, "pwm")) {
		return COOLING_FAN;
	}
	return COOLING_CLOCK;
}

/*
 * Cooling devices that lower a clock, with a non-zero state: the
 * *-balanced devices seen on Xavier, Orin's *-throttle-alert, cpufreq and
 * devfreq. Fans and the hot-surface alert slow nothing.
 */
static void
check_cooling(const struct metric_set *ms, struct throttle_state *t, struct hot_surface *hs)
{
	for (size_t i = 0; i < ms->count; i++) {
		const struct metric *m = &ms->items[i];
		size_t len = m->len;
		if (m->name[0] != 'c' || !text_has_prefix(m->name, "cooling.") ||
		    !TEXT_ENDS_LIT(m->name, len, ".state")) {
			continue;
		}
		const char *type = m->name + 8;
		size_t type_len = len - 8 - strlen(".state");
		enum cooling_kind kind = cooling_kind_of(type, type_len);
		if (kind == COOLING_WARNING) {
			hs->seen = true;
			if (m->value > 0 && !hs->on) {
				snprintf(hs->why, sizeof(hs->why), "cooling device %.*s at state %.0f", (int)type_len,
					 type, m->value);
				hs->on = true;
			}
		}
		if (m->value <= 0 || kind != COOLING_CLOCK) {
			continue;
		}
		char typebuf[METRIC_NAME_MAX];
		memcpy(typebuf, type, type_len);
		typebuf[type_len] = '\0';
		char max_name[METRIC_NAME_MAX];
		double max_state = 0;
		set_reason(t, THROTTLE_THERMAL);
		bool have_max = metric_name_join(max_name, "cooling.", typebuf, ".max_state") &&
				metric_set_get(ms, max_name, &max_state);
		add_cause(t, THROTTLE_THERMAL, "cooling_device", typebuf, -1, m->value, have_max ? max_state : NAN);
		if (have_max) {
			appendf(t->why[THROTTLE_THERMAL], THROTTLE_WHY_MAX, "cooling device %s at state %.0f of %.0f",
				typebuf, m->value, max_state);
		} else {
			appendf(t->why[THROTTLE_THERMAL], THROTTLE_WHY_MAX, "cooling device %s at state %.0f", typebuf,
				m->value);
		}
	}
}

/* Over-current / under-voltage: a soctherm_oc event counter went up. */
static void
check_oc(struct throttle_detector *det, const struct metric_set *ms, struct throttle_state *t)
{
	for (int n = 0; n < OC_MAX; n++) {
		char name[METRIC_NAME_MAX];
		double v;
		metric_name_num(name, "oc.", n, ".events");
		if (!metric_set_get(ms, name, &v)) {
			continue;
		}
		if (!det->oc_seen[n]) {
			det->oc_first[n] = v;
		}
		if (det->oc_seen[n] && v > det->oc_prev[n]) {
			set_reason(t, THROTTLE_OVERCURRENT);
			char counter[16];
			snprintf(counter, sizeof(counter), "oc%d", n);
			add_cause(t, THROTTLE_OVERCURRENT, "oc_event", counter, -1, v, det->oc_prev[n]);
			appendf(t->why[THROTTLE_OVERCURRENT], THROTTLE_WHY_MAX, "oc%d event count %.0f -> %.0f (+%.0f)",
				n, det->oc_prev[n], v, v - det->oc_prev[n]);
		}
		det->oc_seen[n] = true;
		det->oc_prev[n] = v;
	}
}

static void
check_rail_alarms(const struct metric_set *ms, struct throttle_state *t)
{
	for (size_t i = 0; i < ms->count; i++) {
		const struct metric *m = &ms->items[i];
		size_t len = m->len;
		const char *what;
		size_t suffix_len;
		if (m->value < 1 || !text_has_prefix(m->name, "power.")) {
			continue;
		}
		if (TEXT_ENDS_LIT(m->name, len, ".crit_alarm")) {
			what = "critical";
			suffix_len = strlen(".crit_alarm");
		} else if (TEXT_ENDS_LIT(m->name, len, ".max_alarm")) {
			what = "warning";
			suffix_len = strlen(".max_alarm");
		} else {
			continue;
		}
		const char *rail = m->name + 6;
		int rail_len = (int)(len - 6 - suffix_len);
		char name[METRIC_NAME_MAX * 2];
		double ma, crit;
		set_reason(t, THROTTLE_RAIL_ALARM);
		snprintf(name, sizeof(name), "power.%.*s.ma", rail_len, rail);
		bool have_ma = metric_set_get(ms, name, &ma);
		snprintf(name, sizeof(name), "power.%.*s.crit_ma", rail_len, rail);
		bool have_crit = metric_set_get(ms, name, &crit);
		add_cause(t, THROTTLE_RAIL_ALARM, "rail_alarm", rail, rail_len, have_ma ? ma : NAN,
			  have_crit ? crit : NAN);
		if (have_ma && have_crit) {
			appendf(t->why[THROTTLE_RAIL_ALARM], THROTTLE_WHY_MAX,
				"%.*s current %.0f mA raised the %s alarm (limit %.0f mA)", rail_len, rail, ma, what,
				crit);
		} else {
			appendf(t->why[THROTTLE_RAIL_ALARM], THROTTLE_WHY_MAX, "%.*s raised the %s current alarm",
				rail_len, rail, what);
		}
	}
}

/* gpu.N.A and gpu.N.B into *VA and *VB, NAN when absent. */
static void
gpu_values(const struct metric_set *ms, unsigned n, const char *a, const char *b, double *va, double *vb)
{
	char name[METRIC_NAME_MAX];
	*va = *vb = NAN;
	snprintf(name, sizeof(name), "gpu.%u.%s", n, a);
	metric_set_get(ms, name, va);
	snprintf(name, sizeof(name), "gpu.%u.%s", n, b);
	metric_set_get(ms, name, vb);
}

/*
 * An NVML GPU's clocks event reasons (nvml/: gpu.N.event.NAME, 0/1): a
 * thermal slowdown is thermal, the power brake (a signal from the board's
 * power supply) overcurrent, the software power cap a cap of the clock
 * (freq_cap). HW slowdown, idle and application clocks are context
 * (describe_context). With CONTEXT, appends those to T->context instead.
 */
static void
check_gpu_events(const struct metric_set *ms, struct throttle_state *t, bool context)
{
	if (!metric_set_find(ms, "agent.nvml_gpus")) {
		return; /* no NVML source: no event to look for */
	}
	for (size_t i = 0; i < ms->count; i++) {
		const struct metric *m = &ms->items[i];
		unsigned n;
		int at = 0;
		char event[24];
		if (m->value < 1 || m->name[0] != 'g' || !text_has_prefix(m->name, "gpu.") ||
		    !strstr(m->name, ".event.") || sscanf(m->name, "gpu.%u.event.%23[a-z_]%n", &n, event, &at) != 2 ||
		    m->name[at] != '\0') {
			continue;
		}
		char gpu[16];
		double a, b;
		snprintf(gpu, sizeof(gpu), "gpu%u", n);
		if (context) {
			if (strcmp(event, "hw_slowdown") == 0 || strcmp(event, "idle") == 0 ||
			    strcmp(event, "applications") == 0) {
				appendf(t->context, THROTTLE_CONTEXT_MAX, "%s %s", gpu,
					strcmp(event, "hw_slowdown") == 0 ? "in hardware slowdown (NVML)"
					: strcmp(event, "idle") == 0      ? "idle (NVML)"
									  : "at application clocks (NVML)");
			}
			continue;
		}
		if (strcmp(event, "thermal") == 0) {
			gpu_values(ms, n, "temp_c", "temp_slowdown_c", &a, &b);
			set_reason(t, THROTTLE_THERMAL);
			add_cause(t, THROTTLE_THERMAL, "gpu_event", gpu, -1, a, b);
			if (isnan(a)) {
				appendf(t->why[THROTTLE_THERMAL], THROTTLE_WHY_MAX, "%s in thermal slowdown (NVML)",
					gpu);
			} else {
				appendf(t->why[THROTTLE_THERMAL], THROTTLE_WHY_MAX,
					"%s in thermal slowdown (NVML) at %.0f C", gpu, a);
			}
		} else if (strcmp(event, "power_brake") == 0) {
			set_reason(t, THROTTLE_OVERCURRENT);
			add_cause(t, THROTTLE_OVERCURRENT, "gpu_event", gpu, -1, NAN, NAN);
			appendf(t->why[THROTTLE_OVERCURRENT], THROTTLE_WHY_MAX,
				"%s slowed down by the power brake (NVML: the power supply asked)", gpu);
		} else if (strcmp(event, "power_cap") == 0) {
			gpu_values(ms, n, "power_mw", "power_limit_mw", &a, &b);
			set_reason(t, THROTTLE_FREQ_CAP);
			add_cause(t, THROTTLE_FREQ_CAP, "gpu_event", gpu, -1, a, b);
			appendf(t->why[THROTTLE_FREQ_CAP], THROTTLE_WHY_MAX,
				"%s held at its power limit (NVML: software power cap)", gpu);
			if (!isnan(a) && !isnan(b)) {
				size_t len = strlen(t->why[THROTTLE_FREQ_CAP]);
				snprintf(t->why[THROTTLE_FREQ_CAP] + len, THROTTLE_WHY_MAX - len, ", %.0f of %.0f W",
					 a / 1000.0, b / 1000.0);
			}
		}
	}
}

/* The hottest temperature of the sample, and its sensor. */
static bool
hottest(const struct metric_set *ms, double *temp, const char **name)
{
	bool found = false;
	for (size_t i = 0; i < ms->count; i++) {
		const struct metric *m = &ms->items[i];
		size_t len = strlen(m->name);
		if (text_has_prefix(m->name, "temp.") && TEXT_ENDS_LIT(m->name, len, "_c") &&
		    (!found || m->value > *temp)) {
			*temp = m->value;
			*name = m->name;
			found = true;
		}
	}
	return found;
}

/*
 * GPU clock well below what it reached under load. With a known ceiling
 * (sysfs) the ceiling is the reference; with tegrastats alone it is the
 * highest clock seen under load in this power mode.
 */
static void
check_gpu_clock(struct throttle_detector *det, const struct metric_set *ms, struct throttle_state *t,
		bool *unexplained_gpu)
{
	double load, freq, mode;
	*unexplained_gpu = false;
	if (metric_set_get(ms, "nvpmodel.id", &mode)) {
		if (det->have_mode && mode != det->mode_id) {
			det->gpu_peak_mhz = 0; /* a new mode has other ceilings */
		}
		det->mode_id = mode;
		det->have_mode = true;
	}
	if (!metric_set_get(ms, "gpu.load_pct", &load) || !metric_set_get(ms, "gpu.freq_mhz", &freq)) {
		return;
	}
	if (load < GPU_LOADED_PCT) {
		return;
	}
	if (freq > det->gpu_peak_mhz) {
		det->gpu_peak_mhz = freq;
	}
	double ceiling;
	bool known_ceiling = metric_set_get(ms, "gpu.max_freq_mhz", &ceiling);
	double ref = known_ceiling ? ceiling : det->gpu_peak_mhz;
	if (ref <= 0 || freq >= ref * GPU_DROP_RATIO) {
		goto capped_check;
	}
	double temp = 0;
	const char *sensor = NULL;
	if (hottest(ms, &temp, &sensor) && temp > HOT_C) {
		set_reason(t, THROTTLE_THERMAL);
		add_cause(t, THROTTLE_THERMAL, "clock_drop", "gpu", -1, freq, ref);
		appendf(t->why[THROTTLE_THERMAL], THROTTLE_WHY_MAX,
			"gpu at %.0f MHz, %.0f%% below %.0f MHz under %.0f%% load while %.*s is %.1f C", freq,
			100.0 * (1.0 - freq / ref), ref, load, (int)strlen(sensor) - 7, sensor + 5, temp);
		return;
	}
capped_check:
	if (load >= HIGH_LOAD_PCT && ref > 0 && freq < ref * CAP_RATIO) {
		*unexplained_gpu = true;
	}
}

size_t
throttle_detector_history(const struct throttle_detector *det, char *buf, size_t size)
{
	size_t n = 0;
	if (size) {
		buf[0] = '\0';
	}
	for (int k = 0; k < OC_MAX; k++) {
		if (det->oc_seen[k] && det->oc_first[k] > 0) {
			appendf(buf, size, "oc%d had counted %.0f event%s before the first reading", k,
				det->oc_first[k], det->oc_first[k] == 1 ? "" : "s");
			n++;
		}
	}
	return n;
}

/*
 * A measured CPU clock far below what was asked of it (the request, or a
 * floor pinned by jetson_clocks), whatever the load: the hardware holds it
 * down. The board emits cpu.N.requested_freq_mhz only while the measured
 * clock (cpuinfo_cur_freq, root only) is below the request; Thor after an
 * OC event at boot ran every core at 649 MHz for a request of 2601 MHz
 * (forum 361188), with no counter moving and no load.
 */
static void
check_latched(const struct throttle_detector *det, const struct metric_set *ms, struct throttle_state *t)
{
	static const char suffix[] = ".requested_freq_mhz";
	int first = -1, more = 0;
	double first_freq = 0, first_ref = 0;
	/* one pass by name shape: on most samples no such name exists, and nothing is formatted */
	for (size_t i = 0; i < ms->count; i++) {
		const struct metric *m = &ms->items[i];
		char name[METRIC_NAME_MAX];
		double freq, floor, req = m->value;
		char *end;
		if (m->name[0] != 'c' || m->len < sizeof(suffix) + 4 ||
		    memcmp(m->name + m->len - (sizeof(suffix) - 1), suffix, sizeof(suffix) - 1) != 0 ||
		    !text_has_prefix(m->name, "cpu.")) {
			continue;
		}
		int n = (int)strtol(m->name + 4, &end, 10);
		if (end != m->name + m->len - (sizeof(suffix) - 1)) {
			continue;
		}
		metric_name_num(name, "cpu.", n, ".freq_mhz");
		if (!metric_set_get(ms, name, &freq)) {
			continue;
		}
		metric_name_num(name, "cpu.", n, ".min_freq_mhz");
		double ref = metric_set_get(ms, name, &floor) && floor > req ? floor : req;
		if (ref <= 0 || freq >= ref * LATCHED_RATIO) {
			continue;
		}
		char clock[16];
		snprintf(clock, sizeof(clock), "cpu%d", n);
		set_reason(t, THROTTLE_FREQ_CAP);
		add_cause(t, THROTTLE_FREQ_CAP, "clock_latched", clock, -1, freq, ref);
		if (first < 0) {
			first = n;
			first_freq = freq;
			first_ref = ref;
		} else {
			more++;
		}
	}
	if (first < 0) {
		return;
	}
	char history[THROTTLE_WHY_MAX];
	char others[32] = "";
	if (more > 0) {
		snprintf(others, sizeof(others), " (and %d more core%s)", more, more == 1 ? "" : "s");
	}
	throttle_detector_history(det, history, sizeof(history));
	appendf(t->why[THROTTLE_FREQ_CAP], THROTTLE_WHY_MAX,
		"cpu%d%s measured at %.0f MHz, asked for %.0f MHz: held down by the hardware whatever the load%s%s%s",
		first, others, first_freq, first_ref, history[0] ? " (" : "", history, history[0] ? ")" : "");
}

/* Clocks below their ceiling under high load, reported only when nothing else explains it. */
static void
check_unexplained(const struct metric_set *ms, struct throttle_state *t, bool gpu_capped)
{
	double load, freq, ceiling;
	if (gpu_capped && metric_set_get(ms, "gpu.load_pct", &load) && metric_set_get(ms, "gpu.freq_mhz", &freq)) {
		bool known = metric_set_get(ms, "gpu.max_freq_mhz", &ceiling);
		set_reason(t, THROTTLE_FREQ_CAP);
		add_cause(t, THROTTLE_FREQ_CAP, "clock_cap", "gpu", -1, freq, known ? ceiling : NAN);
		appendf(t->why[THROTTLE_FREQ_CAP], THROTTLE_WHY_MAX, "gpu at %.0f MHz under %.0f%% load%s", freq, load,
			known ? " below its ceiling" : " below the clock it reached earlier");
	}
	for (int n = 0; n < 256; n++) {
		char name[METRIC_NAME_MAX];
		metric_name_num(name, "cpu.", n, ".freq_mhz");
		if (!metric_set_get(ms, name, &freq)) {
			if (n > 0) {
				metric_name_num(name, "cpu.", n, ".online");
				if (!metric_set_find(ms, name)) {
					break;
				}
			}
			continue;
		}
		metric_name_num(name, "cpu.", n, ".load_pct");
		if (!metric_set_get(ms, name, &load) || load < HIGH_LOAD_PCT) {
			continue;
		}
		metric_name_num(name, "cpu.", n, ".max_freq_mhz");
		if (!metric_set_get(ms, name, &ceiling) || freq >= ceiling * CAP_RATIO) {
			continue;
		}
		set_reason(t, THROTTLE_FREQ_CAP);
		char clock[16];
		snprintf(clock, sizeof(clock), "cpu%d", n);
		add_cause(t, THROTTLE_FREQ_CAP, "clock_cap", clock, -1, freq, ceiling);
		appendf(t->why[THROTTLE_FREQ_CAP], THROTTLE_WHY_MAX,
			"cpu%d at %.0f MHz under %.0f%% load, ceiling %.0f MHz", n, freq, load, ceiling);
	}
}

static bool
has_cause(const struct throttle_state *t, const char *kind)
{
	for (int i = 0; i < t->cause_count; i++) {
		if (strcmp(t->causes[i].kind, kind) == 0) {
			return true;
		}
	}
	return false;
}

/* Power-mode ceilings and jetson_clocks: context, never throttling. */
static void
describe_context(const struct sample *s, struct throttle_state *t)
{
	const struct metric_set *ms = &s->metrics;
	double a, b;
	if (s->power_mode[0]) {
		appendf(t->context, THROTTLE_CONTEXT_MAX, "power mode %s", s->power_mode);
	}
	if (metric_set_get(ms, "gpu.max_freq_mhz", &a) && metric_set_get(ms, "gpu.hw_max_freq_mhz", &b) && a < b) {
		appendf(t->context, THROTTLE_CONTEXT_MAX, "gpu ceiling %.0f of %.0f MHz", a, b);
	}
	if (metric_set_get(ms, "cpu.0.max_freq_mhz", &a) && metric_set_get(ms, "cpu.0.hw_max_freq_mhz", &b) && a < b) {
		appendf(t->context, THROTTLE_CONTEXT_MAX, "cpu ceiling %.0f of %.0f MHz", a, b);
	}
	int cores = 0, offline = 0;
	int pinned = sample_jetson_clocks(ms, &cores, &offline);
	if (offline > 0) {
		appendf(t->context, THROTTLE_CONTEXT_MAX, "%d of %d cores offline", offline, cores);
	}
	check_gpu_events(ms, t, true);
	if (pinned == 1) {
		/* asked for, not granted, when the measured clocks are held below it */
		appendf(t->context, THROTTLE_CONTEXT_MAX, "jetson_clocks active (clocks pinned at their ceiling%s)",
			t->reason[THROTTLE_FREQ_CAP] && has_cause(t, "clock_latched") ? ", but held below it" : "");
	}
}

void
throttle_detector_update(struct throttle_detector *det, struct sample *s)
{
	struct throttle_state *t = &s->throttle;
	struct hot_surface hs = {0};
	bool gpu_capped;
	memset(t, 0, sizeof(*t));

	check_trips(&s->metrics, t, &hs);
	check_cooling(&s->metrics, t, &hs);
	check_oc(det, &s->metrics, t);
	check_rail_alarms(&s->metrics, t);
	check_gpu_events(&s->metrics, t, false);
	check_gpu_clock(det, &s->metrics, t, &gpu_capped);
	check_latched(det, &s->metrics, t);
	if (!t->active) {
		check_unexplained(&s->metrics, t, gpu_capped);
	}
	describe_context(s, t);
	if (hs.on) {
		appendf(t->context, THROTTLE_CONTEXT_MAX, "hot surface, do not touch (a warning, not a throttle): %s",
			hs.why);
	}
	if (hs.seen) {
		metric_set_put(&s->metrics, "thermal.hot_surface", hs.on ? 1 : 0);
	}

	metric_set_put(&s->metrics, "throttle.active", t->active ? 1 : 0);
	for (int r = 0; r < THROTTLE_REASON_COUNT; r++) {
		char name[METRIC_NAME_MAX];
		snprintf(name, sizeof(name), "throttle.%s", throttle_reason_name((enum throttle_reason)r));
		metric_set_put(&s->metrics, name, t->reason[r] ? 1 : 0);
	}
}

/* ---- the detector as the pipeline's first stage ---- */

struct throttle_stage {
	struct stage base;
	struct throttle_detector det;
	bool history_said;
};

static int
throttle_stage_process(struct stage *st, struct sample *s)
{
	struct throttle_stage *ts = (struct throttle_stage *)st;
	throttle_detector_update(&ts->det, s);
	if (!ts->history_said) {
		/* once: counters never move again after a latched event, so no later sample would say it */
		char history[THROTTLE_WHY_MAX];
		if (throttle_detector_history(&ts->det, history, sizeof(history)) > 0) {
			log_warn("%s: over-current or under-voltage since boot, before the agent watched (clocks may "
				 "stay throttled: see throttle.freq_cap)",
				 history);
		}
		ts->history_said = true;
	}
	return 0;
}

static void
throttle_stage_destroy(struct stage *st)
{
	free(st);
}

static const struct stage_ops throttle_stage_ops = {
	.name = "throttle",
	.process = throttle_stage_process,
	.destroy = throttle_stage_destroy,
};

struct stage *
throttle_stage_create(bool live)
{
	struct throttle_stage *ts = xcalloc(1, sizeof(*ts));
	ts->history_said = !live;
	ts->base.ops = &throttle_stage_ops;
	return &ts->base;
}
