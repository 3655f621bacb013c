/* Growing text buffer. */
#include "textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
textbuf_init(struct textbuf *t)
{
	t->buf = NULL;
	t->len = 0;
	t->cap = 0;
}

void
textbuf_free(struct textbuf *t)
{
	free(t->buf);
	textbuf_init(t);
}

void
textbuf_reset(struct textbuf *t)
{
	t->len = 0;
	if (t->buf) {
		t->buf[0] = '\0';
	}
}

static void
reserve(struct textbuf *t, size_t more)
{
	if (t->len + more + 1 <= t->cap) {
		return;
	}
	size_t cap = t->cap ? t->cap : 256;
	while (cap < t->len + more + 1) {
		cap *= 2;
	}
	char *p = realloc(t->buf, cap);
	if (!p) {
		abort();
	}
	t->buf = p;
	t->cap = cap;
}

void
textbuf_add(struct textbuf *t, const char *s, size_t len)
{
	reserve(t, len);
	memcpy(t->buf + t->len, s, len);
	t->len += len;
	t->buf[t->len] = '\0';
}

void
textbuf_adds(struct textbuf *t, const char *s)
{
	textbuf_add(t, s, strlen(s));
}

void
textbuf_addc(struct textbuf *t, char c)
{
	textbuf_add(t, &c, 1);
}

void
textbuf_addf(struct textbuf *t, const char *fmt, ...)
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
		textbuf_add(t, small, (size_t)n);
		return;
	}
	reserve(t, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

char *
textbuf_take(struct textbuf *t, size_t *len)
{
	reserve(t, 0);
	t->buf[t->len] = '\0';
	char *buf = t->buf;
	if (len) {
		*len = t->len;
	}
	textbuf_init(t);
	return buf;
}
