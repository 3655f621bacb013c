/*
 * Home Assistant without a broker: the discovery configs against the
 * documented schema, the entities the metric dictionary gives (NVML GPUs,
 * watched processes, the host's disks, links, OOM kills and memory), and
 * the view the entities read (its timing, rounding and edges).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/json.h"
#include "core/metric_attrs.h"
#include "core/sample.h"
#include "mqtt/mqtt_payload.h"
#include "mqtt_checks.h"

/* the dictionary entries of the samples' metrics, kept per layout as the sink keeps them */
static struct metric_dict_cache dict;

/* ---- Home Assistant discovery ---- */

#define MAX_EMITTED 32

struct emitted {
	char topic[MAX_EMITTED][256];
	char *payload[MAX_EMITTED];
	size_t count;
};

static void
capture(const char *topic, const char *payload, size_t len, void *data)
{
	struct emitted *e = data;
	assert_true(e->count < MAX_EMITTED);
	assert_int_equal(strlen(payload), len);
	snprintf(e->topic[e->count], sizeof(e->topic[0]), "%s", topic);
	e->payload[e->count] = strdup(payload);
	assert_non_null(e->payload[e->count]);
	e->count++;
}

/* forgets what was emitted */
static void
emitted_clear(struct emitted *e)
{
	for (size_t i = 0; i < e->count; i++) {
		free(e->payload[i]);
	}
	e->count = 0;
}

static const char *
find_payload(const struct emitted *e, const char *topic)
{
	for (size_t i = 0; i < e->count; i++) {
		if (strcmp(e->topic[i], topic) == 0) {
			return e->payload[i];
		}
	}
	fail_msg("no discovery config on %s", topic);
	return NULL;
}

/*
 * The fields of ../shared/anchors.md 4.2 (Home Assistant's documented
 * MQTT discovery schema, full key names) that every config must carry.
 */
static const char *const schema_keys[] = {
	"\"name\":\"",
	"\"unique_id\":\"orin-01_",
	"\"state_topic\":\"tegrawatch/orin-01/ha\"",
	"\"value_template\":\"{{ ",
	"\"availability_topic\":\"tegrawatch/orin-01/status\"",
	"\"payload_available\":\"online\"",
	"\"payload_not_available\":\"offline\"",
	"\"device\":{\"identifiers\":[\"tegrawatch_orin-01\"],\"name\":\"orin-lab\",\"manufacturer\":\"NVIDIA\","
	"\"model\":\"NVIDIA Jetson AGX Orin\",\"sw_version\":\"L4T 36.4.3 (JetPack 6.2)\",\"hw_version\":"
	"\"p3701-0005\",\"serial_number\":\"1422019012345\"}",
	"\"origin\":{\"name\":\"tegrawatch\",\"sw_version\":\"0.1.0\"}",
};

/* The discovery context of board orin-01 described by INFO. */
static struct mqtt_ha_ctx
orin_ctx(const struct agent_info *info)
{
	return (struct mqtt_ha_ctx){
		.ha_prefix = "homeassistant",
		.device_id = "orin-01",
		.state_topic = "tegrawatch/orin-01/ha",
		.status_topic = "tegrawatch/orin-01/status",
		.expire_after_s = mqtt_ha_expire_after_s(1000, 5000),
		.info = info,
	};
}

