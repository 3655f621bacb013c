/*
 * One webhook action's settings (an entry of `actions:` with `type:
 * webhook`): the struct, its key table and the checks that span keys or
 * read files. Pure (no libcurl, no OpenSSL), so every build decodes and
 * checks webhook actions. The caller decodes `type:` itself and hands the
 * rest of the map to cfg_decode_map() with webhook_keys.
 *
 * Secret files are read here too (webhook_read_secrets, webhook_read_token),
 * so `check` and the running agent accept exactly the same files.
 */
#ifndef TEGRAWATCH_WEBHOOK_CONFIG_H
#define TEGRAWATCH_WEBHOOK_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cfg_decode.h"

enum webhook_format {
	WEBHOOK_ALERTMANAGER_API, /* "alertmanager-api": POST /api/v2/alerts of an Alertmanager */
	WEBHOOK_ALERTMANAGER,     /* "alertmanager": the body Alertmanager's own webhook sends (version 4) */
	WEBHOOK_JSON,             /* "json": one tegrawatch alert event per request */
};

/* Secret rotation: a secret_file may hold this many whsec_ secrets (one signature each). */
#define WEBHOOK_SECRETS_MAX 4
/* Decoded secret sizes accepted (Standard Webhooks asks for 24 to 64 random bytes). */
#define WEBHOOK_SECRET_MIN_BYTES 16
#define WEBHOOK_SECRET_MAX_BYTES 128
/* secret_file and bearer_token_file are small; larger files are refused. */
#define WEBHOOK_SECRET_FILE_MAX 4096

struct webhook_config {
	char *url;               /* http:// or https:// only; no user:password@ */
	int format;              /* enum webhook_format (required) */
	int64_t timeout_ms;      /* per attempt, in total; connect timeout min(10 s, this). 10 s */
	char *secret_file;       /* whsec_ secrets, whitespace-separated; "" = unsigned */
	char *bearer_token_file; /* "" = none */
	char **headers;          /* "Name: value", from the map `headers:`; NULL when none */
	size_t header_count;
	char *ca_file;     /* "" = the system CAs; verification is always on */
	char *queue_file;  /* "" = memory only */
	int queue_max;     /* notifications queued per action, drop-oldest. 1000 */
	int64_t resend_ms; /* alertmanager-api: firing alerts are sent again this often. 1 min */
};

/*
 * Offsets into struct webhook_config. "type" is not in it. Keys marked
 * CFG_F_RELOADED apply on a reload (webhooks_set); queue_file and
 * queue_max apply at the next start.
 */
extern const struct cfg_key webhook_keys[];
extern const size_t webhook_key_count;

/**
 * Checks what spans keys or reads files: the url (scheme, host, no
 * credentials, no spaces), a secret_file that holds 1 to 4 valid whsec_
 * secrets, a readable non-empty bearer_token_file, a readable ca_file,
 * no Authorization header next to a bearer_token_file. PLACE names the
 * action ("actions.ops"); every mistake is reported with cfg_report_key().
 * Returns 0 or -EINVAL.
 */
int webhook_config_validate(const struct webhook_config *cfg, const struct cfg_place *place, struct diag_list *diags);

/** Frees what decoding allocated (strings and headers); the struct itself is the caller's. */
void webhook_config_free(struct webhook_config *cfg);

/** Deep copy of SRC into *DST (for the delivery side, which outlives a reload's config). */
void webhook_config_copy(struct webhook_config *dst, const struct webhook_config *src);

/** The name of FORMAT as written in the file ("alertmanager-api"). */
const char *webhook_format_name(int format);

/** False when this build has no libcurl: webhooks_create() then returns NULL. */
bool webhook_supported(void);

/**
 * Reads PATH as a secret file: 1 to WEBHOOK_SECRETS_MAX whitespace-separated
 * "whsec_<base64>" words, each decoding to 16..128 bytes. Returns the count
 * and fills SECRETS (malloc'ed copies, the caller frees each), or -errno:
 * -EINVAL with a reason in WHY (which never quotes the secret).
 */
int webhook_read_secrets(const char *path, char *secrets[WEBHOOK_SECRETS_MAX], char *why, size_t why_size);

/**
 * Reads PATH as a bearer token: one line of printable ASCII, trailing
 * whitespace and newline removed. Returns 0 and *TOKEN (malloc'ed), or
 * -errno (-EINVAL with a reason in WHY).
 */
int webhook_read_token(const char *path, char **token, char *why, size_t why_size);

/** True when TEXT is "whsec_" + padded or unpadded base64 of 16..128 bytes. */
bool webhook_secret_syntax_ok(const char *text);

/* Memory budgeted for one queued notification: an alert body of about 1 KB, its id, slot and allocator slack. */
#define WEBHOOK_NOTIFICATION_BYTES 2048u

/** The most memory CFG's queue may hold: queue_max notifications (all in memory, with a queue_file too). */
uint64_t webhook_config_memory_bytes(const struct webhook_config *cfg);

#endif
