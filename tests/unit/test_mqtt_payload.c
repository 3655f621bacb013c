/*
 * MQTT payloads without a broker: topics, the state/alert/active/throttle/
 * info documents, Home Assistant discovery against the documented schema,
 * the back-off distribution, the sequence file and the wire size.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/json.h"
#include "mqtt/mqtt_payload.h"
#include "thresholds/rules.h"
#include "core/sample.h"

/* the dictionary entries of the samples' metrics, kept per layout as the sink keeps them */
static struct metric_dict_cache dict;

#define BOOT "6a6f29ab-1778-4cd2-af13-1dad09b5532e"

static int
setup_utc(void **state)
{
	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	return 0;
}

/* ---- topics, ids ---- */

static void
test_topics(void **state)
{
	(void)state;
	char buf[MQTT_TOPIC_MAX];
	assert_int_equal(mqtt_topic(buf, sizeof(buf), "tegrawatch", "orin-01", "state"), 0);
	assert_string_equal(buf, "tegrawatch/orin-01/state");
	assert_int_equal(mqtt_topic(buf, sizeof(buf), "site/a", "orin-01", "alerts/active"), 0);
	assert_string_equal(buf, "site/a/orin-01/alerts/active");
	assert_int_equal(mqtt_topic(buf, sizeof(buf), "tegrawatch", "orin-01", NULL), 0);
	assert_string_equal(buf, "tegrawatch/orin-01");
	char small[16];
	assert_int_equal(mqtt_topic(small, sizeof(small), "tegrawatch", "orin-01", "state"), -ENAMETOOLONG);
	assert_string_equal(small, "");
}

static void
test_sanitize_id(void **state)
{
	(void)state;
	char out[MQTT_ID_MAX];
	assert_false(mqtt_sanitize_id("orin-01_B", out, sizeof(out)));
	assert_string_equal(out, "orin-01_B");
	assert_true(mqtt_sanitize_id("orin.lab 1/+#", out, sizeof(out)));
	assert_string_equal(out, "orin_lab_1___");
	assert_true(mqtt_sanitize_id("", out, sizeof(out)));
	assert_string_equal(out, "jetson");
	char tiny[5];
	assert_true(mqtt_sanitize_id("abcdefgh", tiny, sizeof(tiny)));
	assert_string_equal(tiny, "abcd");
}

static void
test_boot_id(void **state)
{
	(void)state;
	char id[MQTT_BOOT_ID_MAX];
	assert_int_equal(mqtt_parse_boot_id(BOOT "\n", id, sizeof(id)), 0);
	assert_string_equal(id, BOOT);
	assert_int_equal(mqtt_parse_boot_id(BOOT, id, sizeof(id)), 0);
	assert_int_equal(mqtt_parse_boot_id("6a6f29ab-1778-4cd2-af13-1dad09b5532", id, sizeof(id)), -EINVAL);
	assert_int_equal(mqtt_parse_boot_id("6a6f29ab_1778-4cd2-af13-1dad09b5532e", id, sizeof(id)), -EINVAL);
	assert_int_equal(mqtt_parse_boot_id("6a6f29ab-1778-4cd2-af13-1dad09b5532ex", id, sizeof(id)), -EINVAL);
	assert_int_equal(mqtt_parse_boot_id("zzzzzzzz-1778-4cd2-af13-1dad09b5532e", id, sizeof(id)), -EINVAL);
}

static void
test_seq_file(void **state)
{
	(void)state;
	char text[96];
	size_t n = mqtt_seq_format(text, sizeof(text), BOOT, 4242);
	assert_string_equal(text, BOOT " 4242\n");
	assert_int_equal(n, 42);
	uint64_t seq = 0;
	assert_int_equal(mqtt_seq_parse(text, BOOT, &seq), 0);
	assert_int_equal(seq, 4242);
	/* another boot: the count starts again */
	seq = 7;
	assert_int_equal(mqtt_seq_parse(text, "00000000-0000-0000-0000-000000000000", &seq), -ESTALE);
	assert_int_equal(seq, 7);
	assert_int_equal(mqtt_seq_parse("", BOOT, &seq), -EINVAL);
	assert_int_equal(mqtt_seq_parse(BOOT " \n", BOOT, &seq), -EINVAL);
	assert_int_equal(mqtt_seq_parse(BOOT " 12x\n", BOOT, &seq), -EINVAL);
	assert_int_equal(mqtt_seq_parse(BOOT " 99999999999999999999\n", BOOT, &seq), -EINVAL);
	assert_int_equal(mqtt_seq_parse(BOOT "  5\n", BOOT, &seq), -EINVAL);
	assert_int_equal(seq, 7);
	assert_int_equal(mqtt_seq_base_from_uptime(12345678), 12345000);
	assert_int_equal(mqtt_seq_base_from_uptime(999), 0);
	assert_int_equal(mqtt_seq_base_from_uptime(-5), 0);
}