static void
test_ha_discovery(void **state)
{
	(void)state;
	struct agent_info info = mqtt_checks_info();
	/* the id is the machine's; the name people read is the host's; the serial in the device block */
	info.board_name = "orin-lab";
	snprintf(info.identity.serial, sizeof(info.identity.serial), "1422019012345");
	struct mqtt_ha_ctx ctx = orin_ctx(&info);
	struct metric_set *set = calloc(1, sizeof(*set));
	assert_non_null(set);
	metric_set_put(set, "temp.cpu_c", 52.9);
	metric_set_put(set, "trip.cpu.passive_c", 95);
	metric_set_put(set, "power.vdd_in.mw", 5200);
	metric_set_put(set, "power.vdd_in.avg_mw", 5100);
	metric_set_put(set, "power.vdd_in.max_mw", 5300);
	metric_set_put(set, "temp_max.cpu_c", 54.1);
	metric_set_put(set, "power.vdd_in.mv", 5000);
	metric_set_put(set, "cpu.0.load_pct", 10);
	metric_set_put(set, "gpu.load_pct", 12);
	metric_set_put(set, "fan.0.rpm", 2100);
	metric_set_put(set, "ram.used_mb", 3000);
	metric_set_put(set, "agent.samples_total", 5);

	struct emitted *e = calloc(1, sizeof(*e));
	assert_non_null(e);
	size_t n = mqtt_ha_discovery(&ctx, set, &dict, capture, e);
	/* temp (not temp_max), power (not avg, not max, not mv), gpu load, fan, ram; power mode; throttling, each reason; alerts firing */
	assert_int_equal(n, 12);
	assert_int_equal(e->count, 12);
	static const char *const topics[] = {
		"homeassistant/sensor/orin-01_temp_cpu_c/config",
		"homeassistant/sensor/orin-01_power_vdd_in_mw/config",
		"homeassistant/sensor/orin-01_gpu_load_pct/config",
		"homeassistant/sensor/orin-01_fan_0_rpm/config",
		"homeassistant/sensor/orin-01_ram_used_mb/config",
		"homeassistant/sensor/orin-01_power_mode/config",
		"homeassistant/binary_sensor/orin-01_throttled/config",
		"homeassistant/binary_sensor/orin-01_throttled_thermal/config",
		"homeassistant/binary_sensor/orin-01_throttled_overcurrent/config",
		"homeassistant/binary_sensor/orin-01_throttled_rail_alarm/config",
		"homeassistant/binary_sensor/orin-01_throttled_freq_cap/config",
		"homeassistant/sensor/orin-01_alerts_firing/config",
	};
	for (size_t i = 0; i < 12; i++) {
		assert_string_equal(e->topic[i], topics[i]);
		for (size_t k = 0; k < sizeof(schema_keys) / sizeof(schema_keys[0]); k++) {
			if (!strstr(e->payload[i], schema_keys[k])) {
				fail_msg("%s lacks %s: %s", e->topic[i], schema_keys[k], e->payload[i]);
			}
		}
		/* object ids and unique ids use [a-zA-Z0-9_-] only */
		const char *uid = strstr(e->payload[i], "\"unique_id\":\"") + 13;
		for (const char *p = uid; *p != '"'; p++) {
			assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-');
		}
	}
	/* the anchor's temperature sensor, field for field */
	assert_string_equal(find_payload(e, topics[0]),
			    "{\"name\":\"CPU temperature\",\"unique_id\":\"orin-01_temp_cpu_c\","
			    "\"state_topic\":\"tegrawatch/orin-01/ha\","
			    "\"value_template\":\"{{ value_json.metrics['temp.cpu_c'] if 'temp.cpu_c' in "
			    "value_json.metrics else none }}\","
			    "\"device_class\":\"temperature\",\"state_class\":\"measurement\","
			    "\"unit_of_measurement\":\"\xc2\xb0" "C\",\"suggested_display_precision\":1,"
			    "\"expire_after\":90,\"availability_topic\":\"tegrawatch/orin-01/status\","
			    "\"payload_available\":\"online\",\"payload_not_available\":\"offline\","
			    "\"device\":{\"identifiers\":[\"tegrawatch_orin-01\"],\"name\":\"orin-lab\","
			    "\"manufacturer\":\"NVIDIA\",\"model\":\"NVIDIA Jetson AGX Orin\","
			    "\"sw_version\":\"L4T 36.4.3 (JetPack 6.2)\",\"hw_version\":\"p3701-0005\","
			    "\"serial_number\":\"1422019012345\"},"
			    "\"origin\":{\"name\":\"tegrawatch\",\"sw_version\":\"0.1.0\"}}");
	/* power rails: device_class power in W (the anchor's advice), from mW */
	const char *power = find_payload(e, topics[1]);
	assert_non_null(strstr(power, "\"name\":\"VDD_IN power\""));
	assert_non_null(strstr(power, "\"value_template\":\"{{ (value_json.metrics['power.vdd_in.mw'] / 1000) | "
				      "round(3) if 'power.vdd_in.mw' in value_json.metrics else none }}\","
				      "\"device_class\":\"power\",\"state_class\":\"measurement\","
				      "\"unit_of_measurement\":\"W\",\"suggested_display_precision\":2"));
	const char *load = find_payload(e, topics[2]);
	assert_non_null(strstr(load, "\"name\":\"GPU load\""));
	assert_null(strstr(load, "device_class"));
	assert_non_null(strstr(load, "\"unit_of_measurement\":\"%\""));
	assert_non_null(strstr(find_payload(e, topics[3]), "\"name\":\"Fan 0 speed\""));
	assert_non_null(strstr(find_payload(e, topics[4]), "\"device_class\":\"data_size\",\"state_class\":"
							   "\"measurement\",\"unit_of_measurement\":\"MiB\""));
	const char *mode = find_payload(e, topics[5]);
	assert_non_null(strstr(mode, "\"value_template\":\"{{ value_json.power_mode or none }}\""));
	assert_null(strstr(mode, "state_class")); /* text, not a measurement */
	/* throttling: a binary_sensor with device_class problem, ON/OFF */
	const char *thr = find_payload(e, topics[6]);
	assert_non_null(strstr(thr, "\"name\":\"Throttled\",\"unique_id\":\"orin-01_throttled\""));
	assert_non_null(strstr(thr, "\"value_template\":\"{{ 'ON' if value_json.throttle.active else 'OFF' }}\","
				    "\"device_class\":\"problem\",\"payload_on\":\"ON\",\"payload_off\":\"OFF\""));
	emitted_clear(e);

	/* an unknown board: the model falls back, no versions, no serial, the id as name; a slow interval stretches expire_after */
	struct agent_info bare = {.version = "0.1.0", .interval_ms = 30000};
	ctx.info = &bare;
	ctx.expire_after_s = mqtt_ha_expire_after_s(30000, 5000);
	metric_set_clear(set);
	assert_int_equal(mqtt_ha_discovery(&ctx, set, &dict, capture, e), 7); /* power mode, throttled, 4 reasons, alerts */
	assert_non_null(strstr(e->payload[0], "\"expire_after\":150,"));
	assert_non_null(strstr(e->payload[0], "\"name\":\"orin-01\",\"manufacturer\":\"NVIDIA\",\"model\":\"Jetson\"},"));
	emitted_clear(e);
	free(e);
	free(set);
}

