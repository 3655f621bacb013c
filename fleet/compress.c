/*
 * Compression through libsnappy and zlib, the only file that includes
 * them, both loaded on first use through core/dynlib.h (see compress.h).
 * libsnappy is C++ and brings libstdc++ with it: only a remote_write sink
 * pays that.
 */
#include "compress.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <snappy-c.h>
#include <zlib.h>

#include "core/dynlib.h"
#include "core/log.h"

#define GZIP_WINDOW_BITS (15 + 16) /* zlib's window, and a gzip header and trailer */
#define GZIP_MEM_LEVEL 8
#define GZIP_LEVEL 6

static struct {
	struct dynlib *lib;
	__typeof__(snappy_compress) *compress;
	__typeof__(snappy_max_compressed_length) *max_length;
} snappy_lib;

static struct {
	struct dynlib *lib;
	__typeof__(deflateInit2_) *init;
	__typeof__(deflate) *deflate;
	__typeof__(deflateEnd) *end;
	__typeof__(deflateBound) *bound;
	__typeof__(zlibVersion) *version;
} zlib_lib;

static const struct dynlib_symbol snappy_symbols[] = {
	{"snappy_compress", (void **)&snappy_lib.compress},
	{"snappy_max_compressed_length", (void **)&snappy_lib.max_length},
};

static const struct dynlib_symbol zlib_symbols[] = {
	{"deflateInit2_", (void **)&zlib_lib.init},  {"deflate", (void **)&zlib_lib.deflate},
	{"deflateEnd", (void **)&zlib_lib.end},      {"deflateBound", (void **)&zlib_lib.bound},
	{"zlibVersion", (void **)&zlib_lib.version},
};

/* Loads SONAME into *LIB once. 0 or -ENOENT (logged). */
static int
load(struct dynlib **lib, const char *soname, const struct dynlib_symbol *symbols, size_t count, const char *who)
{
	if (*lib) {
		return 0;
	}
	const char *const names[] = {soname, NULL};
	char why[512];
	if (dynlib_open(names, symbols, count, lib, why, sizeof(why)) < 0) {
		log_error("%s: cannot load %s (%s): nothing is sent", who, soname, why);
		return -ENOENT;
	}
	return 0;
}

int
fleet_codec_load(enum fleet_codec codec, const char *who)
{
	if (codec == FLEET_CODEC_SNAPPY) {
		return load(&snappy_lib.lib, "libsnappy.so.1", snappy_symbols,
			    sizeof(snappy_symbols) / sizeof(snappy_symbols[0]), who);
	}
	return load(&zlib_lib.lib, "libz.so.1", zlib_symbols, sizeof(zlib_symbols) / sizeof(zlib_symbols[0]), who);
}

static int
snappy_into(const void *in, size_t len, struct buf *out)
{
	size_t cap = snappy_lib.max_length(len);
	buf_reset(out);
	buf_reserve(out, cap);
	size_t n = cap;
	if (snappy_lib.compress(in, len, out->buf, &n) != SNAPPY_OK) {
		return -EIO;
	}
	out->len = n;
	out->buf[n] = '\0';
	return 0;
}

static int
gzip_into(const void *in, size_t len, struct buf *out)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (zlib_lib.init(&z, GZIP_LEVEL, Z_DEFLATED, GZIP_WINDOW_BITS, GZIP_MEM_LEVEL, Z_DEFAULT_STRATEGY,
			  zlib_lib.version(), (int)sizeof(z)) != Z_OK) {
		return -EIO;
	}
	size_t cap = zlib_lib.bound(&z, (uLong)len);
	buf_reset(out);
	buf_reserve(out, cap);
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out->buf;
	z.avail_out = (uInt)cap;
	int r = zlib_lib.deflate(&z, Z_FINISH);
	size_t n = cap - z.avail_out;
	zlib_lib.end(&z);
	if (r != Z_STREAM_END) {
		return -EIO;
	}
	out->len = n;
	out->buf[n] = '\0';
	return 0;
}

int
fleet_compress(enum fleet_codec codec, const void *in, size_t len, struct buf *out)
{
	if (!(codec == FLEET_CODEC_SNAPPY ? snappy_lib.lib : zlib_lib.lib)) {
		return -EIO;
	}
	return codec == FLEET_CODEC_SNAPPY ? snappy_into(in, len, out) : gzip_into(in, len, out);
}
