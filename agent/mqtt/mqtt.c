/*
 * The MQTT sink: libmosquitto driven from the agent's poll loop (the only
 * file that includes <mosquitto.h>).
 *
 * One connection attempt is one mosquitto object: created, configured,
 * connected with mosquitto_connect_async(), and destroyed when the
 * connection ends for any reason. libmosquitto therefore never keeps
 * messages of its own across connections (it would resend them after the
 * next CONNACK, next to our spool's copies): the spool is the single
 * queue. At most `inflight` spooled QoS 1 messages are handed to the
 * library at a time; PUBACKs acknowledge them in the spool, a lost
 * connection rewinds it. Callbacks only record what happened; the work is
 * done in dispatch() and write(), outside libmosquitto.
 */
#include "mqtt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mosquitto.h>

#include "agent/core/log.h"
#include "agent/core/metrics.h"
#include "agent/core/spool.h"

#define SYNC_INTERVAL_MS     1000  /* spool_sync(): at most this much is lost by a power cut */
#define SHUTDOWN_WAIT_MS     2000  /* a clean stop waits this long for `offline` to be acknowledged */
#define HA_JITTER_MS         5000  /* discovery after a Home Assistant birth message: 0..5 s later */
#define CONNECT_TIMEOUT_MS   30000 /* no CONNACK after min(keepalive, this): try again */
#define SECRET_MAX           1024
#define BOOT_ID_PATH         "/proc/sys/kernel/random/boot_id"
#define OS_CA_PATH           "/etc/ssl/certs"
#define UNKNOWN_BOOT_ID      "00000000-0000-0000-0000-000000000000"
#define ERROR_TEXT_MAX       256

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

/* An asynchronous name lookup; leaked on purpose if it cannot be cancelled at exit. */
struct resolve {
	struct gaicb cb;
	struct addrinfo hints;
	char host[];
};

struct mqtt_sink {
	struct sink base;
	/* the configuration, copied */
	char *host;
	int port;
	char *client_id;
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
	char device_id[MQTT_ID_MAX];
	bool numeric_host;

	char t_status[MQTT_TOPIC_MAX];
	char t_state[MQTT_TOPIC_MAX];
	char t_alerts[MQTT_TOPIC_MAX];
	char t_active[MQTT_TOPIC_MAX];
	char t_throttle[MQTT_TOPIC_MAX];
	char t_info[MQTT_TOPIC_MAX];
	char t_metric[MQTT_TOPIC_MAX];
	char t_ha_status[MQTT_TOPIC_MAX];

	char boot_id[MQTT_BOOT_ID_MAX];
	struct mqtt_info info;
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
	/* set by callbacks, acted on outside them */
	bool connack_ok;
	bool refused;
	int connack_rc;
	bool lost;
	int lost_rc;
	int lost_errno;
	char lib_error[ERROR_TEXT_MAX]; /* the last error libmosquitto logged (TLS details) */
	char last_error[ERROR_TEXT_MAX]; /* the last failure logged, to log repeats quietly */

	char *throttle_json;
	bool throttle_dirty;
	struct mqtt_active active;
	bool active_dirty;
	int64_t discovery_due_ms; /* -1: none due */
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

/* ---- small helpers ---- */

static int64_t
mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *
xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");
	if (!p) {
		abort();
	}
	return p;
}

