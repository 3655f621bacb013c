/*
 * A growing text buffer for the web module: the Prometheus text, the HTTP
 * bodies put together from pre-rendered pieces. Aborts on OOM like the
 * agent's other allocations.
 */
#ifndef TEGRAWATCH_TEXTBUF_H
#define TEGRAWATCH_TEXTBUF_H

#include <stddef.h>

struct textbuf {
	char *buf; /* NUL-terminated once anything was added */
	size_t len;
	size_t cap;
};

void textbuf_init(struct textbuf *t);
void textbuf_free(struct textbuf *t);
/** Empties the buffer, keeping its memory. */
void textbuf_reset(struct textbuf *t);

void textbuf_add(struct textbuf *t, const char *s, size_t len);
void textbuf_adds(struct textbuf *t, const char *s);
void textbuf_addc(struct textbuf *t, char c);
void textbuf_addf(struct textbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Hands the buffer over (NUL-terminated, never NULL) and empties T. */
char *textbuf_take(struct textbuf *t, size_t *len);

#endif
