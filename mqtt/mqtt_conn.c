/*
 * The MQTT sink's connection: libmosquitto driven from the agent's poll
 * loop (the only file that includes <mosquitto.h>).
 *
 * One connection attempt is one mosquitto object: created, configured,
 * connected with mosquitto_connect_async(), and destroyed when the
 * connection ends for any reason. libmosquitto therefore never keeps
 * messages of its own across connections (it would resend them after the
 * next CONNACK, next to our spool's copies): the spool is the single
 * queue. At most `inflight` spooled QoS 1 messages are handed to the
 * library at a time (mqtt_publish.c); PUBACKs acknowledge them in the
 * spool, a lost connection rewinds it. Callbacks only record what
 * happened; the work is done in dispatch() and write(), outside
 * libmosquitto.
 */
#include "mqtt_priv.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mosquitto.h>

#include "core/clock.h"
#include "core/dynlib.h"
#include "core/log.h"
#include "core/xalloc.h"

#define SYNC_INTERVAL_MS 1000 /* spool_sync(): at most this much is lost by a power cut */
#define SHUTDOWN_WAIT_MS 2000 /* a clean stop waits this long for `offline` to be acknowledged */
#define HA_JITTER_MS 5000     /* discovery after a Home Assistant birth message: 0..5 s later */
#define STABLE_MS 10000       /* a connection that lasts this long resets the back-off */
#define OS_CA_PATH "/etc/ssl/certs"
#define REASON_SESSION_TAKEN_OVER 0x8E /* MQTT 5 DISCONNECT: another client connected with this client id */

/*
 * libmosquitto is loaded with dlopen() by the first sink (mqtt_conn_lib_init):
 * linked, it and what it pulls in (OpenSSL) cost ~470 KiB of RssAnon in
 * every process, MQTT configured or not. Its functions are called through
 * MOSQ(), the pointers core/dynlib.h found.
 */
/* clang-format off */
#define MOSQ_FUNCTIONS(X) \
	X(mosquitto_connack_string) X(mosquitto_connect_async) X(mosquitto_connect_callback_set) \
	X(mosquitto_destroy) X(mosquitto_disconnect) X(mosquitto_disconnect_callback_set) \
	X(mosquitto_int_option) X(mosquitto_lib_cleanup) X(mosquitto_lib_init) \
	X(mosquitto_log_callback_set) X(mosquitto_loop_misc) X(mosquitto_loop_read) \
	X(mosquitto_loop_write) X(mosquitto_message_callback_set) X(mosquitto_new) \
	X(mosquitto_publish) X(mosquitto_publish_v5_callback_set) X(mosquitto_reason_string) \
	X(mosquitto_socket) X(mosquitto_strerror) X(mosquitto_subscribe) \
	X(mosquitto_tls_insecure_set) X(mosquitto_tls_opts_set) X(mosquitto_tls_set) \
	X(mosquitto_username_pw_set) X(mosquitto_want_write) X(mosquitto_will_set)
/* clang-format on */

#define MOSQ(name) (mosq_lib.name)
#define MOSQ_SYMBOL(name) DYNLIB_SYMBOL(mosq_lib, name)

static struct {
	struct dynlib *lib;
	MOSQ_FUNCTIONS(DYNLIB_POINTER)
} mosq_lib;

/* An asynchronous name lookup; leaked on purpose if it cannot be cancelled at exit. */
struct resolve {
	struct gaicb cb;
	struct addrinfo hints;
	char host[];
};

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
			log_warn("mqtt: the broker refused a message: %s", MOSQ(mosquitto_reason_string)(reason));
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
	if (strcmp(msg->topic, s->t_ha_status) == 0 && msg->payloadlen == 6 && memcmp(msg->payload, "online", 6) == 0) {
		/* Home Assistant (re)started: every device answering at once would be a burst */
		s->discovery_due_ms = monotonic_ms() + (int64_t)(next_random(s) % (HA_JITTER_MS + 1));
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
		MOSQ(mosquitto_destroy)(s->mosq);
		s->mosq = NULL;
	}
	s->connack_ok = false;
	s->refused = false;
	s->lost = false;
	s->lost_rc = 0;
	s->inflight_count = 0;
	s->mid_offline = 0;
}