/* xorshift64*: jitter only, not cryptography */
static uint64_t
next_random(struct mqtt_sink *s)
{
	uint64_t x = s->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	s->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Reads at most SIZE - 1 bytes of PATH into BUF. Returns the length or -errno. */
static ssize_t
read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	size_t len = 0;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			int e = errno;
			close(fd);
			return -e;
		}
		if (n == 0) {
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

static void
wipe_free(char *secret)
{
	if (secret) {
		explicit_bzero(secret, strlen(secret));
		free(secret);
	}
}

/* ---- the per-boot sequence ---- */

static void
seq_open(struct mqtt_sink *s, const char *spool_file)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	uint64_t uptime_base = mqtt_seq_base_from_uptime((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	s->seq = uptime_base;
	s->seq_fd = -1;
	if (!spool_file || !spool_file[0]) {
		return;
	}
	char path[4096];
	if (snprintf(path, sizeof(path), "%s.seq", spool_file) >= (int)sizeof(path)) {
		return;
	}
	s->seq_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->seq_fd < 0) {
		log_warn("mqtt: cannot open %s (%s): seq starts from the uptime", path, strerror(errno));
		return;
	}
	char text[128];
	ssize_t n = pread(s->seq_fd, text, sizeof(text) - 1, 0);
	text[n > 0 ? n : 0] = '\0';
	uint64_t seq;
	int r = mqtt_seq_parse(text, s->boot_id, &seq);
	if (r == 0) {
		s->seq = seq;
	} else if (r == -ESTALE) {
		s->seq = 0; /* a new boot: count from 1 again */
	} else if (n > 0) {
		log_warn("mqtt: %s is damaged: seq continues from the uptime", path);
	}
	if (ftruncate(s->seq_fd, 0) < 0) {
		log_debug("mqtt: truncate %s: %s", path, strerror(errno));
	}
}

/*
 * The next sequence number, written down before it is used. No fsync: a
 * crash of the agent keeps the page cache, and a power cut starts a new
 * boot, where the count starts again anyway.
 */
static uint64_t
next_seq(struct mqtt_sink *s)
{
	s->seq++;
	if (s->seq_fd >= 0) {
		char text[96];
		size_t len = mqtt_seq_format(text, sizeof(text), s->boot_id, s->seq);
		if (pwrite(s->seq_fd, text, len, 0) != (ssize_t)len) {
			log_debug("mqtt: cannot write the sequence file: %s", strerror(errno));
		}
	}
	return s->seq;
}

/* ---- libmosquitto callbacks: record only ---- */

static void
on_connect(struct mosquitto *mosq, void *obj, int rc)
{
	(void)mosq;
	struct mqtt_sink *s = obj;
	if (rc == 0) {
		s->connack_ok = true;
	} else {
		s->refused = true;
		s->connack_rc = rc;
	}
}

static void
on_disconnect(struct mosquitto *mosq, void *obj, int rc)
{
	(void)mosq;
	struct mqtt_sink *s = obj;
	if (!s->lost) {
		s->lost = true;
		s->lost_rc = rc;
		s->lost_errno = errno;
	}
}

static void
on_publish(struct mosquitto *mosq, void *obj, int mid, int reason, const mosquitto_property *props)
{
	(void)mosq;
	(void)props;
	struct mqtt_sink *s = obj;
	s->publishes++;
	if (mid == s->mid_offline) {
		s->offline_acked = true;
	}
	for (int i = 0; i < s->inflight_count; i++) {
		if (s->inflight[i].mid != mid) {
			continue;
		}
		if (reason >= 128) {
			/* refused by the broker (MQTT 5: not authorised, quota...): resending would loop */
			log_warn("mqtt: the broker refused a message: %s", mosquitto_reason_string(reason));
			s->local_drops++;
		}
		spool_ack(s->spool, s->inflight[i].id);
		s->inflight[i] = s->inflight[--s->inflight_count];
		break;
	}
}

static void
on_message(struct mosquitto *mosq, void *obj, const struct mosquitto_message *msg)
{
	(void)mosq;
	struct mqtt_sink *s = obj;
	if (strcmp(msg->topic, s->t_ha_status) == 0 && msg->payloadlen == 6 &&
	    memcmp(msg->payload, "online", 6) == 0) {
		/* Home Assistant (re)started: every device answering at once would be a burst */
		s->discovery_due_ms = mono_ms() + (int64_t)(next_random(s) % (HA_JITTER_MS + 1));
	}
}

static void
on_log(struct mosquitto *mosq, void *obj, int level, const char *str)
{
	(void)mosq;
	struct mqtt_sink *s = obj;
	if (level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING)) {
		snprintf(s->lib_error, sizeof(s->lib_error), "%s", str);
	}
	log_debug("mqtt: libmosquitto: %s", str);
}

/* ---- connection ---- */

static void
teardown(struct mqtt_sink *s)
{
	if (s->mosq) {
		mosquitto_destroy(s->mosq);
		s->mosq = NULL;
	}
	s->connack_ok = false;
	s->refused = false;
	s->lost = false;
	s->lost_rc = 0;
	s->inflight_count = 0;
	s->mid_offline = 0;
}

/* Logs a failure: loudly when it is new, quietly when it repeats. */
static void
report_failure(struct mqtt_sink *s, const char *why, int64_t delay_ms)
{
	if (strcmp(why, s->last_error) != 0) {
		log_warn("mqtt: %s:%d: %s; retrying in %.1f s, then with back-off (repeats logged at info level)",
			 s->host, s->port, why, (double)delay_ms / 1000.0);
		snprintf(s->last_error, sizeof(s->last_error), "%s", why);
	} else {
		log_info("mqtt: %s:%d: %s; retrying in %.1f s", s->host, s->port, why, (double)delay_ms / 1000.0);
	}
}

/* Ends the attempt or connection and schedules the next one. Never gives up. */
static void
fail(struct mqtt_sink *s, const char *why, int64_t now)
{
	bool was_connected = s->state == CONN_CONNECTED;
	teardown(s);
	if (was_connected) {
		s->disconnects++;
		s->attempt = 0;
		spool_rewind(s->spool);
	}
	int64_t delay = mqtt_backoff_ms(s->backoff_base_ms, s->backoff_cap_ms, s->attempt, next_random(s));
	if (s->attempt < 63) {
		s->attempt++;
	}
	s->next_attempt_ms = now + delay;
	s->state = CONN_IDLE;
	if (was_connected) {
		log_warn("mqtt: lost the connection to %s:%d: %s; reconnecting in %.1f s", s->host, s->port, why,
			 (double)delay / 1000.0);
		snprintf(s->last_error, sizeof(s->last_error), "%s", why);
	} else {
		report_failure(s, why, delay);
	}
}

static void
describe_rc(struct mqtt_sink *s, int rc, int err, char *buf, size_t size)
{
	if (rc == MOSQ_ERR_ERRNO) {
		snprintf(buf, size, "%s", strerror(err));
	} else if (rc == MOSQ_ERR_TLS && s->lib_error[0]) {
		snprintf(buf, size, "TLS failed: %.200s", s->lib_error);
	} else {
		snprintf(buf, size, "%s", mosquitto_strerror(rc));
	}
}

