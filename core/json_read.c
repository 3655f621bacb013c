/* The one JSON reader: see json_read.h. */
#include "json_read.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

void
json_reader_init(struct json_reader *r, const char *text)
{
	r->start = r->p = text;
	r->failed = false;
	r->why = NULL;
	r->at = text;
}

/* The first mistake: where and why (later ones keep it). */
static void
fail(struct json_reader *r, const char *why)
{
	if (!r->failed) {
		r->failed = true;
		r->why = why;
		r->at = r->p;
	}
}

void
json_fail(struct json_reader *r, const char *why)
{
	if (!r->failed) {
		json_skip_ws(r); /* at the value, not at the space before it */
	}
	fail(r, why);
	r->why = why;
}

void
json_skip_ws(struct json_reader *r)
{
	while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r') {
		r->p++;
	}
}

/* What a missing CH means, in words. */
static const char *
expected_words(char ch)
{
	static const struct {
		char ch;
		const char *words;
	} table[] = {
		/* '}' and ']' are expected after a member or an element, where ',' would do too */
		{'}', "expected ',' or '}'"}, {']', "expected ',' or ']'"}, {':', "expected ':'"},
		{'"', "expected a string"},   {'{', "expected an object"},  {'[', "expected an array"},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (table[i].ch == ch) {
			return table[i].words;
		}
	}
	return "an unexpected character";
}

bool
json_expect(struct json_reader *r, char ch)
{
	json_skip_ws(r);
	if (*r->p != ch) {
		fail(r, expected_words(ch));
		return false;
	}
	r->p++;
	return true;
}

static void
put_utf8(char *out, size_t size, size_t *n, unsigned cp)
{
	char tmp[4];
	size_t k;
	if (cp < 0x80) {
		tmp[0] = (char)cp;
		k = 1;
	} else if (cp < 0x800) {
		tmp[0] = (char)(0xC0 | (cp >> 6));
		tmp[1] = (char)(0x80 | (cp & 0x3F));
		k = 2;
	} else {
		tmp[0] = (char)(0xE0 | (cp >> 12));
		tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		tmp[2] = (char)(0x80 | (cp & 0x3F));
		k = 3;
	}
	for (size_t i = 0; i < k && *n + 1 < size; i++) {
		out[(*n)++] = tmp[i];
	}
}

static int
hex_digit(char c)
{
	return text_is_digit(c)       ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* Reads a string into OUT (cut to SIZE - 1 bytes; OUT may be NULL to skip it). */
bool
json_read_string(struct json_reader *r, char *out, size_t size, size_t *len)
{
	if (!json_expect(r, '"')) {
		return false;
	}
	size_t n = 0;
	for (;;) {
		char ch = *r->p++;
		if (ch == '\0' || (unsigned char)ch < 0x20) {
			r->p--;
			fail(r, ch ? "a control character in a string" : "a string without its closing quote");
			return false;
		}
		if (ch == '"') {
			break;
		}
		if (ch == '\\') {
			char e = *r->p++;
			static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
			const char *k = e ? strchr(from, e) : NULL;
			if (k) {
				ch = to[k - from];
			} else if (e == 'u') {
				unsigned cp = 0;
				for (int i = 0; i < 4; i++, r->p++) {
					int d = hex_digit(*r->p);
					if (d < 0) {
						fail(r, "a \\u escape without four hex digits");
						return false;
					}
					cp = cp << 4 | (unsigned)d;
				}
				if (out) {
					/* a lone surrogate half stands for a character we cannot show */
					put_utf8(out, size, &n, cp >= 0xD800 && cp <= 0xDFFF ? '?' : cp);
				}
				continue;
			} else {
				r->p--;
				fail(r, "a bad escape in a string");
				return false;
			}
		}
		if (out && n + 1 < size) {
			out[n++] = ch;
		}
	}
	if (out) {
		out[n] = '\0';
	}
	if (len) {
		*len = n;
	}
	return true;
}

/* Where the JSON number at P ends (-? int frac? exp?), or P when there is none. */
static const char *
number_end(const char *p)
{
	const char *q = p + (*p == '-');
	if (*q == '0') {
		q++;
	} else if (*q >= '1' && *q <= '9') {
		while (text_is_digit(*q)) {
			q++;
		}
	} else {
		return p;
	}
	if (q[0] == '.' && text_is_digit(q[1])) {
		for (q++; text_is_digit(*q); q++) {
		}
	}
	if (*q == 'e' || *q == 'E') {
		const char *e = q + 1 + (q[1] == '+' || q[1] == '-');
		for (; text_is_digit(*e); e++) {
			q = e + 1;
		}
	}
	return q;
}

/* Reads a number, or null (NAN). */
double
json_read_number(struct json_reader *r)
{
	json_skip_ws(r);
	if (strncmp(r->p, "null", 4) == 0) {
		r->p += 4;
		return NAN;
	}
	/* strtod alone takes more than JSON ("0x1p3", "inf", "+5", "1."): it must stop where the grammar does */
	const char *want = number_end(r->p);
	char *end;
	double v = want == r->p ? 0 : strtod(r->p, &end);
	if (want == r->p || end != want) {
		fail(r, "expected a number");
		return NAN;
	}
	r->p = end;
	return v;
}

bool
json_read_int64(struct json_reader *r, int64_t *out)
{
	double v = json_read_number(r);
	/* 2^63 is exact in a double: [-2^63, 2^63) is what converts */
	if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
		return false;
	}
	*out = (int64_t)v;
	return true;
}

