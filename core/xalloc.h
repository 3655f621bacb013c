/*
 * Allocation that cannot fail: the agent aborts on out-of-memory (like
 * libinput's zalloc), so no caller carries an OOM path nobody tests.
 */
#ifndef TEGRAWATCH_XALLOC_H
#define TEGRAWATCH_XALLOC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The one place the agent gives up: out of memory. */
__attribute__((noreturn)) static inline void
abort_out_of_memory(void)
{
	abort();
}

static inline void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p) {
		abort_out_of_memory();
	}
	return p;
}

static inline void *
xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p) {
		abort_out_of_memory();
	}
	return p;
}

/** realloc for an array of N items of SIZE bytes, overflow-checked. */
static inline void *
xrealloc(void *p, size_t n, size_t size)
{
	if (n != 0 && size > SIZE_MAX / n) {
		abort_out_of_memory();
	}
	void *q = realloc(p, n * size != 0 ? n * size : 1);
	if (!q) {
		abort_out_of_memory();
	}
	return q;
}

static inline char *
xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p) {
		abort_out_of_memory();
	}
	return p;
}

/** The first N bytes of S at most, NUL-terminated. */
static inline char *
xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p) {
		abort();
	}
	return p;
}

#endif
