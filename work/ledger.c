/*
 * The work ledger (work.h): units of work per name, added from the loop's
 * thread (the StatsD source) and the web server's (POST /api/v1/work),
 * read by the loop. One mutex; a reference count, since the web server
 * may outlive the source that made the ledger. And the two wire formats'
 * parsers, pure.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	char num[32];
	size_t n = (size_t)(bar - colon - 1);
	if (n == 0 || n >= sizeof(num)) {
		snprintf(err, err_size, "expected a number after ':'");
		return -EINVAL;
	}
	memcpy(num, colon + 1, n);
	num[n] = '\0';
	char *stop;
	double v = strtod(num, &stop);
	if (*stop || !isfinite(v)) {
		snprintf(err, err_size, "'%s' is not a number", num);
		return -EINVAL;
	}
	/* "|@0.1": one line stands for 1/0.1 of them; "|#tags" mean nothing here */
	for (const char *p = bar + 2; p < end; p++) {
		if (p[0] == '|' && p + 1 < end && p[1] == '@') {
			double rate = strtod(p + 2, &stop);
			if (stop == p + 2 || !(rate > 0 && rate <= 1)) {
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

/* ---- POST /api/v1/work ---- */

static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
		p++;
	}
	return p;
}

/* A JSON string without escapes (a name has none) at *P: its span. */
static bool
json_plain_string(const char **p, const char *end, const char **s, size_t *n)
{
	if (*p >= end || **p != '"') {
		return false;
	}
	const char *q = *p + 1;
	while (q < end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20) {
		q++;
	}
	if (q >= end || *q != '"') {
		return false;
	}
	*s = *p + 1;
	*n = (size_t)(q - *s);
	*p = q + 1;
	return true;
}

int
work_post_json(void *data, const char *body, size_t len, char *err, size_t err_size)
{
	const char *p = skip_ws(body, body + len), *end = body + len;
	const char *name = NULL;
	size_t name_len = 0;
	double count = 1;
	if (p >= end || *p++ != '{') {
		snprintf(err, err_size, "expected a JSON object {\"name\": \"inference\", \"count\": 5}");
		return -EINVAL;
	}
	for (bool first = true;; first = false) {
		p = skip_ws(p, end);
		if (p < end && *p == '}' && first) {
			break;
		}
		const char *key;
		size_t key_len;
		if (!json_plain_string(&p, end, &key, &key_len) || (p = skip_ws(p, end)) >= end || *p++ != ':') {
			snprintf(err, err_size, "expected \"name\" or \"count\" and a ':'");
			return -EINVAL;
		}
		p = skip_ws(p, end);
		if (key_len == 4 && memcmp(key, "name", 4) == 0) {
			if (!json_plain_string(&p, end, &name, &name_len)) {
				snprintf(err, err_size, "\"name\" is a string");
				return -EINVAL;
			}
		} else if (key_len == 5 && memcmp(key, "count", 5) == 0) {
			char num[32];
			size_t n = 0;
			while (p + n < end && n < sizeof(num) - 1 && strchr("0123456789+-.eE", p[n])) {
				n++;
			}
			memcpy(num, p, n);
			num[n] = '\0';
			char *stop;
			count = strtod(num, &stop);
			if (n == 0 || *stop) {
				snprintf(err, err_size, "\"count\" is a number");
				return -EINVAL;
			}
			p += n;
		} else {
			snprintf(err, err_size, "unknown member '%.*s' (known: name, count)",
				 (int)(key_len < 40 ? key_len : 40), key);
			return -EINVAL;
		}
		p = skip_ws(p, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}') {
			break;
		}
		snprintf(err, err_size, "expected ',' or '}'");
		return -EINVAL;
	}
	if (skip_ws(p + 1, end) != end) {
		snprintf(err, err_size, "one JSON object, nothing after it");
		return -EINVAL;
	}
	if (!name) {
		snprintf(err, err_size, "\"name\" is missing");
		return -EINVAL;
	}
	return work_ledger_add(data, name, name_len, count, err, err_size);
}
