/* Prometheus text exposition: names, units, labels, escaping, order. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/board_info.h"
#include "core/metrics.h"
#include "core/sample.h"
#include "web/prom_format.h"

#include "helpers.h"

/* the dictionary's entries, kept per layout as the web server keeps them */
static struct metric_dict_cache dict;

static void
check_map(const char *name, const char *family, const char *type_counter_or_gauge, double scale,
	  const char *label0, const char *value0, const char *label1, const char *value1)
{
	struct metric_series ser;
	assert_true(metric_dict_series(name, &ser));
	assert_string_equal(ser.family, family);
	/* a limit is a gauge in Prometheus */
	assert_int_equal(ser.kind == METRIC_KIND_COUNTER, strcmp(type_counter_or_gauge, "counter") == 0);
	assert_true(ser.scale == scale);
	assert_non_null(ser.help);
	size_t labels = (label0 != NULL) + (label1 != NULL);
	assert_int_equal(ser.label_count, labels);
	if (label0) {
		assert_string_equal(ser.label_names[0], label0);
		assert_string_equal(ser.label_values[0], value0);
	}
	if (label1) {
		assert_string_equal(ser.label_names[1], label1);
		assert_string_equal(ser.label_values[1], value1);
	}
}

static void
test_map_names(void **state)
{
	(void)state;
	check_map("temp.cpu_c", "tegrawatch_temperature_celsius", "gauge", 1, "sensor", "cpu", NULL, NULL);
	/* a hwmon temperature: the capture keeps its underscores */
	check_map("temp.nct7802_1_local_c", "tegrawatch_temperature_celsius", "gauge", 1, "sensor",
		  "nct7802_1_local", NULL, NULL);
	check_map("trip.tj.passive_c", "tegrawatch_trip_point_celsius", "gauge", 1, "sensor", "tj", "type", "passive");
	check_map("cooling.pwm_fan.max_state", "tegrawatch_cooling_device_max_state", "gauge", 1, "device", "pwm_fan",
		  NULL, NULL);
	check_map("gpu.freq_mhz", "tegrawatch_gpu_frequency_hertz", "gauge", 1e6, NULL, NULL, NULL, NULL);
	check_map("gpu.gpc.1.freq_mhz", "tegrawatch_gpu_gpc_frequency_hertz", "gauge", 1e6, "gpc", "1", NULL, NULL);
	check_map("cpu.11.freq_mhz", "tegrawatch_cpu_frequency_hertz", "gauge", 1e6, "cpu", "11", NULL, NULL);
	check_map("cpu.0.hw_max_freq_mhz", "tegrawatch_cpu_hw_max_frequency_hertz", "gauge", 1e6, "cpu", "0", NULL,
		  NULL);
	check_map("cpu.3.load_pct", "tegrawatch_cpu_load_ratio", "gauge", 0.01, "cpu", "3", NULL, NULL);
	/* Thor (issue 22): the request next to a measured clock held below it; a rail-gated zone */
	check_map("cpu.13.requested_freq_mhz", "tegrawatch_cpu_requested_frequency_hertz", "gauge", 1e6, "cpu", "13",
		  NULL, NULL);
	check_map("zone.gpu.gated", "tegrawatch_zone_gated", "gauge", 1, "sensor", "gpu", NULL, NULL);
	/* NVML GPUs: their own families with a gpu label, never the Jetson iGPU's unlabelled ones */
	check_map("gpu.0.load_pct", "tegrawatch_nvml_gpu_utilization_ratio", "gauge", 0.01, "gpu", "0", NULL, NULL);
	check_map("gpu.1.mem.load_pct", "tegrawatch_nvml_gpu_memory_utilization_ratio", "gauge", 0.01, "gpu", "1", NULL,
		  NULL);
	check_map("gpu.0.sm.max_freq_mhz", "tegrawatch_nvml_gpu_sm_max_frequency_hertz", "gauge", 1e6, "gpu", "0", NULL,
		  NULL);
	check_map("gpu.0.power_mw", "tegrawatch_nvml_gpu_power_watts", "gauge", 0.001, "gpu", "0", NULL, NULL);
	check_map("gpu.0.energy_joules_total", "tegrawatch_nvml_gpu_energy_joules_total", "counter", 1, "gpu", "0", NULL,
		  NULL);
	check_map("gpu.0.mem.total_mb", "tegrawatch_nvml_gpu_memory_total_bytes", "gauge", 1048576, "gpu", "0", NULL,
		  NULL);
	check_map("gpu.3.event.power_cap", "tegrawatch_nvml_gpu_clocks_event", "gauge", 1, "gpu", "3", "event",
		  "power_cap");
	check_map("gpu.load_pct", "tegrawatch_gpu_load_ratio", "gauge", 0.01, NULL, NULL, NULL, NULL);
	/* a watched name's GPU memory: bytes, beside its resident memory */
	check_map("process.app.gpu_memory_mb", "tegrawatch_process_gpu_memory_bytes", "gauge", 1048576, "name", "app",
		  NULL, NULL);
	check_map("agent.nvml_stale", "tegrawatch_agent_nvml_stale", "gauge", 1, NULL, NULL, NULL, NULL);
	check_map("cpu.load_pct", "tegrawatch_cpu_mean_load_ratio", "gauge", 0.01, NULL, NULL, NULL, NULL);
	check_map("engine.nvdec.on", "tegrawatch_engine_on", "gauge", 1, "engine", "nvdec", NULL, NULL);
	check_map("ram.used_mb", "tegrawatch_memory_used_bytes", "gauge", 1048576, NULL, NULL, NULL, NULL);
	check_map("iram.total_kb", "tegrawatch_iram_total_bytes", "gauge", 1024, NULL, NULL, NULL, NULL);
	check_map("power.vdd_in.mw", "tegrawatch_power_watts", "gauge", 0.001, "rail", "vdd_in", NULL, NULL);
	check_map("power.vdd_in.avg_mw", "tegrawatch_power_average_watts", "gauge", 0.001, "rail", "vdd_in", NULL,
		  NULL);
	/* JetPack 7: the running maximum is its own family, never the current power */
	check_map("power.vdd_in.max_mw", "tegrawatch_power_max_watts", "gauge", 0.001, "rail", "vdd_in", NULL, NULL);
	check_map("temp_max.cpu_c", "tegrawatch_temperature_max_celsius", "gauge", 1, "sensor", "cpu", NULL, NULL);
	check_map("power.vdd_soc.crit_ma", "tegrawatch_rail_current_limit_amperes", "gauge", 0.001, "rail", "vdd_soc",
		  NULL, NULL);
	check_map("oc.3.events", "tegrawatch_oc_events_total", "counter", 1, "event", "3", NULL, NULL);
	check_map("fan.nct7802_1.rpm", "tegrawatch_fan_rpm", "gauge", 1, "fan", "nct7802_1", NULL, NULL);
	check_map("nvpmodel.id", "tegrawatch_power_mode_id", "gauge", 1, NULL, NULL, NULL, NULL);
	check_map("throttle.active", "tegrawatch_throttle_active", "gauge", 1, NULL, NULL, NULL, NULL);
	/* the aggregate and the reasons are two families: sum() of either counts nothing twice */
	check_map("throttle.rail_alarm", "tegrawatch_throttle_reason_active", "gauge", 1, "reason", "rail_alarm", NULL,
		  NULL);
	check_map("throttle.seconds_total", "tegrawatch_throttle_seconds_total", "counter", 1, NULL, NULL, NULL, NULL);
	check_map("throttle.thermal.seconds_total", "tegrawatch_throttle_reason_seconds_total", "counter", 1, "reason",
		  "thermal", NULL, NULL);
	check_map("energy.vdd_in.joules_total", "tegrawatch_energy_joules_total", "counter", 1, "rail", "vdd_in", NULL,
		  NULL);
	check_map("hwmon.nct7802_1.in0_mv", "tegrawatch_hwmon_voltage_volts", "gauge", 0.001, "chip", "nct7802_1",
		  "sensor", "in0");
	check_map("agent.samples_total", "tegrawatch_agent_samples_total", "counter", 1, NULL, NULL, NULL, NULL);
	check_map("agent.alerts_firing", "tegrawatch_agent_alerts_firing", "gauge", 1, NULL, NULL, NULL, NULL);
	check_map("agent.mqtt_connected", "tegrawatch_agent_mqtt_connected", "gauge", 1, NULL, NULL, NULL, NULL);
	/* webhook counters: one family per counter, the action (its metric-safe name) as a label */
	check_map("webhook.ops.sent_total", "tegrawatch_webhook_sent_total", "counter", 1, "action", "ops", NULL, NULL);
	check_map("webhook.ops.failed_total", "tegrawatch_webhook_failed_total", "counter", 1, "action", "ops", NULL,
		  NULL);
	check_map("webhook.chat_bridge.retried_total", "tegrawatch_webhook_retried_total", "counter", 1, "action",
		  "chat_bridge", NULL, NULL);
	check_map("webhook.ops.dropped_total", "tegrawatch_webhook_dropped_total", "counter", 1, "action", "ops", NULL,
		  NULL);
	check_map("webhook.ops.queue_depth", "tegrawatch_webhook_queue_depth", "gauge", 1, "action", "ops", NULL, NULL);
	check_map("webhook.ops.last_success_s", "tegrawatch_webhook_last_success_timestamp_seconds", "gauge", 1,
		  "action", "ops", NULL, NULL);
	/* not a webhook counter: the fallback */
	check_map("webhook.ops.other", "tegrawatch_webhook_ops_other", "gauge", 1, NULL, NULL, NULL, NULL);
	/* no known shape: the name itself, unscaled */
	check_map("foo.bar_baz", "tegrawatch_foo_bar_baz", "gauge", 1, NULL, NULL, NULL, NULL);
	/* a segment with a dot inside a capture does not match: fallback */
	check_map("temp.a.b_c", "tegrawatch_temp_a_b_c", "gauge", 1, NULL, NULL, NULL, NULL);
	struct metric_series ser;
	assert_false(metric_dict_series("", &ser));
}

