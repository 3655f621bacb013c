/*
 * A protocol buffers writer for the two messages the fleet sinks send
 * (Prometheus's WriteRequest, OTLP's ExportMetricsServiceRequest): the
 * wire format's varints, fixed 64-bit values and length-delimited fields,
 * appended to a buffer. A nested message is opened with pb_open() and
 * closed with pb_close(), which puts its length in front of it.
 *
 * Written here rather than generated with protobuf-c: the two messages
 * need four primitives, while protobuf-c would bring a generated copy of
 * each .proto, a build-time compiler, a run-time library to load, and
 * one allocated struct per label, series and point to build before
 * packing (docs/fleet.md). The real decoders check the bytes: Prometheus
 * itself and the OpenTelemetry JavaScript types (tests/integration/).
 * Pure: no I/O.
 */
#ifndef TEGRAWATCH_FLEET_PB_H
#define TEGRAWATCH_FLEET_PB_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/** A varint field (int32, int64, uint32, uint64, bool, enum); negative int64 take 10 bytes. */
void pb_uint(struct buf *b, unsigned field, uint64_t v);

/** A double field (wire type 1). */
void pb_double(struct buf *b, unsigned field, double v);

/** A fixed64 or sfixed64 field (wire type 1). */
void pb_fixed64(struct buf *b, unsigned field, uint64_t v);

/** A string field from a NUL-terminated S. */
void pb_string(struct buf *b, unsigned field, const char *s);

/** Opens a nested message FIELD; returns the mark pb_close() needs. */
size_t pb_open(struct buf *b, unsigned field);

/** Closes the message opened at MARK: its length goes in front of its bytes. */
void pb_close(struct buf *b, size_t mark);

#endif