/* ---- documents ---- */

static struct sample *
make_sample(void)
{
	struct sample *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	sample_clear(s);
	s->seq = 3;
	s->time_ms = 1741946400250; /* 2025-03-14T10:00:00Z */
	snprintf(s->power_mode, sizeof(s->power_mode), "MAXN");
	metric_set_put(&s->metrics, "temp.cpu_c", 52.9);
	metric_set_put(&s->metrics, "gpu.load_pct", 12);
	s->throttle.active = true;
	s->throttle.reason[THROTTLE_THERMAL] = true;
	snprintf(s->throttle.why[THROTTLE_THERMAL], THROTTLE_WHY_MAX, "cpu at 96 C");
	return s;
}

static void
test_state_json(void **state)
{
	(void)state;
	struct sample *s = make_sample();
	struct json j, limits;
	json_init(&j);
	json_init(&limits);
	mqtt_state_json(&j, &limits, s, BOOT, 17, false, &dict);
	assert_string_equal(j.out.buf, "{\"ts\":\"2025-03-14T10:00:00Z\",\"time_ms\":1741946400250,\"boot_id\":\"" BOOT
				   "\",\"seq\":17,\"power_mode\":\"MAXN\",\"metrics\":{\"temp.cpu_c\":52.9,"
				   "\"gpu.load_pct\":12},\"throttle\":{\"active\":true,\"reasons\":{\"thermal\":"
				   "\"cpu at 96 C\"},\"context\":\"\",\"causes\":[]}}");
	assert_string_equal(limits.out.buf, "{}");
	/* no power mode: null */
	s->power_mode[0] = '\0';
	json_reset(&j);
	mqtt_state_json(&j, &limits, s, BOOT, 18, false, &dict);
	assert_non_null(strstr(j.out.buf, "\"seq\":18,\"power_mode\":null,"));
	json_free(&limits);
	json_reset(&j);
	mqtt_throttle_json(&j, &s->throttle);
	assert_string_equal(j.out.buf, "{\"active\":true,\"reasons\":{\"thermal\":\"cpu at 96 C\"},\"context\":\"\",\"causes\":[]}");
	json_free(&j);
	free(s);
}

