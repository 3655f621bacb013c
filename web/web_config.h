/*
 * The web: section of the configuration, owned by the HTTP server: its
 * settings, key table and checks (docs/configuration.md). Builds without
 * libmicrohttpd, so every build decodes and checks the section.
 */
#ifndef TEGRAWATCH_WEB_CONFIG_H
#define TEGRAWATCH_WEB_CONFIG_H

#include <stdint.h>

#include "core/cfg_decode.h"

/* web: the HTTP server (issue 5). listen "" = off. */
struct web_config {
	char *listen;          /* "127.0.0.1:9474" */
	char *token_file;      /* bearer token, "" = none */
	char *basic_auth_user; /* "" = none */
	char *basic_auth_password_file;
	int64_t history_ms;              /* 1 h of every sample per metric (tier 0) */
	int64_t minute_history_ms;       /* 24 h of one-minute aggregates per metric (tier 1); 0 = none */
	int max_connections;             /* 32 */
	int max_connections_per_ip;      /* 8 */
	int64_t connection_timeout_ms;   /* 10 s */
	int64_t header_timeout_ms;       /* 5 s: a complete request head within this, or closed */
	int max_event_streams;           /* 8, apart from max_connections */
	int64_t stream_stall_timeout_ms; /* 30 s: a stream whose socket takes nothing this long is dropped */
};

/**
 * The key table and checks: a listen address web_parse_listen() accepts,
 * authentication on a non-loopback address, basic_auth_user with its
 * password file, and secret files that can be read and hold 1 to 4096 bytes.
 */
extern const struct cfg_section web_config_section;

/**
 * The most memory the server may hold for CFG when sampling every
 * INTERVAL_MS (0 when listen is ""): both tiers of the history with every
 * ring taken (history_bytes() for HISTORY_MAX_METRICS metrics) and 32 KiB
 * for each connection.
 */
uint64_t web_config_memory_bytes(const struct web_config *cfg, int64_t interval_ms);

#endif