/* Creates and configures the mosquitto object of one attempt. */
static int
setup_client(struct mqtt_sink *s, char *why, size_t size)
{
	s->mosq = mosquitto_new(s->client_id, true, s);
	if (!s->mosq) {
		snprintf(why, size, "cannot create the client: %s", strerror(errno));
		return -1;
	}
	struct mosquitto *m = s->mosq;
	mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, s->v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311);
	mosquitto_int_option(m, MOSQ_OPT_SEND_MAXIMUM, s->inflight_max);
	mosquitto_int_option(m, MOSQ_OPT_TCP_NODELAY, 1);
	mosquitto_connect_callback_set(m, on_connect);
	mosquitto_disconnect_callback_set(m, on_disconnect);
	mosquitto_publish_v5_callback_set(m, on_publish);
	mosquitto_message_callback_set(m, on_message);
	mosquitto_log_callback_set(m, on_log);
	int rc = mosquitto_will_set(m, s->t_status, 7, "offline", 1, true);
	if (rc == MOSQ_ERR_SUCCESS && s->username[0]) {
		rc = mosquitto_username_pw_set(m, s->username, s->password[0] ? s->password : NULL);
	}
	if (rc == MOSQ_ERR_SUCCESS && s->tls) {
		const char *cert = s->cert_file[0] ? s->cert_file : NULL;
		const char *key = s->key_file[0] ? s->key_file : NULL;
		if (s->ca_file[0]) {
			rc = mosquitto_tls_set(m, s->ca_file, NULL, cert, key, NULL);
		} else {
			mosquitto_int_option(m, MOSQ_OPT_TLS_USE_OS_CERTS, 1);
			rc = mosquitto_tls_set(m, NULL, OS_CA_PATH, cert, key, NULL);
		}
		if (rc == MOSQ_ERR_SUCCESS) {
			/* peer verification on, TLS 1.2 at least (1.3 allowed) */
			rc = mosquitto_tls_opts_set(m, 1, "tlsv1.2", NULL);
		}
		if (rc == MOSQ_ERR_SUCCESS && s->tls_insecure) {
			rc = mosquitto_tls_insecure_set(m, true);
		}
		if (rc != MOSQ_ERR_SUCCESS) {
			snprintf(why, size, "TLS set-up failed (ca_file, cert_file, key_file readable?): %s",
				 mosquitto_strerror(rc));
			return -1;
		}
	}
	if (rc != MOSQ_ERR_SUCCESS) {
		snprintf(why, size, "client set-up failed: %s", mosquitto_strerror(rc));
		return -1;
	}
	return 0;
}

/* Connects to ADDRESS (numeric, or the host name for TLS). */
static void
connect_to(struct mqtt_sink *s, const char *address, int64_t now)
{
	char why[ERROR_TEXT_MAX];
	s->lib_error[0] = '\0';
	if (setup_client(s, why, sizeof(why)) < 0) {
		fail(s, why, now);
		return;
	}
	errno = 0;
	int rc = mosquitto_connect_async(s->mosq, address, s->port, s->keepalive_s);
	if (rc != MOSQ_ERR_SUCCESS) {
		describe_rc(s, rc, errno, why, sizeof(why));
		fail(s, why, now);
		return;
	}
	s->state = CONN_CONNECTING;
}

static void
resolve_free(struct resolve *r)
{
	if (r) {
		if (r->cb.ar_result) {
			freeaddrinfo(r->cb.ar_result);
		}
		free(r);
	}
}

static void
begin_attempt(struct mqtt_sink *s, int64_t now)
{
	s->attempt_started_ms = now;
	if (s->numeric_host) {
		connect_to(s, s->host, now);
		return;
	}
	/*
	 * A name: look it up without blocking the loop (mosquitto_connect_async
	 * would call getaddrinfo() itself, which waits for DNS).
	 */
	size_t len = strlen(s->host);
	struct resolve *r = calloc(1, sizeof(*r) + len + 1);
	if (!r) {
		abort();
	}
	memcpy(r->host, s->host, len + 1);
	r->hints.ai_family = AF_UNSPEC;
	r->hints.ai_socktype = SOCK_STREAM;
	r->hints.ai_flags = AI_ADDRCONFIG;
	r->cb.ar_name = r->host;
	r->cb.ar_request = &r->hints;
	struct gaicb *list[1] = {&r->cb};
	int rc = getaddrinfo_a(GAI_NOWAIT, list, 1, NULL);
	if (rc != 0) {
		free(r);
		fail(s, gai_strerror(rc), now);
		return;
	}
	s->resolve = r;
	s->state = CONN_RESOLVING;
}

