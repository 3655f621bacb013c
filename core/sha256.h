/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), small and dependency
 * free, the one HMAC of the agent: the device id is derived from
 * /etc/machine-id without exposing it (docs/mqtt.md), and the webhook
 * signatures (webhook/webhook_sign.c) are made with it; no crypto library.
 */
#ifndef TEGRAWATCH_SHA256_H
#define TEGRAWATCH_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_BYTES 32

/** The SHA-256 digest of LEN bytes at DATA. */
void sha256(const void *data, size_t len, uint8_t out[SHA256_BYTES]);

/** HMAC-SHA256 of MSG (MSG_LEN bytes) under KEY (KEY_LEN bytes, any length). */
void hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len, uint8_t out[SHA256_BYTES]);

#endif
