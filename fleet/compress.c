/*
 * Compression through libsnappy and zlib, the only file that includes
 * them, both loaded with dlopen() on first use (see compress.h). libsnappy
 * is C++ and brings libstdc++ with it: only a remote_write sink pays that.
 */
#include "compress.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <dlfcn.h>
#include <snappy-c.h>
#include <zlib.h>

#include "core/log.h"

#define GZIP_WINDOW_BITS (15 + 16) /* zlib's window, and a gzip header and trailer */
#define GZIP_MEM_LEVEL 8
#define GZIP_LEVEL 6

static struct {
	void *handle;
	__typeof__(snappy_compress) *compress;
	__typeof__(snappy_max_compressed_length) *max_length;
} snappy_lib;

static struct {
	void *handle;
	__typeof__(deflateInit2_) *init;
	__typeof__(deflate) *deflate;
	__typeof__(deflateEnd) *end;
	__typeof__(deflateBound) *bound;
	__typeof__(zlibVersion) *version;
} zlib_lib;

static void *
open_lib(const char *soname, const char *who)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		log_error("%s: cannot load %s (%s): nothing is sent", who, soname, dlerror());
	}
	return h;
}

static bool
resolve(void *h, const char *name, void **slot, const char *who)
{
	*slot = dlsym(h, name);
	if (!*slot) {
		log_error("%s: the library has no %s: nothing is sent", who, name);
	}
	return *slot != NULL;
}

static int
load_snappy(const char *who)
{
	void *h = open_lib("libsnappy.so.1", who);
	void *f[2];
	if (!h || !resolve(h, "snappy_compress", &f[0], who) ||
	    !resolve(h, "snappy_max_compressed_length", &f[1], who)) {
		if (h) {
			dlclose(h);
		}
		return -ENOENT;
	}
	snappy_lib.compress = (__typeof__(snappy_lib.compress))f[0];
	snappy_lib.max_length = (__typeof__(snappy_lib.max_length))f[1];
	snappy_lib.handle = h;
	return 0;
}

static int
load_zlib(const char *who)
{
	void *h = open_lib("libz.so.1", who);
	void *f[5];
	if (!h || !resolve(h, "deflateInit2_", &f[0], who) || !resolve(h, "deflate", &f[1], who) ||
	    !resolve(h, "deflateEnd", &f[2], who) || !resolve(h, "deflateBound", &f[3], who) ||
	    !resolve(h, "zlibVersion", &f[4], who)) {
		if (h) {
			dlclose(h);
		}
		return -ENOENT;
	}
	zlib_lib.init = (__typeof__(zlib_lib.init))f[0];
	zlib_lib.deflate = (__typeof__(zlib_lib.deflate))f[1];
	zlib_lib.end = (__typeof__(zlib_lib.end))f[2];
	zlib_lib.bound = (__typeof__(zlib_lib.bound))f[3];
	zlib_lib.version = (__typeof__(zlib_lib.version))f[4];
	zlib_lib.handle = h;
	return 0;
}

/* True once the library of CODEC is mapped. */
static bool
fleet_codec_loaded(enum fleet_codec codec)
{
	return (codec == FLEET_CODEC_SNAPPY ? snappy_lib.handle : zlib_lib.handle) != NULL;
}

int
fleet_codec_load(enum fleet_codec codec, const char *who)
{
	if (fleet_codec_loaded(codec)) {
		return 0;
	}
	return codec == FLEET_CODEC_SNAPPY ? load_snappy(who) : load_zlib(who);
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
	if (!fleet_codec_loaded(codec)) {
		return -EIO;
	}
	return codec == FLEET_CODEC_SNAPPY ? snappy_into(in, len, out) : gzip_into(in, len, out);
}