static void
check_resolve(struct mqtt_sink *s, int64_t now)
{
	struct resolve *r = s->resolve;
	int rc = gai_error(&r->cb);
	if (rc == EAI_INPROGRESS) {
		return;
	}
	s->resolve = NULL;
	if (rc != 0) {
		char why[ERROR_TEXT_MAX];
		snprintf(why, sizeof(why), "cannot resolve the host name: %s", gai_strerror(rc));
		resolve_free(r);
		fail(s, why, now);
		return;
	}
	/* rotate through the addresses, one per attempt */
	unsigned n = 0;
	for (struct addrinfo *ai = r->cb.ar_result; ai; ai = ai->ai_next) {
		n++;
	}
	struct addrinfo *ai = r->cb.ar_result;
	for (unsigned i = 0; n && i < s->addr_index % n; i++) {
		ai = ai->ai_next;
	}
	s->addr_index++;
	char numeric[NI_MAXHOST];
	if (!ai || getnameinfo(ai->ai_addr, ai->ai_addrlen, numeric, sizeof(numeric), NULL, 0, NI_NUMERICHOST) !=
			   0) {
		resolve_free(r);
		fail(s, "the host name resolved to no usable address", now);
		return;
	}
	resolve_free(r);
	/*
	 * TLS checks the certificate against the name we connect to, so TLS
	 * connects by name: libmosquitto resolves it again (from the cache the
	 * lookup above just filled, where there is one). Plain TCP connects to
	 * the address found.
	 */
	connect_to(s, s->tls ? s->host : numeric, now);
}

static void
publish_direct(struct mqtt_sink *s, const char *topic, const void *payload, size_t len, int qos, bool retain)
{
	if (s->state != CONN_CONNECTED || s->lost) {
		return;
	}
	int rc = mosquitto_publish(s->mosq, NULL, topic, (int)len, payload, qos, retain);
	if (rc == MOSQ_ERR_NO_CONN || rc == MOSQ_ERR_CONN_LOST || rc == MOSQ_ERR_ERRNO) {
		s->lost = true;
		s->lost_rc = rc;
		s->lost_errno = errno;
	} else if (rc != MOSQ_ERR_SUCCESS) {
		log_debug("mqtt: publish on %s: %s", topic, mosquitto_strerror(rc));
	}
}

/* Hands spooled messages to libmosquitto while the window has room. */
static void
pump(struct mqtt_sink *s)
{
	while (s->state == CONN_CONNECTED && !s->lost && s->inflight_count < s->inflight_max) {
		const struct spool_record *rec = spool_peek_next(s->spool);
		if (!rec) {
			break;
		}
		int mid = 0;
		int rc = mosquitto_publish(s->mosq, &mid, rec->topic, (int)rec->payload_len, rec->payload, rec->qos,
					   rec->retain);
		if (rc == MOSQ_ERR_SUCCESS) {
			if (rec->qos == 0) {
				spool_ack(s->spool, rec->id); /* at most once: handed over is done */
			} else {
				s->inflight[s->inflight_count++] = (struct inflight){.mid = mid, .id = rec->id};
			}
			continue;
		}
		if (rc == MOSQ_ERR_PAYLOAD_SIZE || rc == MOSQ_ERR_OVERSIZE_PACKET || rc == MOSQ_ERR_INVAL ||
		    rc == MOSQ_ERR_MALFORMED_UTF8 || rc == MOSQ_ERR_QOS_NOT_SUPPORTED) {
			/* this one can never go out: drop it (counted) rather than block the queue */
			log_warn("mqtt: dropping a %zu-byte message on %s: %s", rec->payload_len, rec->topic,
				 mosquitto_strerror(rc));
			s->local_drops++;
			spool_ack(s->spool, rec->id);
			continue;
		}
		/* MOSQ_ERR_NO_CONN and friends: the connection is gone; the spool keeps the record */
		s->lost = true;
		s->lost_rc = rc;
		s->lost_errno = errno;
		break;
	}
}

static void
emit_discovery(const char *topic, const char *payload, size_t len, void *data)
{
	publish_direct(data, topic, payload, len, 1, true);
}

static void
publish_discovery(struct mqtt_sink *s, const struct metric_set *set)
{
	struct mqtt_ha_ctx ctx = {
		.ha_prefix = s->ha_prefix,
		.device_id = s->device_id,
		.state_topic = s->t_state,
		.status_topic = s->t_status,
		.info = &s->info,
	};
	size_t n = mqtt_ha_discovery(&ctx, set, emit_discovery, s);
	log_info("mqtt: published %zu Home Assistant discovery configs", n);
}

/* Retained topics that changed since they were last published. */
static void
publish_latest(struct mqtt_sink *s)
{
	if (s->state != CONN_CONNECTED) {
		return;
	}
	if (s->throttle_dirty && s->throttle_json) {
		publish_direct(s, s->t_throttle, s->throttle_json, strlen(s->throttle_json), 1, true);
		s->throttle_dirty = false;
	}
	if (s->active_dirty) {
		json_reset(&s->j);
		mqtt_active_json(&s->j, &s->active);
		publish_direct(s, s->t_active, s->j.buf, s->j.len, 1, true);
		s->active_dirty = false;
	}
}

