/* The growable text buffer: growth, formatting, hand-over (see buf.h). */
#include "buf.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BUF_FIRST_CAP 256

void
buf_init(struct buf *b)
{
	b->buf = NULL;
	b->len = 0;
	b->cap = 0;
}

void
buf_free(struct buf *b)
{
	free(b->buf);
	buf_init(b);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->buf) {
		b->buf[0] = '\0';
	}
}

void
buf_grow(struct buf *b, size_t more)
{
	/* no buffer of the agent comes near: a size that would wrap the sums below is a bug, stopped here (gcc 13
	 * with LTO and _FORTIFY_SOURCE=3 warned of the memcpy such a size would make) */
	if (more > SIZE_MAX / 4 - b->len) {
		abort_out_of_memory();
	}
	size_t need = b->len + more + 1;
	if (need <= b->cap) {
		return;
	}
	/* doubling keeps appends amortised constant */
	size_t cap = b->cap ? b->cap : BUF_FIRST_CAP;
	while (cap < need) {
		cap *= 2;
	}
	b->buf = xrealloc(b->buf, cap, 1);
	b->cap = cap;
}

void
buf_addf(struct buf *b, const char *fmt, ...)
{
	/* most pieces are short: format on the stack, measure only the long ones */
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		return;
	}
	if ((size_t)n < sizeof(small)) {
		buf_add(b, small, (size_t)n);
		return;
	}
	buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *
buf_take(struct buf *b, size_t *len)
{
	buf_reserve(b, 0);
	b->buf[b->len] = '\0';
	char *text = b->buf;
	if (len) {
		*len = b->len;
	}
	buf_init(b);
	return text;
}
