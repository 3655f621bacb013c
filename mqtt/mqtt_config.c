/* The mqtt: section: key table, defaults and checks (no libmosquitto here). */
#include "mqtt_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/readfile.h"

static const char *const protocol_names[] = {"3.1.1", "5", NULL};
static const int protocol_values[] = {MQTT_PROTOCOL_311, MQTT_PROTOCOL_5};

/* mqtt.metric_topics: globs of the metrics that also get a plain topic each */
static int
decode_metric_topics(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct mqtt_config *cfg = obj;
	char **list;
	size_t count;
	if (cfg_decode_string_list(dec, node, "metric_topics", "a metric name or glob", &list, &count) < 0) {
		return -EINVAL;
	}
	cfg_free_string_list(cfg->metric_topics);
	cfg->metric_topics = count ? list : NULL;
	cfg->metric_topic_count = count;
	if (!count) {
		cfg_free_string_list(list);
	}
	return 0;
}

static bool
metric_topics_equal(const void *a, const void *b)
{
	char *const *x = ((const struct mqtt_config *)a)->metric_topics;
	char *const *y = ((const struct mqtt_config *)b)->metric_topics;
	for (; x && y && *x && *y; x++, y++) {
		if (strcmp(*x, *y) != 0) {
			return false;
		}
	}
	return (!x || !*x) && (!y || !*y);
}

static void
metric_topics_release(void *obj)
{
	struct mqtt_config *cfg = obj;
	cfg_free_string_list(cfg->metric_topics);
	cfg->metric_topics = NULL;
	cfg->metric_topic_count = 0;
}

static const struct cfg_key mqtt_keys[] = {
	CFG_STRING("host", struct mqtt_config, host, "", 0),
	CFG_INT("port", struct mqtt_config, port, "1883", 0, 1, 65535),
	CFG_STRING("prefix", struct mqtt_config, prefix, "tegrawatch", CFG_F_NOT_EMPTY),
	CFG_STRING("device_id", struct mqtt_config, device_id, "", 0),
	CFG_STRING("client_id", struct mqtt_config, client_id, "", 0),
	CFG_CHOICE("protocol", struct mqtt_config, protocol, "3.1.1", 0, protocol_names, protocol_values),
	CFG_DURATION("keepalive", struct mqtt_config, keepalive_ms, "30s", 0, 5000, 3600 * 1000),
	CFG_INT("qos", struct mqtt_config, qos, "1", 0, 0, 1),
	CFG_STRING("username", struct mqtt_config, username, "", 0),
	CFG_STRING("password_file", struct mqtt_config, password_file, "", CFG_F_SECRET_FILE),
	CFG_BOOL("tls", struct mqtt_config, tls, "false"),
	CFG_STRING("ca_file", struct mqtt_config, ca_file, "", 0),
	CFG_STRING("cert_file", struct mqtt_config, cert_file, "", 0),
	CFG_STRING("key_file", struct mqtt_config, key_file, "", CFG_F_SECRET_FILE),
	CFG_BOOL("tls_insecure", struct mqtt_config, tls_insecure, "false"),
	CFG_DURATION("backoff_base", struct mqtt_config, backoff_base_ms, "1s", 0, 100, 3600 * 1000),
	CFG_DURATION("backoff_cap", struct mqtt_config, backoff_cap_ms, "60s", 0, 1000, 24 * 3600 * 1000),
	CFG_INT("inflight", struct mqtt_config, inflight, "100", 0, 1, 1000),
	CFG_INT("spool_records", struct mqtt_config, spool_records, "3600", 0, 10, 10000000),
	CFG_STRING("spool_file", struct mqtt_config, spool_file, "", 0),
	CFG_INT("spool_file_max_mb", struct mqtt_config, spool_file_max_mb, "64", 0, 1, 4096),
	{.name = "metric_topics",
	 .kind = CFG_K_CUSTOM,
	 .decode = decode_metric_topics,
	 .equal = metric_topics_equal,
	 .release = metric_topics_release},
	CFG_BOOL("ha_discovery", struct mqtt_config, ha_discovery, "true"),
	CFG_STRING("ha_prefix", struct mqtt_config, ha_prefix, "homeassistant", CFG_F_NOT_EMPTY),
	CFG_DURATION("ha_interval", struct mqtt_config, ha_interval_ms, "5s", 0, 1000, 3600 * 1000),
	CFG_BOOL("state_full", struct mqtt_config, state_full, "false"),
};

