/* MQTT topics and payloads, Home Assistant discovery, back-off: pure functions. */
#include "mqtt_payload.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/core/sample_json.h"
#include "agent/core/xalloc.h"

int
mqtt_topic(char *buf, size_t size, const char *prefix, const char *id, const char *leaf)
{
	int n;
	if (leaf) {
		n = snprintf(buf, size, "%s/%s/%s", prefix, id, leaf);
	} else {
		n = snprintf(buf, size, "%s/%s", prefix, id);
	}
	if (n < 0 || (size_t)n >= size) {
		if (size) {
			buf[0] = '\0';
		}
		return -ENAMETOOLONG;
	}
	return 0;
}

static bool
id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool
mqtt_sanitize_id(const char *in, char *out, size_t size)
{
	if (!in[0]) {
		snprintf(out, size, "jetson");
		return true;
	}
	bool changed = false;
	size_t i = 0;
	for (; in[i] && i + 1 < size; i++) {
		out[i] = id_char(in[i]) ? in[i] : '_';
		changed = changed || out[i] != in[i];
	}
	out[i] = '\0';
	return changed || in[i] != '\0';
}

static bool
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int
mqtt_parse_boot_id(const char *text, char *out, size_t size)
{
	static const size_t dashes[] = {8, 13, 18, 23};
	if (size < 37) {
		return -EINVAL;
	}
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == dashes[0] || i == dashes[1] || i == dashes[2] || i == dashes[3];
		if (dash ? text[i] != '-' : !is_hex(text[i])) {
			return -EINVAL;
		}
	}
	if (text[36] != '\0' && text[36] != '\n') {
		return -EINVAL;
	}
	memcpy(out, text, 36);
	out[36] = '\0';
	return 0;
}

/* ---- sequence file ---- */

int
mqtt_seq_parse(const char *text, const char *boot_id, uint64_t *seq)
{
	char raw[MQTT_BOOT_ID_MAX], id[MQTT_BOOT_ID_MAX];
	const char *sp = strchr(text, ' ');
	if (!sp || sp != text + 36) {
		return -EINVAL;
	}
	memcpy(raw, text, 36);
	raw[36] = '\0';
	if (mqtt_parse_boot_id(raw, id, sizeof(id)) < 0) {
		return -EINVAL;
	}
	const char *p = sp + 1;
	if (*p < '0' || *p > '9') {
		return -EINVAL;
	}
	uint64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10) {
			return -EINVAL;
		}
		v = v * 10 + d;
	}
	if (*p != '\n' && *p != '\0') {
		return -EINVAL;
	}
	if (strcmp(id, boot_id) != 0) {
		return -ESTALE;
	}
	*seq = v;
	return 0;
}

