/* Prometheus text exposition of a sample (see prom_format.h). */
#include "prom_format.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/numfmt.h"
#include "core/xalloc.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

#define MHZ_TO_HZ 1e6
#define PCT_TO_RATIO 0.01
#define MILLI 0.001
#define MIB_TO_BYTES 1048576.0
#define KIB_TO_BYTES 1024.0

/*
 * Canonical shapes. '*' captures a run of characters without a dot, which
 * becomes the value of the next label name. The first rule that matches
 * wins, so specific names come before the patterns that would also take
 * them (throttle.active before throttle.*).
 */
struct family_rule {
	const char *pattern;
	const char *family;
	enum prom_type type;
	double scale;
	const char *labels[PROM_LABELS_MAX];
	const char *help;
};

/* a table laid out by hand */
/* clang-format off */
static const struct family_rule rules[] = {
	{"temp.*_c", "tegrawatch_temperature_celsius", PROM_GAUGE, 1, {"sensor"},
	 "Temperature of a thermal zone or sensor in degrees Celsius."},
	{"temp_max.*_c", "tegrawatch_temperature_max_celsius", PROM_GAUGE, 1, {"sensor"},
	 "Highest temperature of a sensor since tegrastats started (tegrastats' running maximum, JetPack 7), in degrees "
	 "Celsius."},
	{"trip.*.*_c", "tegrawatch_trip_point_celsius", PROM_GAUGE, 1, {"sensor", "type"},
	 "Lowest trip point of each type (passive, hot, critical, active) of a thermal zone in degrees Celsius."},
	{"cooling.*.state", "tegrawatch_cooling_device_state", PROM_GAUGE, 1, {"device"},
	 "Current state of a cooling device."},
	{"cooling.*.max_state", "tegrawatch_cooling_device_max_state", PROM_GAUGE, 1, {"device"},
	 "Highest state of a cooling device."},
	{"cpu.load_pct", "tegrawatch_cpu_mean_load_ratio", PROM_GAUGE, PCT_TO_RATIO, {NULL},
	 "Mean load over the online CPU cores (0 to 1)."},
	{"cpu.edp_limit_mhz", "tegrawatch_cpu_edp_limit_hertz", PROM_GAUGE, MHZ_TO_HZ, {NULL},
	 "CPU clock limit reported by old tegrastats (EDP limit) in hertz."},
	{"cpu.*.load_pct", "tegrawatch_cpu_load_ratio", PROM_GAUGE, PCT_TO_RATIO, {"cpu"},
	 "Load of a CPU core (0 to 1)."},
	{"cpu.*.freq_mhz", "tegrawatch_cpu_frequency_hertz", PROM_GAUGE, MHZ_TO_HZ, {"cpu"},
	 "Current clock of a CPU core in hertz."},
	{"cpu.*.max_freq_mhz", "tegrawatch_cpu_max_frequency_hertz", PROM_GAUGE, MHZ_TO_HZ, {"cpu"},
	 "Current clock ceiling of a CPU core (power mode, thermal caps) in hertz."},
	{"cpu.*.min_freq_mhz", "tegrawatch_cpu_min_frequency_hertz", PROM_GAUGE, MHZ_TO_HZ, {"cpu"},
	 "Current clock floor of a CPU core in hertz."},
	{"cpu.*.hw_max_freq_mhz", "tegrawatch_cpu_hw_max_frequency_hertz", PROM_GAUGE, MHZ_TO_HZ, {"cpu"},
	 "Hardware maximum clock of a CPU core in hertz."},
	{"cpu.*.online", "tegrawatch_cpu_online", PROM_GAUGE, 1, {"cpu"},
	 "1 when the CPU core is online."},
	{"gpu.load_pct", "tegrawatch_gpu_load_ratio", PROM_GAUGE, PCT_TO_RATIO, {NULL},
	 "GPU load (0 to 1)."},
	{"gpu.freq_mhz", "tegrawatch_gpu_frequency_hertz", PROM_GAUGE, MHZ_TO_HZ, {NULL},
	 "Current GPU clock in hertz."},
	{"gpu.max_freq_mhz", "tegrawatch_gpu_max_frequency_hertz", PROM_GAUGE, MHZ_TO_HZ, {NULL},
	 "Current GPU clock ceiling in hertz."},
	{"gpu.min_freq_mhz", "tegrawatch_gpu_min_frequency_hertz", PROM_GAUGE, MHZ_TO_HZ, {NULL},
	 "Current GPU clock floor in hertz."},
	{"gpu.hw_max_freq_mhz", "tegrawatch_gpu_hw_max_frequency_hertz", PROM_GAUGE, MHZ_TO_HZ, {NULL},
	 "Hardware maximum GPU clock in hertz."},
	{"gpu.gpc.*.freq_mhz", "tegrawatch_gpu_gpc_frequency_hertz", PROM_GAUGE, MHZ_TO_HZ, {"gpc"},
	 "Current clock of a GPU GPC in hertz."},
	{"emc.load_pct", "tegrawatch_emc_load_ratio", PROM_GAUGE, PCT_TO_RATIO, {NULL},
	 "Memory controller load (0 to 1)."},
	{"emc.freq_mhz", "tegrawatch_emc_frequency_hertz", PROM_GAUGE, MHZ_TO_HZ, {NULL},
	 "Memory controller clock in hertz."},
	{"engine.*.load_pct", "tegrawatch_engine_load_ratio", PROM_GAUGE, PCT_TO_RATIO, {"engine"},
	 "Load of a hardware engine (0 to 1)."},
	{"engine.*.freq_mhz", "tegrawatch_engine_frequency_hertz", PROM_GAUGE, MHZ_TO_HZ, {"engine"},
	 "Clock of a hardware engine in hertz."},
	{"engine.*.on", "tegrawatch_engine_on", PROM_GAUGE, 1, {"engine"},
	 "1 when the hardware engine is powered on."},
	{"ram.used_mb", "tegrawatch_memory_used_bytes", PROM_GAUGE, MIB_TO_BYTES, {NULL},
	 "Memory in use in bytes."},
	{"ram.total_mb", "tegrawatch_memory_total_bytes", PROM_GAUGE, MIB_TO_BYTES, {NULL},
	 "Memory available to applications in bytes."},
	{"swap.used_mb", "tegrawatch_swap_used_bytes", PROM_GAUGE, MIB_TO_BYTES, {NULL},
	 "Swap in use in bytes."},
	{"swap.total_mb", "tegrawatch_swap_total_bytes", PROM_GAUGE, MIB_TO_BYTES, {NULL},
	 "Swap size in bytes."},
	{"swap.cached_mb", "tegrawatch_swap_cached_bytes", PROM_GAUGE, MIB_TO_BYTES, {NULL},
	 "Swap cached in bytes."},
	{"iram.used_kb", "tegrawatch_iram_used_bytes", PROM_GAUGE, KIB_TO_BYTES, {NULL},
	 "IRAM in use in bytes."},
	{"iram.total_kb", "tegrawatch_iram_total_bytes", PROM_GAUGE, KIB_TO_BYTES, {NULL},
	 "IRAM size in bytes."},
	{"power.*.mw", "tegrawatch_power_watts", PROM_GAUGE, MILLI, {"rail"},
	 "Power drawn through a rail in watts."},
	{"power.*.avg_mw", "tegrawatch_power_average_watts", PROM_GAUGE, MILLI, {"rail"},
	 "Average power through a rail since tegrastats started (tegrastats' running average), in watts."},
	{"power.*.max_mw", "tegrawatch_power_max_watts", PROM_GAUGE, MILLI, {"rail"},
	 "Highest power through a rail since tegrastats started (tegrastats' running maximum, JetPack 7), in watts."},
	{"power.*.mv", "tegrawatch_rail_voltage_volts", PROM_GAUGE, MILLI, {"rail"},
	 "Bus voltage of a rail in volts."},
	{"power.*.ma", "tegrawatch_rail_current_amperes", PROM_GAUGE, MILLI, {"rail"},
	 "Current through a rail in amperes."},
	{"power.*.crit_ma", "tegrawatch_rail_current_limit_amperes", PROM_GAUGE, MILLI, {"rail"},
	 "Over-current limit of a rail in amperes."},
	{"power.*.crit_alarm", "tegrawatch_rail_crit_alarm", PROM_GAUGE, 1, {"rail"},
	 "1 when the rail's current is above its critical limit."},
	{"power.*.max_alarm", "tegrawatch_rail_max_alarm", PROM_GAUGE, 1, {"rail"},
	 "1 when the rail's current is above its warning limit."},
	{"oc.*.events", "tegrawatch_oc_events_total", PROM_COUNTER, 1, {"event"},
	 "Over-current and under-voltage events counted by the SoC since boot."},
	{"oc.*.throttle_enabled", "tegrawatch_oc_throttle_enabled", PROM_GAUGE, 1, {"event"},
	 "1 when the over-current event throttles the clocks."},
	{"fan.*.pwm", "tegrawatch_fan_pwm", PROM_GAUGE, 1, {"fan"},
	 "Fan drive (0 to 255)."},
	{"fan.*.rpm", "tegrawatch_fan_rpm", PROM_GAUGE, 1, {"fan"},
	 "Fan speed in revolutions per minute."},
	{"mts.fg_pct", "tegrawatch_mts_foreground_ratio", PROM_GAUGE, PCT_TO_RATIO, {NULL},
	 "Foreground time of the Denver MTS (0 to 1)."},
	{"mts.bg_pct", "tegrawatch_mts_background_ratio", PROM_GAUGE, PCT_TO_RATIO, {NULL},
	 "Background time of the Denver MTS (0 to 1)."},
	{"nvpmodel.id", "tegrawatch_power_mode_id", PROM_GAUGE, 1, {NULL},
	 "Id of the nvpmodel power mode."},
	{"throttle.active", "tegrawatch_throttle_active", PROM_GAUGE, 1, {NULL},
	 "1 when the board is throttled, for any reason."},
	{"throttle.seconds_total", "tegrawatch_throttle_seconds_total", PROM_COUNTER, 1, {NULL},
	 "Time the board was throttled, for any reason, in seconds."},
	{"throttle.*.seconds_total", "tegrawatch_throttle_reason_seconds_total", PROM_COUNTER, 1, {"reason"},
	 "Time the board was throttled for this reason, in seconds (reasons overlap)."},
	{"throttle.*", "tegrawatch_throttle_reason_active", PROM_GAUGE, 1, {"reason"},
	 "1 when this throttle reason applies (several may at once)."},
	{"energy.*.joules_total", "tegrawatch_energy_joules_total", PROM_COUNTER, 1, {"rail"},
	 "Energy through a power rail since the agent started, in joules (power of every sample times its interval)."},
	{"hwmon.*.*_mv", "tegrawatch_hwmon_voltage_volts", PROM_GAUGE, MILLI, {"chip", "sensor"},
	 "Voltage of a generic hwmon sensor in volts."},
	{"webhook.*.sent_total", "tegrawatch_webhook_sent_total", PROM_COUNTER, 1, {"action"},
	 "Notifications a webhook action's receiver accepted (2xx)."},
	{"webhook.*.failed_total", "tegrawatch_webhook_failed_total", PROM_COUNTER, 1, {"action"},
	 "Notifications a webhook action gave up on: refused (3xx, 4xx, 410) or retried for 24 hours."},
	{"webhook.*.retried_total", "tegrawatch_webhook_retried_total", PROM_COUNTER, 1, {"action"},
	 "Delivery attempts of a webhook action after the first of each notification."},
	{"webhook.*.dropped_total", "tegrawatch_webhook_dropped_total", PROM_COUNTER, 1, {"action"},
	 "Notifications a webhook action dropped unsent: the oldest of a full queue, or the queue of an action "
	 "disabled by 410 or removed."},
	{"webhook.*.queue_depth", "tegrawatch_webhook_queue_depth", PROM_GAUGE, 1, {"action"},
	 "Notifications of a webhook action waiting to be delivered."},
	{"webhook.*.last_success_s", "tegrawatch_webhook_last_success_timestamp_seconds", PROM_GAUGE, 1, {"action"},
	 "Time a webhook action's receiver last accepted a notification, in seconds since the epoch (0: never)."},
};
/* clang-format on */