/* NVML GPUs (issue 22): load, temperature and power of each, nothing else of gpu.N.* (names: test_nvml_outputs.py) */
static void
test_ha_nvml_gpus(void **state)
{
	(void)state;
	static const char *const names[] = {"gpu.0.load_pct", "gpu.0.temp_c", "gpu.0.power_mw", "gpu.12.load_pct",
					    "gpu.0.temp_slowdown_c", "gpu.0.sm.freq_mhz", "gpu.x.load_pct"};
	struct metric_set *set = calloc(1, sizeof(*set));
	assert_non_null(set);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		metric_set_put(set, names[i], 1);
	}
	assert_int_equal(mqtt_ha_sensor_count(set, &dict), 4);
	int d = 99;
	assert_true(mqtt_ha_view_digits("gpu.0.temp_c", &d) && d == 1);
	assert_true(mqtt_ha_view_digits("gpu.0.power_mw", &d) && d == -1 && !mqtt_ha_view_digits("gpu.0.pstate", &d));
	free(set);
}

/* A watched process (processes:): a binary sensor of class running, ON while one runs; nothing else of process.* */
static void
test_ha_process(void **state)
{
	(void)state;
	struct agent_info info = mqtt_checks_info();
	struct mqtt_ha_ctx ctx = orin_ctx(&info);
	struct metric_set *set = calloc(1, sizeof(*set));
	assert_non_null(set);
	metric_set_put(set, "process.inference_server.up", 1);
	metric_set_put(set, "process.inference_server.resident_mb", 812);
	metric_set_put(set, "process.inference_server.restarts_total", 2);
	assert_int_equal(mqtt_ha_sensor_count(set, &dict), 1);
	struct emitted *e = calloc(1, sizeof(*e));
	assert_non_null(e);
	assert_int_equal(mqtt_ha_discovery(&ctx, set, &dict, capture, e), 8); /* it, power mode, throttled (5), alerts */
	const char *p = find_payload(e, "homeassistant/binary_sensor/orin-01_process_inference_server_up/config");
	assert_non_null(p);
	assert_non_null(strstr(p, "\"name\":\"Inference_server running\",\"unique_id\":\"orin-01_process_inference_server_up\""));
	assert_non_null(strstr(p, "\"value_template\":\"{{ ('ON' if value_json.metrics['process.inference_server.up'] >= 1 "
				  "else 'OFF') if 'process.inference_server.up' in value_json.metrics else none }}\","
				  "\"device_class\":\"running\",\"payload_on\":\"ON\",\"payload_off\":\"OFF\""));
	assert_null(strstr(p, "unit_of_measurement"));
	/* the name as the processes: section writes it, when the source said it (core/metric_attrs.h) */
	static const char *const label[] = {"name"};
	const char *written[] = {"Inference-Server"};
	assert_int_equal(metric_attrs_set("name", "inference_server", 1, label, written), 0);
	emitted_clear(e);
	mqtt_ha_discovery(&ctx, set, &dict, capture, e);
	p = find_payload(e, "homeassistant/binary_sensor/orin-01_process_inference_server_up/config");
	assert_non_null(strstr(p, "\"name\":\"Inference-Server running\""));
	metric_attrs_forget("name", NULL);
	int d = 99;
	assert_true(mqtt_ha_view_digits("process.inference_server.up", &d) && d == 0); /* in the view HA reads */
	emitted_clear(e);
	free(e);
	free(set);
}