size_t
mqtt_seq_format(char *buf, size_t size, const char *boot_id, uint64_t seq)
{
	int n = snprintf(buf, size, "%s %" PRIu64 "\n", boot_id, seq);
	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

uint64_t
mqtt_seq_base_from_uptime(int64_t boottime_ms)
{
	return boottime_ms > 0 ? (uint64_t)(boottime_ms / 1000) * 1000 : 0;
}

/* ---- payloads ---- */

void
mqtt_state_json(struct json *j, const struct sample *s, const char *boot_id, uint64_t seq)
{
	char ts[32];
	iso_local_time(s->time_ms, ts, sizeof(ts));
	json_object_begin(j);
	json_key(j, "ts");
	json_string(j, ts);
	json_key(j, "time_ms");
	json_int(j, s->time_ms);
	json_key(j, "boot_id");
	json_string(j, boot_id);
	json_key(j, "seq");
	json_uint(j, seq);
	sample_body_to_json(j, s);
	json_object_end(j);
}

bool
mqtt_alert_published(enum alert_transition t)
{
	return t != TRANSITION_PENDING && t != TRANSITION_CANCELLED;
}

void
mqtt_alert_json(struct json *j, const struct alert_event *ev, const char *boot_id, uint64_t seq)
{
	struct json body;
	json_init(&body);
	alert_event_to_json(&body, ev);
	json_object_begin(j);
	json_key(j, "boot_id");
	json_string(j, boot_id);
	json_key(j, "seq");
	json_uint(j, seq);
	/* the alert's own fields follow, without its braces: one flat object */
	if (body.out.len > 2) {
		json_raw(j, ",", 1);
		json_raw(j, body.out.buf + 1, body.out.len - 2);
	}
	json_object_end(j);
	json_free(&body);
}

bool
mqtt_active_update(struct mqtt_active *a, const struct alert_event *ev)
{
	if (!mqtt_alert_published(ev->transition)) {
		return false;
	}
	size_t i = 0;
	while (i < a->count && strcmp(a->items[i].fingerprint, ev->fingerprint) != 0) {
		i++;
	}
	if (ev->transition == TRANSITION_RESOLVED) {
		if (i == a->count) {
			return false;
		}
		free(a->items[i].json);
		memmove(&a->items[i], &a->items[i + 1], (a->count - i - 1) * sizeof(a->items[0]));
		a->count--;
		return true;
	}
	if (i == a->count) {
		if (a->count == MQTT_ACTIVE_MAX) {
			return false; /* the alerts topic still carries it; the list is capped */
		}
		snprintf(a->items[i].fingerprint, sizeof(a->items[i].fingerprint), "%s", ev->fingerprint);
		a->items[i].json = NULL;
		a->count++;
	}
	struct json body;
	json_init(&body);
	alert_event_to_json(&body, ev);
	free(a->items[i].json);
	a->items[i].json = xstrdup(body.out.buf);
	json_free(&body);
	return true;
}

void
mqtt_active_json(struct json *j, const struct mqtt_active *a)
{
	json_raw(j, "[", 1);
	for (size_t i = 0; i < a->count; i++) {
		if (i) {
			json_raw(j, ",", 1);
		}
		json_raw(j, a->items[i].json, strlen(a->items[i].json));
	}
	json_raw(j, "]", 1);
}

void
mqtt_active_free(struct mqtt_active *a)
{
	for (size_t i = 0; i < a->count; i++) {
		free(a->items[i].json);
	}
	a->count = 0;
}

void
mqtt_throttle_json(struct json *j, const struct throttle_state *t)
{
	throttle_to_json(j, t);
}

void
mqtt_throttle_signature(struct json *j, const struct throttle_state *t)
{
	/* what the throttle topic is about: the reasons and what causes them, not their live values */
	json_reset(j);
	json_array_begin(j);
	json_bool(j, t->active);
	json_string(j, t->context);
	for (int i = 0; i < t->cause_count; i++) {
		json_string(j, throttle_reason_name(t->causes[i].reason));
		json_string(j, t->causes[i].kind);
		json_string(j, t->causes[i].source);
	}
	json_array_end(j);
}

static void
string_or_null(struct json *j, const char *s)
{
	if (s && s[0]) {
		json_string(j, s);
	} else {
		json_null(j);
	}
}

void
mqtt_info_json(struct json *j, const struct mqtt_info *info, const char *device_id, const char *boot_id)
{
	const struct board_identity *id = &info->identity;
	json_object_begin(j);
	json_key(j, "device_id");
	json_string(j, device_id);
	board_identity_to_json(j, id, true);
	json_key(j, "power_modes");
	json_array_begin(j);
	for (int i = 0; info->modes && i < info->modes->mode_count; i++) {
		json_object_begin(j);
		json_key(j, "id");
		json_int(j, info->modes->modes[i].id);
		json_key(j, "name");
		json_string(j, info->modes->modes[i].name);
		json_object_end(j);
	}
	json_array_end(j);
	json_key(j, "default_power_mode");
	if (info->modes && info->modes->default_id >= 0) {
		json_int(j, info->modes->default_id);
	} else {
		json_null(j);
	}
	json_key(j, "agent");
	json_string(j, "tegrawatch");
	json_key(j, "agent_version");
	string_or_null(j, info->agent_version);
	json_key(j, "boot_id");
	json_string(j, boot_id);
	json_key(j, "interval_ms");
	json_int(j, info->interval_ms);
	json_object_end(j);
}

bool
mqtt_format_value(double v, char *buf, size_t size)
{
	if (!isfinite(v)) {
		return false;
	}
	/* the same digits as the JSON of the state topic */
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, size, "%.0f", v);
	} else {
		snprintf(buf, size, "%.15g", v);
	}
	return true;
}

/* ---- Home Assistant discovery ---- */

