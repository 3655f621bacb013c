/*
 * A `headers:` map, {Name: value, ...}: the extra request headers of a
 * module that sends HTTP (webhook actions, the fleet sinks). One decoder
 * for all of them, so every module checks the same way: RFC 9110 token
 * names, values without control characters (CR/LF would split the
 * request), at most CFG_HEADERS_MAX, and none of the headers the module
 * sets itself (each module passes its own list). Pure: no I/O.
 */
#ifndef TEGRAWATCH_CFG_HEADERS_H
#define TEGRAWATCH_CFG_HEADERS_H

#include <stdbool.h>
#include <stddef.h>

#include "cfg_decode.h"

#define CFG_HEADERS_MAX 32

/* A header the module sets itself: a configured copy would send two, or contradict it. */
struct cfg_reserved_header {
	const char *name; /* compared without ASCII case */
	const char *why;  /* appended to "'X' is set by tegrawatch itself: ", NULL = nothing */
};

/**
 * Decodes NODE (a map of header names to text values) into "Name: value"
 * lines: *LINES (NULL-terminated, NULL when empty) and *COUNT, replacing
 * (and freeing) what they held. Names in the NRESERVED entries of
 * RESERVED are refused. Every mistake is reported at its place, with
 * "headers: " before it; a value is never quoted (it may be a
 * credential). Returns 0, or -EINVAL with *LINES and *COUNT untouched.
 */
int cfg_decode_headers(struct cfg_decoder *dec, const struct cfg_node *node, const struct cfg_reserved_header *reserved,
		       size_t nreserved, char ***lines, size_t *count);

/** True when the COUNT lines of A and the NB of B are the same, in the same order. */
bool cfg_headers_equal(char *const *a, size_t count, char *const *b, size_t nb);

/** A malloc'ed copy of COUNT lines (NULL-terminated), NULL when COUNT is 0. */
char **cfg_headers_copy(char *const *lines, size_t count);

/** Frees COUNT lines and the array; NULL is a no-op. */
void cfg_headers_free(char **lines, size_t count);

/** True when one of the COUNT lines is the header NAME (ASCII case ignored). */
bool cfg_headers_has(char *const *lines, size_t count, const char *name);

#endif