/* CONNACK accepted: availability, the retained state, subscriptions, then the backlog. */
static void
on_connected(struct mqtt_sink *s, int64_t now)
{
	s->state = CONN_CONNECTED;
	s->connects++;
	s->attempt = 0;
	if (s->last_error[0]) {
		log_warn("mqtt: connected to %s:%d", s->host, s->port);
		s->last_error[0] = '\0';
	} else {
		log_info("mqtt: connected to %s:%d", s->host, s->port);
	}
	publish_direct(s, s->t_status, "online", 6, 1, true);
	publish_direct(s, s->t_info, s->info_json, strlen(s->info_json), 1, true);
	s->throttle_dirty = true;
	s->active_dirty = true;
	publish_latest(s);
	if (s->ha) {
		int rc = mosquitto_subscribe(s->mosq, NULL, s->t_ha_status, 0);
		if (rc != MOSQ_ERR_SUCCESS) {
			log_debug("mqtt: subscribe %s: %s", s->t_ha_status, mosquitto_strerror(rc));
		}
		s->discovery_due_ms = now; /* with the next sample: discovery lists the metrics it has */
	}
	pump(s);
}

/* Reads and writes what the socket allows, then keepalive; notes what ended. */
static void
service(struct mqtt_sink *s, int64_t now)
{
	int fd = mosquitto_socket(s->mosq);
	if (fd < 0) {
		s->lost = true;
		s->lost_rc = MOSQ_ERR_NO_CONN;
		return;
	}
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (mosquitto_want_write(s->mosq)) {
		p.events |= POLLOUT;
	}
	if (poll(&p, 1, 0) < 0) {
		return;
	}
	int rc = MOSQ_ERR_SUCCESS;
	/*
	 * While connecting, a writable socket may also mean "the TLS handshake
	 * can go on": mosquitto_loop_read() is what continues it.
	 */
	bool connecting = s->state == CONN_CONNECTING;
	if ((p.revents & (POLLIN | POLLERR | POLLHUP)) || (connecting && (p.revents & POLLOUT))) {
		errno = 0;
		rc = mosquitto_loop_read(s->mosq, 1);
	}
	if (rc == MOSQ_ERR_SUCCESS && !s->lost && mosquitto_socket(s->mosq) >= 0 && (p.revents & POLLOUT) &&
	    mosquitto_want_write(s->mosq)) {
		errno = 0;
		rc = mosquitto_loop_write(s->mosq, 1);
	}
	if (rc == MOSQ_ERR_SUCCESS && !s->lost) {
		errno = 0;
		rc = mosquitto_loop_misc(s->mosq);
	}
	if (rc != MOSQ_ERR_SUCCESS && !s->lost) {
		s->lost = true;
		s->lost_rc = rc;
		s->lost_errno = errno;
	}
	if (s->lost) {
		return;
	}
	if (s->state == CONN_CONNECTING && s->connack_ok) {
		on_connected(s, now);
	} else if (s->state == CONN_CONNECTING && now - s->attempt_started_ms > s->connect_timeout_ms) {
		s->lost = true;
		s->lost_rc = MOSQ_ERR_TIMEOUT;
	}
}

static void
handle_lost(struct mqtt_sink *s, int64_t now)
{
	char why[ERROR_TEXT_MAX];
	if (s->refused) {
		const char *reason = s->v5 ? mosquitto_reason_string(s->connack_rc) : mosquitto_connack_string(s->connack_rc);
		snprintf(why, sizeof(why), "the broker refused the connection: %s", reason);
	} else if (s->lost_rc == MOSQ_ERR_TIMEOUT) {
		snprintf(why, sizeof(why), "no answer (CONNACK) within %.0f s", (double)s->connect_timeout_ms / 1000.0);
	} else if (s->lost_rc == 0) {
		snprintf(why, sizeof(why), "the broker closed the connection");
	} else {
		describe_rc(s, s->lost_rc, s->lost_errno, why, sizeof(why));
	}
	fail(s, why, now);
}

/* ---- the sink ---- */

static int
mqtt_get_fd(struct sink *sink)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	return s->mosq ? mosquitto_socket(s->mosq) : -1;
}

static short
mqtt_poll_events(struct sink *sink)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	short ev = POLLIN;
	if (s->mosq && mosquitto_want_write(s->mosq)) {
		ev |= POLLOUT;
	}
	return ev;
}

static int
mqtt_dispatch(struct sink *sink)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	int64_t now = mono_ms();
	if (s->mosq && !s->lost) {
		service(s, now);
	}
	if (s->state == CONN_RESOLVING) {
		check_resolve(s, now);
	}
	if (s->state == CONN_CONNECTED && !s->lost) {
		publish_latest(s);
		pump(s);
	}
	if (s->lost) {
		handle_lost(s, now);
	}
	if (s->state == CONN_IDLE && now >= s->next_attempt_ms) {
		begin_attempt(s, now);
	}
	if (now - s->last_sync_ms >= SYNC_INTERVAL_MS) {
		int r = spool_sync(s->spool);
		if (r < 0) {
			log_debug("mqtt: spool sync: %s", strerror(-r));
		}
		s->last_sync_ms = now;
	}
	return 0;
}

