/*
 * FNV-1a, 64 bits (Fowler, Noll, Vo): the hash of the in-memory tables keyed
 * by name (metric names, sysfs paths, configuration keys) and of the alert
 * fingerprints. The fingerprints are written to the state file and sent to
 * MQTT and webhooks: never change what fnv1a64() computes.
 *
 * Check value: fnv1a64(FNV1A64_BASIS, "a", 1) == 0xaf63dc4c8601ec8c.
 */
#ifndef TEGRAWATCH_HASH_H
#define TEGRAWATCH_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A64_BASIS 14695981039346656037ull
#define FNV1A64_PRIME 1099511628211ull

/** Continues the hash H over LEN bytes at DATA; start from FNV1A64_BASIS. */
uint64_t fnv1a64(uint64_t h, const void *data, size_t len);

/** The hash of the string S, from FNV1A64_BASIS. */
uint64_t fnv1a64_str(const char *s);

/**
 * A table hash of the string S taken 8 bytes at a time, several times
 * faster than FNV-1a byte by byte: for keys looked up on every sample (the
 * board's kept files). Never stored or sent: it may change.
 */
uint64_t hash_words_str(const char *s);

#endif