struct agent_help {
	const char *name;
	const char *help;
};

/* a table laid out by hand */
/* clang-format off */
static const struct agent_help agent_helps[] = {
	{"samples_total", "Samples produced since the agent started."},
	{"late_ticks_total", "Ticks that started late because the loop fell behind its interval."},
	{"clock_steps_total", "Steps of the wall clock seen between samples (durations do not follow them)."},
	{"read_errors_total", "Sensor files that failed to read."},
	{"parse_errors_total", "tegrastats lines that could not be parsed."},
	{"unknown_tokens_total", "tegrastats tokens skipped because unknown."},
	{"config_reloads_total", "Configuration reloads that worked."},
	{"config_reload_failures_total", "Configuration reloads that were refused."},
	{"config_restart_needed", "1 when the last reload changed settings that only a restart applies."},
	{"alerts_firing", "Alerts firing now."},
	{"alerts_fired_total", "Alerts that started firing."},
	{"alerts_resolved_total", "Alerts that resolved."},
	{"http_requests_total", "HTTP requests answered, every status."},
	{"http_request_errors_total", "HTTP requests answered with a 4xx or 5xx status."},
	{"action_runs_total", "Alert actions started."},
	{"action_failures_total", "Alert actions that failed."},
	{"action_timeouts_total", "Alert actions stopped at their timeout."},
	{"action_dropped_total", "Alert actions not started because too many were running."},
	{"http_connections", "HTTP connections open now, event streams included."},
	{"http_event_streams", "HTTP event streams open now."},
	{"http_connections_refused_total", "HTTP connections closed at once because every connection was busy."},
	{"http_connections_evicted_total", "Idle HTTP connections closed to make room for a new one."},
	{"http_header_timeouts_total", "HTTP connections closed because their request head was not complete in time."},
	{"http_streams_refused_total", "HTTP event streams refused because the stream budget was spent."},
	{"http_streams_stalled_total", "HTTP event streams dropped because their client stopped reading."},
	{"http_auth_failures_total", "HTTP requests with wrong credentials."},
	{"http_auth_throttled_total", "HTTP requests refused with 429 after too many failed logins from their address."},
	{"action_leftovers_total", "Processes alert actions left behind, stopped by the agent."},
};
/* clang-format on */

