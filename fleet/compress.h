/*
 * Request bodies compressed as their receivers expect: snappy's block
 * format for remote write (libsnappy) and gzip for OTLP (zlib). Both
 * libraries are loaded with dlopen() by the first sink that needs one, so
 * an agent without remote_write or otlp never maps them.
 */
#ifndef TEGRAWATCH_FLEET_COMPRESS_H
#define TEGRAWATCH_FLEET_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

enum fleet_codec {
	FLEET_CODEC_SNAPPY,
	FLEET_CODEC_GZIP,
};

/** Loads the library of CODEC (once). Returns 0 or -ENOENT, logged with WHO ("remote_write"). */
int fleet_codec_load(enum fleet_codec codec, const char *who);

/** Replaces OUT's contents with IN (LEN bytes) compressed. Returns 0, or -EIO (the library failed). */
int fleet_compress(enum fleet_codec codec, const void *in, size_t len, struct buf *out);

#endif
