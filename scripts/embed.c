/*
 * Build-time generator of the pages the agent carries (the dashboard, the
 * report page):
 *
 *   embed [-d DEPFILE] [-p PAGE] INPUT OUTPUT C_NAME
 *
 * reads INPUT, puts in place of every line that is only
 * `<!--#include file="PATH" -->` the bytes of PATH (relative to the file
 * that names it; an included file may include others), and writes OUTPUT,
 * a C file defining `const unsigned char C_NAME[]` and `const size_t
 * C_NAME_len`; the tabs that indent a line are left out, and so are comments
 * (CSS, script, HTML) that fill their lines. -p also writes the assembled page (the browser tests load
 * it), -d a Makefile-style list of every file read, so that ninja rebuilds
 * when a part changes. Runs on the build machine (no xxd, python or sed).
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES_PER_LINE 16
#define DEPTH_MAX 8
#define FILES_MAX 64
#define MARK_OPEN "<!--#include file=\""
#define MARK_CLOSE "-->"

struct page {
	char *bytes;
	size_t len, cap;
	char *files[FILES_MAX]; /* every file read, for the depfile */
	size_t nfiles;
};

static void
put(struct page *pg, const char *s, size_t n)
{
	if (pg->len + n > pg->cap) {
		size_t cap = pg->cap ? pg->cap : 65536;
		while (cap < pg->len + n) {
			cap *= 2;
		}
		char *p = realloc(pg->bytes, cap);
		if (!p) {
			fprintf(stderr, "embed: out of memory\n");
			exit(1);
		}
		pg->bytes = p;
		pg->cap = cap;
	}
	memcpy(pg->bytes + pg->len, s, n);
	pg->len += n;
}

/* The whole of PATH, NUL-terminated, or NULL with errno set. */
static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		return NULL;
	}
	char *buf = NULL;
	size_t n = 0, cap = 0, got;
	do {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 16384;
			char *p = realloc(buf, cap);
			if (!p) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = p;
		}
		got = fread(buf + n, 1, 4096, f);
		n += got;
	} while (got > 0);
	int failed = ferror(f);
	fclose(f);
	if (failed) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/*
 * The PATH of an include line (LINE, N bytes, without its newline) in
 * *NAME, *NAME_LEN: 1; 0 for any other line; -1 for a line that starts
 * like an include but is not one.
 */
static int
include_of(const char *line, size_t n, const char **name, size_t *name_len)
{
	size_t i = 0, open = strlen(MARK_OPEN);
	while (i < n && (line[i] == ' ' || line[i] == '\t')) {
		i++;
	}
	if (n - i < open || memcmp(line + i, MARK_OPEN, open) != 0) {
		return 0;
	}
	i += open;
	const char *end = memchr(line + i, '"', n - i);
	if (!end || end == line + i) {
		return -1;
	}
	*name = line + i;
	*name_len = (size_t)(end - (line + i));
	i = (size_t)(end - line) + 1;
	while (i < n && line[i] == ' ') {
		i++;
	}
	if (n - i < strlen(MARK_CLOSE) || memcmp(line + i, MARK_CLOSE, strlen(MARK_CLOSE)) != 0) {
		return -1;
	}
	for (i += strlen(MARK_CLOSE); i < n; i++) {
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') {
			return -1;
		}
	}
	return 1;
}

/*
 * Comments are for the authors too: a comment that fills its lines (the
 * text at P, N bytes, starts with it, and nothing but blanks follows its
 * end on its last line) stays out of the page, CSS and script ones and the
 * frame's HTML ones, about 5 KB of the dashboard. Returns the bytes it
 * takes with its last newline, adding the lines it ends to *LINENO; 0 for
 * anything else, a comment with code after it kept whole. No part has a
 * line of text that starts with either opening.
 */
static size_t
comment_lines(const char *p, size_t n, int *lineno)
{
	static const char *const marks[][2] = {{"/*", "*/"}, {"<!--", "-->"}};
	for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]); m++) {
		size_t open = strlen(marks[m][0]), close = strlen(marks[m][1]);
		if (n < open || memcmp(p, marks[m][0], open) != 0) {
			continue;
		}
		for (size_t i = open; i + close <= n; i++) {
			if (memcmp(p + i, marks[m][1], close) != 0) {
				continue;
			}
			size_t j = i + close;
			while (j < n && (p[j] == ' ' || p[j] == '\t' || p[j] == '\r')) {
				j++;
			}
			if (j < n && p[j] != '\n') {
				return 0;
			}
			for (size_t k = 0; k < i; k++) {
				*lineno += p[k] == '\n';
			}
			return j < n ? j + 1 : j;
		}
		return 0;
	}
	return 0;
}

