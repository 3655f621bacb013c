/*
 * Reading recordings: a small JSON reader for the two line shapes a
 * recording has (record.h), and the source that replays one. The reader
 * takes what it knows and skips every other member, so later versions
 * may add members.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/xalloc.h"
#include "record.h"

struct cursor {
	const char *start, *p;
	bool failed;
};

static void
skip_ws(struct cursor *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r') {
		c->p++;
	}
}

static bool
expect(struct cursor *c, char ch)
{
	skip_ws(c);
	if (*c->p != ch) {
		c->failed = true;
		return false;
	}
	c->p++;
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

/* Reads a string into OUT (cut to SIZE - 1 bytes; OUT may be NULL to skip it). */
static bool
read_string(struct cursor *c, char *out, size_t size, size_t *len)
{
	if (!expect(c, '"')) {
		return false;
	}
	size_t n = 0;
	for (;;) {
		char ch = *c->p++;
		if (ch == '\0' || (unsigned char)ch < 0x20) {
			c->p--;
			c->failed = true;
			return false;
		}
		if (ch == '"') {
			break;
		}
		if (ch == '\\') {
			char e = *c->p++;
			static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
			const char *k = e ? strchr(from, e) : NULL;
			if (k) {
				ch = to[k - from];
			} else if (e == 'u') {
				char hex[5] = {0};
				for (int i = 0; i < 4; i++) {
					hex[i] = *c->p;
					if (!*c->p) {
						c->failed = true;
						return false;
					}
					c->p++;
				}
				char *end;
				unsigned long cp = strtoul(hex, &end, 16);
				if (*end) {
					c->failed = true;
					return false;
				}
				if (out) {
					/* a lone surrogate half stands for a character we cannot show */
					put_utf8(out, size, &n, cp >= 0xD800 && cp <= 0xDFFF ? '?' : (unsigned)cp);
				}
				continue;
			} else {
				c->p--;
				c->failed = true;
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

/* Reads a number, or null (NAN). */
static double
read_number(struct cursor *c)
{
	skip_ws(c);
	if (strncmp(c->p, "null", 4) == 0) {
		c->p += 4;
		return NAN;
	}
	char *end;
	double v = strtod(c->p, &end);
	if (end == c->p) {
		c->failed = true;
		return NAN;
	}
	c->p = end;
	return v;
}

static void skip_value(struct cursor *c);

static void
skip_container(struct cursor *c, char close)
{
	c->p++;
	skip_ws(c);
	if (*c->p == close) {
		c->p++;
		return;
	}
	for (;;) {
		if (close == '}') {
			read_string(c, NULL, 0, NULL);
			expect(c, ':');
		}
		skip_value(c);
		if (c->failed) {
			return;
		}
		skip_ws(c);
		if (*c->p == ',') {
			c->p++;
			continue;
		}
		expect(c, close);
		return;
	}
}

static void
skip_value(struct cursor *c)
{
	skip_ws(c);
	switch (*c->p) {
	case '{':
		skip_container(c, '}');
		break;
	case '[':
		skip_container(c, ']');
		break;
	case '"':
		read_string(c, NULL, 0, NULL);
		break;
	case 't':
	case 'f':
	case 'n': {
		const char *w = *c->p == 't' ? "true" : *c->p == 'f' ? "false" : "null";
		if (strncmp(c->p, w, strlen(w)) != 0) {
			c->failed = true;
			return;
		}
		c->p += strlen(w);
		break;
	}
	default:
		read_number(c);
	}
}

/*
 * Walks the members of an object: for each, calls MEMBER with its key and
 * the cursor on its value, which MEMBER must consume. False on a mistake.
 */
static bool
each_member(struct cursor *c, void (*member)(struct cursor *c, const char *key, void *data), void *data)
{
	if (!expect(c, '{')) {
		return false;
	}
	skip_ws(c);
	if (*c->p == '}') {
		c->p++;
		return true;
	}
	for (;;) {
		char key[METRIC_NAME_MAX + 8];
		if (!read_string(c, key, sizeof(key), NULL) || !expect(c, ':')) {
			return false;
		}
		member(c, key, data);
		if (c->failed) {
			return false;
		}
		skip_ws(c);
		if (*c->p == ',') {
			c->p++;
			continue;
		}
		return expect(c, '}');
	}
}

static void
metric_member(struct cursor *c, const char *key, void *data)
{
	struct metric_set *set = data;
	double v = read_number(c);
	if (!isnan(v)) {
		metric_set_put(set, key, v);
	}
}

static void
reason_member(struct cursor *c, const char *key, void *data)
{
	struct throttle_state *t = data;
	for (int r = 0; r < THROTTLE_REASON_COUNT; r++) {
		if (strcmp(key, throttle_reason_name((enum throttle_reason)r)) == 0) {
			t->reason[r] = true;
			read_string(c, t->why[r], sizeof(t->why[r]), NULL);
			return;
		}
	}
	skip_value(c);
}

static void
throttle_member(struct cursor *c, const char *key, void *data)
{
	struct throttle_state *t = data;
	skip_ws(c);
	if (strcmp(key, "active") == 0 && (*c->p == 't' || *c->p == 'f')) {
		t->active = *c->p == 't';
		skip_value(c);
	} else if (strcmp(key, "reasons") == 0 && *c->p == '{') {
		each_member(c, reason_member, t);
	} else if (strcmp(key, "context") == 0 && *c->p == '"') {
		read_string(c, t->context, sizeof(t->context), NULL);
	} else {
		skip_value(c);
	}
}

static void
board_member(struct cursor *c, const char *key, void *data)
{
	struct board_identity *id = data;
	struct {
		const char *key;
		char *field;
		size_t size;
	} fields[] = {
		{"model", id->model, sizeof(id->model)},       {"soc", id->soc, sizeof(id->soc)},
		{"module", id->module, sizeof(id->module)},    {"l4t", id->l4t, sizeof(id->l4t)},
		{"jetpack", id->jetpack, sizeof(id->jetpack)},
	};
	skip_ws(c);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (strcmp(key, fields[i].key) == 0 && *c->p == '"') {
			read_string(c, fields[i].field, fields[i].size, NULL);
			return;
		}
	}
	skip_value(c);
}

struct line_state {
	struct sample *s;
	struct board_identity *id;
	bool *id_known;
	bool header, have_time;
};

static void
line_member(struct cursor *c, const char *key, void *data)
{
	struct line_state *ls = data;
	skip_ws(c);
	if (strcmp(key, "tegrawatch_recording") == 0) {
		ls->header = true;
		skip_value(c);
	} else if (strcmp(key, "board") == 0 && *c->p == '{') {
		memset(ls->id, 0, sizeof(*ls->id));
		each_member(c, board_member, ls->id);
		*ls->id_known = ls->id->model[0] || ls->id->soc[0] || ls->id->l4t[0];
	} else if (strcmp(key, "time_ms") == 0) {
		double v = read_number(c);
		ls->have_time = !isnan(v);
		ls->s->time_ms = (int64_t)v;
	} else if (strcmp(key, "clock_step_ms") == 0) {
		double v = read_number(c);
		ls->s->clock_step_ms = isfinite(v) ? (int64_t)v : 0;
	} else if (strcmp(key, "power_mode") == 0 && *c->p == '"') {
		read_string(c, ls->s->power_mode, sizeof(ls->s->power_mode), NULL);
	} else if (strcmp(key, "metrics") == 0 && *c->p == '{') {
		each_member(c, metric_member, &ls->s->metrics);
	} else if (strcmp(key, "throttle") == 0 && *c->p == '{') {
		memset(&ls->s->throttle, 0, sizeof(ls->s->throttle));
		each_member(c, throttle_member, &ls->s->throttle);
	} else {
		skip_value(c);
	}
}

int
record_parse_line(const char *line, struct sample *s, struct board_identity *id, bool *id_known, int *column)
{
	struct cursor c = {.start = line, .p = line};
	struct line_state ls = {.s = s, .id = id, .id_known = id_known};
	bool ok = each_member(&c, line_member, &ls) && !c.failed;
	if (ok) {
		skip_ws(&c);
		ok = *c.p == '\0';
	}
	if (ok && !ls.header && !ls.have_time) {
		ok = false; /* a sample without its time cannot be placed */
	}
	if (!ok) {
		*column = (int)(c.p - c.start) + 1;
		return -EINVAL;
	}
	return ls.header ? 0 : 1;
}

/* ---- the source ---- */

struct record_source {
	struct source base;
	FILE *file;
	char *path;
	char *line;
	size_t cap;
	unsigned long lineno;
	uint64_t parse_errors;
	struct board_identity id;
	bool id_known;
	/* a line is read into SCRATCH: a bad one leaves nothing half put in the sample */
	struct sample *scratch;
	int64_t stepped_ms; /* the wall clock steps the recording marked so far: durations leave them out */
};

static bool
data_line(char *line)
{
	size_t i = strspn(line, " \t\r\n");
	return line[i] != '\0' && line[i] != '#';
}

static int
record_read(struct source *src, struct sample *s)
{
	struct record_source *rs = (struct record_source *)src;
	ssize_t n;
	while ((n = getline(&rs->line, &rs->cap, rs->file)) >= 0) {
		rs->lineno++;
		if (!data_line(rs->line)) {
			continue;
		}
		struct board_identity id;
		bool known = false;
		int column = 0;
		struct sample *t = rs->scratch;
		metric_set_clear(&t->metrics);
		t->power_mode[0] = '\0';
		memset(&t->throttle, 0, sizeof(t->throttle));
		t->clock_step_ms = 0;
		int r = record_parse_line(rs->line, t, &id, &known, &column);
		if (r == 1) {
			metric_set_merge(&s->metrics, &t->metrics);
			s->time_ms = t->time_ms;
			rs->stepped_ms += t->clock_step_ms;
			s->mono_ms = t->time_ms - rs->stepped_ms;
			memcpy(s->power_mode, t->power_mode, sizeof(s->power_mode));
			s->throttle = t->throttle;
			metric_set_put(&s->metrics, "agent.parse_errors_total", (double)rs->parse_errors);
			return 0;
		}
		if (r < 0) {
			rs->parse_errors++;
			log_warn("%s:%lu:%d: not a recording line", rs->path, rs->lineno, column);
		}
	}
	return -ENODATA;
}

static void
record_source_destroy(struct source *src)
{
	struct record_source *rs = (struct record_source *)src;
	if (rs->file) {
		fclose(rs->file);
	}
	free(rs->line);
	free(rs->path);
	free(rs->scratch);
	free(rs);
}

static int64_t
record_next_tick_ms(struct source *src)
{
	(void)src;
	return 0; /* as fast as possible: a report has no clock to keep */
}

static const struct source_ops record_source_ops = {
	.name = "recording",
	.read = record_read,
	.next_tick_ms = record_next_tick_ms,
	.destroy = record_source_destroy,
};

/* The first data line, or false at the end. */
static bool
first_data_line(FILE *f, char **line, size_t *cap)
{
	while (getline(line, cap, f) >= 0) {
		if (data_line(*line)) {
			return true;
		}
	}
	return false;
}

int
record_file_detect(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		return -errno;
	}
	char *line = NULL;
	size_t cap = 0;
	int r = first_data_line(f, &line, &cap) && line[strspn(line, " \t")] == '{';
	free(line);
	fclose(f);
	return r;
}

int
record_source_create(const char *path, struct source **out)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		return -errno;
	}
	struct record_source *rs = xcalloc(1, sizeof(*rs));
	rs->base.ops = &record_source_ops;
	rs->file = f;
	rs->path = xstrdup(path);
	rs->scratch = xcalloc(1, sizeof(*rs->scratch)); /* zeroed, as a metric set's first use needs */
	/* the board from the header, then back to the start for the samples */
	struct sample *tmp = xcalloc(1, sizeof(*tmp));
	int column;
	if (first_data_line(f, &rs->line, &rs->cap) &&
	    record_parse_line(rs->line, tmp, &rs->id, &rs->id_known, &column) != 0) {
		rs->id_known = false;
	}
	free(tmp);
	rewind(f);
	*out = &rs->base;
	return 0;
}

bool
record_source_board(const struct source *src, struct board_identity *out)
{
	const struct record_source *rs = (const struct record_source *)src;
	if (rs->id_known) {
		*out = rs->id;
	}
	return rs->id_known;
}
