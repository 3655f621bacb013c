/* The web: section: key table, defaults and checks (no libmicrohttpd here). */
#include "web_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "core/readfile.h"
#include "web_util.h"

/* libmicrohttpd's memory pool of a connection (MHD_OPTION_CONNECTION_MEMORY_LIMIT's default) */
#define CONNECTION_BYTES (32u * 1024u)

static const struct cfg_key web_keys[] = {
	CFG_STRING("listen", struct web_config, listen, "127.0.0.1:9474", 0),
	CFG_STRING("token_file", struct web_config, token_file, "", CFG_F_SECRET_FILE),
	CFG_STRING("basic_auth_user", struct web_config, basic_auth_user, "", 0),
	CFG_STRING("basic_auth_password_file", struct web_config, basic_auth_password_file, "", CFG_F_SECRET_FILE),
	CFG_DURATION("history", struct web_config, history_ms, "1h", 0, 60 * 1000, 7 * 24 * 3600 * 1000LL),
	CFG_DURATION("minute_history", struct web_config, minute_history_ms, "24h", 0, 0, 30 * 24 * 3600 * 1000LL),
	CFG_INT("max_connections", struct web_config, max_connections, "32", 0, 1, 4096),
	CFG_INT("max_connections_per_ip", struct web_config, max_connections_per_ip, "8", 0, 1, 4096),
	CFG_DURATION("connection_timeout", struct web_config, connection_timeout_ms, "10s", 0, 1000, 3600 * 1000),
	CFG_DURATION("header_timeout", struct web_config, header_timeout_ms, "5s", 0, 1000, 3600 * 1000),
	CFG_INT("max_event_streams", struct web_config, max_event_streams, "8", 0, 1, 4096),
	CFG_DURATION("stream_stall_timeout", struct web_config, stream_stall_timeout_ms, "30s", 0, 1000, 3600 * 1000),
};

static void
check_secret(const char *key, const char *path, const struct cfg_place *place, struct diag_list *diags)
{
	char *secret;
	bool world;
	int r = web_read_secret(path, &secret, &world);
	if (r < 0) {
		cfg_report_key(diags, place, key, "web.%s %s: %s", key, path,
			       r == -EINVAL ? "must be a regular file holding 1 to 4096 bytes" : strerror(-r));
		return;
	}
	explicit_bzero(secret, strlen(secret));
	free(secret);
	unsigned mode;
	if (readfile_private(path, &mode) == -EACCES) {
		cfg_report_key(diags, place, key,
			       "web.%s %s: group or others can read it (mode %04o): it holds a secret; chmod 600 it",
			       key, path, mode);
	}
}

static int
web_validate(const void *obj, const struct cfg_place *place, struct diag_list *diags)
{
	const struct web_config *cfg = obj;
	size_t before = diags->count;
	if (!cfg->listen[0]) {
		return 0; /* the server is off */
	}
	struct sockaddr_storage addr;
	socklen_t len;
	bool loopback;
	if (web_parse_listen(cfg->listen, &addr, &len, &loopback) < 0) {
		cfg_report_key(
			diags, place, "listen",
			"web.listen: expected HOST:PORT with an IPv4 address, [IPv6 address] or localhost, got '%s'",
			cfg->listen);
		return -EINVAL;
	}
	bool basic = cfg->basic_auth_user[0] != '\0';
	if (basic != (cfg->basic_auth_password_file[0] != '\0')) {
		cfg_report_key(diags, place, basic ? "basic_auth_user" : "basic_auth_password_file",
			       "web.basic_auth_user and web.basic_auth_password_file must be set together");
	}
	if (!loopback && !cfg->basic_auth_user[0] && !cfg->basic_auth_password_file[0] && !cfg->token_file[0]) {
		cfg_report_key(
			diags, place, "listen",
			"web.listen: refusing to listen on %s without authentication: a non-loopback address needs "
			"web.token_file or web.basic_auth_user with web.basic_auth_password_file "
			"(or listen on 127.0.0.1 and use an SSH tunnel)",
			cfg->listen);
	}
	if (cfg->token_file[0]) {
		check_secret("token_file", cfg->token_file, place, diags);
	}
	if (cfg->basic_auth_password_file[0]) {
		check_secret("basic_auth_password_file", cfg->basic_auth_password_file, place, diags);
	}
	return diags->count == before ? 0 : -EINVAL;
}

uint64_t
web_config_memory_bytes(const struct web_config *cfg, int64_t interval_ms)
{
	if (!cfg->listen || !cfg->listen[0]) {
		return 0;
	}
	/* the sizes history_create() settles on, with every ring taken */
	uint64_t cap = interval_ms > 0 ? (uint64_t)(cfg->history_ms / interval_ms) : 1;
	cap = cap < 1 ? 1 : cap > HISTORY_MAX_CAPACITY ? HISTORY_MAX_CAPACITY : cap;
	uint64_t buckets = history_buckets_for(cfg->minute_history_ms, interval_ms);
	uint64_t history = history_bytes(cap, buckets, interval_ms, HISTORY_MAX_METRICS);
	return history + (uint64_t)cfg->max_connections * CONNECTION_BYTES;
}

const struct cfg_section web_config_section = {
	.name = "web",
	.keys = web_keys,
	.key_count = sizeof(web_keys) / sizeof(web_keys[0]),
	.validate = web_validate,
};
