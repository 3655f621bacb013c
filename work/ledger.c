/*
 * The work ledger (work.h): units of work per name, added from the loop's
 * thread (the StatsD source) and the web server's (POST /api/v1/work),
 * read by the loop. One mutex; a reference count, since the web server
 * may outlive the source that made the ledger. And the two wire formats'
 * parsers, pure (the JSON one on core/json_read.h).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_read.h"
#include "core/text.h"
#include "core/xalloc.h"
#include "work_priv.h"

struct work_ledger *
work_ledger_create(void)
{
	struct work_ledger *l = xcalloc(1, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
	l->refs = 1;
	return l;
}

struct work_ledger *
work_ledger_ref(struct work_ledger *l)
{
	pthread_mutex_lock(&l->lock);
	l->refs++;
	pthread_mutex_unlock(&l->lock);
	return l;
}

void
work_ledger_unref(struct work_ledger *l)
{
	if (!l) {
		return;
	}
	pthread_mutex_lock(&l->lock);
	bool last = --l->refs == 0;
	pthread_mutex_unlock(&l->lock);
	if (last) {
		pthread_mutex_destroy(&l->lock);
		free(l);
	}
}

void
work_ledger_release(void *data)
{
	work_ledger_unref(data);
}

/* NAME normalised into OUT: lower case, '.' and '-' as '_'. False with why when it is no name. */
static bool
normalise(const char *name, size_t len, char out[WORK_NAME_MAX], char *err, size_t err_size)
{
	if (len == 0 || len >= WORK_NAME_MAX) {
		snprintf(err, err_size, "a work name has 1 to %d characters", WORK_NAME_MAX - 1);
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
		} else if (c == '.' || c == '-') {
			c = '_';
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
			snprintf(err, err_size, "a work name holds letters, digits, '_', '.' and '-' only");
			return false;
		}
		out[i] = c;
	}
	out[len] = '\0';
	return true;
}

int
work_ledger_add(struct work_ledger *l, const char *name, size_t len, double count, char *err, size_t err_size)
{
	char norm[WORK_NAME_MAX];
	if (!normalise(name, len, norm, err, err_size)) {
		return -EINVAL;
	}
	if (!isfinite(count) || count <= 0 || count > 1e9) {
		snprintf(err, err_size, "a count is a number above 0 and at most 1e9");
		return -EINVAL;
	}
	int r = 0;
	pthread_mutex_lock(&l->lock);
	int i = 0;
	while (i < l->count && strcmp(l->names[i], norm) != 0) {
		i++;
	}
	if (i == l->count && l->count == WORK_NAMES_MAX) {
		snprintf(err, err_size, "%d work names already: '%s' is one too many", WORK_NAMES_MAX, norm);
		r = -ENOSPC;
	} else {
		if (i == l->count) {
			memcpy(l->names[l->count++], norm, sizeof(norm));
		}
		l->units[i] += count;
		l->reports++;
	}
	pthread_mutex_unlock(&l->lock);
	return r;
}

size_t
work_ledger_snapshot(struct work_ledger *l, char names[][WORK_NAME_MAX], double *units, uint64_t *reports)
{
	pthread_mutex_lock(&l->lock);
	size_t n = (size_t)l->count;
	memcpy(names, l->names, n * sizeof(l->names[0]));
	memcpy(units, l->units, n * sizeof(l->units[0]));
	*reports = l->reports;
	pthread_mutex_unlock(&l->lock);
	return n;
}

/* ---- StatsD ---- */

/* The N bytes at S as a whole finite number: strtod wants a NUL, and a line is LEN bytes without one. */
static bool
span_number(const char *s, size_t n, double *out)
{
	char num[32];
	if (n == 0 || n >= sizeof(num)) {
		return false;
	}
	memcpy(num, s, n);
	num[n] = '\0';
	char *stop;
	double v = strtod(num, &stop);
	if (*stop || !isfinite(v)) {
		return false;
	}
	*out = v;
	return true;
}

