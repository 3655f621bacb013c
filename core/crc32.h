/*
 * CRC-32 (IEEE 802.3: polynomial 0x04C11DB7 reflected, initial value and
 * final XOR 0xFFFFFFFF), the checksum of zlib, PNG and Ethernet. Used by the
 * spool to detect torn or damaged records. Pure, table-driven, no state.
 *
 * Check value: crc32_ieee("123456789", 9) == 0xCBF43926.
 * Named crc32_ieee* so it never clashes with zlib's crc32() in one process.
 */
#ifndef TEGRAWATCH_CRC32_H
#define TEGRAWATCH_CRC32_H

#include <stddef.h>
#include <stdint.h>

/** CRC-32 of LEN bytes at DATA (DATA may be NULL when LEN is 0). */
uint32_t crc32_ieee(const void *data, size_t len);

/**
 * Continues a CRC: crc32_ieee_update(crc32_ieee(a, na), b, nb) equals the
 * CRC of a followed by b. Start from 0 for an empty prefix.
 */
uint32_t crc32_ieee_update(uint32_t crc, const void *data, size_t len);

#endif
