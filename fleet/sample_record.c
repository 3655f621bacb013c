/* The fleet sinks' spool record of a sample (see sample_record.h). */
#include "sample_record.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RECORD_VERSION 1
#define KIND_VARINT 0
#define KIND_DOUBLE 1
#define VARINT_MAX 10
#define WHOLE_MAX 9007199254740992.0 /* 2^53: every whole double up to it is exact */

static void
put_varint(struct buf *b, uint64_t v)
{
	uint8_t tmp[VARINT_MAX];
	size_t n = 0;
	while (v >= 0x80) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	buf_add(b, (const char *)tmp, n);
}

static uint64_t
zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t
unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void
put_value(struct buf *b, double v)
{
	/* -0.0 and NaN keep their bits: only values that are whole and round-trip take a varint */
	if (v == floor(v) && fabs(v) < WHOLE_MAX && !(v == 0 && signbit(v))) {
		buf_addc(b, KIND_VARINT);
		put_varint(b, zigzag((int64_t)v));
		return;
	}
	uint8_t le[8];
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	for (int i = 0; i < 8; i++) {
		le[i] = (uint8_t)(bits >> (8 * i));
	}
	buf_addc(b, KIND_DOUBLE);
	buf_add(b, (const char *)le, sizeof(le));
}

static int
by_name(const void *a, const void *b)
{
	return strcmp((*(const struct metric *const *)a)->name, (*(const struct metric *const *)b)->name);
}

void
sample_record_encode(struct buf *out, const struct sample *s, bool (*keep)(void *arg, const char *name), void *arg)
{
	const struct metric_set *set = &s->metrics;
	/* in name order, each name shares the most with the one before it */
	const struct metric *sorted[METRIC_SET_MAX];
	size_t n = 0;
	for (size_t i = 0; i < set->count; i++) {
		if (!keep || keep(arg, set->items[i].name)) {
			sorted[n++] = &set->items[i];
		}
	}
	qsort(sorted, n, sizeof(sorted[0]), by_name);
	size_t mode_len = strnlen(s->power_mode, sizeof(s->power_mode) - 1);
	buf_addc(out, RECORD_VERSION);
	put_varint(out, s->seq);
	put_varint(out, zigzag(s->time_ms));
	buf_addc(out, (char)mode_len);
	buf_add(out, s->power_mode, mode_len);
	put_varint(out, n);
	const char *prev = "";
	size_t prev_len = 0;
	for (size_t i = 0; i < n; i++) {
		const struct metric *m = sorted[i];
		size_t shared = 0;
		while (shared < prev_len && shared < m->len && prev[shared] == m->name[shared]) {
			shared++;
		}
		buf_addc(out, (char)shared);
		buf_addc(out, (char)(m->len - shared));
		buf_add(out, m->name + shared, m->len - shared);
		put_value(out, m->value);
		prev = m->name;
		prev_len = m->len;
	}
}

static bool
get_varint(struct sample_record_reader *r, uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64 && r->p < r->end; shift += 7) {
		uint8_t c = *r->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

static bool
get_byte(struct sample_record_reader *r, uint8_t *out)
{
	if (r->p >= r->end) {
		return false;
	}
	*out = *r->p++;
	return true;
}

int
sample_record_open(struct sample_record_reader *r, const void *data, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->p = data;
	r->end = r->p + len;
	uint8_t version, mode_len;
	uint64_t t;
	if (!get_byte(r, &version) || version != RECORD_VERSION || !get_varint(r, &r->seq) || !get_varint(r, &t) ||
	    !get_byte(r, &mode_len) || mode_len >= sizeof(r->power_mode) || (size_t)(r->end - r->p) < mode_len) {
		return -EINVAL;
	}
	r->time_ms = unzigzag(t);
	memcpy(r->power_mode, r->p, mode_len);
	r->power_mode[mode_len] = '\0';
	r->p += mode_len;
	if (!get_varint(r, &r->count) || r->count > METRIC_SET_MAX) {
		return -EINVAL;
	}
	return 0;
}

int
sample_record_next(struct sample_record_reader *r, const char **name, double *value)
{
	if (r->read == r->count) {
		return 0;
	}
	uint8_t shared, rest, kind;
	size_t have = strlen(r->name);
	if (!get_byte(r, &shared) || !get_byte(r, &rest) || shared > have || (size_t)shared + rest >= sizeof(r->name) ||
	    (size_t)(r->end - r->p) < rest) {
		return -EINVAL;
	}
	memcpy(r->name + shared, r->p, rest);
	r->name[shared + rest] = '\0';
	r->p += rest;
	if (!get_byte(r, &kind)) {
		return -EINVAL;
	}
	if (kind == KIND_VARINT) {
		uint64_t v;
		if (!get_varint(r, &v)) {
			return -EINVAL;
		}
		*value = (double)unzigzag(v);
	} else if (kind == KIND_DOUBLE && r->end - r->p >= 8) {
		uint64_t bits = 0;
		for (int i = 0; i < 8; i++) {
			bits |= (uint64_t)r->p[i] << (8 * i);
		}
		r->p += 8;
		memcpy(value, &bits, sizeof(*value));
	} else {
		return -EINVAL;
	}
	if (shared + rest == 0) {
		return -EINVAL;
	}
	r->read++;
	*name = r->name;
	return 1;
}