static const char expected_small[] =
	"# HELP tegrawatch_agent_samples_total Samples produced since the agent started.\n"
	"# TYPE tegrawatch_agent_samples_total counter\n"
	"tegrawatch_agent_samples_total 7\n"
	"# HELP tegrawatch_cpu_load_ratio Load of a CPU core (0 to 1).\n"
	"# TYPE tegrawatch_cpu_load_ratio gauge\n"
	"tegrawatch_cpu_load_ratio{cpu=\"2\"} 0.25\n"
	"tegrawatch_cpu_load_ratio{cpu=\"10\"} 0.5\n"
	"# HELP tegrawatch_memory_used_bytes Memory in use in bytes.\n"
	"# TYPE tegrawatch_memory_used_bytes gauge\n"
	"tegrawatch_memory_used_bytes 1073741824\n"
	"# HELP tegrawatch_power_watts Power drawn through a rail in watts.\n"
	"# TYPE tegrawatch_power_watts gauge\n"
	"tegrawatch_power_watts{rail=\"vdd_in\"} 4.754\n"
	"# HELP tegrawatch_temperature_celsius Temperature of a thermal zone or sensor in degrees Celsius.\n"
	"# TYPE tegrawatch_temperature_celsius gauge\n"
	"tegrawatch_temperature_celsius{sensor=\"cpu\"} 46.5\n"
	"# HELP tegrawatch_throttle_active 1 when the board is throttled, for any reason.\n"
	"# TYPE tegrawatch_throttle_active gauge\n"
	"tegrawatch_throttle_active 1\n"
	"# HELP tegrawatch_throttle_reason_active 1 when this throttle reason applies (several may at once).\n"
	"# TYPE tegrawatch_throttle_reason_active gauge\n"
	"tegrawatch_throttle_reason_active{reason=\"freq_cap\"} 0\n"
	"tegrawatch_throttle_reason_active{reason=\"thermal\"} 1\n"
	"# HELP tegrawatch_board_info Board identity (value 1): model, SoC, module, L4T and JetPack.\n"
	"# TYPE tegrawatch_board_info gauge\n"
	"tegrawatch_board_info{model=\"Orin \\\"Nano\\\" C:\\\\dev\\nkit\",soc=\"tegra234\",module=\"\","
	"l4t=\"36.4.3\",jetpack=\"6.2\"} 1\n"
	"# HELP tegrawatch_build_info The agent's version (value 1).\n"
	"# TYPE tegrawatch_build_info gauge\n"
	"tegrawatch_build_info{version=\"0.1.0\"} 1\n"
	"# HELP tegrawatch_power_mode_info The nvpmodel power mode by name (value 1).\n"
	"# TYPE tegrawatch_power_mode_info gauge\n"
	"tegrawatch_power_mode_info{mode=\"MAXN_SUPER\"} 1\n"
	"# HELP tegrawatch_sample_timestamp_seconds Time of the latest sample in seconds since the epoch (a replay's "
	"recorded time).\n"
	"# TYPE tegrawatch_sample_timestamp_seconds gauge\n"
	"tegrawatch_sample_timestamp_seconds 1741946400.5\n";