/* The host (docs/metrics.md#the-host): disk use per file system, link per interface, OOM kills, memory available */
static void
test_ha_host(void **state)
{
	(void)state;
	struct agent_info info = mqtt_checks_info();
	struct mqtt_ha_ctx ctx = orin_ctx(&info);
	struct metric_set *set = calloc(1, sizeof(*set));
	assert_non_null(set);
	/* nothing of the host in the sample: no entity of it */
	metric_set_put(set, "temp.tj_c", 50);
	size_t board_only = mqtt_ha_sensor_count(set, &dict);
	static const char *const host[] = {"filesystem.root.used_pct", "filesystem.var_lib_docker.used_pct",
					   "network.eth0.up", "oom.kills_total", "ram.available_mb"};
	static const char *const none[] = {"filesystem.root.avail_mb", "filesystem.root.full_eta_s",
					   "network.eth0.receive_bytes_total", "pressure.memory.some_avg10_pct",
					   "disk.mmcblk0.busy_ms_total", "emmc.mmcblk0.pre_eol"};
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++) {
		metric_set_put(set, host[i], 1);
	}
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		metric_set_put(set, none[i], 1);
	}
	assert_int_equal(mqtt_ha_sensor_count(set, &dict), board_only + 5);
	struct emitted *e = calloc(1, sizeof(*e));
	assert_non_null(e);
	mqtt_ha_discovery(&ctx, set, &dict, capture, e);
	const char *p = find_payload(e, "homeassistant/sensor/orin-01_filesystem_root_used_pct/config");
	assert_non_null(strstr(p, "\"name\":\"Disk ROOT used\""));
	assert_non_null(strstr(p, "\"state_class\":\"measurement\",\"unit_of_measurement\":\"%\","
				  "\"suggested_display_precision\":1"));
	p = find_payload(e, "homeassistant/sensor/orin-01_filesystem_var_lib_docker_used_pct/config");
	assert_non_null(strstr(p, "\"name\":\"Disk Var_lib_docker used\""));
	/* the link: a binary sensor of class connectivity, ON while up */
	p = find_payload(e, "homeassistant/binary_sensor/orin-01_network_eth0_up/config");
	assert_non_null(strstr(p, "\"name\":\"Link ETH0\",\"unique_id\":\"orin-01_network_eth0_up\""));
	assert_non_null(strstr(p, "\"value_template\":\"{{ ('ON' if value_json.metrics['network.eth0.up'] >= 1 else "
				  "'OFF') if 'network.eth0.up' in value_json.metrics else none }}\","
				  "\"device_class\":\"connectivity\",\"payload_on\":\"ON\",\"payload_off\":\"OFF\""));
	/* OOM kills: a count since boot (a reboot starts it at 0 again), no unit */
	p = find_payload(e, "homeassistant/sensor/orin-01_oom_kills_total/config");
	assert_non_null(strstr(p, "\"name\":\"OOM kills\""));
	assert_non_null(strstr(p, "\"state_class\":\"total_increasing\",\"suggested_display_precision\":0"));
	assert_null(strstr(p, "unit_of_measurement"));
	p = find_payload(e, "homeassistant/sensor/orin-01_ram_available_mb/config");
	assert_non_null(strstr(p, "\"name\":\"Memory available\""));
	assert_non_null(strstr(p, "\"device_class\":\"data_size\",\"state_class\":\"measurement\","
				  "\"unit_of_measurement\":\"MiB\""));
	/* the real mount point and interface name, when the host source said them (core/metric_attrs.h) */
	static const char *const mount_labels[] = {"mountpoint", "fstype", "device"};
	const char *mount_values[] = {"/", "ext4", "/dev/mmcblk0p1"};
	assert_int_equal(metric_attrs_set("mountpoint", "root", 3, mount_labels, mount_values), 0);
	static const char *const dev_label[] = {"device"};
	const char *dev_value[] = {"eth0"};
	assert_int_equal(metric_attrs_set("device", "eth0", 1, dev_label, dev_value), 0);
	emitted_clear(e);
	mqtt_ha_discovery(&ctx, set, &dict, capture, e);
	assert_non_null(strstr(find_payload(e, "homeassistant/sensor/orin-01_filesystem_root_used_pct/config"),
			       "\"name\":\"Disk / used\""));
	assert_non_null(strstr(find_payload(e, "homeassistant/binary_sensor/orin-01_network_eth0_up/config"),
			       "\"name\":\"Link eth0\""));
	metric_attrs_forget("mountpoint", NULL);
	metric_attrs_forget("device", NULL);
	/* what the view carries: their values, rounded to what the entities show */
	int d = 99;
	assert_true(mqtt_ha_view_digits("filesystem.root.used_pct", &d) && d == 1);
	assert_true(mqtt_ha_view_digits("network.eth0.up", &d) && d == 0);
	assert_true(mqtt_ha_view_digits("oom.kills_total", &d) && d == 0);
	assert_true(mqtt_ha_view_digits("ram.available_mb", &d) && d == 0);
	assert_false(mqtt_ha_view_digits("filesystem.root.avail_mb", &d));
	emitted_clear(e);
	free(e);
	free(set);
}