struct ha_sensor {
	const char *metric; /* exact name */
	const char *name;
	const char *device_class; /* NULL: none */
	const char *unit;
	int precision;
};

static const struct ha_sensor fixed_sensors[] = {
	{"cpu.load_pct", "CPU load", NULL, "%", 0},           {"gpu.load_pct", "GPU load", NULL, "%", 0},
	{"emc.load_pct", "EMC load", NULL, "%", 0},           {"gpu.freq_mhz", "GPU clock", "frequency", "MHz", 0},
	{"emc.freq_mhz", "EMC clock", "frequency", "MHz", 0}, {"ram.used_mb", "RAM used", "data_size", "MiB", 0},
	{"swap.used_mb", "Swap used", "data_size", "MiB", 0},
};

static bool
has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static bool
has_suffix(const char *s, const char *x)
{
	size_t n = strlen(s), m = strlen(x);
	return n >= m && strcmp(s + n - m, x) == 0;
}

/* The part of NAME between PREFIX and SUFFIX, upper-cased when UPPER or short. */
static void
middle(const char *name, size_t prefix, size_t suffix, bool upper, char *out, size_t size)
{
	size_t len = strlen(name) - prefix - suffix;
	if (len >= size) {
		len = size - 1;
	}
	memcpy(out, name + prefix, len);
	out[len] = '\0';
	bool up = upper || len <= 4;
	for (size_t i = 0; i < len; i++) {
		if (up && out[i] >= 'a' && out[i] <= 'z') {
			out[i] = (char)(out[i] - 'a' + 'A');
		}
	}
	if (!up && out[0] >= 'a' && out[0] <= 'z') {
		out[0] = (char)(out[0] - 'a' + 'A');
	}
}

/*
 * Classifies METRIC as a discovered sensor. Fills *OUT (NAME into NAMEBUF)
 * and says whether the value is in mW to be shown in W.
 */
static bool
classify(const char *metric, struct ha_sensor *out, char *namebuf, size_t size, bool *milli)
{
	*milli = false;
	for (size_t i = 0; i < sizeof(fixed_sensors) / sizeof(fixed_sensors[0]); i++) {
		if (strcmp(metric, fixed_sensors[i].metric) == 0) {
			*out = fixed_sensors[i];
			return true;
		}
	}
	char mid[METRIC_NAME_MAX];
	if (has_prefix(metric, "temp.") && has_suffix(metric, "_c") && strlen(metric) > 7) {
		middle(metric, 5, 2, false, mid, sizeof(mid));
		snprintf(namebuf, size, "%s temperature", mid);
		*out = (struct ha_sensor){metric, namebuf, "temperature",
					  "\xc2\xb0"
					  "C",
					  1};
		return true;
	}
	if (has_prefix(metric, "power.") && has_suffix(metric, ".mw") && strlen(metric) > 9) {
		middle(metric, 6, 3, true, mid, sizeof(mid));
		snprintf(namebuf, size, "%s power", mid);
		*out = (struct ha_sensor){metric, namebuf, "power", "W", 2};
		*milli = true;
		return true;
	}
	if (has_prefix(metric, "fan.") && has_suffix(metric, ".rpm") && strlen(metric) > 8) {
		middle(metric, 4, 4, false, mid, sizeof(mid));
		snprintf(namebuf, size, "Fan %s speed", mid);
		*out = (struct ha_sensor){metric, namebuf, NULL, "rpm", 0};
		return true;
	}
	return false;
}

