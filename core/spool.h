/*
 * The MQTT spool: messages produced while the broker is away, kept in
 * order in a bounded memory ring and optionally a file, delivered after
 * reconnect. When full, the oldest message goes first and every drop is
 * counted. File records carry a CRC each, so a torn write after a power
 * cut loses only that record, and a damaged file is recovered on open
 * without manual deletion. No MQTT here: the MQTT sink drives it.
 *
 * Memory: at most max_records records; ids are assigned by spool_push,
 * strictly increasing from 1 (or from one past the highest id or
 * acknowledgement marker found in the file).
 *
 * Without spill (the default), memory is the whole truth: a ring of
 * max_records records, and a file only mirrors it for restarts. With a
 * file the ring is also limited to records whose encoded size sums to at
 * most 3/4 of max_file_bytes (the rest is room for appends between
 * compactions). When a file holds more records than the ring can take,
 * only the newest are loaded and the older ones count as dropped.
 *
 * With spill and a file, max_records bounds memory only (at least 2): half
 * of it (the head) holds the next records to hand out, the rest the newest
 * ones until spool_sync() has written them; the records in between are in
 * the file alone and are read back, in order, as the head drains. The
 * spool then holds what fits in 3/4 of max_file_bytes, whatever
 * max_records is, and its memory is max_records records plus a 64 KiB read
 * window and a 64 KiB write buffer. When memory is full of records not yet
 * written (more pushes than half of max_records between two syncs, or
 * writes failing), the oldest record in memory is dropped (counted).
 *
 * Delivery is at least once: only the contiguous acknowledged prefix is made
 * durable, so a record acknowledged out of order, or handed out and not yet
 * acknowledged, comes back after a restart. Consumers deduplicate by the
 * (boot_id, seq) inside the payload.
 *
 * Writes happen only in spool_open(), spool_sync() and spool_close();
 * reads only there and, with spill, in spool_peek_next() when the head runs
 * dry (one 64 KiB window at a time). spool_push() never touches the disk, so
 * a record acknowledged before the next sync is never written at all (a
 * connected agent writes nothing). A process crash or power cut loses at
 * most what was pushed since the last spool_sync(). Write errors (ENOSPC,
 * EIO, EFBIG) never stop the spool: it keeps the records in memory (up to
 * its bound), retries with a back-off of 1 s doubling to 60 s, counts
 * write_errors and logs at most one warning a minute. A run of records that
 * cannot be read back (damaged after open, or EIO) is skipped: counted in
 * corrupt_records and dropped, with a warning.
 *
 * File layout (version 1; all integers little-endian). The file is a
 * sequence of records, appended and never rewritten in place:
 *
 *   offset  size  field
 *   0       4     magic: 0x445053FE data ("\xFESPD") or 0x415053FE ack ("\xFESPA")
 *   4       4     length: byte count of the body that follows the 12-byte header
 *   8       4     crc: CRC-32/IEEE (crc32.h) of the 4 length bytes then the body
 *   12      len   body
 *
 *   data body (length = 12 + topic_len + payload_len, payload_len <= SPOOL_MAX_PAYLOAD_BYTES):
 *   0  8  id (1 .. 2^62)          8  1  qos (0..2)       9  1  retain (0/1)
 *   10 2  topic_len (>= 1)        12    topic bytes (no NUL), then payload bytes
 *
 *   ack body (length = 8): 8 bytes "every id <= this value is gone" (delivered or
 *   dropped). The highest valid ack record in the file wins.
 *
 * The magic's first byte 0xFE never occurs in UTF-8 text, so topics and JSON
 * payloads cannot look like a record start. A data record costs 24 bytes
 * plus topic and payload. Compaction (more than half of the file dead, or
 * the next append would pass max_file_bytes) writes an ack record and the
 * live records to PATH.tmp, fsyncs it, renames it over PATH and fsyncs the
 * directory (core/atomic_file.h).
 *
 * Recovery on open: the file is scanned from the start; anything that is not
 * a valid record (bad magic, impossible length, bad CRC, invalid fields, an id
 * not above the previous one, a truncated tail, zeroed pages) is skipped up
 * to the next offset where a valid record starts. Each maximal damaged run
 * of bytes between two valid records (or the end of the file) counts once in
 * corrupt_records. A damaged file is then rewritten clean (compacted), so
 * the same damage is not counted again at the next start. Data records at
 * or below the ack marker are not loaded.
 *
 * The layout has not changed with spill: either mode opens the other's
 * file.
 *
 * Not thread-safe: callers serialise all calls on one spool. One process at
 * a time may use a spool file (flock; a second opener gets -EBUSY).
 */