static const char fallback_help[] =
	"A tegrawatch metric without a Prometheus mapping: its canonical name with dots as underscores, unconverted.";
static const char agent_fallback_help[] = "A value the agent reports about itself.";

/* Families written after the sorted ones; a metric must not land on them. */
static const char *const reserved_families[] = {
	"tegrawatch_alerts",
	"tegrawatch_board_info",
	"tegrawatch_build_info",
	"tegrawatch_power_mode_info",
	"tegrawatch_sample_timestamp_seconds",
};

/* Matches NAME against PAT; captures go to OUT->label_values[IDX...]. */
static bool
match(const char *pat, const char *name, struct prom_series *out, size_t idx)
{
	while (*pat) {
		if (*pat == '*') {
			if (idx >= PROM_LABELS_MAX) {
				return false; /* a pattern with too many captures matches nothing */
			}
			size_t max = strcspn(name, ".");
			/* longest first: "temp.a_c_c" gives sensor "a_c" */
			for (size_t n = max; n >= 1; n--) {
				if (match(pat + 1, name + n, out, idx + 1)) {
					memcpy(out->label_values[idx], name, n);
					out->label_values[idx][n] = '\0';
					return true;
				}
			}
			return false;
		}
		if (*pat != *name) {
			return false;
		}
		pat++;
		name++;
	}
	return *name == '\0';
}

