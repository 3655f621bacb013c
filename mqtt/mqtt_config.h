/*
 * The mqtt: section of the configuration, owned by the MQTT sink: its
 * settings, key table and checks (docs/configuration.md). Builds without
 * libmosquitto, so every build decodes and checks the section.
 */
#ifndef TEGRAWATCH_MQTT_CONFIG_H
#define TEGRAWATCH_MQTT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cfg_decode.h"

enum mqtt_protocol {
	MQTT_PROTOCOL_311,
	MQTT_PROTOCOL_5,
};

/* The MQTT password when no password_file is set (never a file setting). */
#define MQTT_PASSWORD_ENV "TEGRAWATCH_MQTT_PASSWORD"

/* mqtt: publishing (issue 4). host "" = MQTT off. */
struct mqtt_config {
	char *host;
	int port;             /* 1883 */
	char *prefix;         /* topic prefix, "tegrawatch" */
	char *device_id;      /* "" = made from the serial number or machine-id (core/device_id.h) */
	char *client_id;      /* "" = "tegrawatch-" + device id */
	int protocol;         /* enum mqtt_protocol: "3.1.1" or "5" */
	int64_t keepalive_ms; /* 30 s */
	int qos;              /* QoS of state samples: 0 or 1 (alerts always 1) */
	char *username;       /* "" = none */
	char *password_file;  /* "" = none; TEGRAWATCH_MQTT_PASSWORD also works */
	int tls;              /* bool */
	char *ca_file;
	char *cert_file; /* client certificate, "" = none */
	char *key_file;
	int tls_insecure;        /* bool: skip host name verification (warned at start) */
	int64_t backoff_base_ms; /* 1 s */
	int64_t backoff_cap_ms;  /* 60 s */
	int inflight;            /* QoS 1 messages handed to libmosquitto at once, 100 */
	int spool_records;       /* memory spool while the broker is away, 3600 */
	char *spool_file;        /* "" = memory only */
	int spool_file_max_mb;   /* 64 */
	char **metric_topics;    /* globs of metrics published on PREFIX/ID/metric/NAME; NULL = off */
	size_t metric_topic_count;
	int ha_discovery;       /* bool, true */
	char *ha_prefix;        /* "homeassistant" */
	int64_t ha_interval_ms; /* the Home Assistant view (PREFIX/ID/ha) at most this often, 5 s */
	int state_full;         /* bool: the state keeps the limits too (the shape before PREFIX/ID/limits) */
};

/** The key table and checks: cert_file and key_file together, a readable password_file. */
extern const struct cfg_section mqtt_config_section;

/**
 * Messages the spool keeps in memory at most, sampling every INTERVAL_MS.
 * Without spool_file: spool_records (the whole spool). With it, only a
 * window, whatever spool_records says: twice the larger of the next to
 * send (inflight + 32) and the newest not yet written (2 s of samples +
 * 32); the rest waits in the file, up to spool_file_max_mb.
 */
size_t mqtt_config_spool_memory_records(const struct mqtt_config *cfg, int64_t interval_ms);

/* Memory budgeted for one spooled message: a 3.3 KB Orin state message, its topic, slot and allocator slack. */
#define MQTT_RECORD_BYTES 4096u

/**
 * The most memory the MQTT sink may hold for CFG (0 when host is ""): the
 * spool's records in memory and libmosquitto's copies of those in flight,
 * MQTT_RECORD_BYTES each, and 128 KiB of spool file buffers.
 */
uint64_t mqtt_config_memory_bytes(const struct mqtt_config *cfg, int64_t interval_ms);

/**
 * True when HOST is this machine: localhost (or NAME.localhost), an
 * address in 127.0.0.0/8, ::1 or ::ffff:127.x.x.x. Nothing is resolved.
 */
bool mqtt_host_is_loopback(const char *host);

#endif
