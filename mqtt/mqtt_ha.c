/*
 * Home Assistant, as pure functions: the discovery configs, and the view
 * its entities read (PREFIX/ID/ha: only what they show, rounded to what
 * they show, docs/mqtt.md). Apart from the state payload, so a change of
 * the state topic does not disturb what Home Assistant reads.
 */
#include "mqtt_payload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/metric_dict.h"
#include "core/sample_json.h"

/* ---- Home Assistant discovery ---- */

/*
 * Which metrics get an entity, its name, class, unit and precision: the
 * metric dictionary's `ha` (core/metric_dict.c).
 */

/* The entity's name: DEF's ha.name with "%s" as the placeholder's text, cased as the table says. */
static void
entity_name(const struct metric_def *def, const char *metric, char *out, size_t size)
{
	const char *name = def->ha.name;
	const char *at = strstr(name, "%s");
	char mid[METRIC_NAME_MAX] = "";
	if (!at) {
		snprintf(out, size, "%s", name);
		return;
	}
	const char *names[1];
	char real[1][METRIC_LABEL_VALUE_MAX];
	bool said = false;
	if (def->labels[0].value && strcmp(def->labels[0].value, METRIC_LABEL_ATTRS) == 0 &&
	    metric_dict_capture(def, metric, 0, mid, sizeof(mid)) &&
	    metric_attrs_get(def->labels[0].name, mid, 1, names, real) == 1) {
		/* the real text a source said (a process's name as written): as it is, cut to fit */
		size_t n = strnlen(real[0], sizeof(mid) - 1);
		memcpy(mid, real[0], n);
		mid[n] = '\0';
		said = true;
	}
	if (!said && metric_dict_capture(def, metric, 0, mid, sizeof(mid))) {
		size_t len = strlen(mid);
		bool up = def->ha.upper || len <= 4;
		for (size_t i = 0; i < len; i++) {
			if ((up || i == 0) && mid[i] >= 'a' && mid[i] <= 'z') {
				mid[i] = (char)(mid[i] - 'a' + 'A');
			}
		}
	}
	snprintf(out, size, "%.*s%s%s", (int)(at - name), name, mid, at + 2);
}