static void
test_limit_names(void **state)
{
	(void)state;
	static const char *const limits[] = {
		"trip.cpu.passive_c",	    "trip.tj.critical_c",    "cpu.0.max_freq_mhz",	   "cpu.11.min_freq_mhz",
		"cpu.3.hw_max_freq_mhz", "gpu.max_freq_mhz",	     "gpu.min_freq_mhz",	   "gpu.hw_max_freq_mhz",
		"cpu.7.online",		    "ram.total_mb",	     "swap.total_mb",		   "iram.total_kb",
		"cooling.pwm_fan.max_state", "power.vdd_in.crit_ma", "oc.2.throttle_enabled",    "nvpmodel.id",
		"agent.memory_budget_bytes", "agent.memory_max_bytes", "agent.memory_budget_web_bytes",
		/* an NVML GPU's fixed figures (issue 22) */
		"gpu.0.temp_slowdown_c", "gpu.0.temp_shutdown_c", "gpu.0.sm.max_freq_mhz", "gpu.1.mem.max_freq_mhz",
		"gpu.0.mem.total_mb", "gpu.0.power_limit_mw",
	};
	static const char *const live[] = {
		"temp.cpu_c",	      "cpu.0.freq_mhz",	      "gpu.freq_mhz",	      "cpu.load_pct",
		"ram.used_mb",	      "swap.cached_mb",	      "cooling.pwm_fan.state", "power.vdd_in.mw",
		"power.vdd_in.ma",    "power.vdd_in.crit_alarm", "power.vdd_in.max_alarm", "power.vdd_in.max_mw",
		"oc.1.events",	      "fan.0.pwm",	      "throttle.active",      "agent.samples_total",
		"agent.mqtt_connected", "cpu.edp_limit_mhz",    "temp_max.cpu_c",	      "trip",
		"nvpmodel.idx",	      "agent.memory",	      "online",		      "gpu.online",
		"power.crit_ma.mw",   "oc.throttle_enabled.x", "energy.vdd_in.joules_total", "",
		"gpu.0.temp_c", "gpu.0.power_mw", "gpu.0.mem.used_mb", "gpu.0.sm.freq_mhz", "gpu.0.load_pct",
		"temp.gpu_c", "trip_slowdown_c", "power.vdd_gpu.mw", "zone.gpu.gated", "cpu.0.requested_freq_mhz",
	};
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		if (!mqtt_is_limit(limits[i])) {
			fail_msg("%s should be a limit", limits[i]);
		}
	}
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++) {
		if (mqtt_is_limit(live[i])) {
			fail_msg("%s should stay in the state", live[i]);
		}
	}
}

/* The state and the limits split the metrics between them, each in set order; state_full keeps them all. */
static void
test_state_and_limits(void **state)
{
	(void)state;
	struct sample *s = make_sample();
	metric_set_put(&s->metrics, "gpu.max_freq_mhz", 1300.5);
	metric_set_put(&s->metrics, "gpu.freq_mhz", 306);
	metric_set_put(&s->metrics, "trip.tj.critical_c", 105);
	metric_set_put(&s->metrics, "agent.samples_total", 9);
	struct json j, limits, msg;
	json_init(&j);
	json_init(&limits);
	json_init(&msg);
	mqtt_state_json(&j, &limits, s, BOOT, 21, false, &dict);
	assert_non_null(strstr(j.out.buf, "\"metrics\":{\"temp.cpu_c\":52.9,\"gpu.load_pct\":12,\"gpu.freq_mhz\":306,"
					  "\"agent.samples_total\":9},\"throttle\":"));
	assert_string_equal(limits.out.buf, "{\"gpu.max_freq_mhz\":1300.5,\"trip.tj.critical_c\":105}");
	mqtt_limits_json(&msg, s, BOOT, 21, &limits);
	assert_string_equal(msg.out.buf, "{\"ts\":\"2025-03-14T10:00:00Z\",\"time_ms\":1741946400250,\"boot_id\":\"" BOOT
					 "\",\"seq\":21,\"metrics\":{\"gpu.max_freq_mhz\":1300.5,"
					 "\"trip.tj.critical_c\":105}}");
	/* state_full: the old shape, every metric in set order; the limits object is the same */
	json_reset(&j);
	mqtt_state_json(&j, &limits, s, BOOT, 22, true, &dict);
	assert_non_null(strstr(j.out.buf, "\"metrics\":{\"temp.cpu_c\":52.9,\"gpu.load_pct\":12,\"gpu.max_freq_mhz\":"
					  "1300.5,\"gpu.freq_mhz\":306,\"trip.tj.critical_c\":105,\"agent.samples_total\":9}"));
	assert_string_equal(limits.out.buf, "{\"gpu.max_freq_mhz\":1300.5,\"trip.tj.critical_c\":105}");
	/* a value that is not finite is null in either, as in every JSON of a sample */
	metric_set_put(&s->metrics, "gpu.max_freq_mhz", NAN);
	json_reset(&j);
	mqtt_state_json(&j, &limits, s, BOOT, 23, false, &dict);
	assert_string_equal(limits.out.buf, "{\"gpu.max_freq_mhz\":null,\"trip.tj.critical_c\":105}");
	json_free(&j);
	json_free(&limits);
	json_free(&msg);
	free(s);
}

static struct rule *
make_rule(void)
{
	struct rule *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	r->name = "gpu-hot";
	r->metric = "temp.gpu_c";
	static struct alert_label labels[] = {{"team", "robots"}};
	r->labels = labels;
	r->label_count = 1;
	return r;
}

