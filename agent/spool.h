/*
 * The MQTT spool: messages produced while the broker is away, kept in
 * order in a bounded memory ring and optionally a file, delivered after
 * reconnect. When full, the oldest message goes first and every drop is
 * counted. File records carry a CRC each, so a torn write after a power
 * cut loses only that record, and a damaged file is recovered on open
 * without manual deletion. No MQTT here: the MQTT sink drives it.
 */
#ifndef TEGRAWATCH_SPOOL_H
#define TEGRAWATCH_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct spool;

struct spool_options {
	size_t max_records;     /* memory ring capacity (records) */
	const char *path;       /* file spool, NULL or "" = memory only */
	uint64_t max_file_bytes; /* file spool cap; oldest records dropped beyond it */
};

struct spool_record {
	uint64_t id;      /* monotonic, assigned by spool_push */
	char *topic;      /* NUL-terminated */
	void *payload;
	size_t payload_len;
	int qos;
	bool retain;
};

struct spool_stats {
	uint64_t pushed;
	uint64_t dropped;          /* oldest records dropped because the spool was full */
	uint64_t corrupt_records;  /* file records skipped because their CRC or framing was bad */
	uint64_t depth;            /* records waiting now */
	uint64_t file_bytes;
};

/**
 * Opens a spool. With a file path, records left in the file by an earlier
 * run are loaded (damaged ones counted and skipped). Returns 0 and *OUT, or
 * -errno (a damaged file is not an error; an unwritable path is).
 */
int spool_open(const struct spool_options *opts, struct spool **out);

/** Flushes and frees; NULL is a no-op. Undelivered records stay in the file. */
void spool_close(struct spool *sp);

/** Appends a copy of the message. Drops (and counts) the oldest when full. Returns 0 or -errno. */
int spool_push(struct spool *sp, const char *topic, const void *payload, size_t len, int qos, bool retain);

/**
 * The oldest record not yet handed out by spool_peek_next(), or NULL. The
 * record stays owned by the spool until spool_ack() or spool_rewind().
 */
const struct spool_record *spool_peek_next(struct spool *sp);

/**
 * Marks record ID delivered (the broker confirmed it; PUBACKs may come out
 * of order). Delivered records at the head of the queue are removed.
 */
void spool_ack(struct spool *sp, uint64_t id);

/** Makes every handed-out but unacknowledged record available again (after a disconnect). */
void spool_rewind(struct spool *sp);

/** Writes buffered file records to disk and fsyncs (called about once a second). Returns 0 or -errno. */
int spool_sync(struct spool *sp);

void spool_get_stats(const struct spool *sp, struct spool_stats *out);

#endif