/*
 * Logs a failure: loudly when it is new, quietly when it repeats. WHY says
 * what failed and is what "repeats" compares; CAUSE (or NULL) adds detail
 * that may vary between repeats (a reset or a broken pipe, for the same
 * broker dropping us).
 */
static void
report_failure(struct mqtt_sink *s, const char *why, const char *cause, int64_t delay_ms)
{
	const char *sep = cause ? ": " : "";
	cause = cause ? cause : "";
	if (strcmp(why, s->last_error) != 0) {
		log_warn("mqtt: %s:%d: %s%s%s; retrying in %.1f s, then with back-off (repeats logged at info level)",
			 s->host, s->port, why, sep, cause, (double)delay_ms / 1000.0);
		snprintf(s->last_error, sizeof(s->last_error), "%s", why);
	} else {
		log_info("mqtt: %s:%d: %s%s%s; retrying in %.1f s", s->host, s->port, why, sep, cause,
			 (double)delay_ms / 1000.0);
	}
}

/*
 * Ends the attempt or connection and schedules the next one. Never gives
 * up. A connection lost within STABLE_MS of its CONNACK counts as a failed
 * attempt: a broker that accepts and drops every connection gets the
 * back-off (and the quiet repeats) too, not a reconnect every backoff_base.
 */
static void
fail(struct mqtt_sink *s, const char *why, int64_t now)
{
	bool was_connected = s->state == CONN_CONNECTED;
	bool quick = was_connected && now - s->connected_ms < STABLE_MS;
	char text[ERROR_TEXT_MAX];
	const char *cause = NULL;
	teardown(s);
	if (was_connected) {
		s->disconnects++;
		spool_rewind(s->spool);
	}
	if (quick) {
		snprintf(text, sizeof(text), "lost the connection within %d s of the broker accepting it",
			 STABLE_MS / 1000);
		cause = why;
		why = text;
		s->quick_drops++;
	} else if (was_connected) {
		s->attempt = 0;
	}
	int64_t delay = mqtt_backoff_ms(s->backoff_base_ms, s->backoff_cap_ms, s->attempt, next_random(s));
	if (s->attempt < 63) {
		s->attempt++;
	}
	s->next_attempt_ms = now + delay;
	s->state = CONN_IDLE;
	if (was_connected && !quick) {
		log_warn("mqtt: lost the connection to %s:%d: %s; reconnecting in %.1f s", s->host, s->port, why,
			 (double)delay / 1000.0);
		snprintf(s->last_error, sizeof(s->last_error), "%s", why);
	} else {
		report_failure(s, why, cause, delay);
	}
}

/*
 * What went wrong, in words: libmosquitto 2.0.11 has no text for some of
 * its codes ("Unknown error." for a keepalive timeout) and gives errno's
 * text for MOSQ_ERR_ERRNO, which is "Success" when a packet was cut short.
 */
static void
describe_rc(struct mqtt_sink *s, int rc, int err, char *buf, size_t size)
{
	bool connecting = s->state == CONN_CONNECTING;
	switch (rc) {
	case MOSQ_ERR_ERRNO:
		if (err != 0) {
			snprintf(buf, size, "%s", strerror(err));
		} else if (connecting) {
			snprintf(buf, size,
				 "the broker closed the connection in the middle of its CONNACK (a malformed "
				 "CONNACK)");
		} else {
			snprintf(buf, size, "the broker closed the connection in the middle of a packet");
		}
		return;
	case MOSQ_ERR_KEEPALIVE:
		snprintf(buf, size,
			 "no answer from the broker within the keepalive (%d s, PINGREQ unanswered): the link or the "
			 "broker is down",
			 s->keepalive_s);
		return;
	case MOSQ_ERR_PROTOCOL:
	case MOSQ_ERR_MALFORMED_PACKET:
		if (connecting) {
			snprintf(buf, size,
				 "the broker answered CONNECT with a malformed or unexpected packet, not a "
				 "valid CONNACK (protocol error)");
		} else {
			snprintf(buf, size, "the broker sent a malformed or unexpected packet (protocol error)");
		}
		return;
	case MOSQ_ERR_CONN_LOST:
	case MOSQ_ERR_NO_CONN:
		snprintf(buf, size, "the broker closed the connection%s", connecting ? " before its CONNACK" : "");
		return;
	case MOSQ_ERR_TLS:
	case MOSQ_ERR_TLS_HANDSHAKE:
		if (s->lib_error[0]) {
			snprintf(buf, size, "TLS failed: %.200s", s->lib_error);
			return;
		}
		break;
	default:
		break;
	}
	const char *text = MOSQ(mosquitto_strerror)(rc);
	if (strcmp(text, "Unknown error.") == 0) {
		snprintf(buf, size, "libmosquitto error %d", rc);
	} else {
		snprintf(buf, size, "%s", text);
	}
}

