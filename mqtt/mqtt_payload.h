/*
 * What the MQTT sink publishes, as pure functions: topic names, the JSON
 * of the state, limits, alert, alerts/active, throttle and info topics, Home
 * Assistant discovery configs and view (mqtt_ha.c), the reconnect
 * back-off and the per-boot sequence file format. No libmosquitto and no I/O here, so every payload
 * shape is unit-tested (tests/unit/test_mqtt_payload.c) and documented in
 * docs/mqtt.md.
 */
#ifndef TEGRAWATCH_MQTT_PAYLOAD_H
#define TEGRAWATCH_MQTT_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/alert.h"
#include "core/board_info.h"
#include "core/json.h"
#include "core/metric_dict.h"
#include "core/sample.h"

#define MQTT_TOPIC_MAX 256
#define MQTT_ID_MAX 64      /* device id after sanitising, NUL included */
#define MQTT_BOOT_ID_MAX 40 /* "8f2c...-...", 36 characters + NUL */
#define MQTT_ACTIVE_MAX 256 /* alerts kept in alerts/active */

/**
 * Writes PREFIX/ID/LEAF (LEAF may be NULL: PREFIX/ID) into BUF. Returns 0,
 * or -ENAMETOOLONG (BUF is then "").
 */
int mqtt_topic(char *buf, size_t size, const char *prefix, const char *id, const char *leaf);

/**
 * Copies IN into OUT keeping [A-Za-z0-9_-] and turning every other byte
 * into '_' (topic levels and Home Assistant object ids accept these).
 * An empty IN gives "jetson". Returns true when something was changed.
 */
bool mqtt_sanitize_id(const char *in, char *out, size_t size);

/**
 * Parses /proc/sys/kernel/random/boot_id text ("UUID\n") into OUT (>= 37
 * bytes). Returns 0, or -EINVAL when it is not 36 hex digits and dashes.
 */
int mqtt_parse_boot_id(const char *text, char *out, size_t size);

/* ---- the per-boot sequence number ---- */

/**
 * Parses the sequence file ("BOOT_ID SEQ\n"). Returns 0 and *SEQ when the
 * file belongs to BOOT_ID; -ESTALE when it is from another boot; -EINVAL
 * when it is damaged.
 */
int mqtt_seq_parse(const char *text, const char *boot_id, uint64_t *seq);

/** Writes the sequence file text; returns its length (BUF >= 64 bytes). */
size_t mqtt_seq_format(char *buf, size_t size, const char *boot_id, uint64_t seq);

/**
 * First sequence number when no sequence file exists: 1000 x seconds since
 * boot, so a restarted agent still counts upwards within the boot as long
 * as fewer than 1000 messages a second were numbered.
 */
uint64_t mqtt_seq_base_from_uptime(int64_t boottime_ms);

/* ---- payloads ---- */

/**
 * Whether the metric NAME is a limit: a value that changes only with a
 * setting, the power mode or the hardware (trip points, clock ceilings and
 * floors, CPUs online, capacities, current limits, throttle enables, the
 * power mode id, the agent's memory settings), as the metric dictionary's
 * kind says (core/metric_dict.c). Limits go out on PREFIX/ID/limits when
 * they change, not in every state; by name only, so the split is the same
 * on every board (docs/mqtt.md lists them).
 */
bool mqtt_is_limit(const char *name);

/**
 * One pass over the sample: PREFIX/ID/state appended to STATE,
 * {"ts","time_ms","boot_id","seq","power_mode","metrics","throttle"} with
 * every metric but the limits (every metric with FULL: mqtt.state_full),
 * and the limits' {"name": value, ...} object written into LIMITS (reset
 * first), in set order. DICT keeps the metrics' dictionary entries from one
 * sample to the next.
 */
void mqtt_state_json(struct json *state, struct json *limits, const struct sample *s, const char *boot_id, uint64_t seq,
		     bool full, struct metric_dict_cache *dict);

/**
 * PREFIX/ID/limits: {"ts","time_ms","boot_id","seq","metrics"}: the sample
 * the values were first seen in, its state's seq, and METRICS, the object
 * mqtt_state_json() wrote into its LIMITS.
 */
void mqtt_limits_json(struct json *j, const struct sample *s, const char *boot_id, uint64_t seq,
		      const struct json *metrics);

/** True for the transitions published on PREFIX/ID/alerts (not pending, not cancelled). */
bool mqtt_alert_published(enum alert_transition t);

/** PREFIX/ID/alerts: {"boot_id","seq", then every field of alert_event_to_json()}. */
void mqtt_alert_json(struct json *j, const struct alert_event *ev, const char *boot_id, uint64_t seq);

/** The retained list of firing alerts, kept from the alert events. */
struct mqtt_active {
	struct {
		char fingerprint[ALERT_FINGERPRINT_LEN + 1];
		char *json; /* alert_event_to_json() of its latest event */
	} items[MQTT_ACTIVE_MAX];
	size_t count;
};

/**
 * Applies EV: firing, escalated, deescalated and repeat add or replace the
 * alert, resolved removes it; pending and cancelled change nothing.
 * Returns true when the list changed.
 */
bool mqtt_active_update(struct mqtt_active *a, const struct alert_event *ev);

/** PREFIX/ID/alerts/active: [alert, ...] in the order they started firing. */
void mqtt_active_json(struct json *j, const struct mqtt_active *a);

void mqtt_active_free(struct mqtt_active *a);

