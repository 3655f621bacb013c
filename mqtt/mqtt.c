/*
 * The MQTT sink's creation and teardown: the configuration copied, the
 * password loaded, topics made, boot id read, the spool and the sequence
 * file opened, the first connection attempt started; and the clean stop.
 * The connection is in mqtt_conn.c, what is published in mqtt_publish.c
 * (the split is described in mqtt_priv.h).
 */
#include "mqtt_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/readfile.h"
#include "core/xalloc.h"

#define CONNECT_TIMEOUT_MS 30000 /* no CONNACK after min(keepalive, this): try again */
#define SECRET_MAX 1024
#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"
#define UNKNOWN_BOOT_ID "00000000-0000-0000-0000-000000000000"

/* ---- small helpers ---- */

static void
wipe_free(char *secret)
{
	if (secret) {
		explicit_bzero(secret, strlen(secret));
		free(secret);
	}
}

/* ---- the sink ---- */

/* Also undoes a creation that failed half-way (no spool or sequence file yet). */
static void
mqtt_destroy(struct sink *sink)
{
	struct mqtt_sink *s = (struct mqtt_sink *)sink;
	mqtt_conn_close(s);
	spool_close(s->spool);
	if (s->seq_fd >= 0) {
		close(s->seq_fd);
	}
	mqtt_conn_lib_cleanup();
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
	free(s->display_name);
	free(s->ha_view);
	free(s->info_json);
	free(s->limits_metrics);
	free(s->limits_json);
	json_free(&s->limits);
	free(s->dict);
	free(s->throttle_json);
	free(s->throttle_signature);
	free(s->inflight);
	mqtt_active_free(&s->active);
	json_free(&s->j);
	free(s);
}

static const struct sink_ops mqtt_sink_ops = {
	.name = "mqtt",
	.write = mqtt_pub_write,
	.notify = mqtt_pub_notify,
	.add_metrics = mqtt_pub_add_metrics,
	.get_fd = mqtt_conn_get_fd,
	.dispatch = mqtt_conn_dispatch,
	.poll_events = mqtt_conn_poll_events,
	.destroy = mqtt_destroy,
};

/* ---- creation ---- */