static struct alert_event
make_event(const struct rule *r, enum alert_transition t, const char *fingerprint)
{
	struct alert_event ev = {
		.rule = r,
		.rule_name = r->name,
		.labels = r->labels,
		.label_count = r->label_count,
		.metric = "temp.gpu_c",
		.transition = t,
		.severity = SEVERITY_CRITICAL,
		.previous = SEVERITY_NONE,
		.value = 96.5,
		.threshold = 95,
		.at_ms = 1741946410000,
		.starts_at_ms = 1741946410000,
		.power_mode = "MAXN",
		.board = "orin-01",
		.device_id = "ab12",
	};
	snprintf(ev.fingerprint, sizeof(ev.fingerprint), "%s", fingerprint);
	snprintf(ev.summary, sizeof(ev.summary), "GPU at 96.5 C");
	if (t == TRANSITION_RESOLVED) {
		ev.ends_at_ms = ev.at_ms;
	}
	return ev;
}

static void
test_alert_json(void **state)
{
	(void)state;
	struct rule *r = make_rule();
	struct alert_event ev = make_event(r, TRANSITION_FIRING, "0123456789abcdef");
	struct json j;
	json_init(&j);
	mqtt_alert_json(&j, &ev, BOOT, 99);
	assert_string_equal(j.out.buf,
			    "{\"boot_id\":\"" BOOT "\",\"seq\":99,\"rule\":\"gpu-hot\",\"metric\":\"temp.gpu_c\","
			    "\"transition\":\"firing\",\"status\":\"firing\",\"severity\":\"critical\","
			    "\"previous_severity\":\"none\",\"value\":96.5,\"threshold\":95,\"absent\":false,"
			    "\"fingerprint\":\"0123456789abcdef\",\"at\":\"2025-03-14T10:00:10Z\","
			    "\"at_ms\":1741946410000,\"starts_at\":\"2025-03-14T10:00:10Z\",\"starts_at_ms\":1741946410000,"
			    "\"ends_at\":null,\"ends_at_ms\":null,\"summary\":\"GPU at 96.5 C\","
			    "\"description\":\"\",\"labels\":{\"team\":\"robots\"},\"throttle\":\"\","
			    "\"throttle_causes\":[],"
			    "\"power_mode\":\"MAXN\",\"board\":{\"name\":\"orin-01\",\"device_id\":\"ab12\"}}");
	/* a throttle alert carries its causes as data next to the sentence */
	ev.throttle_causes[0] = (struct throttle_cause){THROTTLE_THERMAL, "trip", "tj", 95.5, 95};
	ev.throttle_causes[1] = (struct throttle_cause){THROTTLE_OVERCURRENT, "oc_event", "oc1", 3, NAN};
	ev.throttle_cause_count = 2;
	json_reset(&j);
	mqtt_alert_json(&j, &ev, BOOT, 99);
	assert_non_null(strstr(j.out.buf, "\"throttle_causes\":[{\"reason\":\"thermal\",\"kind\":\"trip\","
					  "\"source\":\"tj\",\"value\":95.5,\"limit\":95},{\"reason\":\"overcurrent\","
					  "\"kind\":\"oc_event\",\"source\":\"oc1\",\"value\":3,\"limit\":null}],"));
	assert_true(mqtt_alert_published(TRANSITION_FIRING));
	assert_true(mqtt_alert_published(TRANSITION_ESCALATED));
	assert_true(mqtt_alert_published(TRANSITION_DEESCALATED));
	assert_true(mqtt_alert_published(TRANSITION_REPEAT));
	assert_true(mqtt_alert_published(TRANSITION_RESOLVED));
	assert_false(mqtt_alert_published(TRANSITION_PENDING));
	assert_false(mqtt_alert_published(TRANSITION_CANCELLED));
	json_free(&j);
	free(r);
}