/* ---- the Home Assistant view ---- */

static void
test_ha_view_timing(void **state)
{
	(void)state;
	/* refreshed every 30 s, or every ha_interval when longer; entities expire after three refreshes missed */
	assert_int_equal(mqtt_ha_refresh_ms(5000), 30000);
	assert_int_equal(mqtt_ha_refresh_ms(120000), 120000);
	assert_int_equal(mqtt_ha_expire_after_s(1000, 5000), 90);
	assert_int_equal(mqtt_ha_expire_after_s(1000, 120000), 360);
	assert_int_equal(mqtt_ha_expire_after_s(60000, 5000), 300); /* five slow samples */
}

static void
test_ha_view_rounding(void **state)
{
	(void)state;
	int d = 99;
	assert_true(mqtt_ha_view_digits("temp.tj_c", &d));
	assert_int_equal(d, 1);
	assert_true(mqtt_ha_view_digits("power.vdd_in.mw", &d));
	assert_int_equal(d, -1); /* W with 2 decimals: tens of mW */
	assert_true(mqtt_ha_view_digits("gpu.load_pct", &d));
	assert_int_equal(d, 0);
	assert_true(mqtt_ha_view_digits("agent.alerts_firing", &d));
	assert_int_equal(d, 0);
	assert_false(mqtt_ha_view_digits("power.vdd_in.avg_mw", &d));
	assert_false(mqtt_ha_view_digits("agent.samples_total", &d));
	assert_true(mqtt_ha_round(46.375, 1) == 46.4);
	assert_true(mqtt_ha_round(46.25, 1) == 46.3); /* half away from zero */
	assert_true(mqtt_ha_round(-3.25, 1) == -3.3);
	assert_true(mqtt_ha_round(4812, -1) == 4810);
	assert_true(mqtt_ha_round(4815, -1) == 4820);
	assert_true(mqtt_ha_round(63.6, 0) == 64);
	assert_true(isnan(mqtt_ha_round(NAN, 1)));
}