static void
test_format_small_sample(void **state)
{
	(void)state;
	struct sample *s = th_sample_new();
	s->seq = 7;
	s->time_ms = 1741946400500;
	snprintf(s->power_mode, sizeof(s->power_mode), "MAXN_SUPER");
	/* insertion order differs from the output order on purpose */
	metric_set_put(&s->metrics, "throttle.thermal", 1);
	metric_set_put(&s->metrics, "temp.cpu_c", 46.5);
	metric_set_put(&s->metrics, "cpu.10.load_pct", 50);
	metric_set_put(&s->metrics, "cpu.2.load_pct", 25);
	metric_set_put(&s->metrics, "power.vdd_in.mw", 4754);
	metric_set_put(&s->metrics, "throttle.freq_cap", 0);
	metric_set_put(&s->metrics, "throttle.active", 1);
	metric_set_put(&s->metrics, "agent.samples_total", 7);
	metric_set_put(&s->metrics, "ram.used_mb", 1024);
	struct board_identity id = {
		.model = "Orin \"Nano\" C:\\dev\nkit",
		.soc = "tegra234",
		.module = "",
		.l4t = "36.4.3",
		.jetpack = "6.2",
	};
	struct metric_info_facts board = {.board = &id, .version = "0.1.0"};
	struct buf t;
	buf_init(&t);
	prom_format_sample(&t, s, &board, &dict);
	assert_string_equal(t.buf, expected_small);
	buf_free(&t);
	free(s);
}

