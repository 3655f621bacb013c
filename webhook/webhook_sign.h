/*
 * Standard Webhooks signatures (https://www.standardwebhooks.com):
 * HMAC-SHA256 over "ID.TIMESTAMP.BODY" with the decoded bytes of a
 * "whsec_<base64>" secret, sent as "v1,<base64>". Several secrets (a
 * rotation) give several signatures, space-separated. HMAC-SHA256 and
 * base64 are core's (core/sha256.h, core/base64.h): no crypto library.
 */
#ifndef TEGRAWATCH_WEBHOOK_SIGN_H
#define TEGRAWATCH_WEBHOOK_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "webhook_config.h"

struct webhook_key {
	unsigned char bytes[WEBHOOK_SECRET_MAX_BYTES];
	size_t len;
};

/* "v1," + base64 of 32 bytes (44) per secret, a space between, and the NUL. */
#define WEBHOOK_SIGNATURE_MAX (WEBHOOK_SECRETS_MAX * 48)

/** Decodes "whsec_<base64>" into *KEY. Returns 0, or -EINVAL for anything webhook_secret_syntax_ok() refuses. */
int webhook_key_parse(const char *secret, struct webhook_key *key);

/** Overwrites the key bytes (before the memory is freed or reused). */
void webhook_key_wipe(struct webhook_key *key);

/**
 * Writes the webhook-signature header value for BODY (LEN bytes) sent with
 * ID (no '.') at TIMESTAMP_S into BUF: "v1,<b64>" per key in KEYS,
 * space-separated. Returns 0, -EINVAL (no key, or a '.' in ID) or -ENOSPC.
 */
int webhook_sign(const struct webhook_key *keys, size_t nkeys, const char *id, int64_t timestamp_s, const void *body,
		 size_t len, char *buf, size_t size);

#endif
