/*
 * The HTML report: report.html (embedded at build time) with the report's
 * JSON in place of its data marker. One file, no external assets: it
 * opens from disk, offline.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "report_out.h"

/* report_page.c is generated from report.html by scripts/embed.c, with the kit of core/page/ */
extern const unsigned char report_html[];
extern const size_t report_html_len;

#define DATA_MARKER "\"REPORT_DATA\""

int
report_write_html(const char *report_json, size_t len, FILE *out)
{
	const char *page = (const char *)report_html;
	const char *mark = NULL;
	size_t mlen = strlen(DATA_MARKER);
	for (size_t i = 0; i + mlen <= report_html_len; i++) {
		if (memcmp(page + i, DATA_MARKER, mlen) == 0) {
			mark = page + i;
			break;
		}
	}
	if (!mark) {
		return -EINVAL;
	}
	fwrite(page, 1, (size_t)(mark - page), out);
	/* inside <script>, "</script>" in a string would end it: '<' only occurs in strings, as \u003c */
	size_t from = 0;
	for (size_t i = 0; i < len; i++) {
		if (report_json[i] == '<') {
			fwrite(report_json + from, 1, i - from, out);
			fputs("\\u003c", out);
			from = i + 1;
		}
	}
	fwrite(report_json + from, 1, len - from, out);
	const char *rest = mark + mlen;
	fwrite(rest, 1, report_html_len - (size_t)(rest - page), out);
	return ferror(out) ? -EIO : 0;
}
