/*
 * The growable text buffer of the tree: JSON bytes, Prometheus text, HTTP
 * bodies, lists in configuration messages. NUL-terminated once anything
 * was added. Aborts on OOM (xalloc.h) like every allocation of the agent.
 * The small appends are inline: the JSON writer makes one per character.
 */
#ifndef TEGRAWATCH_BUF_H
#define TEGRAWATCH_BUF_H

#include <stddef.h>
#include <string.h>

struct buf {
	char *buf; /* NULL until the first add */
	size_t len;
	size_t cap;
};

void buf_init(struct buf *b);
void buf_free(struct buf *b);
/** Empties the buffer, keeping its memory. */
void buf_reset(struct buf *b);
/** Makes room for MORE bytes and a NUL: the slow path of buf_reserve. */
void buf_grow(struct buf *b, size_t more);

static inline void
buf_reserve(struct buf *b, size_t more)
{
	/* no sum that could wrap: cap - len is the room left, NUL included (cap is 0 or more than len) */
	if (more >= b->cap - b->len) {
		buf_grow(b, more);
	}
}

static inline void
buf_add(struct buf *b, const char *s, size_t len)
{
	buf_reserve(b, len);
	if (len) { /* S may be NULL then (an empty buffer's), which memcpy must not see */
		memcpy(b->buf + b->len, s, len);
	}
	b->len += len;
	b->buf[b->len] = '\0';
}

static inline void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static inline void
buf_addc(struct buf *b, char c)
{
	buf_reserve(b, 1);
	b->buf[b->len++] = c;
	b->buf[b->len] = '\0';
}

void buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Hands the text over (NUL-terminated, never NULL, for free()) and empties B. */
char *buf_take(struct buf *b, size_t *len);

#endif
