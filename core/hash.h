/*
 * FNV-1a, 64 bits (Fowler, Noll, Vo): the hash of the in-memory tables keyed
 * by name (history rings, configuration keys) and of the alert
 * fingerprints; hash_words() below for the tables looked up on every sample.
 * The fingerprints are written to the state file and sent to MQTT and
 * webhooks: never change what fnv1a64() computes.
 *
 * Check value: fnv1a64(FNV1A64_BASIS, "a", 1) == 0xaf63dc4c8601ec8c.
 */
#ifndef TEGRAWATCH_HASH_H
#define TEGRAWATCH_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FNV1A64_BASIS 14695981039346656037ull
#define FNV1A64_PRIME 1099511628211ull

/** Continues the hash H over LEN bytes at DATA; start from FNV1A64_BASIS. */
uint64_t fnv1a64(uint64_t h, const void *data, size_t len);

/** The hash of the string S, from FNV1A64_BASIS. */
uint64_t fnv1a64_str(const char *s);

/**
 * A table hash of the LEN bytes at S taken 8 bytes at a time, the last word
 * overlapping the one before (nothing past S + LEN is read, no tail is
 * masked), mixed once at the end: several times faster than FNV-1a byte by
 * byte, for the keys looked up on every sample (metric names, the board's
 * files). Not a strong hash, a collision costs a probe; never stored or
 * sent: it may change. Inline: the metric set's put is the parser's hot path.
 */
static inline uint64_t
hash_words(const char *s, size_t len)
{
	uint64_t h = len * 0x9E3779B97F4A7C15ull;
	uint64_t w = 0;
	if (len >= 8) {
		for (size_t i = 0; i + 8 < len; i += 8) {
			memcpy(&w, s + i, 8);
			h = (h ^ w) * 0xff51afd7ed558ccdull;
		}
		memcpy(&w, s + len - 8, 8);
	} else {
		for (size_t i = 0; i < len; i++) {
			w = (w << 8) | (unsigned char)s[i];
		}
	}
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 32); /* the high bits into the low: tables index by either end */
}

#endif
