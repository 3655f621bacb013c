/*
 * Base64 (RFC 4648, the standard alphabet): HTTP Basic credentials (strict)
 * and Standard Webhooks secrets and signatures. Pure.
 */
#ifndef TEGRAWATCH_BASE64_H
#define TEGRAWATCH_BASE64_H

#include <stdbool.h>
#include <stddef.h>

/** The characters base64_encode() writes for LEN bytes, without the NUL. */
#define BASE64_LEN(len) (((len) + 2) / 3 * 4)

/** The value (0..63) of the base64 character C, or -1. */
int base64_value(char c);

/** Writes the padded base64 of LEN bytes at IN and a NUL to OUT (BASE64_LEN(LEN) + 1 bytes); returns the length. */
size_t base64_encode(const void *in, size_t len, char *out);

/**
 * Decodes IN_LEN characters at IN into OUT (room for OUT_CAP bytes).
 * Strict (LOOSE false): padded to a multiple of 4, '=' only at the end, no
 * spaces, no stray bits before the padding: every text has one encoding.
 * LOOSE: the padding may be left out and the unused bits of the last
 * character are ignored (how webhook libraries read "whsec_" secrets).
 * Returns 0 and *OUT_LEN, or -EINVAL.
 */
int base64_decode(const char *in, size_t in_len, unsigned char *out, size_t out_cap, size_t *out_len, bool loose);

#endif