/* Creates and configures the mosquitto object of one attempt. */
static int
setup_client(struct mqtt_sink *s, char *why, size_t size)
{
	s->mosq = MOSQ(mosquitto_new)(s->client_id, true, s);
	if (!s->mosq) {
		snprintf(why, size, "cannot create the client: %s", strerror(errno));
		return -1;
	}
	struct mosquitto *m = s->mosq;
	MOSQ(mosquitto_int_option)(m, MOSQ_OPT_PROTOCOL_VERSION, s->v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311);
	MOSQ(mosquitto_int_option)(m, MOSQ_OPT_SEND_MAXIMUM, s->inflight_max);
	MOSQ(mosquitto_int_option)(m, MOSQ_OPT_TCP_NODELAY, 1);
	MOSQ(mosquitto_connect_callback_set)(m, on_connect);
	MOSQ(mosquitto_disconnect_callback_set)(m, on_disconnect);
	MOSQ(mosquitto_publish_v5_callback_set)(m, on_publish);
	MOSQ(mosquitto_message_callback_set)(m, on_message);
	MOSQ(mosquitto_log_callback_set)(m, on_log);
	int rc = MOSQ(mosquitto_will_set)(m, s->t_status, 7, "offline", 1, true);
	if (rc == MOSQ_ERR_SUCCESS && s->username[0]) {
		rc = MOSQ(mosquitto_username_pw_set)(m, s->username, s->password[0] ? s->password : NULL);
	}
	if (rc == MOSQ_ERR_SUCCESS && s->tls) {
		const char *cert = s->cert_file[0] ? s->cert_file : NULL;
		const char *key = s->key_file[0] ? s->key_file : NULL;
		if (s->ca_file[0]) {
			rc = MOSQ(mosquitto_tls_set)(m, s->ca_file, NULL, cert, key, NULL);
		} else {
			MOSQ(mosquitto_int_option)(m, MOSQ_OPT_TLS_USE_OS_CERTS, 1);
			rc = MOSQ(mosquitto_tls_set)(m, NULL, OS_CA_PATH, cert, key, NULL);
		}
		if (rc == MOSQ_ERR_SUCCESS) {
			/* peer verification on, TLS 1.2 at least (1.3 allowed) */
			rc = MOSQ(mosquitto_tls_opts_set)(m, 1, "tlsv1.2", NULL);
		}
		if (rc == MOSQ_ERR_SUCCESS && s->tls_insecure) {
			rc = MOSQ(mosquitto_tls_insecure_set)(m, true);
		}
		if (rc != MOSQ_ERR_SUCCESS) {
			snprintf(why, size, "TLS set-up failed (ca_file, cert_file, key_file readable?): %s",
				 MOSQ(mosquitto_strerror)(rc));
			return -1;
		}
	}
	if (rc != MOSQ_ERR_SUCCESS) {
		snprintf(why, size, "client set-up failed: %s", MOSQ(mosquitto_strerror)(rc));
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
	int rc = MOSQ(mosquitto_connect_async)(s->mosq, address, s->port, s->keepalive_s);
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

void
mqtt_conn_begin(struct mqtt_sink *s, int64_t now)
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
	struct resolve *r = xcalloc(1, sizeof(*r) + len + 1);
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
	if (!ai || getnameinfo(ai->ai_addr, ai->ai_addrlen, numeric, sizeof(numeric), NULL, 0, NI_NUMERICHOST) != 0) {
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

void
mqtt_conn_publish(struct mqtt_sink *s, const char *topic, const void *payload, size_t len, int qos, bool retain)
{
	if (s->state != CONN_CONNECTED || s->lost) {
		return;
	}
	int rc = MOSQ(mosquitto_publish)(s->mosq, NULL, topic, (int)len, payload, qos, retain);
	if (rc == MOSQ_ERR_NO_CONN || rc == MOSQ_ERR_CONN_LOST || rc == MOSQ_ERR_ERRNO) {
		s->lost = true;
		s->lost_rc = rc;
		s->lost_errno = errno;
	} else if (rc != MOSQ_ERR_SUCCESS) {
		log_debug("mqtt: publish on %s: %s", topic, MOSQ(mosquitto_strerror)(rc));
	}
}

/* A record that can never go out is dropped (counted by the caller) rather than block the queue. */
int
mqtt_conn_send(struct mqtt_sink *s, const struct spool_record *rec, int *mid)
{
	int rc = MOSQ(mosquitto_publish)(s->mosq, mid, rec->topic, (int)rec->payload_len, rec->payload, rec->qos,
					 rec->retain);
	if (rc == MOSQ_ERR_SUCCESS) {
		return 0;
	}
	if (rc == MOSQ_ERR_PAYLOAD_SIZE || rc == MOSQ_ERR_OVERSIZE_PACKET || rc == MOSQ_ERR_INVAL ||
	    rc == MOSQ_ERR_MALFORMED_UTF8 || rc == MOSQ_ERR_QOS_NOT_SUPPORTED) {
		log_warn("mqtt: dropping a %zu-byte message on %s: %s", rec->payload_len, rec->topic,
			 MOSQ(mosquitto_strerror)(rc));
		return -EMSGSIZE;
	}
	/* MOSQ_ERR_NO_CONN and friends: the connection is gone; the spool keeps the record */
	s->lost = true;
	s->lost_rc = rc;
	s->lost_errno = errno;
	return -ENOTCONN;
}

/*
 * CONNACK accepted: availability, the retained state, subscriptions, then
 * the backlog. The back-off starts again only once the connection proves
 * stable (check_stable()); while connections keep dropping at once, the
 * connect is logged quietly.
 */
static void
on_connected(struct mqtt_sink *s, int64_t now)
{
	s->state = CONN_CONNECTED;
	s->connects++;
	s->connected_ms = now;
	if (s->last_error[0] && s->quick_drops == 0) {
		log_warn("mqtt: connected to %s:%d", s->host, s->port);
		s->last_error[0] = '\0';
	} else {
		log_info("mqtt: connected to %s:%d", s->host, s->port);
	}
	mqtt_conn_publish(s, s->t_status, "online", 6, 1, true);
	mqtt_conn_publish(s, s->t_info, s->info_json, strlen(s->info_json), 1, true);
	s->throttle_dirty = true;
	s->active_dirty = true;
	s->limits_dirty = true;
	mqtt_pub_latest(s);
	if (s->ha) {
		int rc = MOSQ(mosquitto_subscribe)(s->mosq, NULL, s->t_ha_status, 0);
		if (rc != MOSQ_ERR_SUCCESS) {
			log_debug("mqtt: subscribe %s: %s", s->t_ha_status, MOSQ(mosquitto_strerror)(rc));
		}
		s->discovery_due_ms = now; /* with the next sample: discovery lists the metrics it has */
		s->ha_view_due = true;     /* and the view follows it: what HA had may be from before the outage */
	}
	mqtt_pub_pump(s);
}

/* Reads and writes what the socket allows, then keepalive; notes what ended. */
static void
service(struct mqtt_sink *s, int64_t now)
{
	int fd = MOSQ(mosquitto_socket)(s->mosq);
	if (fd < 0) {
		s->lost = true;
		s->lost_rc = MOSQ_ERR_NO_CONN;
		return;
	}
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (MOSQ(mosquitto_want_write)(s->mosq)) {
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
		rc = MOSQ(mosquitto_loop_read)(s->mosq, 1);
	}
	if (rc == MOSQ_ERR_SUCCESS && !s->lost && MOSQ(mosquitto_socket)(s->mosq) >= 0 && (p.revents & POLLOUT) &&
	    MOSQ(mosquitto_want_write)(s->mosq)) {
		errno = 0;
		rc = MOSQ(mosquitto_loop_write)(s->mosq, 1);
	}
	if (rc == MOSQ_ERR_SUCCESS && !s->lost) {
		errno = 0;
		rc = MOSQ(mosquitto_loop_misc)(s->mosq);
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

/* A connection that lasted STABLE_MS: the back-off starts again, and a run of quick drops is over. */
static void
check_stable(struct mqtt_sink *s, int64_t now)
{
	if (s->attempt == 0 || now - s->connected_ms < STABLE_MS) {
		return;
	}
	s->attempt = 0;
	if (s->quick_drops > 0) {
		log_warn("mqtt: connected to %s:%d, stable again after %u connection(s) lost at once", s->host, s->port,
			 s->quick_drops);
		s->quick_drops = 0;
		s->last_error[0] = '\0';
	}
}

/*
 * Another client connected with this client id, and the broker gave it the
 * session: said once, with what to change, as each reconnect would take it
 * back and the two knock each other off. MQTT 5 may say so (DISCONNECT
 * 0x8E); a 3.1.1 broker, and mosquitto 2.0 for MQTT 5 too, just closes the
 * connection, so two closes in a row, each soon after a CONNACK, are taken
 * for it.
 */
static void
tell_takeover(struct mqtt_sink *s, bool certain)
{
	if (s->takeover_told) {
		return;
	}
	s->takeover_told = true;
	log_warn("mqtt: %s:%d: %s client uses the client id '%s' on this broker, and the broker hands the session to "
		 "whichever connected last: %s",
		 s->host, s->port,
		 certain ? "the broker says another"
			 : "the broker keeps closing the connection soon "
			   "after accepting it: probably another",
		 s->client_id,
		 s->client_id_pinned ? "give each agent its own mqtt.client_id (or leave it unset: the default adds "
				       "the process id)"
				     : "stop the other one (another program using this agent's id?)");
}

static void
handle_lost(struct mqtt_sink *s, int64_t now)
{
	char why[ERROR_TEXT_MAX];
	bool was_connected = s->state == CONN_CONNECTED;
	/* a write that met the broker's close (EPIPE, ECONNRESET) is a close too */
	bool quick_close = was_connected && now - s->connected_ms < STABLE_MS &&
			   (s->lost_rc == 0 || s->lost_rc == MOSQ_ERR_CONN_LOST ||
			    (s->lost_rc == MOSQ_ERR_ERRNO &&
			     (s->lost_errno == 0 || s->lost_errno == EPIPE || s->lost_errno == ECONNRESET)));
	s->quick_closes = quick_close ? s->quick_closes + 1 : 0;
	if (s->v5 && s->lost_rc == REASON_SESSION_TAKEN_OVER) {
		snprintf(
			why, sizeof(why),
			"session taken over: another client connected with the client id '%.100s' (MQTT 5 reason 0x8E)",
			s->client_id);
		tell_takeover(s, true);
		fail(s, why, now);
		return;
	}
	if (s->quick_closes >= 2) {
		tell_takeover(s, false);
	}
	if (s->refused) {
		const char *reason = s->v5 ? MOSQ(mosquitto_reason_string)(s->connack_rc)
					   : MOSQ(mosquitto_connack_string)(s->connack_rc);
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

/* ---- the sink_ops of the connection ---- */

int
mqtt_conn_get_fd(struct sink *sink)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	return s->mosq ? MOSQ(mosquitto_socket)(s->mosq) : -1;
}

short
mqtt_conn_poll_events(struct sink *sink)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	short ev = POLLIN;
	if (s->mosq && MOSQ(mosquitto_want_write)(s->mosq)) {
		ev |= POLLOUT;
	}
	return ev;
}

int
mqtt_conn_dispatch(struct sink *sink)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	int64_t now = monotonic_ms();
	if (s->mosq && !s->lost) {
		service(s, now);
	}
	if (s->state == CONN_RESOLVING) {
		check_resolve(s, now);
	}
	if (s->state == CONN_CONNECTED && !s->lost) {
		check_stable(s, now);
		mqtt_pub_latest(s);
		mqtt_pub_pump(s);
	}
	if (s->lost) {
		handle_lost(s, now);
	}
	if (s->state == CONN_IDLE && now >= s->next_attempt_ms) {
		mqtt_conn_begin(s, now);
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

/* ---- start and stop ---- */

int
mqtt_conn_lib_init(void)
{
	static const char *const names[] = {"libmosquitto.so.1", NULL};
	static const struct dynlib_symbol symbols[] = {MOSQ_FUNCTIONS(MOSQ_SYMBOL)};
	if (dynlib_load_once(&mosq_lib.lib, names, symbols, sizeof(symbols) / sizeof(symbols[0]), "mqtt",
			     "libmosquitto 2.0.11 or later", "install libmosquitto1") < 0) {
		return -ELIBACC;
	}
	MOSQ(mosquitto_lib_init)();
	return 0;
}

void
mqtt_conn_lib_cleanup(void)
{
	MOSQ(mosquitto_lib_cleanup)(); /* the library stays loaded: a later sink (a reload) uses it again */
}

/* A clean stop: `offline` (retained) acknowledged or 2 s passed, then DISCONNECT. */
static void
say_goodbye(struct mqtt_sink *s)
{
	if (s->state != CONN_CONNECTED || s->lost) {
		return;
	}
	int mid = 0;
	if (MOSQ(mosquitto_publish)(s->mosq, &mid, s->t_status, 7, "offline", 1, true) != MOSQ_ERR_SUCCESS) {
		return;
	}
	s->mid_offline = mid;
	s->offline_acked = false;
	int64_t end = monotonic_ms() + SHUTDOWN_WAIT_MS;
	while (!s->offline_acked && !s->lost) {
		int64_t left = end - monotonic_ms();
		int fd = MOSQ(mosquitto_socket)(s->mosq);
		if (left <= 0 || fd < 0) {
			break;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (MOSQ(mosquitto_want_write)(s->mosq)) {
			p.events |= POLLOUT;
		}
		if (poll(&p, 1, (int)clock_poll_ms(left)) < 0 && errno != EINTR) {
			break;
		}
		int rc = MOSQ_ERR_SUCCESS;
		if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
			rc = MOSQ(mosquitto_loop_read)(s->mosq, 1);
		}
		if (rc == MOSQ_ERR_SUCCESS && MOSQ(mosquitto_socket)(s->mosq) >= 0 && (p.revents & POLLOUT)) {
			rc = MOSQ(mosquitto_loop_write)(s->mosq, 1);
		}
		if (rc != MOSQ_ERR_SUCCESS) {
			break;
		}
	}
	if (!s->offline_acked) {
		log_warn("mqtt: `offline` was not acknowledged before the stop");
	}
	if (!s->lost && MOSQ(mosquitto_socket)(s->mosq) >= 0) {
		MOSQ(mosquitto_disconnect)(s->mosq);
		if (MOSQ(mosquitto_socket)(s->mosq) >= 0 && MOSQ(mosquitto_want_write)(s->mosq)) {
			MOSQ(mosquitto_loop_write)(s->mosq, 1);
		}
	}
}

void
mqtt_conn_close(struct mqtt_sink *s)
{
	say_goodbye(s);
	teardown(s);
	if (s->resolve) {
		/* a lookup still running owns its buffers: leave them to it if it cannot be stopped */
		if (gai_cancel(&s->resolve->cb) != EAI_NOTCANCELED) {
			resolve_free(s->resolve);
		}
		s->resolve = NULL;
	}
}