static void
sanitize_into(char *dst, size_t size, const char *prefix, const char *name)
{
	size_t n = strlen(prefix);
	memcpy(dst, prefix, n);
	for (const char *p = name; *p && n + 1 < size; p++) {
		unsigned char c = (unsigned char)*p;
		dst[n++] = (char)((islower(c) || isdigit(c) || c == '_') ? c : '_');
	}
	dst[n] = '\0';
}

bool
prom_map_metric(const char *name, struct prom_series *out)
{
	if (!name[0]) {
		return false;
	}
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < N_OF(rules); i++) {
		const struct family_rule *r = &rules[i];
		if (!match(r->pattern, name, out, 0)) {
			continue;
		}
		snprintf(out->family, sizeof(out->family), "%s", r->family);
		out->type = r->type;
		out->help = r->help;
		out->scale = r->scale;
		for (size_t l = 0; l < PROM_LABELS_MAX && r->labels[l]; l++) {
			out->label_names[l] = r->labels[l];
			out->label_count = l + 1;
		}
		return true;
	}
	memset(out, 0, sizeof(*out));
	out->scale = 1;
	if (strncmp(name, "agent.", 6) == 0 && name[6]) {
		const char *rest = name + 6;
		sanitize_into(out->family, sizeof(out->family), "tegrawatch_agent_", rest);
		size_t len = strlen(rest);
		out->type = len > 6 && strcmp(rest + len - 6, "_total") == 0 ? PROM_COUNTER : PROM_GAUGE;
		out->help = agent_fallback_help;
		for (size_t i = 0; i < N_OF(agent_helps); i++) {
			if (strcmp(agent_helps[i].name, rest) == 0) {
				out->help = agent_helps[i].help;
			}
		}
		return true;
	}
	sanitize_into(out->family, sizeof(out->family), "tegrawatch_", name);
	out->type = PROM_GAUGE;
	out->help = fallback_help;
	return true;
}