/* The fields every discovery config shares: availability, device, origin. */
static void
ha_common(struct json *j, const struct mqtt_ha_ctx *ctx)
{
	const struct board_identity *id = &ctx->info->identity;
	char ident[MQTT_ID_MAX + 16];
	json_key(j, "availability_topic");
	json_string(j, ctx->status_topic);
	json_key(j, "payload_available");
	json_string(j, "online");
	json_key(j, "payload_not_available");
	json_string(j, "offline");
	json_key(j, "device");
	json_object_begin(j);
	json_key(j, "identifiers");
	json_array_begin(j);
	snprintf(ident, sizeof(ident), "tegrawatch_%s", ctx->device_id);
	json_string(j, ident);
	json_array_end(j);
	json_key(j, "name");
	json_string(j, ctx->device_id);
	json_key(j, "manufacturer");
	json_string(j, "NVIDIA");
	json_key(j, "model");
	json_string(j, id->model[0] ? id->model : "Jetson");
	if (id->l4t[0]) {
		char sw[64];
		if (id->jetpack[0]) {
			snprintf(sw, sizeof(sw), "L4T %s (JetPack %s)", id->l4t, id->jetpack);
		} else {
			snprintf(sw, sizeof(sw), "L4T %s", id->l4t);
		}
		json_key(j, "sw_version");
		json_string(j, sw);
	}
	if (id->module[0] || id->soc[0]) {
		json_key(j, "hw_version");
		json_string(j, id->module[0] ? id->module : id->soc);
	}
	json_object_end(j);
	json_key(j, "origin");
	json_object_begin(j);
	json_key(j, "name");
	json_string(j, "tegrawatch");
	if (ctx->info->agent_version) {
		json_key(j, "sw_version");
		json_string(j, ctx->info->agent_version);
	}
	json_object_end(j);
}

/* Opens a config: name, unique_id, state_topic, value_template. Returns false when a topic is too long. */
static bool
ha_begin(struct json *j, const struct mqtt_ha_ctx *ctx, const char *component, const char *object, const char *name,
	 const char *value_template, char *topic, size_t size)
{
	char uid[MQTT_ID_MAX + METRIC_NAME_MAX + 2];
	snprintf(uid, sizeof(uid), "%s_%s", ctx->device_id, object);
	int n = snprintf(topic, size, "%s/%s/%s/config", ctx->ha_prefix, component, uid);
	if (n < 0 || (size_t)n >= size) {
		return false;
	}
	json_reset(j);
	json_object_begin(j);
	json_key(j, "name");
	json_string(j, name);
	json_key(j, "unique_id");
	json_string(j, uid);
	json_key(j, "state_topic");
	json_string(j, ctx->state_topic);
	json_key(j, "value_template");
	json_string(j, value_template);
	return true;
}

/* A problem-class binary sensor: ON/OFF. */
static void
ha_problem(struct json *j)
{
	json_key(j, "device_class");
	json_string(j, "problem");
	json_key(j, "payload_on");
	json_string(j, "ON");
	json_key(j, "payload_off");
	json_string(j, "OFF");
}

static void
ha_end(struct json *j, const struct mqtt_ha_ctx *ctx, const char *topic, mqtt_ha_emit emit, void *data)
{
	if (ctx->info->interval_ms > 0) {
		/* a few missed samples make the value stale, not one */
		int64_t expire = ctx->info->interval_ms * 5 / 1000;
		json_key(j, "expire_after");
		json_int(j, expire < 60 ? 60 : expire);
	}
	ha_common(j, ctx);
	json_object_end(j);
	emit(topic, j->out.buf, j->out.len, data);
}

size_t
mqtt_ha_sensor_count(const struct metric_set *set)
{
	size_t n = 0;
	for (size_t i = 0; i < set->count; i++) {
		struct ha_sensor sensor;
		char name[METRIC_NAME_MAX + 32];
		bool milli;
		n += classify(set->items[i].name, &sensor, name, sizeof(name), &milli);
	}
	return n;
}