/*
 * KEY names a file the agent, or libmosquitto (which opens it without O_NONBLOCK), reads at start:
 * it must be a regular file that can be opened for reading, or the start would stop at a FIFO.
 */
static void
check_file(const char *key, const char *path, bool secret, const struct cfg_place *place, struct diag_list *diags)
{
	struct stat st;
	unsigned mode;
	int fd = path[0] ? readfile_open(path, &st) : 0;
	if (fd == -EINVAL) {
		cfg_report_key(diags, place, key, "mqtt.%s: cannot read %s: %s, not a regular file", key, path,
			       readfile_kind(st.st_mode));
	} else if (fd < 0) {
		cfg_report_key(diags, place, key, "mqtt.%s: cannot read %s: %s", key, path, strerror(-fd));
	} else if (path[0]) {
		close(fd);
		if (secret && readfile_private(path, &mode) == -EACCES) {
			cfg_report_key(diags, place, key,
				       "mqtt.%s: %s can be read by group or others (mode %04o): it holds a secret; "
				       "chmod 600 it",
				       key, path, mode);
		}
	}
}

static int
mqtt_validate(const void *obj, const struct cfg_place *place, struct diag_list *diags)
{
	const struct mqtt_config *cfg = obj;
	size_t before = diags->count;
	if (!cfg->host[0]) {
		return 0; /* MQTT off: nothing else is used */
	}
	if (!cfg->cert_file[0] != !cfg->key_file[0]) {
		cfg_report_key(diags, place, cfg->cert_file[0] ? "cert_file" : "key_file",
			       "mqtt.cert_file and mqtt.key_file go together (a client certificate needs its key)");
	}
	check_file("password_file", cfg->password_file, true, place, diags);
	check_file("ca_file", cfg->ca_file, false, place, diags);
	check_file("cert_file", cfg->cert_file, false, place, diags);
	check_file("key_file", cfg->key_file, true, place, diags);
	return diags->count == before ? 0 : -EINVAL;
}

size_t
mqtt_config_spool_memory_records(const struct mqtt_config *cfg, int64_t interval_ms)
{
	if (!cfg->spool_file || !cfg->spool_file[0]) {
		return cfg->spool_records > 0 ? (size_t)cfg->spool_records : 1;
	}
	/* the spool gives half its memory to the head (what goes out next), half to the newest */
	size_t head = (size_t)(cfg->inflight > 0 ? cfg->inflight : 1) + 32;
	size_t per_s = interval_ms > 0 ? (size_t)((1000 + interval_ms - 1) / interval_ms) : 1000;
	size_t tail = 2 * per_s + 32;
	/* spool_records does not bound it: too small a window would drop what waits for the next sync */
	return 2 * (head > tail ? head : tail);
}

uint64_t
mqtt_config_memory_bytes(const struct mqtt_config *cfg, int64_t interval_ms)
{
	if (!cfg->host || !cfg->host[0]) {
		return 0;
	}
	uint64_t records = mqtt_config_spool_memory_records(cfg, interval_ms) + (uint64_t)cfg->inflight;
	uint64_t buffers = cfg->spool_file && cfg->spool_file[0] ? 128u * 1024u : 0;
	return records * MQTT_RECORD_BYTES + buffers;
}

const struct cfg_section mqtt_config_section = {
	.name = "mqtt",
	.keys = mqtt_keys,
	.key_count = sizeof(mqtt_keys) / sizeof(mqtt_keys[0]),
	.validate = mqtt_validate,
};

bool
mqtt_host_is_loopback(const char *host)
{
	struct in_addr v4;
	struct in6_addr v6;
	size_t n = strlen(host);
	const char *suffix = ".localhost";
	if (strcasecmp(host, "localhost") == 0 ||
	    (n > strlen(suffix) && strcasecmp(host + n - strlen(suffix), suffix) == 0)) {
		return true;
	}
	if (inet_pton(AF_INET, host, &v4) == 1) {
		return (ntohl(v4.s_addr) >> 24) == 127;
	}
	if (inet_pton(AF_INET6, host, &v6) == 1) {
		return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
	}
	return false;
}