static int
assemble(struct page *pg, const char *path, int depth)
{
	size_t len;
	char *text = slurp(path, &len);
	if (!text) {
		fprintf(stderr, "embed: cannot read %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (pg->nfiles == FILES_MAX) {
		fprintf(stderr, "embed: %s: more than %d files\n", path, FILES_MAX);
		free(text);
		return -1;
	}
	pg->files[pg->nfiles++] = strdup(path);
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path + 1) : 0;
	int r = 0, lineno = 0;
	for (size_t at = 0; at < len && r == 0;) {
		const char *line = text + at, *nl = memchr(line, '\n', len - at);
		size_t n = nl ? (size_t)(nl - line) : len - at;
		const char *name;
		size_t name_len;
		int kind = include_of(line, n, &name, &name_len);
		lineno++;
		if (kind < 0) {
			fprintf(stderr, "embed: %s:%d: an include line is <!--#include file=\"PATH\" --> alone\n", path,
				lineno);
			r = -1;
		} else if (kind > 0 && depth == DEPTH_MAX) {
			fprintf(stderr, "embed: %s:%d: includes nested more than %d deep (a loop?)\n", path, lineno,
				DEPTH_MAX);
			r = -1;
		} else if (kind > 0) {
			char inc[4096];
			if (snprintf(inc, sizeof(inc), "%.*s%.*s", dir_len, path, (int)name_len, name) >=
			    (int)sizeof(inc)) {
				fprintf(stderr, "embed: %s:%d: path too long\n", path, lineno);
				r = -1;
			} else {
				r = assemble(pg, inc, depth + 1);
			}
		} else {
			/* indentation is for the authors: the tabs that start a line stay out of the page (about 2 KB of
			   the dashboard; no part has a <pre> or a string over several lines) */
			size_t tabs = 0;
			while (tabs < n && line[tabs] == '\t') {
				tabs++;
			}
			size_t skip = comment_lines(text + at + tabs, len - at - tabs, &lineno);
			if (skip) {
				at += tabs + skip;
				continue;
			}
			put(pg, line + tabs, (nl ? n + 1 : n) - tabs);
		}
		at += nl ? n + 1 : n;
	}
	free(text);
	return r;
}

static int
fail(const char *what, const char *path)
{
	fprintf(stderr, "embed: %s: %s: %s\n", what, path, strerror(errno));
	return 1;
}

static int
valid_name(const char *name)
{
	if (!name[0] || (name[0] >= '0' && name[0] <= '9')) {
		return 0;
	}
	for (const char *p = name; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
			return 0;
		}
	}
	return 1;
}

static int
write_c(const struct page *pg, const char *input, const char *path, const char *name)
{
	FILE *out = fopen(path, "w");
	if (!out) {
		return fail("cannot write", path);
	}
	fprintf(out, "/* Generated by scripts/embed.c from %s: do not edit. */\n#include <stddef.h>\n\n", input);
	fprintf(out, "extern const unsigned char %s[];\nextern const size_t %s_len;\n\n", name, name);
	fprintf(out, "const unsigned char %s[] = {", name);
	for (size_t i = 0; i < pg->len; i++) {
		fprintf(out, "%s0x%02x,", i % BYTES_PER_LINE == 0 ? "\n\t" : " ", (unsigned char)pg->bytes[i]);
	}
	/* C has no empty arrays: an empty page is one NUL byte with length 0 */
	fprintf(out, "%s\n};\nconst size_t %s_len = %zu;\n", pg->len == 0 ? "\n\t0x00," : "", name, pg->len);
	return fclose(out) == 0 ? 0 : fail("cannot write", path);
}

static int
write_page(const struct page *pg, const char *path)
{
	FILE *out = fopen(path, "wb");
	if (!out) {
		return fail("cannot write", path);
	}
	fwrite(pg->bytes, 1, pg->len, out);
	return fclose(out) == 0 ? 0 : fail("cannot write", path);
}

/* "TARGET: FILE FILE...", spaces escaped as make and ninja read them */
static int
write_deps(const struct page *pg, const char *path, const char *target)
{
	FILE *out = fopen(path, "w");
	if (!out) {
		return fail("cannot write", path);
	}
	fprintf(out, "%s:", target);
	for (size_t i = 0; i < pg->nfiles; i++) {
		fputc(' ', out);
		for (const char *p = pg->files[i]; *p; p++) {
			if (*p == ' ' || *p == '#') {
				fputc('\\', out);
			}
			fputc(*p, out);
		}
	}
	fputc('\n', out);
	return fclose(out) == 0 ? 0 : fail("cannot write", path);
}

int
main(int argc, char **argv)
{
	const char *depfile = NULL, *page_out = NULL;
	int i = 1;
	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (strcmp(argv[i], "-d") == 0) {
			depfile = argv[i + 1];
		} else if (strcmp(argv[i], "-p") == 0) {
			page_out = argv[i + 1];
		} else {
			break;
		}
	}
	if (argc - i != 3 || !valid_name(argv[i + 2])) {
		fprintf(stderr, "usage: embed [-d DEPFILE] [-p PAGE] INPUT OUTPUT C_NAME\n");
		return 2;
	}
	const char *input = argv[i], *output = argv[i + 1], *name = argv[i + 2];
	struct page pg = {0};
	int r = assemble(&pg, input, 0) == 0 ? 0 : 1;
	if (r == 0) {
		r = write_c(&pg, input, output, name);
	}
	if (r == 0 && page_out) {
		r = write_page(&pg, page_out);
	}
	if (r == 0 && depfile) {
		r = write_deps(&pg, depfile, output);
	}
	for (size_t k = 0; k < pg.nfiles; k++) {
		free(pg.files[k]);
	}
	free(pg.bytes);
	return r;
}
