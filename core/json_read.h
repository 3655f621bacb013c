/*
 * The one JSON reader of the tree: a cursor over a NUL-terminated text
 * that callers walk member by member, taking what they know and skipping
 * the rest (json_each_member, json_skip_value), so later versions of a
 * document may add members. No tree is built and nothing is allocated.
 * Used for recordings (report/record_read.c) and the agent's API as
 * `tegrawatch top` reads it (top/top_data.c). Pure: no I/O.
 */
#ifndef TEGRAWATCH_JSON_READ_H
#define TEGRAWATCH_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the longest key json_each_member() hands over whole (longer ones are cut) */
#define JSON_KEY_MAX 72

struct json_reader {
	const char *start; /* the text */
	const char *p;     /* the next character to read */
	bool failed;       /* set by the first mistake; every later read then fails too */
	const char *why;   /* that mistake in words ("expected ':'"), NULL before it */
	const char *at;    /* where it is in the text */
};

void json_reader_init(struct json_reader *r, const char *text);

/**
 * Stops the walk at the next character: a value the caller cannot use
 * ("\"count\" is a number"). WHY (kept as a pointer: static, or the
 * caller's for as long as it reads R) replaces the reader's own words
 * when the read failed already; the place stays the first mistake's.
 */
void json_fail(struct json_reader *r, const char *why);

/** Skips white space. */
void json_skip_ws(struct json_reader *r);

/** The next character after white space ('\0' at the end), not consumed. */
char json_peek(struct json_reader *r);

/** Consumes CH after white space: true, or false with r->failed set. */
bool json_expect(struct json_reader *r, char ch);

/**
 * Reads a string into OUT, cut to SIZE - 1 bytes (\u escapes as UTF-8; OUT
 * may be NULL to skip it) and *LEN (may be NULL). False on a mistake.
 */
bool json_read_string(struct json_reader *r, char *out, size_t size, size_t *len);

/** Reads a number as JSON writes it (no hex, inf, '+' or '.5'); null gives NAN; anything else fails (NAN). */
double json_read_number(struct json_reader *r);

/**
 * Reads a number as json_read_number() does into *OUT, truncated toward zero; false, *OUT untouched, for null,
 * a mistake or a number beyond int64_t (whose cast would be undefined).
 */
bool json_read_int64(struct json_reader *r, int64_t *out);

/** Reads true or false into *OUT; anything else is skipped and gives false. */
bool json_read_bool(struct json_reader *r, bool *out);

/** Skips one value of any kind. */
void json_skip_value(struct json_reader *r);

/**
 * Walks the members of an object: for each, calls MEMBER with its key and
 * the reader on its value, which MEMBER must consume (json_skip_value()
 * what it does not want). False on a mistake.
 */
bool json_each_member(struct json_reader *r, void (*member)(struct json_reader *r, const char *key, void *data),
		      void *data);

/** Walks the elements of an array the same way: ELEMENT must consume each. False on a mistake. */
bool json_each_element(struct json_reader *r, void (*element)(struct json_reader *r, size_t index, void *data),
		       void *data);

#endif
