/* Small readers of kernel text (see host_text.h). */
#include "host_text.h"

#include <fnmatch.h>
#include <string.h>

void
host_skip_blanks(const char **p)
{
	while (**p == ' ' || **p == '\t') {
		(*p)++;
	}
}

/* a decimal whole number of at most MAX at *P (after blanks) */
static bool
read_decimal_max(const char **p, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	host_skip_blanks(&s);
	if (*s < '0' || *s > '9') {
		return false;
	}
	uint64_t v = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (v > (max - d) / 10) {
			return false;
		}
		v = v * 10 + d;
	}
	*out = v;
	*p = s;
	return true;
}

bool
host_read_u64(const char **p, uint64_t *out)
{
	return read_decimal_max(p, HOST_EXACT_MAX, out);
}

bool
host_read_counter(const char **p, uint64_t *out)
{
	return read_decimal_max(p, UINT64_MAX, out);
}

/* the value of hexadecimal digit C, or -1 */
static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	char lower = (char)(c | 0x20); /* 'A'..'F' as 'a'..'f' */
	return lower >= 'a' && lower <= 'f' ? lower - 'a' + 10 : -1;
}

bool
host_read_hex(const char **p, uint64_t *out)
{
	const char *s = *p;
	host_skip_blanks(&s);
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || hex_digit(s[2]) < 0) {
		return false;
	}
	s += 2;
	uint64_t v = 0;
	for (int d; (d = hex_digit(*s)) >= 0; s++) {
		v = v * 16 + (uint64_t)d;
		if (v > HOST_EXACT_MAX) {
			return false;
		}
	}
	*out = v;
	*p = s;
	return true;
}

bool
host_read_decimal(const char **p, double *out)
{
	const char *s = *p;
	uint64_t whole, frac = 0;
	if (!host_read_u64(&s, &whole)) {
		return false;
	}
	double scale = 1;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9') {
			return false;
		}
		for (; *s >= '0' && *s <= '9'; s++) {
			if (scale < 1e15) { /* digits past that change nothing a sample shows */
				frac = frac * 10 + (uint64_t)(*s - '0');
				scale *= 10;
			}
		}
	}
	*out = (double)whole + (double)frac / scale;
	*p = s;
	return true;
}

bool
host_at_end(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n') {
		p++;
	}
	return *p == '\0';
}

const char *
host_find_line(const char *text, const char *key)
{
	size_t n = strlen(key);
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (line[0] == key[0] && strncmp(line, key, n) == 0 &&
		    (line[n] == ' ' || line[n] == '\t' || line[n] == ':')) {
			return line;
		}
	}
	return NULL;
}

bool
host_glob_any(const char *text, const char *const *globs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (fnmatch(globs[i], text, 0) == 0) {
			return true;
		}
	}
	return false;
}
