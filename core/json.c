/* JSON writer: its bytes live in a struct buf, which aborts on OOM. */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "numfmt.h"

/* buf, len and cap are read as out's fields: same types at the same places */

void
json_init(struct json *j)
{
	memset(j, 0, sizeof(*j));
	j->first[0] = true;
}

void
json_free(struct json *j)
{
	buf_free(&j->out);
	json_init(j);
}

void
json_reset(struct json *j)
{
	struct buf out = j->out;
	json_init(j);
	j->out = out;
	buf_reset(&j->out);
}

void
json_raw(struct json *j, const char *s, size_t len)
{
	buf_add(&j->out, s, len);
}

static void
put_char(struct json *j, char c)
{
	buf_addc(&j->out, c);
}

/* Writes the comma before a value unless it follows a key or opens a container. */
static void
before_value(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth]) {
		put_char(j, ',');
	}
	j->first[j->depth] = false;
}

static void
open_container(struct json *j, char c)
{
	before_value(j);
	put_char(j, c);
	if (j->depth + 1 < JSON_DEPTH_MAX) {
		j->depth++;
	}
	j->first[j->depth] = true;
}

static void
close_container(struct json *j, char c)
{
	if (j->depth > 0) {
		j->depth--;
	}
	put_char(j, c);
}

void
json_object_begin(struct json *j)
{
	open_container(j, '{');
}

void
json_object_end(struct json *j)
{
	close_container(j, '}');
}

void
json_array_begin(struct json *j)
{
	open_container(j, '[');
}

void
json_array_end(struct json *j)
{
	close_container(j, ']');
}

static void
put_escaped(struct json *j, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	/* a metric name needs no escape: its plain head goes in one copy */
	size_t plain = 0;
	while (plain < len) {
		unsigned char c = (unsigned char)s[plain];
		if (c < 0x20 || c == '"' || c == '\\' || c == 0x7f) {
			break;
		}
		plain++;
	}
	buf_reserve(&j->out, len + 2);
	put_char(j, '"');
	json_raw(j, s, plain);
	for (size_t i = plain; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			put_char(j, '\\');
			put_char(j, (char)c);
		} else if (c == '\n') {
			json_raw(j, "\\n", 2);
		} else if (c == '\t') {
			json_raw(j, "\\t", 2);
		} else if (c < 0x20 || c == 0x7f) {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			json_raw(j, u, sizeof(u));
		} else {
			put_char(j, (char)c);
		}
	}
	put_char(j, '"');
}

void
json_key(struct json *j, const char *key)
{
	before_value(j);
	put_escaped(j, key, strlen(key));
	put_char(j, ':');
	j->after_key = true;
}

static void
json_string_n(struct json *j, const char *s, size_t len)
{
	before_value(j);
	put_escaped(j, s, len);
}

void
json_string(struct json *j, const char *s)
{
	json_string_n(j, s, strlen(s));
}

size_t
json_number_text(char *buf, double v)
{
	if (!isfinite(v)) {
		memcpy(buf, "null", 5);
		return 4;
	}
	/* whole numbers below 1e15 as "%.0f" would, the rest as "%.15g": numfmt_g15 does both */
	return numfmt_g15(buf, v);
}

void
json_number(struct json *j, double v)
{
	char tmp[NUMFMT_MAX];
	size_t n = json_number_text(tmp, v);
	before_value(j);
	json_raw(j, tmp, n);
}

void
json_members(struct json *j, const char *text, size_t len)
{
	if (len == 0) {
		return;
	}
	before_value(j);
	json_raw(j, text, len);
}

void
json_int(struct json *j, int64_t v)
{
	char tmp[NUMFMT_MAX];
	size_t n = numfmt_i64(tmp, v);
	before_value(j);
	json_raw(j, tmp, n);
}

void
json_uint(struct json *j, uint64_t v)
{
	char tmp[NUMFMT_MAX];
	size_t n = numfmt_u64(tmp, v);
	before_value(j);
	json_raw(j, tmp, n);
}

void
json_bool(struct json *j, bool v)
{
	before_value(j);
	json_raw(j, v ? "true" : "false", v ? 4 : 5);
}

void
json_null(struct json *j)
{
	before_value(j);
	json_raw(j, "null", 4);
}