static void
test_ha_view_json(void **state)
{
	(void)state;
	struct sample *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	sample_clear(s);
	s->time_ms = 1741946400000;
	snprintf(s->power_mode, sizeof(s->power_mode), "MAXN_SUPER");
	metric_set_put(&s->metrics, "temp.tj_c", 46.375);
	metric_set_put(&s->metrics, "power.vdd_in.mw", 4812);
	metric_set_put(&s->metrics, "power.vdd_in.avg_mw", 4700);
	metric_set_put(&s->metrics, "gpu.load_pct", 12);
	metric_set_put(&s->metrics, "agent.alerts_firing", 1);
	metric_set_put(&s->metrics, "agent.samples_total", 7);
	s->throttle.active = true;
	s->throttle.reason[THROTTLE_THERMAL] = true;
	snprintf(s->throttle.why[THROTTLE_THERMAL], sizeof(s->throttle.why[0]), "tj at 95.2 C >= passive trip 95.0 C");
	snprintf(s->throttle.context, sizeof(s->throttle.context), "power mode MAXN_SUPER");
	struct json j;
	json_init(&j);
	/* only what the entities read, rounded as they show it; no context, causes, seq or other metrics */
	size_t body = mqtt_ha_view_json(&j, s, &dict);
	assert_string_equal(j.out.buf, "{\"ts\":\"2025-03-14T10:00:00Z\",\"time_ms\":1741946400000,\"power_mode\":"
				   "\"MAXN_SUPER\",\"metrics\":{\"temp.tj_c\":46.4,\"power.vdd_in.mw\":4810,"
				   "\"gpu.load_pct\":12,\"agent.alerts_firing\":1},\"throttle\":{\"active\":true,"
				   "\"reasons\":{\"thermal\":\"tj at 95.2 C >= passive trip 95.0 C\"}}}");
	/* what the publisher compares: the view without its time */
	assert_true(strncmp(j.out.buf + body, ",\"power_mode\":", 14) == 0);
	assert_null(strstr(j.out.buf + body, "time_ms"));
	/* the edges: a reason's sentence moving is not one, a reason ending is */
	struct mqtt_ha_edges before, now;
	mqtt_ha_view_edges(s, &dict, &before);
	snprintf(s->throttle.why[THROTTLE_THERMAL], sizeof(s->throttle.why[0]), "tj at 96.0 C >= passive trip 95.0 C");
	metric_set_put(&s->metrics, "temp.tj_c", 50);
	mqtt_ha_view_edges(s, &dict, &now);
	assert_true(mqtt_ha_edges_equal(&now, &before));
	s->throttle.reason[THROTTLE_THERMAL] = false;
	mqtt_ha_view_edges(s, &dict, &now);
	assert_false(mqtt_ha_edges_equal(&now, &before));
	s->throttle.reason[THROTTLE_THERMAL] = true;
	metric_set_put(&s->metrics, "agent.alerts_firing", 2);
	mqtt_ha_view_edges(s, &dict, &now);
	assert_false(mqtt_ha_edges_equal(&now, &before));
	metric_set_put(&s->metrics, "agent.alerts_firing", 1);
	snprintf(s->power_mode, sizeof(s->power_mode), "15W");
	mqtt_ha_view_edges(s, &dict, &now);
	assert_false(mqtt_ha_edges_equal(&now, &before));
	/* a watched process stopping is one (Home Assistant's "running" sensor at once), its memory moving is not */
	snprintf(s->power_mode, sizeof(s->power_mode), "MAXN_SUPER");
	metric_set_put(&s->metrics, "process.app.up", 1);
	metric_set_put(&s->metrics, "process.app.resident_mb", 100);
	mqtt_ha_view_edges(s, &dict, &before);
	metric_set_put(&s->metrics, "process.app.resident_mb", 120);
	mqtt_ha_view_edges(s, &dict, &now);
	assert_true(mqtt_ha_edges_equal(&now, &before));
	metric_set_put(&s->metrics, "process.app.up", 0);
	mqtt_ha_view_edges(s, &dict, &now);
	assert_false(mqtt_ha_edges_equal(&now, &before));
	/* a link going down is one too (its connectivity sensor at once), its counters moving are not */
	metric_set_put(&s->metrics, "network.eth0.up", 1);
	metric_set_put(&s->metrics, "network.eth0.receive_bytes_total", 1000);
	mqtt_ha_view_edges(s, &dict, &before);
	metric_set_put(&s->metrics, "network.eth0.receive_bytes_total", 5000);
	mqtt_ha_view_edges(s, &dict, &now);
	assert_true(mqtt_ha_edges_equal(&now, &before));
	metric_set_put(&s->metrics, "network.eth0.up", 0);
	mqtt_ha_view_edges(s, &dict, &now);
	assert_false(mqtt_ha_edges_equal(&now, &before));
	/* no power mode: null, as in the state topic */
	s->power_mode[0] = '\0';
	json_reset(&j);
	body = mqtt_ha_view_json(&j, s, &dict);
	assert_true(strncmp(j.out.buf + body, ",\"power_mode\":null,", 19) == 0);
	json_free(&j);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ha_discovery),	cmocka_unit_test(test_ha_nvml_gpus),
		cmocka_unit_test(test_ha_process),	cmocka_unit_test(test_ha_host),
		cmocka_unit_test(test_ha_view_timing), cmocka_unit_test(test_ha_view_rounding),
		cmocka_unit_test(test_ha_view_json),
	};
	return cmocka_run_group_tests(tests, mqtt_checks_utc, NULL);
}
