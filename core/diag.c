/*
 * Diagnostics list. A message is printed as "FILE:LINE:COL: message"; a part
 * that is 0 is left out ("FILE:LINE: message", "FILE: message"), and so is
 * an empty FILE ("LINE:COL: message", or the bare message).
 */
#include "diag.h"
#include "log.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
diag_list_init(struct diag_list *list)
{
	memset(list, 0, sizeof(*list));
}

void
diag_list_free(struct diag_list *list)
{
	for (size_t i = 0; i < list->count; i++) {
		free(list->items[i].file);
		free(list->items[i].msg);
	}
	free(list->items);
	diag_list_init(list);
}

void
diag_addv(struct diag_list *list, const char *file, int line, int column, const char *fmt, va_list ap)
{
	if (list->count == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 8;
		list->items = xrealloc(list->items, cap, sizeof(*list->items));
		list->cap = cap;
	}

	va_list copy;
	va_copy(copy, ap);
	int len = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (len < 0) {
		len = 0; /* a format error: keep the location, say nothing */
	}
	char *msg = xmalloc((size_t)len + 1);
	msg[0] = '\0';
	vsnprintf(msg, (size_t)len + 1, fmt, ap);

	struct diag *d = &list->items[list->count++];
	d->file = xstrdup(file ? file : "");
	d->line = line > 0 ? line : 0;
	/* A column without a line means nothing. */
	d->column = (d->line && column > 0) ? column : 0;
	d->msg = msg;
}

void
diag_add(struct diag_list *list, const char *file, int line, int column, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_addv(list, file, line, column, fmt, ap);
	va_end(ap);
}

/* Writes the "FILE:LINE:COL: " prefix (without the message) into BUF. */
static void
format_prefix(const struct diag *d, char *buf, size_t size)
{
	const char *sep = d->file[0] ? ":" : "";
	if (d->line && d->column) {
		snprintf(buf, size, "%s%s%d:%d: ", d->file, sep, d->line, d->column);
	} else if (d->line) {
		snprintf(buf, size, "%s%s%d: ", d->file, sep, d->line);
	} else if (d->file[0]) {
		snprintf(buf, size, "%s: ", d->file);
	} else {
		snprintf(buf, size, "%s", "");
	}
}

void
diag_format(const struct diag *d, char *buf, size_t size)
{
	if (size == 0) {
		return;
	}
	format_prefix(d, buf, size);
	size_t used = strlen(buf);
	snprintf(buf + used, size - used, "%s", d->msg);
}

void
diag_list_print(const struct diag_list *list, FILE *out)
{
	/* each one refuses the configuration: an error for `journalctl -p warning` (check from ExecReload too) */
	const char *prio = out == stderr && log_to_journal() ? "<3>" : "";
	for (size_t i = 0; i < list->count; i++) {
		const struct diag *d = &list->items[i];
		/* The prefix is short except for the file name: size it for that. */
		size_t size = strlen(d->file) + 32;
		char *prefix = xmalloc(size);
		format_prefix(d, prefix, size);
		fprintf(out, "%s%s%s\n", prio, prefix, d->msg);
		free(prefix);
	}
}

void
diag_show(const char *text, char *buf, size_t size)
{
	size_t len = strlen(text);
	size_t keep = len;
	if (size < 8) {
		buf[0] = '\0';
		return;
	}
	if (len > size - 1) {
		keep = size - 4;
		/* never cut a UTF-8 sequence in half */
		while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80) {
			keep--;
		}
	}
	for (size_t i = 0; i < keep; i++) {
		unsigned char c = (unsigned char)text[i];
		buf[i] = (c < 0x20 || c == 0x7F) ? '?' : (char)c;
	}
	if (keep < len) {
		memcpy(buf + keep, "...", 3);
		keep += 3;
	}
	buf[keep] = '\0';
}