/* 10^N for N >= 0. */
static long
pow10_of(int n)
{
	long v = 1;
	for (int i = 0; i < n; i++) {
		v *= 10;
	}
	return v;
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
	/* the name people read (the host name by default) is not the id: renaming the host keeps the entities */
	json_key(j, "name");
	json_string(j, ctx->info->board_name && ctx->info->board_name[0] ? ctx->info->board_name : ctx->device_id);
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
	if (id->serial[0]) {
		json_key(j, "serial_number");
		json_string(j, id->serial);
	}
	json_object_end(j);
	json_key(j, "origin");
	json_object_begin(j);
	json_key(j, "name");
	json_string(j, "tegrawatch");
	if (ctx->info->version) {
		json_key(j, "sw_version");
		json_string(j, ctx->info->version);
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

/* A binary sensor of DEVICE_CLASS ("problem", "heat", "running"): ON/OFF. */
static void
ha_binary(struct json *j, const char *device_class)
{
	json_key(j, "device_class");
	json_string(j, device_class);
	json_key(j, "payload_on");
	json_string(j, "ON");
	json_key(j, "payload_off");
	json_string(j, "OFF");
}

static void
ha_end(struct json *j, const struct mqtt_ha_ctx *ctx, const char *topic, mqtt_ha_emit emit, void *data)
{
	if (ctx->expire_after_s > 0) {
		json_key(j, "expire_after");
		json_int(j, ctx->expire_after_s);
	}
	ha_common(j, ctx);
	json_object_end(j);
	emit(topic, j->out.buf, j->out.len, data);
}

size_t
mqtt_ha_sensor_count(const struct metric_set *set, struct metric_dict_cache *dict)
{
	const struct metric_def *const *defs = metric_dict_classify(dict, set);
	size_t n = 0;
	for (size_t i = 0; i < set->count; i++) {
		n += defs[i] && defs[i]->ha.name;
	}
	return n;
}

size_t
mqtt_ha_discovery(const struct mqtt_ha_ctx *ctx, const struct metric_set *set, struct metric_dict_cache *dict,
		  mqtt_ha_emit emit, void *data)
{
	const struct metric_def *const *defs = metric_dict_classify(dict, set);
	struct json j;
	json_init(&j);
	char topic[MQTT_TOPIC_MAX * 2], tmpl[2 * METRIC_NAME_MAX + 128], object[METRIC_NAME_MAX];
	size_t n = 0;
	for (size_t i = 0; i < set->count; i++) {
		const char *metric = set->items[i].name;
		const struct metric_def *def = defs[i];
		if (!def || !def->ha.name) {
			continue;
		}
		char name[METRIC_NAME_MAX + 32];
		entity_name(def, metric, name, sizeof(name));
		snprintf(object, sizeof(object), "%s", metric);
		for (char *p = object; *p; p++) {
			if (*p == '.') {
				*p = '_';
			}
		}
		/* a metric missing from a sample (a -256 zone, tegrastats late) renders "None": HA shows unknown */
		if (def->ha.binary) {
			/* a state: a process watched by processes: running or not; a network link up or not */
			snprintf(
				tmpl, sizeof(tmpl),
				"{{ ('ON' if value_json.metrics['%s'] >= 1 else 'OFF') if '%s' in value_json.metrics else "
				"none }}",
				metric, metric);
			if (ha_begin(&j, ctx, "binary_sensor", object, name, tmpl, topic, sizeof(topic))) {
				ha_binary(&j, def->ha.device_class);
				ha_end(&j, ctx, topic, emit, data);
				n++;
			}
			continue;
		}
		if (def->ha.exp10 < 0) {
			snprintf(tmpl, sizeof(tmpl),
				 "{{ (value_json.metrics['%s'] / %ld) | round(%d) if '%s' in value_json.metrics else "
				 "none }}",
				 metric, pow10_of(-def->ha.exp10), -def->ha.exp10, metric);
		} else {
			snprintf(tmpl, sizeof(tmpl),
				 "{{ value_json.metrics['%s'] if '%s' in value_json.metrics else none }}", metric,
				 metric);
		}
		if (!ha_begin(&j, ctx, "sensor", object, name, tmpl, topic, sizeof(topic))) {
			continue;
		}
		if (def->ha.device_class) {
			json_key(&j, "device_class");
			json_string(&j, def->ha.device_class);
		}
		/* a counter since boot (OOM kills) only grows, and starts at 0 again after a reboot */
		json_key(&j, "state_class");
		json_string(&j, def->kind == METRIC_KIND_COUNTER ? "total_increasing" : "measurement");
		if (def->ha.unit) {
			json_key(&j, "unit_of_measurement");
			json_string(&j, def->ha.unit);
		}
		json_key(&j, "suggested_display_precision");
		json_int(&j, def->ha.precision);
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
		ha_binary(&j, "problem");
		/* why, as attributes: {"thermal": "tj at 95.2 C >= passive trip 95.0 C", ...} */
		json_key(&j, "json_attributes_topic");
		json_string(&j, ctx->state_topic);
		json_key(&j, "json_attributes_template");
		json_string(&j, "{{ value_json.throttle.reasons | tojson }}");
		ha_end(&j, ctx, topic, emit, data);
		n++;
	}
	/* Orin's touch warning: a heat problem of its own, never "Throttled" */
	if (metric_set_find(set, "thermal.hot_surface") &&
	    ha_begin(&j, ctx, "binary_sensor", "hot_surface", "Hot surface",
		     "{{ 'ON' if value_json.metrics.get('thermal.hot_surface', 0) >= 1 else 'OFF' }}", topic,
		     sizeof(topic))) {
		ha_binary(&j, "heat");
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
			ha_binary(&j, "problem");
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

/* ---- the view Home Assistant reads ---- */

int64_t
mqtt_ha_refresh_ms(int64_t ha_interval_ms)
{
	return ha_interval_ms > MQTT_HA_REFRESH_MS ? ha_interval_ms : MQTT_HA_REFRESH_MS;
}

int64_t
mqtt_ha_expire_after_s(int64_t interval_ms, int64_t ha_interval_ms)
{
	/* three refreshes missed, or five samples when sampling is slower than that */
	int64_t views = 3 * mqtt_ha_refresh_ms(ha_interval_ms);
	int64_t samples = 5 * interval_ms;
	return (views > samples ? views : samples) / 1000;
}

/* The view's digits of METRIC, whose dictionary entry is DEF: the entity's precision in the metric's unit. */
static bool
view_digits(const struct metric_def *def, const char *metric, int *digits)
{
	if (strcmp(metric, "agent.alerts_firing") == 0 || strcmp(metric, "thermal.hot_surface") == 0) {
		*digits = 0;
		return true;
	}
	if (!def || !def->ha.name) {
		return false;
	}
	/* shown in W with 2 decimals, carried in mW: tens of mW */
	*digits = def->ha.precision + def->ha.exp10;
	return true;
}

bool
mqtt_ha_view_digits(const char *metric, int *digits)
{
	return view_digits(metric_dict_find(metric), metric, digits);
}

double
mqtt_ha_round(double v, int digits)
{
	if (!isfinite(v)) {
		return v;
	}
	if (digits < 0) {
		/* divide by an exact power of ten, so 4812 mW gives 4810, not 4810.000000000001 */
		double scale = 1;
		for (int i = 0; i > digits; i--) {
			scale *= 10;
		}
		return round(v / scale) * scale;
	}
	double scale = 1;
	for (int i = 0; i < digits; i++) {
		scale *= 10;
	}
	return round(v * scale) / scale;
}

size_t
mqtt_ha_view_json(struct json *j, const struct sample *s, struct metric_dict_cache *dict)
{
	const struct metric_def *const *defs = metric_dict_classify(dict, &s->metrics);
	char ts[32];
	rfc3339_utc(s->time_ms, ts, sizeof(ts));
	json_object_begin(j);
	json_key(j, "ts");
	json_string(j, ts);
	json_key(j, "time_ms");
	json_int(j, s->time_ms);
	size_t body = j->out.len;
	power_mode_to_json(j, s);
	json_key(j, "metrics");
	json_object_begin(j);
	for (size_t i = 0; i < s->metrics.count; i++) {
		const struct metric *m = &s->metrics.items[i];
		int digits;
		if (view_digits(defs[i], m->name, &digits) && isfinite(m->value)) {
			json_key(j, m->name);
			json_number(j, mqtt_ha_round(m->value, digits));
		}
	}
	json_object_end(j);
	json_key(j, "throttle");
	json_object_begin(j);
	json_key(j, "active");
	json_bool(j, s->throttle.active);
	json_key(j, "reasons");
	json_object_begin(j);
	for (int r = 0; r < THROTTLE_REASON_COUNT; r++) {
		if (s->throttle.reason[r]) {
			json_key(j, throttle_reason_name((enum throttle_reason)r));
			json_string(j, s->throttle.why[r]);
		}
	}
	json_object_end(j);
	json_object_end(j);
	json_object_end(j);
	return body;
}

void
mqtt_ha_view_edges(const struct sample *s, struct metric_dict_cache *dict, struct mqtt_ha_edges *out)
{
	/* what an automation reacts to: throttling and its reasons, alerts firing, the power mode, a process down */
	const struct metric_def *const *defs = metric_dict_classify(dict, &s->metrics);
	out->on = 0;
	for (size_t i = 0, bit = 0; i < s->metrics.count && bit < 64; i++) {
		if (defs[i] && defs[i]->ha.binary) {
			out->on |= (uint64_t)(s->metrics.items[i].value >= 1) << bit++;
		}
	}
	out->active = s->throttle.active;
	memcpy(out->reason, s->throttle.reason, sizeof(out->reason));
	if (!metric_set_get(&s->metrics, "agent.alerts_firing", &out->alerts_firing)) {
		out->alerts_firing = NAN;
	}
	snprintf(out->power_mode, sizeof(out->power_mode), "%s", s->power_mode);
}

bool
mqtt_ha_edges_equal(const struct mqtt_ha_edges *a, const struct mqtt_ha_edges *b)
{
	bool same_firing = a->alerts_firing == b->alerts_firing || (isnan(a->alerts_firing) && isnan(b->alerts_firing));
	return a->active == b->active && memcmp(a->reason, b->reason, sizeof(a->reason)) == 0 && same_firing &&
	       strcmp(a->power_mode, b->power_mode) == 0 && a->on == b->on;
}