int
work_parse_statsd(const char *line, size_t len, const char **name, size_t *name_len, double *count, char *err,
		  size_t err_size)
{
	const char *colon = memchr(line, ':', len);
	const char *bar = colon ? memchr(colon, '|', len - (size_t)(colon - line)) : NULL;
	if (!colon || !bar) {
		snprintf(err, err_size, "expected NAME:VALUE|c");
		return -EINVAL;
	}
	const char *end = line + len;
	if (end - bar < 2 || bar[1] != 'c' || (end - bar > 2 && bar[2] != '|')) {
		snprintf(err, err_size, "only counters (|c) are work");
		return -EINVAL;
	}
	double v;
	size_t n = (size_t)(bar - colon - 1);
	if (!span_number(colon + 1, n, &v)) {
		snprintf(err, err_size, n ? "'%.*s' is not a number" : "expected a number after ':'",
			 (int)(n < 31 ? n : 31), colon + 1);
		return -EINVAL;
	}
	/* "|@0.1": one line stands for 1/0.1 of them; "|#tags" mean nothing here */
	for (const char *p = bar + 2; p < end; p++) {
		if (p[0] == '|' && p + 1 < end && p[1] == '@') {
			const char *r = p + 2, *r_end = memchr(r, '|', (size_t)(end - r));
			double rate;
			if (!span_number(r, (size_t)((r_end ? r_end : end) - r), &rate) || !(rate > 0 && rate <= 1)) {
				snprintf(err, err_size, "a sample rate is above 0 and at most 1");
				return -EINVAL;
			}
			v /= rate;
		}
	}
	*name = line;
	*name_len = (size_t)(colon - line);
	*count = v;
	return 0;
}

/* ---- POST /api/v1/work, read with core/json_read.h ---- */

struct post {
	/* one byte more than a name: a longer one is cut to a length work_ledger_add() refuses */
	char name[WORK_NAME_MAX + 1];
	size_t name_len;
	bool have_name;
	double count;
	char why[96]; /* an unknown member, in words */
};

static void
post_member(struct json_reader *r, const char *key, void *data)
{
	struct post *p = data;
	if (strcmp(key, "name") == 0) {
		if (json_peek(r) != '"') {
			json_fail(r, "\"name\" is a string");
			return;
		}
		p->have_name = json_read_string(r, p->name, sizeof(p->name), &p->name_len);
	} else if (strcmp(key, "count") == 0) {
		char c = json_peek(r);
		double v = c == '-' || text_is_digit(c) ? json_read_number(r) : NAN; /* not null */
		if (isnan(v)) {
			json_fail(r, "\"count\" is a number");
			return;
		}
		p->count = v;
	} else {
		snprintf(p->why, sizeof(p->why), "unknown member '%.40s' (known: name, count)", key);
		json_fail(r, p->why);
	}
}

/* TEXT (LEN bytes when it holds no NUL) into P; false with why in ERR. */
static bool
post_parse(const char *text, size_t len, struct post *p, char *err, size_t err_size)
{
	struct json_reader r;
	json_reader_init(&r, text);
	if (json_peek(&r) != '{') {
		snprintf(err, err_size, "expected a JSON object {\"name\": \"inference\", \"count\": 5}");
		return false;
	}
	if (!json_each_member(&r, post_member, p)) {
		snprintf(err, err_size, "%s at byte %zu", r.why, (size_t)(r.at - text) + 1);
		return false;
	}
	json_skip_ws(&r);
	if ((size_t)(r.p - text) != len) { /* a NUL in the body ends the copy early: something after it too */
		snprintf(err, err_size, "one JSON object, nothing after it");
		return false;
	}
	if (!p->have_name) {
		snprintf(err, err_size, "\"name\" is missing");
		return false;
	}
	return true;
}

int
work_post_json(void *data, const char *body, size_t len, char *err, size_t err_size)
{
	char *text = xstrndup(body, len); /* the reader wants a NUL at the end */
	struct post p = {.count = 1};
	int r = post_parse(text, len, &p, err, err_size)
			? work_ledger_add(data, p.name, p.name_len, p.count, err, err_size)
			: -EINVAL;
	free(text);
	return r;
}