static void
test_active_list(void **state)
{
	(void)state;
	struct rule *r = make_rule();
	struct mqtt_active *a = calloc(1, sizeof(*a));
	assert_non_null(a);
	struct json j;
	json_init(&j);

	struct alert_event pending = make_event(r, TRANSITION_PENDING, "aaaaaaaaaaaaaaaa");
	assert_false(mqtt_active_update(a, &pending));
	assert_int_equal(a->count, 0);
	mqtt_active_json(&j, a);
	assert_string_equal(j.out.buf, "[]");

	struct alert_event fa = make_event(r, TRANSITION_FIRING, "aaaaaaaaaaaaaaaa");
	struct alert_event fb = make_event(r, TRANSITION_FIRING, "bbbbbbbbbbbbbbbb");
	assert_true(mqtt_active_update(a, &fa));
	assert_true(mqtt_active_update(a, &fb));
	assert_int_equal(a->count, 2);
	struct alert_event ra = make_event(r, TRANSITION_DEESCALATED, "aaaaaaaaaaaaaaaa");
	ra.severity = SEVERITY_WARNING;
	assert_true(mqtt_active_update(a, &ra));
	assert_int_equal(a->count, 2);
	assert_string_equal(a->items[0].fingerprint, "aaaaaaaaaaaaaaaa");
	assert_non_null(strstr(a->items[0].json, "\"severity\":\"warning\""));

	struct alert_event rb = make_event(r, TRANSITION_RESOLVED, "bbbbbbbbbbbbbbbb");
	assert_true(mqtt_active_update(a, &rb));
	assert_false(mqtt_active_update(a, &rb)); /* not active any more */
	struct alert_event cancelled = make_event(r, TRANSITION_CANCELLED, "aaaaaaaaaaaaaaaa");
	assert_false(mqtt_active_update(a, &cancelled));
	assert_int_equal(a->count, 1);
	json_reset(&j);
	mqtt_active_json(&j, a);
	assert_int_equal(j.out.buf[0], '[');
	assert_int_equal(j.out.buf[j.out.len - 1], ']');
	assert_non_null(strstr(j.out.buf, "\"fingerprint\":\"aaaaaaaaaaaaaaaa\""));
	assert_null(strstr(j.out.buf, "bbbbbbbbbbbbbbbb"));
	assert_non_null(strstr(j.out.buf, "\"transition\":\"deescalated\",\"status\":\"firing\""));
	mqtt_active_free(a);
	json_free(&j);
	free(a);
	free(r);
}

static struct nvpmodel_conf modes = {
	.mode_count = 2,
	.default_id = 1,
	.modes = {{.id = 0, .name = "MAXN"}, {.id = 1, .name = "15W"}},
};

static struct agent_info
make_info(void)
{
	struct agent_info info = {.modes = &modes, .version = "0.1.0", .interval_ms = 1000};
	snprintf(info.identity.model, sizeof(info.identity.model), "NVIDIA Jetson AGX Orin");
	snprintf(info.identity.soc, sizeof(info.identity.soc), "tegra234");
	snprintf(info.identity.module, sizeof(info.identity.module), "p3701-0005");
	snprintf(info.identity.l4t, sizeof(info.identity.l4t), "36.4.3");
	snprintf(info.identity.jetpack, sizeof(info.identity.jetpack), "6.2");
	return info;
}

static void
test_info_json(void **state)
{
	(void)state;
	struct agent_info info = make_info();
	struct json j;
	json_init(&j);
	mqtt_info_json(&j, &info, "orin-01", BOOT);
	assert_string_equal(j.out.buf, "{\"device_id\":\"orin-01\",\"model\":\"NVIDIA Jetson AGX Orin\",\"soc\":\"tegra234\","
				   "\"module\":\"p3701-0005\",\"l4t\":\"36.4.3\",\"jetpack\":\"6.2\",\"power_modes\":"
				   "[{\"id\":0,\"name\":\"MAXN\"},{\"id\":1,\"name\":\"15W\"}],\"default_power_mode\":1,"
				   "\"agent\":\"tegrawatch\",\"agent_version\":\"0.1.0\",\"boot_id\":\"" BOOT "\","
				   "\"interval_ms\":1000}");
	/* an unknown board: nulls and no modes */
	struct agent_info bare = {.version = "0.1.0", .interval_ms = 500};
	json_reset(&j);
	mqtt_info_json(&j, &bare, "x", BOOT);
	assert_string_equal(j.out.buf, "{\"device_id\":\"x\",\"model\":null,\"soc\":null,\"module\":null,\"l4t\":null,"
				   "\"jetpack\":null,\"power_modes\":[],\"default_power_mode\":null,\"agent\":"
				   "\"tegrawatch\",\"agent_version\":\"0.1.0\",\"boot_id\":\"" BOOT "\",\"interval_ms\":500}");
	json_free(&j);
}