static void
skip_container(struct json_reader *r, char close)
{
	r->p++;
	json_skip_ws(r);
	if (*r->p == close) {
		r->p++;
		return;
	}
	for (;;) {
		if (close == '}') {
			json_read_string(r, NULL, 0, NULL);
			json_expect(r, ':');
		}
		json_skip_value(r);
		if (r->failed) {
			return;
		}
		json_skip_ws(r);
		if (*r->p == ',') {
			r->p++;
			continue;
		}
		json_expect(r, close);
		return;
	}
}

void
json_skip_value(struct json_reader *r)
{
	json_skip_ws(r);
	switch (*r->p) {
	case '{':
		skip_container(r, '}');
		break;
	case '[':
		skip_container(r, ']');
		break;
	case '"':
		json_read_string(r, NULL, 0, NULL);
		break;
	case 't':
	case 'f':
	case 'n': {
		const char *w = *r->p == 't' ? "true" : *r->p == 'f' ? "false" : "null";
		if (strncmp(r->p, w, strlen(w)) != 0) {
			fail(r, "expected a value");
			return;
		}
		r->p += strlen(w);
		break;
	}
	default:
		if (*r->p != '-' && !text_is_digit(*r->p)) {
			fail(r, "expected a value");
			return;
		}
		json_read_number(r);
	}
}

/*
 * Walks the members of an object: for each, calls MEMBER with its key and
 * the cursor on its value, which MEMBER must consume. False on a mistake.
 */
bool
json_each_member(struct json_reader *r, void (*member)(struct json_reader *r, const char *key, void *data), void *data)
{
	if (!json_expect(r, '{')) {
		return false;
	}
	json_skip_ws(r);
	if (*r->p == '}') {
		r->p++;
		return true;
	}
	for (;;) {
		char key[JSON_KEY_MAX];
		if (json_peek(r) != '"') {
			fail(r, "expected a member's name in quotes");
			return false;
		}
		if (!json_read_string(r, key, sizeof(key), NULL) || !json_expect(r, ':')) {
			return false;
		}
		member(r, key, data);
		if (r->failed) {
			return false;
		}
		json_skip_ws(r);
		if (*r->p == ',') {
			r->p++;
			continue;
		}
		return json_expect(r, '}');
	}
}

char
json_peek(struct json_reader *r)
{
	json_skip_ws(r);
	return *r->p;
}

bool
json_read_bool(struct json_reader *r, bool *out)
{
	json_skip_ws(r);
	if (strncmp(r->p, "true", 4) == 0 || strncmp(r->p, "false", 5) == 0) {
		*out = *r->p == 't';
		r->p += *out ? 4 : 5;
		return true;
	}
	json_skip_value(r);
	*out = false;
	return false;
}

bool
json_each_element(struct json_reader *r, void (*element)(struct json_reader *r, size_t index, void *data), void *data)
{
	if (!json_expect(r, '[')) {
		return false;
	}
	if (json_peek(r) == ']') {
		r->p++;
		return true;
	}
	for (size_t i = 0;; i++) {
		element(r, i, data);
		if (r->failed) {
			return false;
		}
		if (json_peek(r) == ',') {
			r->p++;
			continue;
		}
		return json_expect(r, ']');
	}
}
