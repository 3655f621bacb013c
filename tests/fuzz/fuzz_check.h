/* What the fuzz targets share: CHECK(cond) aborts, naming the condition, its file and line, when an invariant fails. */
#ifndef TEGRAWATCH_FUZZ_CHECK_H
#define TEGRAWATCH_FUZZ_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                                 \
	do {                                                                                        \
		if (!(cond)) {                                                                      \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                    \
		}                                                                                   \
	} while (0)

/*
 * For targets whose first byte picks the parser: the rest of the input as C
 * text (malloc'd, NUL-terminated; free() it), and *LEN (when LEN is not
 * NULL) its length up to the first NUL. NULL for an input with no selector
 * or over 64 KiB.
 */
static inline char *
fuzz_text_after_selector(const uint8_t *data, size_t size, size_t *len)
{
	if (size < 1 || size > 65536) {
		return NULL;
	}
	char *text = malloc(size);
	if (!text) {
		return NULL;
	}
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (len) {
		*len = strlen(text);
	}
	return text;
}

#endif
