/*
 * MQTT payloads without a broker: topics, the state/alert/active/throttle/
 * info documents, the back-off distribution, the sequence file and the wire
 * size (Home Assistant's discovery and view: test_mqtt_ha.c).
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
#include "core/metrics_text.h"
#include "mqtt/mqtt_payload.h"
#include "thresholds/rules.h"
#include "core/sample.h"
#include "mqtt_checks.h"

/* the dictionary entries of the samples' metrics, kept per layout as the sink keeps them */
static struct metric_dict_cache dict;

#define BOOT "6a6f29ab-1778-4cd2-af13-1dad09b5532e"

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

/*
 * mqtt_state_json() of S formatting each metric itself and from the loop's
 * text (the runs between limits): the same state and limits, left in J and LIMITS.
 */
static void
state_both(struct json *j, struct json *limits, struct sample *s, uint64_t seq, bool full)
{
	struct json plain, plain_limits;
	json_init(&plain);
	json_init(&plain_limits);
	mqtt_state_json(&plain, &plain_limits, s, BOOT, seq, full, &dict);
	s->text = metrics_text_create();
	metrics_text_seal(s->text);
	json_reset(j);
	mqtt_state_json(j, limits, s, BOOT, seq, full, &dict);
	metrics_text_destroy(s->text);
	s->text = NULL;
	assert_string_equal(j->out.buf, plain.out.buf);
	assert_string_equal(limits->out.buf, plain_limits.out.buf);
	json_free(&plain);
	json_free(&plain_limits);
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
	state_both(&j, &limits, s, 21, false);
	assert_non_null(strstr(j.out.buf, "\"metrics\":{\"temp.cpu_c\":52.9,\"gpu.load_pct\":12,\"gpu.freq_mhz\":306,"
					  "\"agent.samples_total\":9},\"throttle\":"));
	assert_string_equal(limits.out.buf, "{\"gpu.max_freq_mhz\":1300.5,\"trip.tj.critical_c\":105}");
	mqtt_limits_json(&msg, s, BOOT, 21, &limits);
	assert_string_equal(msg.out.buf, "{\"ts\":\"2025-03-14T10:00:00Z\",\"time_ms\":1741946400250,\"boot_id\":\"" BOOT
					 "\",\"seq\":21,\"metrics\":{\"gpu.max_freq_mhz\":1300.5,"
					 "\"trip.tj.critical_c\":105}}");
	/* state_full: the old shape, every metric in set order; the limits object is the same */
	state_both(&j, &limits, s, 22, true);
	assert_non_null(strstr(j.out.buf, "\"metrics\":{\"temp.cpu_c\":52.9,\"gpu.load_pct\":12,\"gpu.max_freq_mhz\":"
					  "1300.5,\"gpu.freq_mhz\":306,\"trip.tj.critical_c\":105,\"agent.samples_total\":9}"));
	assert_string_equal(limits.out.buf, "{\"gpu.max_freq_mhz\":1300.5,\"trip.tj.critical_c\":105}");
	/* limits first, last and side by side: the state's runs between them */
	struct sample *t = make_sample();
	metric_set_clear(&t->metrics);
	metric_set_put(&t->metrics, "trip.tj.critical_c", 105);
	metric_set_put(&t->metrics, "temp.cpu_c", 52.9);
	metric_set_put(&t->metrics, "gpu.max_freq_mhz", 1300.5);
	metric_set_put(&t->metrics, "gpu.min_freq_mhz", 306);
	metric_set_put(&t->metrics, "gpu.freq_mhz", 306);
	metric_set_put(&t->metrics, "ram.total_mb", 62801);
	state_both(&j, &limits, t, 24, false);
	assert_non_null(strstr(j.out.buf, "\"metrics\":{\"temp.cpu_c\":52.9,\"gpu.freq_mhz\":306},"));
	assert_string_equal(limits.out.buf, "{\"trip.tj.critical_c\":105,\"gpu.max_freq_mhz\":1300.5,"
					    "\"gpu.min_freq_mhz\":306,\"ram.total_mb\":62801}");
	state_both(&j, &limits, t, 25, true);
	metric_set_clear(&t->metrics);
	metric_set_put(&t->metrics, "ram.total_mb", 62801); /* nothing but limits, then nothing at all */
	state_both(&j, &limits, t, 26, false);
	assert_non_null(strstr(j.out.buf, "\"metrics\":{},"));
	metric_set_clear(&t->metrics);
	state_both(&j, &limits, t, 27, false);
	assert_string_equal(limits.out.buf, "{}");
	free(t);
	/* a value that is not finite is null in either, as in every JSON of a sample */
	metric_set_put(&s->metrics, "gpu.max_freq_mhz", NAN);
	state_both(&j, &limits, s, 23, false);
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

static void
test_info_json(void **state)
{
	(void)state;
	struct agent_info info = mqtt_checks_info();
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
	};
	return cmocka_run_group_tests(tests, mqtt_checks_utc, NULL);
}
