/* MQTT topics and payloads, Home Assistant discovery, back-off: pure functions. */
#include "mqtt_payload.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/metric_dict.h"
#include "core/metrics_text.h"
#include "core/numfmt.h"
#include "core/sample_json.h"
#include "core/xalloc.h"

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

bool
mqtt_is_limit(const char *name)
{
	const struct metric_def *d = metric_dict_find(name);
	return d && d->kind == METRIC_KIND_LIMIT;
}

/* Opens a state or limits message: {"ts","time_ms","boot_id","seq" of the sample it is taken from. */
static void
open_message(struct json *j, const struct sample *s, const char *boot_id, uint64_t seq)
{
	char ts[32];
	rfc3339_utc(s->time_ms, ts, sizeof(ts));
	json_object_begin(j);
	json_key(j, "ts");
	json_string(j, ts);
	json_key(j, "time_ms");
	json_int(j, s->time_ms);
	clock_step_to_json(j, s);
	json_key(j, "boot_id");
	json_string(j, boot_id);
	json_key(j, "seq");
	json_uint(j, seq);
}

void
mqtt_state_json(struct json *state, struct json *limits, const struct sample *s, const char *boot_id, uint64_t seq,
		bool full, struct metric_dict_cache *dict)
{
	const struct metric_def *const *defs = metric_dict_classify(dict, &s->metrics);
	open_message(state, s, boot_id, seq);
	json_key(state, "power_mode");
	if (s->power_mode[0]) {
		json_string(state, s->power_mode);
	} else {
		json_null(state);
	}
	json_reset(limits);
	json_object_begin(limits);
	json_key(state, "metrics");
	json_object_begin(state);
	struct metrics_members mm;
	if (metrics_text_get(s->text, &s->metrics, &mm)) {
		/* the sample's members as JSON Lines has them: the state takes them in runs between limits */
		size_t run = 0;
		for (size_t i = 0; i < mm.count; i++) {
			if (!defs[i] || defs[i]->kind != METRIC_KIND_LIMIT) {
				continue;
			}
			json_members(limits, mm.text + mm.at[i], metrics_members_len(&mm, i, i));
			if (!full) {
				json_members(state, mm.text + mm.at[run],
					     i > run ? metrics_members_len(&mm, run, i - 1) : 0);
				run = i + 1;
			}
		}
		json_members(state, mm.text + mm.at[run],
			     mm.count > run ? metrics_members_len(&mm, run, mm.count - 1) : 0);
	} else {
		/* each metric formatted once, into whichever document carries it */
		for (size_t i = 0; i < s->metrics.count; i++) {
			const struct metric *m = &s->metrics.items[i];
			bool limit = defs[i] && defs[i]->kind == METRIC_KIND_LIMIT;
			if (limit) {
				json_key(limits, m->name);
				json_number(limits, m->value);
			}
			if (!limit || full) {
				json_key(state, m->name);
				json_number(state, m->value);
			}
		}
	}
	json_object_end(state);
	json_object_end(limits);
	json_key(state, "throttle");
	throttle_to_json(state, &s->throttle);
	json_object_end(state);
}

void
mqtt_limits_json(struct json *j, const struct sample *s, const char *boot_id, uint64_t seq, const struct json *metrics)
{
	open_message(j, s, boot_id, seq);
	json_key(j, "metrics");
	json_raw(j, metrics->out.buf, metrics->out.len); /* the last member: no comma follows the raw value */
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
mqtt_info_json(struct json *j, const struct agent_info *info, const char *device_id, const char *boot_id)
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
	string_or_null(j, info->version);
	json_key(j, "boot_id");
	json_string(j, boot_id);
	json_key(j, "interval_ms");
	json_int(j, info->interval_ms);
	json_object_end(j);
}

bool
mqtt_format_value(double v, char *buf, size_t size)
{
	if (!isfinite(v) || size == 0) {
		return false;
	}
	/* the same digits as the JSON of the state topic */
	char text[NUMFMT_MAX];
	size_t n = numfmt_g15(text, v);
	if (n >= size) {
		n = size - 1;
	}
	memcpy(buf, text, n);
	buf[n] = '\0';
	return true;
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
