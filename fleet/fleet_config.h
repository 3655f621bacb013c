/*
 * The remote_write: and otlp: sections of the configuration, owned by the
 * fleet sinks: one struct for both (they batch, spool, retry and
 * authenticate the same way), a key table each, and the checks that span
 * keys or read files. Pure (no libcurl, no libsnappy), so every build
 * decodes and checks both sections. docs/configuration.md and
 * docs/fleet.md describe every key.
 */
#ifndef TEGRAWATCH_FLEET_CONFIG_H
#define TEGRAWATCH_FLEET_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cfg_decode.h"

enum fleet_compression {
	FLEET_COMPRESSION_NONE,
	FLEET_COMPRESSION_GZIP,
};

/* A section with url "" is off. */
struct fleet_config {
	char *url;                 /* http:// or https://, no user:password@ */
	int64_t timeout_ms;        /* one request in total, 30 s */
	int batch_samples;         /* samples in one request at most, 100 */
	int64_t batch_interval_ms; /* a sample waits at most this long to be sent, 10 s */
	int64_t interval_ms;       /* one sample per interval is sent; 0 = every sample */
	char **metrics;            /* globs of the metrics sent; NULL = all */
	size_t metric_count;
	char **exclude; /* globs left out; NULL = none */
	size_t exclude_count;
	char **label_names; /* labels: {name: value}, remote_write: on every series; otlp: resource attributes */
	char **label_values;
	size_t label_count;
	char **headers; /* "Name: value" on every request, from the map `headers:`; NULL when none */
	size_t header_count;
	char *job;               /* remote_write: the job label, "tegrawatch" */
	int compression;         /* otlp: enum fleet_compression, gzip */
	char *username;          /* basic auth, "" = none */
	char *password_file;     /* its password, first line */
	char *bearer_token_file; /* "Authorization: Bearer", "" = none */
	char *ca_file;           /* "" = the system CAs; verification is always on */
	char *cert_file;         /* client certificate (PEM), "" = none */
	char *key_file;
	int64_t backoff_base_ms; /* 1 s */
	int64_t backoff_cap_ms;  /* 60 s */
	int spool_records;       /* samples held in memory while the receiver is away, 3600 */
	char *spool_file;        /* "" = memory only */
	int spool_file_max_mb;   /* 64 */
};

extern const struct cfg_section remote_write_config_section;
extern const struct cfg_section otlp_config_section;

/* Memory budgeted for one spooled sample: ~2.4 KB for an Orin's 150 metrics, its slot and allocator slack. */
#define FLEET_RECORD_BYTES 3072u

/**
 * Samples the spool keeps in memory at most, sampling every INTERVAL_MS:
 * spool_records without a spool_file; with one, a window (two batches and
 * two seconds of samples, twice); the rest waits in the file.
 */
size_t fleet_config_spool_memory_records(const struct fleet_config *cfg, int64_t interval_ms);

/**
 * The most memory a sink of CFG may hold (0 when off): the spool in memory,
 * a batch's request (protobuf and compressed, 2 KiB a sample each) and
 * 128 KiB of spool file buffers.
 */
uint64_t fleet_config_memory_bytes(const struct fleet_config *cfg, int64_t interval_ms);

/** True when NAME is sent under CFG's metrics and exclude globs. */
bool fleet_config_wants(const struct fleet_config *cfg, const char *name);

/**
 * Reads a secret (a password or a bearer token): the file's first line,
 * without its line end, not empty and without control characters. Returns
 * 0 and *OUT (malloc'ed), or -errno with a reason in WHY that never
 * quotes it.
 */
int fleet_read_secret(const char *path, char **out, char *why, size_t why_size);

#endif
