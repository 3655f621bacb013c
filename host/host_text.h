/*
 * Small readers of kernel text shared by the host parsers: pure, no I/O,
 * no locale. A number read here is exact in a double (at most 2^53).
 */
#ifndef TEGRAWATCH_HOST_TEXT_H
#define TEGRAWATCH_HOST_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOST_EXACT_MAX (UINT64_C(1) << 53) /* the largest count a double holds exactly */

/** Skips spaces and tabs at *P. */
void host_skip_blanks(const char **p);

/**
 * Reads a decimal whole number at *P (after blanks) of at most 2^53 and
 * moves *P past it. False, *P unmoved, on anything else.
 */
bool host_read_u64(const char **p, uint64_t *out);

/** As host_read_u64() up to 2^64 - 1: a kernel counter whole (a double rounds it above 2^53). */
bool host_read_counter(const char **p, uint64_t *out);

/** As host_read_u64() for "0x" hexadecimal ("0x01"; the prefix required). */
bool host_read_hex(const char **p, uint64_t *out);

/** Reads a decimal number "12", "12.34" at *P (after blanks); no sign, exponent, inf or nan. */
bool host_read_decimal(const char **p, double *out);

/** True when only blanks and newlines remain at P. */
bool host_at_end(const char *p);

/** The line of TEXT that starts with KEY (a whole word at the line's start), or NULL. */
const char *host_find_line(const char *text, const char *key);

/** True when one of the N shell globs GLOBS matches TEXT (fnmatch() without flags: '*' matches '/' too). */
bool host_glob_any(const char *text, const char *const *globs, size_t n);

#endif