static void
test_empty_sample(void **state)
{
	(void)state;
	/* before the first sample: only the info metrics, NULL strings as "" */
	struct sample *s = th_sample_new();
	struct metric_info_facts board = {.version = "0.1.0"};
	struct buf t;
	buf_init(&t);
	prom_format_sample(&t, s, &board, &dict);
	assert_string_equal(t.buf,
			    "# HELP tegrawatch_board_info Board identity (value 1): model, SoC, module, L4T and JetPack.\n"
			    "# TYPE tegrawatch_board_info gauge\n"
			    "tegrawatch_board_info{model=\"\",soc=\"\",module=\"\",l4t=\"\",jetpack=\"\"} 1\n"
			    "# HELP tegrawatch_build_info The agent's version (value 1).\n"
			    "# TYPE tegrawatch_build_info gauge\n"
			    "tegrawatch_build_info{version=\"0.1.0\"} 1\n");
	buf_free(&t);
	free(s);
}

static void
test_duplicates_and_reserved(void **state)
{
	(void)state;
	struct sample *s = th_sample_new();
	/* both sanitize to tegrawatch_a_b: the first one wins */
	metric_set_put(&s->metrics, "a.b", 1);
	metric_set_put(&s->metrics, "a_b", 2);
	/* would collide with an info family or the alerts family: dropped */
	metric_set_put(&s->metrics, "board_info", 5);
	metric_set_put(&s->metrics, "alerts", 6);
	struct metric_info_facts board = {.version = "x"};
	struct buf t;
	buf_init(&t);
	prom_format_sample(&t, s, &board, &dict);
	const char *head = "# HELP tegrawatch_a_b A tegrawatch metric without a Prometheus mapping: its canonical name "
			   "with dots as underscores, unconverted.\n"
			   "# TYPE tegrawatch_a_b gauge\n"
			   "tegrawatch_a_b 1\n"
			   "# HELP tegrawatch_board_info ";
	assert_memory_equal(t.buf, head, strlen(head));
	assert_null(strstr(t.buf, "tegrawatch_a_b 2"));
	assert_null(strstr(t.buf, "tegrawatch_board_info 5"));
	assert_null(strstr(t.buf, "tegrawatch_alerts"));
	/* one HELP and one TYPE line per family */
	const char *p = t.buf;
	int types = 0;
	while ((p = strstr(p, "# TYPE tegrawatch_board_info ")) != NULL) {
		types++;
		p++;
	}
	assert_int_equal(types, 1);
	buf_free(&t);
	free(s);
}