void
prom_format_value(struct buf *out, double v)
{
	if (isnan(v)) {
		buf_adds(out, "NaN");
	} else if (isinf(v)) {
		buf_adds(out, v > 0 ? "+Inf" : "-Inf");
	} else {
		/* 15 digits: exact for every value a sensor gives, no 0.30000000000000004 */
		char tmp[NUMFMT_MAX];
		size_t n = numfmt_g15(tmp, v == 0 ? 0.0 : v);
		buf_add(out, tmp, n);
	}
}

void
prom_escape_label(struct buf *out, const char *s)
{
	for (const char *p = s; *p; p++) {
		switch (*p) {
		case '\\':
			buf_add(out, "\\\\", 2);
			break;
		case '"':
			buf_add(out, "\\\"", 2);
			break;
		case '\n':
			buf_add(out, "\\n", 2);
			break;
		default:
			buf_addc(out, *p);
		}
	}
}

static void
escape_help(struct buf *out, const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p == '\\') {
			buf_add(out, "\\\\", 2);
		} else if (*p == '\n') {
			buf_add(out, "\\n", 2);
		} else {
			buf_addc(out, *p);
		}
	}
}

static void
family_header(struct buf *out, const char *family, const char *help, enum prom_type type)
{
	buf_addf(out, "# HELP %s ", family);
	escape_help(out, help);
	buf_addf(out, "\n# TYPE %s %s\n", family, type == PROM_COUNTER ? "counter" : "gauge");
}

struct entry {
	struct prom_series ser;
	double value;
	size_t order; /* position in the sample: keeps the sort stable */
};

/* Compares digit runs by number, so cpu="2" sorts before cpu="10". */
static int
natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			while (*a == '0') {
				a++;
			}
			while (*b == '0') {
				b++;
			}
			size_t na = 0, nb = 0;
			while (isdigit((unsigned char)a[na])) {
				na++;
			}
			while (isdigit((unsigned char)b[nb])) {
				nb++;
			}
			if (na != nb) {
				return na < nb ? -1 : 1;
			}
			int c = strncmp(a, b, na);
			if (c != 0) {
				return c;
			}
			a += na;
			b += nb;
			continue;
		}
		if (*a != *b) {
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		}
		a++;
		b++;
	}
	return *a ? 1 : (*b ? -1 : 0);
}

static int
same_series_cmp(const struct entry *x, const struct entry *y)
{
	int c = strcmp(x->ser.family, y->ser.family);
	if (c != 0) {
		return c;
	}
	/* the series without labels first (throttle_active before its reasons) */
	if (x->ser.label_count != y->ser.label_count) {
		return x->ser.label_count < y->ser.label_count ? -1 : 1;
	}
	for (size_t l = 0; l < x->ser.label_count; l++) {
		c = natural_cmp(x->ser.label_values[l], y->ser.label_values[l]);
		if (c != 0) {
			return c;
		}
	}
	return 0;
}

static int
entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = same_series_cmp(x, y);
	if (c != 0) {
		return c;
	}
	return x->order < y->order ? -1 : (x->order > y->order ? 1 : 0);
}

static bool
is_reserved(const char *family)
{
	for (size_t i = 0; i < N_OF(reserved_families); i++) {
		if (strcmp(family, reserved_families[i]) == 0) {
			return true;
		}
	}
	return false;
}

static void
label_pair(struct buf *out, bool first, const char *name, const char *value)
{
	buf_addf(out, "%s%s=\"", first ? "" : ",", name);
	prom_escape_label(out, value);
	buf_addc(out, '"');
}

static const char *
or_empty(const char *s)
{
	return s ? s : "";
}