#ifndef TEGRAWATCH_SPOOL_H
#define TEGRAWATCH_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Larger payloads are refused by spool_push (-EMSGSIZE). */
#define SPOOL_MAX_PAYLOAD_BYTES (1024u * 1024u)
/* max_file_bytes of 0 means this; smaller non-zero values are raised to 4 KiB. */
#define SPOOL_DEFAULT_FILE_BYTES (64ull * 1024u * 1024u)

struct spool;

struct spool_options {
	size_t max_records;      /* records in memory at most; without spill also in the whole spool */
	const char *path;        /* file spool, NULL or "" = memory only */
	uint64_t max_file_bytes; /* file spool cap; oldest records dropped beyond it */
	bool spill;              /* with a file: max_records bounds memory only, the rest waits in the file */
};

struct spool_record {
	uint64_t id; /* monotonic, assigned by spool_push */
	char *topic; /* NUL-terminated */
	void *payload;
	size_t payload_len;
	int qos;
	bool retain;
};

struct spool_stats {
	uint64_t pushed;
	uint64_t dropped;         /* oldest records dropped because the spool was full (also on open) */
	uint64_t corrupt_records; /* damaged regions skipped on open (bad CRC or framing; each run counts once) */
	uint64_t depth;           /* records waiting now */
	uint64_t file_bytes;
	uint64_t write_errors;   /* failed file writes/fsyncs/compactions (records kept in memory) */
	uint64_t memory_records; /* records held in memory now */
	uint64_t memory_bytes;   /* their topics and payloads */
};

/**
 * Opens a spool. With a file path, records left in the file by an earlier
 * run are loaded (damaged ones counted and skipped). Returns 0 and *OUT, or
 * -errno (a damaged file is not an error; an unwritable path is): -EINVAL
 * for max_records 0, -EBUSY when another process holds the file, or the
 * error of open(2) on PATH.
 */
int spool_open(const struct spool_options *opts, struct spool **out);

/** Flushes and frees; NULL is a no-op. Undelivered records stay in the file. */
void spool_close(struct spool *sp);

/**
 * Appends a copy of the message. Drops (and counts) the oldest when full
 * (with spill: when memory is full of records not yet written; the file
 * cap is then applied by spool_sync()).
 * Returns 0, -EINVAL (empty topic, topic over 65535 bytes, qos not 0..2),
 * -EMSGSIZE (payload over SPOOL_MAX_PAYLOAD_BYTES). Never does I/O.
 * A record too large for the file cap on its own is kept in memory only.
 */
int spool_push(struct spool *sp, const char *topic, const void *payload, size_t len, int qos, bool retain);

/**
 * The oldest record not yet handed out by spool_peek_next(), or NULL (with
 * spill also while the head is full of records handed out and not yet
 * acknowledged: acknowledge some first). The
 * record stays owned by the spool until spool_ack() or spool_rewind().
 * The pointer is valid until that record is acknowledged, dropped by a
 * later spool_push(), or the spool is closed: publish (copy) it before
 * pushing again.
 */
const struct spool_record *spool_peek_next(struct spool *sp);

/**
 * Marks record ID delivered (the broker confirmed it; PUBACKs may come out
 * of order). Delivered records at the head of the queue are removed.
 * Unknown ids (already dropped, or acknowledged twice) are ignored.
 */
void spool_ack(struct spool *sp, uint64_t id);

/** Makes every handed-out but unacknowledged record available again (after a disconnect). */
void spool_rewind(struct spool *sp);

/**
 * Writes buffered file records to disk and fsyncs (called about once a second). Returns 0 or -errno.
 * Compacts the file when due. Without a file, or with nothing new, it does
 * no I/O. Errors are already counted and logged (rate-limited): callers need
 * not log them, and the records stay in memory and are written by a later call.
 */
int spool_sync(struct spool *sp);

void spool_get_stats(const struct spool *sp, struct spool_stats *out);

#endif
