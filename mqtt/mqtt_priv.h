/*
 * Inside the MQTT sink: its state, shared by three files that each hold
 * one side of it.
 *
 *   mqtt.c          creation (configuration, topics, spool, seq) and teardown
 *   mqtt_conn.c     the connection: resolve, connect, back-off, the
 *                   libmosquitto callbacks, keepalive and loss; the only
 *                   file that includes <mosquitto.h>
 *   mqtt_publish.c  what goes out: state, limits, alerts, alerts/active, throttle,
 *                   discovery, the Home Assistant view, metric topics,
 *                   pumping the spool, the sequence file
 *
 * Publishing hands messages to the connection through mqtt_conn_publish()
 * and mqtt_conn_send(), so no libmosquitto type leaks out of mqtt_conn.c.
 */
#ifndef TEGRAWATCH_MQTT_PRIV_H
#define TEGRAWATCH_MQTT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/json.h"
#include "core/spool.h"
#include "mqtt.h"

#define ERROR_TEXT_MAX 256

struct mosquitto;
struct resolve; /* an asynchronous name lookup (mqtt_conn.c) */

enum conn_state {
	CONN_IDLE,       /* waiting for the next attempt */
	CONN_RESOLVING,  /* getaddrinfo_a() running */
	CONN_CONNECTING, /* socket open, no CONNACK yet */
	CONN_CONNECTED,
};

/* A spooled message handed to libmosquitto: its mid, and the spool record it is. */
struct inflight {
	int mid;
	uint64_t id;
};

struct mqtt_sink {
	struct sink base;
	/* the configuration, copied */
	char *host;
	int port;
	char *client_id;
	bool client_id_pinned; /* mqtt.client_id set: the advice on a session taken over differs */
	char *username;
	char *password;
	bool v5;
	int keepalive_s;
	int qos;
	bool tls;
	char *ca_file;
	char *cert_file;
	char *key_file;
	bool tls_insecure;
	int64_t backoff_base_ms;
	int64_t backoff_cap_ms;
	int64_t connect_timeout_ms;
	int inflight_max;
	char **metric_globs;
	size_t metric_glob_count;
	bool ha;
	char *ha_prefix;
	int64_t ha_interval_ms;
	char *display_name;
	char device_id[MQTT_ID_MAX];
	bool numeric_host;
	bool state_full;

	char t_status[MQTT_TOPIC_MAX];
	char t_state[MQTT_TOPIC_MAX];
	char t_limits[MQTT_TOPIC_MAX];
	char t_alerts[MQTT_TOPIC_MAX];
	char t_active[MQTT_TOPIC_MAX];
	char t_throttle[MQTT_TOPIC_MAX];
	char t_info[MQTT_TOPIC_MAX];
	char t_metric[MQTT_TOPIC_MAX];
	char t_ha_status[MQTT_TOPIC_MAX];
	char t_ha[MQTT_TOPIC_MAX]; /* the view Home Assistant reads */

	char boot_id[MQTT_BOOT_ID_MAX];
	struct agent_info info; /* its strings: display_name, and the version (a literal) */
	struct nvpmodel_conf modes;
	char *info_json;

	uint64_t seq;
	int seq_fd;

	struct spool *spool;
	struct inflight *inflight;
	int inflight_count;

	struct mosquitto *mosq;
	enum conn_state state;
	struct resolve *resolve;
	unsigned addr_index;
	unsigned attempt;
	int64_t next_attempt_ms;
	int64_t attempt_started_ms;
	int64_t connected_ms;  /* when the CONNACK came */
	unsigned quick_drops;  /* connections in a row lost before they were stable */
	unsigned quick_closes; /* of those, the broker closed in a row with nothing said (MQTT 3.1.1) */
	bool takeover_told;    /* a session taken over was explained (once) */
	/* set by callbacks, acted on outside them */
	bool connack_ok;
	bool refused;
	int connack_rc;
	bool lost;
	int lost_rc;
	int lost_errno;
	char lib_error[ERROR_TEXT_MAX];  /* the last error libmosquitto logged (TLS details) */
	char last_error[ERROR_TEXT_MAX]; /* the last failure logged, to log repeats quietly */

	struct metric_dict_cache *dict; /* the metrics' dictionary entries, kept while their names stay */

	struct json limits;     /* this sample's limits object (mqtt_state_json) */
	char *limits_metrics;   /* the limits object last published, to see a change */
	char *limits_json;      /* the limits message last published: again on every connect */
	uint64_t limits_pushed; /* the spool's pushed count once it took that message */
	bool limits_dirty;
	char *throttle_json;
	char *throttle_signature; /* mqtt_throttle_signature() of the published state */
	bool throttle_dirty;
	struct mqtt_active active;
	bool active_dirty;
	int64_t discovery_due_ms;      /* -1: none due */
	char *ha_view;                 /* the view last published, without its time (mqtt_ha_view_json) */
	struct mqtt_ha_edges ha_edges; /* its edges */
	int64_t ha_view_ms;            /* the mono_ms of that view's sample */
	bool ha_view_due;              /* publish with the next sample, changed or not (a new connection) */
	size_t discovered;             /* metric sensors in the last discovery burst */
	size_t metrics_seen;           /* the largest metric set seen: a larger one may bring new sensors */
	int mid_offline;
	bool offline_acked;

	uint64_t connects;
	uint64_t disconnects;
	uint64_t publishes;
	uint64_t local_drops; /* messages the broker or the library refused for good */
	int64_t last_sync_ms;
	uint64_t rng;
	struct json j;
};

/* ---- mqtt_conn.c: the connection ---- */

/*
 * libmosquitto's global set-up and clean-up, one pair per sink; the first
 * set-up loads the library. 0, or -ELIBACC (said in the log) when it cannot.
 */
int mqtt_conn_lib_init(void);
void mqtt_conn_lib_cleanup(void);

/* Starts a connection attempt now: a lookup for a host name, else the connect. */
void mqtt_conn_begin(struct mqtt_sink *s, int64_t now);

/* A clean stop: `offline` and DISCONNECT when connected, then the client and any lookup freed. */
void mqtt_conn_close(struct mqtt_sink *s);

/* Publishes outside the spool (retained topics, discovery); a no-op unless connected. */
void mqtt_conn_publish(struct mqtt_sink *s, const char *topic, const void *payload, size_t len, int qos, bool retain);

/*
 * Hands spooled record REC to libmosquitto. Returns 0 and its *MID;
 * -EMSGSIZE for a record that can never go out (logged); -ENOTCONN when
 * the connection is gone (noted in s->lost).
 */
int mqtt_conn_send(struct mqtt_sink *s, const struct spool_record *rec, int *mid);

/* The sink_ops that belong to the connection. */
int mqtt_conn_get_fd(struct sink *sink);
short mqtt_conn_poll_events(struct sink *sink);
int mqtt_conn_dispatch(struct sink *sink);

/* ---- mqtt_publish.c: what goes out ---- */

/* The per-boot sequence: from SPOOL_FILE.seq when there is a spool file, else from the uptime. */
void mqtt_pub_seq_open(struct mqtt_sink *s, const char *spool_file);

/* Retained topics that changed since they were last published. */
void mqtt_pub_latest(struct mqtt_sink *s);

/* Hands spooled messages to libmosquitto while the window has room. */
void mqtt_pub_pump(struct mqtt_sink *s);

/* The sink_ops that publish. */
int mqtt_pub_write(struct sink *sink, const struct sample *smp);
void mqtt_pub_notify(struct sink *sink, const struct alert_event *ev);
void mqtt_pub_add_metrics(struct sink *sink, struct metric_set *m);

#endif