static void
test_webhook_families(void **state)
{
	(void)state;
	/* two actions, as webhooks_add_metrics() puts them: one family per counter, both actions in it */
	struct sample *s = th_sample_new();
	static const char *const actions[] = {"ops", "chat"};
	for (size_t a = 0; a < 2; a++) {
		char name[METRIC_NAME_MAX];
		static const char *const counters[] = {"sent_total",    "failed_total", "retried_total",
						       "dropped_total", "queue_depth",  "last_success_s"};
		for (size_t c = 0; c < 6; c++) {
			snprintf(name, sizeof(name), "webhook.%s.%s", actions[a], counters[c]);
			metric_set_put(&s->metrics, name, a == 0 ? (double)c : 1763727000 * (c == 5));
		}
	}
	struct metric_info_facts board = {.version = "x"};
	struct buf t;
	buf_init(&t);
	prom_format_sample(&t, s, &board, &dict);
	static const char expected[] =
		"# HELP tegrawatch_webhook_dropped_total Notifications a webhook action dropped unsent: the oldest of a "
		"full queue, or the queue of an action disabled by 410 or removed.\n"
		"# TYPE tegrawatch_webhook_dropped_total counter\n"
		"tegrawatch_webhook_dropped_total{action=\"chat\"} 0\n"
		"tegrawatch_webhook_dropped_total{action=\"ops\"} 3\n"
		"# HELP tegrawatch_webhook_failed_total Notifications a webhook action gave up on: refused (3xx, 4xx, 410) "
		"or retried for 24 hours.\n"
		"# TYPE tegrawatch_webhook_failed_total counter\n"
		"tegrawatch_webhook_failed_total{action=\"chat\"} 0\n"
		"tegrawatch_webhook_failed_total{action=\"ops\"} 1\n"
		"# HELP tegrawatch_webhook_last_success_timestamp_seconds Time a webhook action's receiver last accepted a "
		"notification, in seconds since the epoch (0: never).\n"
		"# TYPE tegrawatch_webhook_last_success_timestamp_seconds gauge\n"
		"tegrawatch_webhook_last_success_timestamp_seconds{action=\"chat\"} 1763727000\n"
		"tegrawatch_webhook_last_success_timestamp_seconds{action=\"ops\"} 5\n"
		"# HELP tegrawatch_webhook_queue_depth Notifications of a webhook action waiting to be delivered.\n"
		"# TYPE tegrawatch_webhook_queue_depth gauge\n"
		"tegrawatch_webhook_queue_depth{action=\"chat\"} 0\n"
		"tegrawatch_webhook_queue_depth{action=\"ops\"} 4\n"
		"# HELP tegrawatch_webhook_retried_total Delivery attempts of a webhook action after the first of each "
		"notification.\n"
		"# TYPE tegrawatch_webhook_retried_total counter\n"
		"tegrawatch_webhook_retried_total{action=\"chat\"} 0\n"
		"tegrawatch_webhook_retried_total{action=\"ops\"} 2\n"
		"# HELP tegrawatch_webhook_sent_total Notifications a webhook action's receiver accepted (2xx).\n"
		"# TYPE tegrawatch_webhook_sent_total counter\n"
		"tegrawatch_webhook_sent_total{action=\"chat\"} 0\n"
		"tegrawatch_webhook_sent_total{action=\"ops\"} 0\n"
		"# HELP tegrawatch_board_info ";
	assert_memory_equal(t.buf, expected, strlen(expected));
	buf_free(&t);
	free(s);
}

