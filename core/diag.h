/*
 * Diagnostics: a list of located messages ("FILE:LINE:COL: message") so a
 * config check can report every mistake in one run, not just the first.
 */
#ifndef TEGRAWATCH_DIAG_H
#define TEGRAWATCH_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

struct diag {
	char *file; /* may be "" */
	int line;   /* 1-based; 0 = whole file */
	int column; /* 1-based; 0 = whole line */
	char *msg;
};

struct diag_list {
	struct diag *items;
	size_t count;
	size_t cap;
};

void diag_list_init(struct diag_list *list);
void diag_list_free(struct diag_list *list);

/** Adds a message; FILE may be NULL. Allocation failure aborts. */
void diag_add(struct diag_list *list, const char *file, int line, int column, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/** As diag_add() with a va_list. */
void diag_addv(struct diag_list *list, const char *file, int line, int column, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

/** Prints every message as "FILE:LINE:COL: message\n" (parts that are 0 left out). */
void diag_list_print(const struct diag_list *list, FILE *out);

/** Formats item I like diag_list_print() into BUF. */
void diag_format(const struct diag *d, char *buf, size_t size);

/**
 * Copies TEXT for a one-line message into BUF: control bytes become '?',
 * text longer than the buffer is cut with "..." (never inside a UTF-8
 * sequence).
 */
void diag_show(const char *text, char *buf, size_t size);

#endif
