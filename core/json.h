/*
 * A small JSON writer into a growing buffer. Commas and escaping are
 * handled here so callers only say what they write.
 */
#ifndef TEGRAWATCH_JSON_H
#define TEGRAWATCH_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define JSON_DEPTH_MAX 32

struct json {
	struct buf out; /* the text so far: out.buf (NULL before the first write), out.len */
	int depth;
	bool first[JSON_DEPTH_MAX]; /* no comma needed before the next item */
	bool after_key;
};

void json_init(struct json *j);
void json_free(struct json *j);
/** Empties the buffer for reuse, keeping its memory. */
void json_reset(struct json *j);

void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s);
/** Shortest-looking decimal for V (integers without a fraction); null when not finite. */
void json_number(struct json *j, double v);
/** The text json_number() writes for V, into BUF (NUMFMT_MAX bytes); returns its length. */
size_t json_number_text(char *buf, double v);
/**
 * Members already written as text ("k":v,"k":v, LEN bytes, none when 0) into
 * the open object, after a comma unless they come first.
 */
void json_members(struct json *j, const char *text, size_t len);
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/** Appends raw text (a newline between documents, say). */
void json_raw(struct json *j, const char *s, size_t len);

#endif