size_t
mqtt_ha_discovery(const struct mqtt_ha_ctx *ctx, const struct metric_set *set, mqtt_ha_emit emit, void *data)
{
	struct json j;
	json_init(&j);
	char topic[MQTT_TOPIC_MAX * 2], tmpl[2 * METRIC_NAME_MAX + 128], object[METRIC_NAME_MAX];
	size_t n = 0;
	for (size_t i = 0; i < set->count; i++) {
		const char *metric = set->items[i].name;
		struct ha_sensor sensor;
		char name[METRIC_NAME_MAX + 32];
		bool milli;
		if (!classify(metric, &sensor, name, sizeof(name), &milli)) {
			continue;
		}
		snprintf(object, sizeof(object), "%s", metric);
		for (char *p = object; *p; p++) {
			if (*p == '.') {
				*p = '_';
			}
		}
		/* a metric missing from a sample (a -256 zone, tegrastats late) renders "None": HA shows unknown */
		if (milli) {
			snprintf(
				tmpl, sizeof(tmpl),
				"{{ (value_json.metrics['%s'] / 1000) | round(3) if '%s' in value_json.metrics else none }}",
				metric, metric);
		} else {
			snprintf(tmpl, sizeof(tmpl),
				 "{{ value_json.metrics['%s'] if '%s' in value_json.metrics else none }}", metric,
				 metric);
		}
		if (!ha_begin(&j, ctx, "sensor", object, sensor.name, tmpl, topic, sizeof(topic))) {
			continue;
		}
		if (sensor.device_class) {
			json_key(&j, "device_class");
			json_string(&j, sensor.device_class);
		}
		json_key(&j, "state_class");
		json_string(&j, "measurement");
		json_key(&j, "unit_of_measurement");
		json_string(&j, sensor.unit);
		json_key(&j, "suggested_display_precision");
		json_int(&j, sensor.precision);
		ha_end(&j, ctx, topic, emit, data);
		n++;
	}
	if (ha_begin(&j, ctx, "sensor", "power_mode", "Power mode", "{{ value_json.power_mode or none }}", topic,
		     sizeof(topic))) {
		json_key(&j, "icon");
		json_string(&j, "mdi:flash");
		ha_end(&j, ctx, topic, emit, data);
		n++;
	}
	if (ha_begin(&j, ctx, "binary_sensor", "throttled", "Throttled",
		     "{{ 'ON' if value_json.throttle.active else 'OFF' }}", topic, sizeof(topic))) {
		ha_problem(&j);
		/* why, as attributes: {"thermal": "tj at 95.2 C >= passive trip 95.0 C", ...} */
		json_key(&j, "json_attributes_topic");
		json_string(&j, ctx->state_topic);
		json_key(&j, "json_attributes_template");
		json_string(&j, "{{ value_json.throttle.reasons | tojson }}");
		ha_end(&j, ctx, topic, emit, data);
		n++;
	}
	/* one binary sensor per reason, for automations that care about one cause */
	for (int r = 0; r < THROTTLE_REASON_COUNT; r++) {
		const char *reason = throttle_reason_name((enum throttle_reason)r);
		char object_r[48], name_r[64];
		snprintf(object_r, sizeof(object_r), "throttled_%s", reason);
		snprintf(name_r, sizeof(name_r), "Throttled: %s", reason);
		snprintf(tmpl, sizeof(tmpl), "{{ 'ON' if '%s' in value_json.throttle.reasons else 'OFF' }}", reason);
		if (ha_begin(&j, ctx, "binary_sensor", object_r, name_r, tmpl, topic, sizeof(topic))) {
			ha_problem(&j);
			ha_end(&j, ctx, topic, emit, data);
			n++;
		}
	}
	if (ha_begin(&j, ctx, "sensor", "alerts_firing", "Alerts firing",
		     "{{ value_json.metrics['agent.alerts_firing'] if 'agent.alerts_firing' in value_json.metrics "
		     "else none }}",
		     topic, sizeof(topic))) {
		json_key(&j, "state_class");
		json_string(&j, "measurement");
		json_key(&j, "icon");
		json_string(&j, "mdi:bell-alert");
		ha_end(&j, ctx, topic, emit, data);
		n++;
	}
	json_free(&j);
	return n;
}

/* ---- connection ---- */

int64_t
mqtt_backoff_ms(int64_t base_ms, int64_t cap_ms, unsigned attempt, uint64_t rnd)
{
	if (base_ms < 1) {
		base_ms = 1;
	}
	if (cap_ms < base_ms) {
		cap_ms = base_ms;
	}
	int64_t ceiling = base_ms;
	for (unsigned i = 0; i < attempt && ceiling < cap_ms; i++) {
		ceiling *= 2;
	}
	if (ceiling > cap_ms) {
		ceiling = cap_ms;
	}
	int64_t d = (int64_t)(rnd % (uint64_t)(ceiling + 1));
	return d < base_ms ? base_ms : d;
}

/* Bytes of MQTT's variable-length "remaining length" field. */
static size_t
varint_bytes(size_t v)
{
	size_t n = 1;
	while (v >= 128) {
		v /= 128;
		n++;
	}
	return n;
}

size_t
mqtt_publish_wire_bytes(size_t topic_len, size_t payload_len, int qos, bool v5)
{
	size_t remaining = 2 + topic_len + (qos > 0 ? 2 : 0) + (v5 ? 1 : 0) + payload_len;
	return 1 + varint_bytes(remaining) + remaining;
}