static void
test_format_value(void **state)
{
	(void)state;
	char buf[40];
	assert_true(mqtt_format_value(52.9, buf, sizeof(buf)));
	assert_string_equal(buf, "52.9");
	assert_true(mqtt_format_value(1500, buf, sizeof(buf)));
	assert_string_equal(buf, "1500");
	assert_true(mqtt_format_value(-0.125, buf, sizeof(buf)));
	assert_string_equal(buf, "-0.125");
	assert_false(mqtt_format_value(NAN, buf, sizeof(buf)));
	assert_false(mqtt_format_value(INFINITY, buf, sizeof(buf)));
	/* the digits of the JSON (numfmt): %.15g, whole numbers without a fraction */
	assert_true(mqtt_format_value(1e15, buf, sizeof(buf)));
	assert_string_equal(buf, "1e+15");
	assert_true(mqtt_format_value(0.1 + 0.2, buf, sizeof(buf)));
	assert_string_equal(buf, "0.3");
	assert_true(mqtt_format_value(2201.6, buf, 5)); /* cut to the buffer, never past it */
	assert_string_equal(buf, "2201");
}

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
	struct agent_info info = make_info();
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
	for (size_t i = 0; i < e->count; i++) {
		free(e->payload[i]);
	}

	/* an unknown board: the model falls back, no versions, no serial, the id as name; a slow interval stretches expire_after */
	struct agent_info bare = {.version = "0.1.0", .interval_ms = 30000};
	ctx.info = &bare;
	ctx.expire_after_s = mqtt_ha_expire_after_s(30000, 5000);
	metric_set_clear(set);
	e->count = 0;
	assert_int_equal(mqtt_ha_discovery(&ctx, set, &dict, capture, e), 7); /* power mode, throttled, 4 reasons, alerts */
	assert_non_null(strstr(e->payload[0], "\"expire_after\":150,"));
	assert_non_null(strstr(e->payload[0], "\"name\":\"orin-01\",\"manufacturer\":\"NVIDIA\",\"model\":\"Jetson\"},"));
	for (size_t i = 0; i < e->count; i++) {
		free(e->payload[i]);
	}
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
	struct agent_info info = make_info();
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
	for (size_t i = 0; i < e->count; i++) {
		free(e->payload[i]);
	}
	e->count = 0;
	mqtt_ha_discovery(&ctx, set, &dict, capture, e);
	p = find_payload(e, "homeassistant/binary_sensor/orin-01_process_inference_server_up/config");
	assert_non_null(strstr(p, "\"name\":\"Inference-Server running\""));
	metric_attrs_forget("name", NULL);
	int d = 99;
	assert_true(mqtt_ha_view_digits("process.inference_server.up", &d) && d == 0); /* in the view HA reads */
	for (size_t i = 0; i < e->count; i++) {
		free(e->payload[i]);
	}
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
		cmocka_unit_test(test_topics),
		cmocka_unit_test(test_sanitize_id),
		cmocka_unit_test(test_boot_id),
		cmocka_unit_test(test_seq_file),
		cmocka_unit_test(test_state_json),
		cmocka_unit_test(test_limit_names),
		cmocka_unit_test(test_state_and_limits),
		cmocka_unit_test(test_alert_json),
		cmocka_unit_test(test_active_list),
		cmocka_unit_test(test_info_json),
		cmocka_unit_test(test_format_value),
		cmocka_unit_test(test_ha_discovery),
		cmocka_unit_test(test_ha_nvml_gpus),
		cmocka_unit_test(test_ha_process),
		cmocka_unit_test(test_ha_view_timing),
		cmocka_unit_test(test_ha_view_rounding),
		cmocka_unit_test(test_ha_view_json),
	};
	return cmocka_run_group_tests(tests, setup_utc, NULL);
}