static void
test_values_and_escaping(void **state)
{
	(void)state;
	struct buf t;
	buf_init(&t);
	prom_format_value(&t, NAN);
	buf_addc(&t, ' ');
	prom_format_value(&t, INFINITY);
	buf_addc(&t, ' ');
	prom_format_value(&t, -INFINITY);
	buf_addc(&t, ' ');
	prom_format_value(&t, 0.1 + 0.2); /* 15 digits: no 0.30000000000000004 */
	buf_addc(&t, ' ');
	prom_format_value(&t, -0.0);
	buf_addc(&t, ' ');
	prom_format_value(&t, 729.6 * 1e6);
	buf_addc(&t, ' ');
	prom_format_value(&t, 1e21);
	assert_string_equal(t.buf, "NaN +Inf -Inf 0.3 0 729600000 1e+21");
	buf_reset(&t);
	prom_escape_label(&t, "a\"b\\c\nd\te");
	assert_string_equal(t.buf, "a\\\"b\\\\c\\nd\te");
	buf_free(&t);
}

static void
test_alert_series(void **state)
{
	(void)state;
	struct buf t;
	buf_init(&t);
	prom_format_alerts_head(&t);
	prom_format_alert(&t, &(struct prom_alert){"gpu \"hot\"", false, "critical", "temp.gpu_c"});
	prom_format_alert(&t, &(struct prom_alert){"rail", true, "warning", "power.vdd_in.mw"});
	assert_string_equal(t.buf, "# HELP tegrawatch_alerts One series per alert pending or firing now, as Prometheus's "
				   "ALERTS.\n"
				   "# TYPE tegrawatch_alerts gauge\n"
				   "tegrawatch_alerts{alertname=\"gpu \\\"hot\\\"\",alertstate=\"firing\","
				   "severity=\"critical\",metric=\"temp.gpu_c\"} 1\n"
				   "tegrawatch_alerts{alertname=\"rail\",alertstate=\"pending\",severity=\"warning\","
				   "metric=\"power.vdd_in.mw\"} 1\n");
	buf_free(&t);
}