void
prom_format_sample(struct buf *out, const struct sample *s, const struct prom_board *board)
{
	const struct metric_set *set = &s->metrics;
	struct entry *entries = NULL;
	size_t n = 0;
	if (set->count > 0) {
		entries = xrealloc(NULL, set->count, sizeof(*entries));
	}
	for (size_t i = 0; i < set->count; i++) {
		struct entry *e = &entries[n];
		if (!prom_map_metric(set->items[i].name, &e->ser) || is_reserved(e->ser.family)) {
			continue;
		}
		e->value = set->items[i].value * e->ser.scale;
		e->order = i;
		n++;
	}
	if (n > 1) {
		qsort(entries, n, sizeof(*entries), entry_cmp);
	}
	const char *family = "";
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = &entries[i];
		if (i > 0 && same_series_cmp(e, &entries[i - 1]) == 0) {
			continue; /* the first metric of a series wins */
		}
		if (strcmp(e->ser.family, family) != 0) {
			family_header(out, e->ser.family, e->ser.help, e->ser.type);
			family = e->ser.family;
		}
		buf_adds(out, e->ser.family);
		if (e->ser.label_count > 0) {
			buf_addc(out, '{');
			for (size_t l = 0; l < e->ser.label_count; l++) {
				label_pair(out, l == 0, e->ser.label_names[l], e->ser.label_values[l]);
			}
			buf_addc(out, '}');
		}
		buf_addc(out, ' ');
		prom_format_value(out, e->value);
		buf_addc(out, '\n');
	}
	free(entries);

	family_header(out, "tegrawatch_board_info", "Board identity (value 1): model, SoC, module, L4T and JetPack.",
		      PROM_GAUGE);
	buf_adds(out, "tegrawatch_board_info{");
	label_pair(out, true, "model", or_empty(board->model));
	label_pair(out, false, "soc", or_empty(board->soc));
	label_pair(out, false, "module", or_empty(board->module));
	label_pair(out, false, "l4t", or_empty(board->l4t));
	label_pair(out, false, "jetpack", or_empty(board->jetpack));
	buf_adds(out, "} 1\n");
	family_header(out, "tegrawatch_build_info", "The agent's version (value 1).", PROM_GAUGE);
	buf_adds(out, "tegrawatch_build_info{");
	label_pair(out, true, "version", or_empty(board->version));
	buf_adds(out, "} 1\n");
	if (s->power_mode[0]) {
		family_header(out, "tegrawatch_power_mode_info", "The nvpmodel power mode by name (value 1).",
			      PROM_GAUGE);
		buf_adds(out, "tegrawatch_power_mode_info{");
		label_pair(out, true, "mode", s->power_mode);
		buf_adds(out, "} 1\n");
	}
	if (s->seq > 0) {
		family_header(out, "tegrawatch_sample_timestamp_seconds",
			      "Time of the latest sample in seconds since the epoch (a replay's recorded time).",
			      PROM_GAUGE);
		buf_adds(out, "tegrawatch_sample_timestamp_seconds ");
		prom_format_value(out, (double)s->time_ms / 1000.0);
		buf_addc(out, '\n');
	}
}

static void
one_value(struct buf *out, const char *family, const char *help, enum prom_type type, double v)
{
	if (v < 0 || isnan(v)) {
		return;
	}
	family_header(out, family, help, type);
	buf_adds(out, family);
	buf_addc(out, ' ');
	prom_format_value(out, v);
	buf_addc(out, '\n');
}

void
prom_format_process(struct buf *out, const struct prom_process *p)
{
	one_value(out, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", PROM_COUNTER,
		  p->cpu_seconds);
	one_value(out, "process_max_fds", "Maximum number of open file descriptors.", PROM_GAUGE, p->max_fds);
	one_value(out, "process_open_fds", "Number of open file descriptors.", PROM_GAUGE, p->open_fds);
	one_value(out, "process_resident_memory_bytes", "Resident memory size in bytes.", PROM_GAUGE,
		  p->resident_bytes);
	one_value(out, "process_start_time_seconds", "Start time of the process since the epoch in seconds.",
		  PROM_GAUGE, p->start_time_seconds);
	one_value(out, "process_virtual_memory_bytes", "Virtual memory size in bytes.", PROM_GAUGE, p->virtual_bytes);
}

void
prom_format_alerts_head(struct buf *out)
{
	buf_adds(out, "# HELP tegrawatch_alerts One series per alert pending or firing now, as Prometheus's ALERTS.\n"
		      "# TYPE tegrawatch_alerts gauge\n");
}

void
prom_format_alert(struct buf *out, const struct prom_alert *a)
{
	buf_adds(out, "tegrawatch_alerts{");
	label_pair(out, true, "alertname", or_empty(a->alertname));
	label_pair(out, false, "alertstate", a->pending ? "pending" : "firing");
	label_pair(out, false, "severity", or_empty(a->severity));
	label_pair(out, false, "metric", or_empty(a->metric));
	buf_adds(out, "} 1\n");
}