static void
publish_metric_topics(struct mqtt_sink *s, const struct metric_set *set)
{
	char topic[MQTT_TOPIC_MAX + METRIC_NAME_MAX], value[40];
	for (size_t i = 0; i < set->count; i++) {
		const char *name = set->items[i].name;
		bool match = false;
		for (size_t g = 0; g < s->metric_glob_count && !match; g++) {
			match = metric_glob_match(s->metric_globs[g], name);
		}
		if (!match || !mqtt_format_value(set->items[i].value, value, sizeof(value))) {
			continue;
		}
		snprintf(topic, sizeof(topic), "%s/%s", s->t_metric, name);
		publish_direct(s, topic, value, strlen(value), 0, false);
	}
}

static int
mqtt_write(struct sink *sink, const struct sample *smp)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	uint64_t seq = next_seq(s);
	json_reset(&s->j);
	mqtt_state_json(&s->j, smp, s->boot_id, seq);
	int r = spool_push(s->spool, s->t_state, s->j.buf, s->j.len, s->qos, false);

	json_reset(&s->j);
	mqtt_throttle_json(&s->j, &smp->throttle);
	if (!s->throttle_json || strcmp(s->throttle_json, s->j.buf) != 0) {
		free(s->throttle_json);
		s->throttle_json = xstrdup(s->j.buf);
		s->throttle_dirty = true;
	}
	if (s->state == CONN_CONNECTED && !s->lost) {
		publish_latest(s);
		if (s->metric_glob_count) {
			publish_metric_topics(s, &smp->metrics);
		}
		if (s->ha && s->discovery_due_ms >= 0 && mono_ms() >= s->discovery_due_ms) {
			s->discovery_due_ms = -1;
			publish_discovery(s, &smp->metrics);
		}
		pump(s);
	}
	return r;
}

static void
mqtt_notify(struct sink *sink, const struct alert_event *ev)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	if (ev->restored) {
		/* alerts/active only: the transition itself was published by an earlier run */
		if (mqtt_active_update(&s->active, ev)) {
			s->active_dirty = true;
		}
		return;
	}
	if (!mqtt_alert_published(ev->transition)) {
		return;
	}
	uint64_t seq = next_seq(s);
	struct json j;
	json_init(&j);
	mqtt_alert_json(&j, ev, s->boot_id, seq);
	int r = spool_push(s->spool, s->t_alerts, j.buf, j.len, 1, false);
	if (r < 0) {
		log_warn("mqtt: cannot queue an alert event: %s", strerror(-r));
	}
	json_free(&j);
	if (mqtt_active_update(&s->active, ev)) {
		s->active_dirty = true;
	}
}

static void
mqtt_add_metrics(struct sink *sink, struct metric_set *m)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	struct spool_stats st;
	spool_get_stats(s->spool, &st);
	metric_set_put(m, "agent.mqtt_connected", s->state == CONN_CONNECTED ? 1 : 0);
	metric_set_put(m, "agent.mqtt_connects_total", (double)s->connects);
	metric_set_put(m, "agent.mqtt_disconnects_total", (double)s->disconnects);
	metric_set_put(m, "agent.mqtt_publishes_total", (double)s->publishes);
	metric_set_put(m, "agent.mqtt_spool_depth", (double)st.depth);
	metric_set_put(m, "agent.mqtt_dropped_total", (double)(st.dropped + s->local_drops));
	metric_set_put(m, "agent.mqtt_spool_corrupt_total", (double)st.corrupt_records);
}

/* A clean stop: `offline` (retained) acknowledged or 2 s passed, then DISCONNECT. */
static void
say_goodbye(struct mqtt_sink *s)
{
	if (s->state != CONN_CONNECTED || s->lost) {
		return;
	}
	int mid = 0;
	if (mosquitto_publish(s->mosq, &mid, s->t_status, 7, "offline", 1, true) != MOSQ_ERR_SUCCESS) {
		return;
	}
	s->mid_offline = mid;
	s->offline_acked = false;
	int64_t end = mono_ms() + SHUTDOWN_WAIT_MS;
	while (!s->offline_acked && !s->lost) {
		int64_t left = end - mono_ms();
		int fd = mosquitto_socket(s->mosq);
		if (left <= 0 || fd < 0) {
			break;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (mosquitto_want_write(s->mosq)) {
			p.events |= POLLOUT;
		}
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR) {
			break;
		}
		int rc = MOSQ_ERR_SUCCESS;
		if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
			rc = mosquitto_loop_read(s->mosq, 1);
		}
		if (rc == MOSQ_ERR_SUCCESS && mosquitto_socket(s->mosq) >= 0 && (p.revents & POLLOUT)) {
			rc = mosquitto_loop_write(s->mosq, 1);
		}
		if (rc != MOSQ_ERR_SUCCESS) {
			break;
		}
	}
	if (!s->offline_acked) {
		log_warn("mqtt: `offline` was not acknowledged before the stop");
	}
	if (!s->lost && mosquitto_socket(s->mosq) >= 0) {
		mosquitto_disconnect(s->mosq);
		if (mosquitto_socket(s->mosq) >= 0 && mosquitto_want_write(s->mosq)) {
			mosquitto_loop_write(s->mosq, 1);
		}
	}
}

