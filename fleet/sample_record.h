/*
 * A sample as the fleet sinks spool it: its seq, time, power mode and the
 * metrics a sink sends, by canonical name, in a compact binary record
 * that needs nothing else to be read back (a spool file outlives the
 * agent that wrote it). The metrics go in name order, each name sharing
 * its first bytes with the one before it (front coding); whole values
 * take a zigzag varint, others 8 bytes. Pure: no I/O.
 *
 *   u8 version (1), varint seq, zigzag varint time_ms, u8 mode length +
 *   mode, varint count, then per metric: u8 bytes shared with the previous
 *   name, u8 bytes that follow + those bytes, u8 kind (0 varint, 1 double)
 *   + the value.
 */
#ifndef TEGRAWATCH_FLEET_SAMPLE_RECORD_H
#define TEGRAWATCH_FLEET_SAMPLE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/sample.h"

/** Appends the record of S to OUT with the metrics KEEP(ARG, name) accepts (all with KEEP NULL). */
void sample_record_encode(struct buf *out, const struct sample *s, bool (*keep)(void *arg, const char *name),
			  void *arg);

struct sample_record_reader {
	const uint8_t *p, *end;
	uint64_t seq;
	int64_t time_ms;
	char power_mode[POWER_MODE_NAME_MAX];
	uint64_t count; /* metrics in the record */
	uint64_t read;  /* metrics read so far */
	char name[METRIC_NAME_MAX];
};

/** Reads the head of the record DATA (LEN bytes). Returns 0 or -EINVAL (damaged, or another version). */
int sample_record_open(struct sample_record_reader *r, const void *data, size_t len);

/**
 * The next metric: 1 with *NAME (valid until the next call) and *VALUE,
 * 0 at the end, -EINVAL when the record is damaged.
 */
int sample_record_next(struct sample_record_reader *r, const char **name, double *value);

#endif