/** PREFIX/ID/throttle: {"active","reasons","context"} (throttle_to_json). */
void mqtt_throttle_json(struct json *j, const struct throttle_state *t);

/**
 * Writes what identifies the throttle state (active, context, each cause's
 * reason, kind and source; not the values) into J, reset first: the
 * throttle topic is published when this changes, not when a temperature moves.
 */
void mqtt_throttle_signature(struct json *j, const struct throttle_state *t);

/**
 * PREFIX/ID/info: {"device_id","model","soc","module","l4t","jetpack",
 * "power_modes":[{"id","name"}],"default_power_mode","agent","agent_version",
 * "boot_id","interval_ms"}.
 */
void mqtt_info_json(struct json *j, const struct agent_info *info, const char *device_id, const char *boot_id);

/** A plain metric value for PREFIX/ID/metric/NAME ("52.9", "1500"); false when not finite. */
bool mqtt_format_value(double v, char *buf, size_t size);

/* ---- Home Assistant discovery ---- */

struct mqtt_ha_ctx {
	const char *ha_prefix;    /* "homeassistant" */
	const char *device_id;    /* sanitised */
	const char *state_topic;  /* what the entities read: PREFIX/ID/ha, the view */
	const char *status_topic; /* PREFIX/ID/status */
	int64_t expire_after_s;   /* mqtt_ha_expire_after_s(); 0 = none */
	const struct agent_info *info;
};

/** How many metrics of SET get a sensor of their own in discovery (to notice a set that grew). */
size_t mqtt_ha_sensor_count(const struct metric_set *set, struct metric_dict_cache *dict);

/** Called once per discovery config: retained TOPIC with PAYLOAD (LEN bytes). */
typedef void (*mqtt_ha_emit)(const char *topic, const char *payload, size_t len, void *data);

/**
 * Builds the discovery configs for the metrics present in SET: a sensor
 * for each metric the dictionary gives an entity (its `ha`: CPU/GPU/EMC
 * load, GPU/EMC clock, RAM and swap in use, every temp.SENSOR_c, every
 * power.RAIL.mw in W, every fan's rpm), the power mode, and a
 * binary_sensor for throttling. DICT keeps the metrics' dictionary
 * entries. Returns how many were emitted.
 */
size_t mqtt_ha_discovery(const struct mqtt_ha_ctx *ctx, const struct metric_set *set, struct metric_dict_cache *dict,
			 mqtt_ha_emit emit, void *data);

/* ---- the view Home Assistant reads: PREFIX/ID/ha ---- */

/* An unchanged view is published again this often (or every ha_interval when longer). */
#define MQTT_HA_REFRESH_MS 30000

/** How often an unchanged view is published again: the longer of MQTT_HA_REFRESH_MS and HA_INTERVAL_MS. */
int64_t mqtt_ha_refresh_ms(int64_t ha_interval_ms);

/**
 * The entities' expire_after in seconds: three missed refreshes of the
 * view, or five samples when sampling is slower.
 */
int64_t mqtt_ha_expire_after_s(int64_t interval_ms, int64_t ha_interval_ms);

/**
 * Whether an entity reads METRIC, and then the decimal digits of its value
 * in the view (*DIGITS): the entity's suggested_display_precision in the
 * metric's own unit (temperatures 1, loads 0, power -1: tens of mW, shown
 * as W with 2 decimals).
 */
bool mqtt_ha_view_digits(const char *metric, int *digits);

/** V rounded to DIGITS decimal digits (negative: to tens, hundreds...), half away from zero. */
double mqtt_ha_round(double v, int digits);

/**
 * Writes the view: {"ts","time_ms","power_mode","metrics":{only those an
 * entity reads, rounded},"throttle":{"active","reasons"}}. The same shape
 * as the state topic, so the templates read either. Returns the offset in
 * J's output where the untimed part starts (the comma before
 * "power_mode"): what the publisher compares to see a change.
 */
size_t mqtt_ha_view_json(struct json *j, const struct sample *s, struct metric_dict_cache *dict);

/* What makes the view go out at once, without waiting for ha_interval. */
struct mqtt_ha_edges {
	bool active;
	bool reason[THROTTLE_REASON_COUNT];
	double alerts_firing; /* NAN when the sample has no count */
	char power_mode[POWER_MODE_NAME_MAX];
	uint64_t on; /* the binary entities' states (a watched process running), the first 64 in sample order */
};

/** Fills OUT with the edges of S (DICT: its metrics' dictionary entries, kept while their names stay). */
void mqtt_ha_view_edges(const struct sample *s, struct metric_dict_cache *dict, struct mqtt_ha_edges *out);

/** Whether A and B are the same edges. */
bool mqtt_ha_edges_equal(const struct mqtt_ha_edges *a, const struct mqtt_ha_edges *b);

/* ---- connection ---- */

/**
 * Reconnect delay of attempt ATTEMPT (0 = the first retry) with full
 * jitter: uniform in [0, min(CAP, BASE * 2^ATTEMPT)] from RND, but never
 * below BASE (no tight loop against a broker that refuses at once).
 */
int64_t mqtt_backoff_ms(int64_t base_ms, int64_t cap_ms, unsigned attempt, uint64_t rnd);

/**
 * Bytes of one PUBLISH packet on the wire (fixed header, topic, packet id
 * for QoS > 0, the empty property list of MQTT 5, payload); TCP/IP and TLS
 * framing not included.
 */
size_t mqtt_publish_wire_bytes(size_t topic_len, size_t payload_len, int qos, bool v5);

#endif