static void
mqtt_destroy(struct sink *sink)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	say_goodbye(s);
	teardown(s);
	if (s->resolve) {
		/* a lookup still running owns its buffers: leave them to it if it cannot be stopped */
		if (gai_cancel(&s->resolve->cb) != EAI_NOTCANCELED) {
			resolve_free(s->resolve);
		}
		s->resolve = NULL;
	}
	spool_close(s->spool);
	if (s->seq_fd >= 0) {
		close(s->seq_fd);
	}
	mosquitto_lib_cleanup();
	free(s->host);
	free(s->client_id);
	free(s->username);
	wipe_free(s->password);
	free(s->ca_file);
	free(s->cert_file);
	free(s->key_file);
	for (size_t i = 0; i < s->metric_glob_count; i++) {
		free(s->metric_globs[i]);
	}
	free(s->metric_globs);
	free(s->ha_prefix);
	free(s->info_json);
	free(s->throttle_json);
	free(s->inflight);
	mqtt_active_free(&s->active);
	json_free(&s->j);
	free(s);
}

static const struct sink_ops mqtt_sink_ops = {
	.name = "mqtt",
	.write = mqtt_write,
	.notify = mqtt_notify,
	.add_metrics = mqtt_add_metrics,
	.get_fd = mqtt_get_fd,
	.dispatch = mqtt_dispatch,
	.poll_events = mqtt_poll_events,
	.destroy = mqtt_destroy,
};

/* ---- creation ---- */

/* The password: from the file (first line), else the environment, else none. */
static int
load_password(const struct mqtt_config *cfg, char **out)
{
	if (cfg->password_file[0]) {
		char buf[SECRET_MAX];
		ssize_t n = read_small_file(cfg->password_file, buf, sizeof(buf));
		if (n < 0) {
			log_error("mqtt: cannot read password_file %s: %s", cfg->password_file, strerror((int)-n));
			return -EINVAL;
		}
		struct stat st;
		if (stat(cfg->password_file, &st) == 0 && (st.st_mode & 0077)) {
			log_warn("mqtt: password_file %s can be read by other users (chmod 600 it)",
				 cfg->password_file);
		}
		buf[strcspn(buf, "\r\n")] = '\0';
		*out = xstrdup(buf);
		explicit_bzero(buf, sizeof(buf));
		return 0;
	}
	const char *env = getenv(MQTT_PASSWORD_ENV);
	*out = xstrdup(env ? env : "");
	return 0;
}

static bool
is_numeric_address(const char *host)
{
	unsigned char addr[sizeof(struct in6_addr)];
	return inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1;
}

static int
make_topics(struct mqtt_sink *s, const struct mqtt_config *cfg)
{
	const char *p = cfg->prefix, *id = s->device_id;
	int r = 0;
	r = r ? r : mqtt_topic(s->t_status, sizeof(s->t_status), p, id, "status");
	r = r ? r : mqtt_topic(s->t_state, sizeof(s->t_state), p, id, "state");
	r = r ? r : mqtt_topic(s->t_alerts, sizeof(s->t_alerts), p, id, "alerts");
	r = r ? r : mqtt_topic(s->t_active, sizeof(s->t_active), p, id, "alerts/active");
	r = r ? r : mqtt_topic(s->t_throttle, sizeof(s->t_throttle), p, id, "throttle");
	r = r ? r : mqtt_topic(s->t_info, sizeof(s->t_info), p, id, "info");
	r = r ? r : mqtt_topic(s->t_metric, sizeof(s->t_metric), p, id, "metric");
	if (r == 0 && snprintf(s->t_ha_status, sizeof(s->t_ha_status), "%s/status", cfg->ha_prefix) >=
			      (int)sizeof(s->t_ha_status)) {
		r = -ENAMETOOLONG;
	}
	if (r < 0 || strpbrk(cfg->prefix, "+#") || strpbrk(cfg->ha_prefix, "+#")) {
		log_error("mqtt: prefix '%s' or ha_prefix '%s' cannot make topics (too long, or + or #)",
			  cfg->prefix, cfg->ha_prefix);
		return -EINVAL;
	}
	return 0;
}

static void
open_spool(struct mqtt_sink *s, const struct mqtt_config *cfg)
{
	struct spool_options o = {
		.max_records = (size_t)cfg->spool_records,
		.path = cfg->spool_file,
		.max_file_bytes = (uint64_t)cfg->spool_file_max_mb << 20,
	};
	int r = spool_open(&o, &s->spool);
	if (r < 0 && cfg->spool_file[0]) {
		log_error("mqtt: cannot use spool_file %s (%s): spooling in memory only", cfg->spool_file,
			  strerror(-r));
		o.path = NULL;
		r = spool_open(&o, &s->spool);
	}
	if (r < 0) {
		log_error("mqtt: cannot create the spool: %s", strerror(-r));
		abort();
	}
	struct spool_stats st;
	spool_get_stats(s->spool, &st);
	if (st.depth || st.corrupt_records) {
		log_warn("mqtt: %" PRIu64 " messages waiting in the spool from an earlier run (%" PRIu64
			 " damaged records skipped)",
			 st.depth, st.corrupt_records);
	}
}