static void
test_process(void **state)
{
	(void)state;
	struct prom_process p = {
		.resident_bytes = 2191360,
		.virtual_bytes = -1, /* unknown: left out */
		.cpu_seconds = 1.25,
		.start_time_seconds = 1763727000.5,
		.open_fds = 9,
		.max_fds = 1024,
	};
	struct buf t;
	buf_init(&t);
	prom_format_process(&t, &p);
	assert_string_equal(t.buf, "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
				   "# TYPE process_cpu_seconds_total counter\n"
				   "process_cpu_seconds_total 1.25\n"
				   "# HELP process_max_fds Maximum number of open file descriptors.\n"
				   "# TYPE process_max_fds gauge\n"
				   "process_max_fds 1024\n"
				   "# HELP process_open_fds Number of open file descriptors.\n"
				   "# TYPE process_open_fds gauge\n"
				   "process_open_fds 9\n"
				   "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
				   "# TYPE process_resident_memory_bytes gauge\n"
				   "process_resident_memory_bytes 2191360\n"
				   "# HELP process_start_time_seconds Start time of the process since the epoch in "
				   "seconds.\n"
				   "# TYPE process_start_time_seconds gauge\n"
				   "process_start_time_seconds 1763727000.5\n");
	buf_free(&t);
}

static void
test_every_catalogue_shape_has_a_family(void **state)
{
	(void)state;
	/* every shape of docs/metrics.md maps to a tegrawatch_* family with a unit-free or base-unit name */
	static const char *const names[] = {
		"ram.used_mb", "ram.total_mb", "swap.used_mb", "swap.total_mb", "swap.cached_mb", "iram.used_kb",
		"iram.total_kb", "cpu.0.load_pct", "cpu.0.freq_mhz", "cpu.0.online", "cpu.load_pct",
		"cpu.0.max_freq_mhz", "cpu.0.min_freq_mhz", "cpu.0.hw_max_freq_mhz", "gpu.load_pct", "gpu.freq_mhz",
		"gpu.gpc.0.freq_mhz", "gpu.max_freq_mhz", "gpu.min_freq_mhz", "gpu.hw_max_freq_mhz", "emc.load_pct",
		"emc.freq_mhz", "engine.vic.load_pct", "engine.vic.freq_mhz", "engine.vic.on", "temp.tj_c",
		"trip.tj.critical_c", "cooling.pwm_fan.state", "power.vdd_in.mw", "power.vdd_in.avg_mw",
		"power.vdd_in.max_mw", "temp_max.cpu_c",
		"power.vdd_in.mv", "power.vdd_in.ma", "power.vdd_in.crit_alarm", "power.vdd_in.max_alarm",
		"power.vdd_in.crit_ma", "oc.1.events", "oc.1.throttle_enabled", "fan.0.pwm", "fan.0.rpm",
		"mts.fg_pct", "mts.bg_pct", "cpu.edp_limit_mhz", "nvpmodel.id", "throttle.active",
		"throttle.thermal", "throttle.overcurrent", "throttle.rail_alarm", "throttle.freq_cap",
		"throttle.seconds_total", "throttle.thermal.seconds_total", "energy.vdd_in.joules_total",
		"hwmon.chip.in1_mv", "webhook.ops.sent_total", "webhook.ops.failed_total", "webhook.ops.retried_total",
		"webhook.ops.dropped_total", "webhook.ops.queue_depth", "webhook.ops.last_success_s",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct metric_series ser;
		assert_true(metric_dict_series(names[i], &ser));
		if (ser.help == NULL || strstr(ser.help, "without a Prometheus mapping") != NULL) {
			fail_msg("%s has no family", names[i]);
		}
		/* no non-base unit left in a family name */
		assert_null(strstr(ser.family, "_mhz"));
		assert_null(strstr(ser.family, "_mw"));
		assert_null(strstr(ser.family, "_pct"));
		assert_null(strstr(ser.family, "_mb"));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_names),
		cmocka_unit_test(test_format_small_sample),
		cmocka_unit_test(test_empty_sample),
		cmocka_unit_test(test_duplicates_and_reserved),
		cmocka_unit_test(test_webhook_families),
		cmocka_unit_test(test_values_and_escaping),
		cmocka_unit_test(test_alert_series),
		cmocka_unit_test(test_process),
		cmocka_unit_test(test_every_catalogue_shape_has_a_family),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
