/* Protocol buffers wire format, written (see pb.h). */
#include "pb.h"

#include <string.h>

#define WIRE_VARINT 0u
#define WIRE_I64 1u
#define WIRE_LEN 2u
#define VARINT_MAX 10

static size_t
varint_into(uint8_t *out, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

static void
varint(struct buf *b, uint64_t v)
{
	uint8_t tmp[VARINT_MAX];
	buf_add(b, (const char *)tmp, varint_into(tmp, v));
}

static void
tag(struct buf *b, unsigned field, unsigned wire)
{
	varint(b, ((uint64_t)field << 3) | wire);
}

void
pb_uint(struct buf *b, unsigned field, uint64_t v)
{
	tag(b, field, WIRE_VARINT);
	varint(b, v);
}

void
pb_fixed64(struct buf *b, unsigned field, uint64_t v)
{
	uint8_t le[8];
	for (int i = 0; i < 8; i++) {
		le[i] = (uint8_t)(v >> (8 * i));
	}
	tag(b, field, WIRE_I64);
	buf_add(b, (const char *)le, sizeof(le));
}

void
pb_double(struct buf *b, unsigned field, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	pb_fixed64(b, field, bits);
}

/* A string or bytes field of LEN bytes. */
static void
pb_bytes(struct buf *b, unsigned field, const void *s, size_t len)
{
	tag(b, field, WIRE_LEN);
	varint(b, len);
	buf_add(b, s, len);
}

void
pb_string(struct buf *b, unsigned field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

size_t
pb_open(struct buf *b, unsigned field)
{
	tag(b, field, WIRE_LEN);
	return b->len;
}

void
pb_close(struct buf *b, size_t mark)
{
	uint8_t len[VARINT_MAX];
	size_t n = varint_into(len, b->len - mark);
	buf_reserve(b, n);
	memmove(b->buf + mark + n, b->buf + mark, b->len - mark);
	memcpy(b->buf + mark, len, n);
	b->len += n;
	b->buf[b->len] = '\0';
}