int
mqtt_sink_create(const struct mqtt_config *cfg, const struct mqtt_info *info, struct sink **out)
{
	if (!cfg->host || !cfg->host[0]) {
		return -EINVAL;
	}
	if (!cfg->cert_file[0] != !cfg->key_file[0]) {
		log_error("mqtt: cert_file and key_file go together (a client certificate needs its key)");
		return -EINVAL;
	}
	char *password = NULL;
	if (load_password(cfg, &password) < 0) {
		return -EINVAL;
	}
	struct mqtt_sink *s = calloc(1, sizeof(*s));
	if (!s) {
		abort();
	}
	s->base.ops = &mqtt_sink_ops;
	s->password = password;
	s->host = xstrdup(cfg->host);
	s->port = cfg->port;
	s->username = xstrdup(cfg->username);
	s->v5 = cfg->protocol == MQTT_PROTOCOL_5;
	s->keepalive_s = (int)(cfg->keepalive_ms / 1000);
	s->qos = cfg->qos;
	s->tls = cfg->tls;
	s->ca_file = xstrdup(cfg->ca_file);
	s->cert_file = xstrdup(cfg->cert_file);
	s->key_file = xstrdup(cfg->key_file);
	s->tls_insecure = cfg->tls_insecure;
	s->backoff_base_ms = cfg->backoff_base_ms;
	s->backoff_cap_ms = cfg->backoff_cap_ms;
	s->connect_timeout_ms = cfg->keepalive_ms < CONNECT_TIMEOUT_MS ? cfg->keepalive_ms : CONNECT_TIMEOUT_MS;
	s->inflight_max = cfg->inflight > 0 ? cfg->inflight : 1;
	s->inflight = calloc((size_t)s->inflight_max, sizeof(*s->inflight));
	if (!s->inflight) {
		abort();
	}
	s->metric_glob_count = cfg->metric_topic_count;
	if (s->metric_glob_count) {
		s->metric_globs = calloc(s->metric_glob_count, sizeof(*s->metric_globs));
		if (!s->metric_globs) {
			abort();
		}
		for (size_t i = 0; i < s->metric_glob_count; i++) {
			s->metric_globs[i] = xstrdup(cfg->metric_topics[i]);
		}
	}
	s->ha = cfg->ha_discovery;
	s->ha_prefix = xstrdup(cfg->ha_prefix);
	s->numeric_host = is_numeric_address(cfg->host);
	s->discovery_due_ms = -1;
	s->seq_fd = -1;
	json_init(&s->j);

	char host[256] = "";
	const char *raw_id = cfg->device_id[0] ? cfg->device_id : (gethostname(host, sizeof(host) - 1) == 0 ? host : "");
	if (mqtt_sanitize_id(raw_id, s->device_id, sizeof(s->device_id))) {
		log_warn("mqtt: device id '%s' is used as '%s' (topics and Home Assistant ids take A-Z a-z 0-9 _ -)",
			 raw_id, s->device_id);
	}
	if (cfg->client_id[0]) {
		s->client_id = xstrdup(cfg->client_id);
	} else {
		char id[MQTT_ID_MAX + 16];
		snprintf(id, sizeof(id), "tegrawatch-%s", s->device_id);
		s->client_id = xstrdup(id);
	}
	if (make_topics(s, cfg) < 0) {
		s->spool = NULL;
		mosquitto_lib_init(); /* balanced by the cleanup in destroy */
		mqtt_destroy(&s->base);
		return -EINVAL;
	}

	char text[64];
	if (read_small_file(BOOT_ID_PATH, text, sizeof(text)) < 0 ||
	    mqtt_parse_boot_id(text, s->boot_id, sizeof(s->boot_id)) < 0) {
		log_warn("mqtt: cannot read %s: boot_id is %s", BOOT_ID_PATH, UNKNOWN_BOOT_ID);
		snprintf(s->boot_id, sizeof(s->boot_id), "%s", UNKNOWN_BOOT_ID);
	}
	seq_open(s, cfg->spool_file);
	open_spool(s, cfg);

	s->info = *info;
	if (info->modes) {
		s->modes = *info->modes;
		s->info.modes = &s->modes;
	}
	s->info.agent_version = info->agent_version ? info->agent_version : "";
	json_reset(&s->j);
	mqtt_info_json(&s->j, &s->info, s->device_id, s->boot_id);
	s->info_json = xstrdup(s->j.buf);

	if (getrandom(&s->rng, sizeof(s->rng), GRND_NONBLOCK) != (ssize_t)sizeof(s->rng) || s->rng == 0) {
		s->rng = (uint64_t)mono_ms() * 6364136223846793005ULL + (uint64_t)getpid();
	}
	if (s->tls_insecure) {
		log_warn("mqtt: tls_insecure is on: the broker's certificate name is not checked (testing only)");
	}
	if (s->password[0] && !s->username[0]) {
		log_warn("mqtt: a password without a username is not sent (MQTT needs the username)");
	}
	if (s->password[0] && !s->tls) {
		log_warn("mqtt: tls is off: the password crosses the network in clear text");
	}
	/* libmosquitto before 2.0.15 ignores SIGPIPE itself, later ones do not: a broken link must not kill us */
	signal(SIGPIPE, SIG_IGN);
	mosquitto_lib_init();
	s->last_sync_ms = mono_ms();
	begin_attempt(s, s->last_sync_ms);
	*out = &s->base;
	return 0;
}