/* The password: from the file (first line), else the environment, else none. */
static int
load_password(const struct mqtt_config *cfg, char **out)
{
	if (cfg->password_file[0]) {
		char *buf;
		size_t len;
		struct stat st;
		int r = readfile_all(cfg->password_file, SECRET_MAX, &buf, &len, &st);
		if (r < 0) {
			log_error("mqtt: cannot read password_file %s: %s", cfg->password_file,
				  r == -EINVAL  ? "not a regular file"
				  : r == -EFBIG ? "larger than 1 KiB"
						: strerror(-r));
			return -EINVAL;
		}
		if (st.st_mode & 0077) {
			log_warn("mqtt: password_file %s can be read by other users (chmod 600 it)",
				 cfg->password_file);
		}
		buf[strcspn(buf, "\r\n")] = '\0';
		*out = xstrdup(buf);
		explicit_bzero(buf, len);
		free(buf);
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
	r = r ? r : mqtt_topic(s->t_limits, sizeof(s->t_limits), p, id, "limits");
	r = r ? r : mqtt_topic(s->t_alerts, sizeof(s->t_alerts), p, id, "alerts");
	r = r ? r : mqtt_topic(s->t_active, sizeof(s->t_active), p, id, "alerts/active");
	r = r ? r : mqtt_topic(s->t_throttle, sizeof(s->t_throttle), p, id, "throttle");
	r = r ? r : mqtt_topic(s->t_info, sizeof(s->t_info), p, id, "info");
	r = r ? r : mqtt_topic(s->t_metric, sizeof(s->t_metric), p, id, "metric");
	r = r ? r : mqtt_topic(s->t_ha, sizeof(s->t_ha), p, id, "ha");
	if (r == 0 && snprintf(s->t_ha_status, sizeof(s->t_ha_status), "%s/status", cfg->ha_prefix) >=
			      (int)sizeof(s->t_ha_status)) {
		r = -ENAMETOOLONG;
	}
	if (r < 0 || strpbrk(cfg->prefix, "+#") || strpbrk(cfg->ha_prefix, "+#")) {
		log_error("mqtt: prefix '%s' or ha_prefix '%s' cannot make topics (too long, or + or #)", cfg->prefix,
			  cfg->ha_prefix);
		return -EINVAL;
	}
	return 0;
}

/*
 * The spool. With a file, memory holds only a window and the file the
 * rest, up to its own cap; in memory only (spool_records) when the file
 * cannot be used. Returns 0 or -errno (out of memory).
 */
static int
open_spool(struct mqtt_sink *s, const struct mqtt_config *cfg, int64_t interval_ms)
{
	struct spool_options o = {
		.max_records = mqtt_config_spool_memory_records(cfg, interval_ms),
		.path = cfg->spool_file,
		.max_file_bytes = (uint64_t)cfg->spool_file_max_mb << 20,
		.spill = true,
	};
	int r = spool_open(&o, &s->spool);
	if (r < 0 && cfg->spool_file[0]) {
		log_error("mqtt: cannot use spool_file %s (%s): spooling in memory only", cfg->spool_file,
			  strerror(-r));
		o.path = NULL;
		o.max_records = (size_t)cfg->spool_records;
		r = spool_open(&o, &s->spool);
	}
	if (r < 0) {
		log_error("mqtt: cannot create the spool: %s", strerror(-r));
		return r;
	}
	struct spool_stats st;
	spool_get_stats(s->spool, &st);
	if (st.depth || st.corrupt_records) {
		log_warn("mqtt: %" PRIu64 " messages waiting in the spool from an earlier run (%" PRIu64
			 " damaged records skipped)",
			 st.depth, st.corrupt_records);
	}
	return 0;
}

int
mqtt_sink_create(const struct mqtt_config *cfg, const struct agent_info *info, struct sink **out)
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
	/* first: every later failure goes through mqtt_destroy(), which balances it */
	int r = mqtt_conn_lib_init();
	if (r < 0) {
		wipe_free(password);
		return r;
	}
	struct mqtt_sink *s = xcalloc(1, sizeof(*s));
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
	s->inflight = xcalloc((size_t)s->inflight_max, sizeof(*s->inflight));
	s->metric_glob_count = cfg->metric_topic_count;
	if (s->metric_glob_count) {
		s->metric_globs = xcalloc(s->metric_glob_count, sizeof(*s->metric_globs));
		for (size_t i = 0; i < s->metric_glob_count; i++) {
			s->metric_globs[i] = xstrdup(cfg->metric_topics[i]);
		}
	}
	s->ha = cfg->ha_discovery;
	s->ha_prefix = xstrdup(cfg->ha_prefix);
	s->ha_interval_ms = cfg->ha_interval_ms;
	s->display_name = xstrdup(info->board_name ? info->board_name : "");
	s->numeric_host = is_numeric_address(cfg->host);
	s->state_full = cfg->state_full;
	s->discovery_due_ms = -1;
	s->seq_fd = -1;
	json_init(&s->j);
	json_init(&s->limits);
	s->dict = xcalloc(1, sizeof(*s->dict));

	char host[256] = "";
	const char *raw_id = cfg->device_id[0]                          ? cfg->device_id
			     : info->device_id && info->device_id[0]    ? info->device_id
			     : gethostname(host, sizeof(host) - 1) == 0 ? host
									: "";
	if (mqtt_sanitize_id(raw_id, s->device_id, sizeof(s->device_id))) {
		log_warn("mqtt: device id '%s' is used as '%s' (topics and Home Assistant ids take A-Z a-z 0-9 _ -)",
			 raw_id, s->device_id);
	}
	if (cfg->client_id[0]) {
		s->client_id = xstrdup(cfg->client_id);
		s->client_id_pinned = true;
	} else {
		/* one per running agent: a second agent of this board (the service and a hand-run one, two
		 * demos) would otherwise take the first one's session over, and each knock the other off */
		char id[MQTT_ID_MAX + 32];
		snprintf(id, sizeof(id), "tegrawatch-%s-%ld", s->device_id, (long)getpid());
		s->client_id = xstrdup(id);
	}
	if (make_topics(s, cfg) < 0) {
		s->spool = NULL;
		mqtt_destroy(&s->base);
		return -EINVAL;
	}

	char *text = NULL;
	size_t text_len;
	if (readfile_all(BOOT_ID_PATH, 64, &text, &text_len, NULL) < 0 ||
	    mqtt_parse_boot_id(text, s->boot_id, sizeof(s->boot_id)) < 0) {
		log_warn("mqtt: cannot read %s: boot_id is %s", BOOT_ID_PATH, UNKNOWN_BOOT_ID);
		snprintf(s->boot_id, sizeof(s->boot_id), "%s", UNKNOWN_BOOT_ID);
	}
	free(text);
	mqtt_pub_seq_open(s, cfg->spool_file);
	r = open_spool(s, cfg, info->interval_ms);
	if (r < 0) {
		mqtt_destroy(&s->base);
		return r;
	}

	s->info = *info;
	s->info.device_id = NULL; /* borrowed: s->device_id is the one in use */
	s->info.board_name = s->display_name;
	s->info.generator_url = NULL;
	if (info->modes) {
		s->modes = *info->modes;
		s->info.modes = &s->modes;
	}
	s->info.version = info->version ? info->version : "";
	json_reset(&s->j);
	mqtt_info_json(&s->j, &s->info, s->device_id, s->boot_id);
	s->info_json = xstrdup(s->j.out.buf);

	if (getrandom(&s->rng, sizeof(s->rng), GRND_NONBLOCK) != (ssize_t)sizeof(s->rng) || s->rng == 0) {
		s->rng = (uint64_t)monotonic_ms() * 6364136223846793005ULL + (uint64_t)getpid();
	}
	if (s->tls_insecure) {
		log_warn("mqtt: tls_insecure is on: the broker's certificate name is not checked (testing only)");
	}
	if (s->password[0] && !s->username[0]) {
		log_warn("mqtt: a password without a username is not sent (MQTT needs the username)");
	}
	/* a broker on this machine: the password never leaves it */
	if (s->password[0] && !s->tls && !mqtt_host_is_loopback(s->host)) {
		log_warn("mqtt: tls is off: the password crosses the network in clear text");
	}
	/* libmosquitto before 2.0.15 ignores SIGPIPE itself, later ones do not: a broken link must not kill us */
	signal(SIGPIPE, SIG_IGN);
	s->last_sync_ms = monotonic_ms();
	mqtt_conn_begin(s, s->last_sync_ms);
	*out = &s->base;
	return 0;
}
