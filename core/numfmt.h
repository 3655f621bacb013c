/*
 * Numbers as text without printf: the exact text "%.15g" (or "%.0f" for
 * whole numbers) gives, written by hand for the values sensors produce
 * (whole numbers, a few decimals), printf only for the rest. Pure.
 */
#ifndef TEGRAWATCH_NUMFMT_H
#define TEGRAWATCH_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

/** Room for any text written here, with its NUL. */
#define NUMFMT_MAX 40

/** Writes V in decimal into BUF (NUMFMT_MAX bytes, NUL-terminated); returns the length. */
size_t numfmt_i64(char *buf, int64_t v);
size_t numfmt_u64(char *buf, uint64_t v);

/**
 * Writes finite V as snprintf("%.15g") would, byte for byte, into BUF
 * (NUMFMT_MAX bytes, NUL-terminated); returns the length. Whole numbers
 * below 1e15 and values with at most six decimals (down to 1e-4) are
 * written by hand; the text is then the shortest that reads back as V.
 * NaN and infinities are the caller's business (JSON and Prometheus
 * spell them differently).
 */
size_t numfmt_g15(char *buf, double v);

#endif
