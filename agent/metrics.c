/*
 * Metric set: an array plus a small open-addressing hash index so that
 * put-with-replace stays O(1) on the parser's hot path.
 */
#include "metrics.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Word-at-a-time multiply-xorshift hash: names are short, this is the hot
 * path. WHOLE says that 8 bytes may be read past the last full word (a
 * name buffer), so the tail is one load and a mask instead of a copy.
 */
static inline uint32_t
hash_words(const char *s, size_t len, bool whole)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ len;
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		s += 8;
		len -= 8;
	}
	if (len > 0) {
		uint64_t w = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (whole) {
			memcpy(&w, s, 8);
			w &= (1ull << (8 * len)) - 1;
		} else {
			memcpy(&w, s, len);
		}
#else
		(void)whole;
		memcpy(&w, s, len);
#endif
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	}
	h ^= h >> 29;
	return (uint32_t)h;
}

static uint32_t
hash_name(const char *s, size_t len)
{
	return hash_words(s, len, false);
}

static inline bool
slot_used(const struct metric_set *set, uint32_t v)
{
	return (v >> 16) == (set->generation & 0xffff) && (v & 0xffff) != 0;
}

void
metric_set_clear(struct metric_set *set)
{
	set->count = 0;
	set->generation = (set->generation + 1) & 0xffff;
	if (set->generation == 0) {
		/* wrapped: old slots could look current, wipe them once */
		memset(set->slots, 0, sizeof(set->slots));
		set->generation = 1;
	}
}

/* Returns the slot holding NAME, or the empty slot where it would go. */
static size_t
find_slot(const struct metric_set *set, const char *name, size_t len, uint32_t hash)
{
	size_t mask = METRIC_HASH_SLOTS - 1;
	size_t i = hash & mask;
	for (;;) {
		uint32_t v = set->slots[i];
		if (!slot_used(set, v)) {
			return i;
		}
		const struct metric *m = &set->items[(v & 0xffff) - 1];
		if (m->hash == hash && m->len == len && memcmp(m->name, name, len) == 0) {
			return i;
		}
		i = (i + 1) & mask;
	}
}

static inline int
put_hashed(struct metric_set *set, const char *name, size_t len, uint32_t hash, double value, bool whole)
{
	size_t slot = find_slot(set, name, len, hash);
	uint32_t v = set->slots[slot];
	if (slot_used(set, v)) {
		set->items[(v & 0xffff) - 1].value = value;
		return 0;
	}
	if (set->count >= METRIC_SET_MAX) {
		return -ENOSPC;
	}
	struct metric *m = &set->items[set->count];
	if (whole) {
		memcpy(m->name, name, METRIC_NAME_MAX); /* fixed size: a few vector moves */
	} else {
		memcpy(m->name, name, len);
	}
	m->name[len] = '\0';
	m->value = value;
	m->hash = hash;
	m->len = (uint32_t)len;
	set->count++;
	set->slots[slot] = (set->generation << 16) | (uint32_t)set->count;
	return 0;
}

int
metric_set_put_n(struct metric_set *set, const char *name, size_t len, double value)
{
	if (len == 0 || len >= METRIC_NAME_MAX) {
		return -EINVAL;
	}
	return put_hashed(set, name, len, hash_words(name, len, false), value, false);
}

int
metric_set_put_buf(struct metric_set *set, const char *buf, size_t len, double value)
{
	if (len == 0 || len >= METRIC_NAME_MAX) {
		return -EINVAL;
	}
	return put_hashed(set, buf, len, hash_words(buf, len, true), value, true);
}

int
metric_set_put(struct metric_set *set, const char *name, double value)
{
	return metric_set_put_n(set, name, strlen(name), value);
}

int
metric_set_putf(struct metric_set *set, double value, const char *fmt, ...)
{
	char name[METRIC_NAME_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (n <= 0 || (size_t)n >= sizeof(name)) {
		return -EINVAL;
	}
	return metric_set_put_n(set, name, (size_t)n, value);
}

const struct metric *
metric_set_find(const struct metric_set *set, const char *name)
{
	size_t len = strlen(name);
	if (len == 0 || len >= METRIC_NAME_MAX) {
		return NULL;
	}
	uint32_t v = set->slots[find_slot(set, name, len, hash_name(name, len))];
	return slot_used(set, v) ? &set->items[(v & 0xffff) - 1] : NULL;
}

bool
metric_set_get(const struct metric_set *set, const char *name, double *out)
{
	const struct metric *m = metric_set_find(set, name);
	if (!m) {
		return false;
	}
	*out = m->value;
	return true;
}

static void
rebuild_index(struct metric_set *set)
{
	memset(set->slots, 0, sizeof(set->slots));
	if (set->generation == 0) {
		set->generation = 1;
	}
	for (size_t i = 0; i < set->count; i++) {
		const struct metric *m = &set->items[i];
		set->slots[find_slot(set, m->name, m->len, m->hash)] = (set->generation << 16) | (uint32_t)(i + 1);
	}
}

bool
metric_set_remove(struct metric_set *set, const char *name)
{
	const struct metric *m = metric_set_find(set, name);
	if (!m) {
		return false;
	}
	size_t idx = (size_t)(m - set->items);
	memmove(&set->items[idx], &set->items[idx + 1],
		(set->count - idx - 1) * sizeof(set->items[0]));
	set->count--;
	rebuild_index(set);
	return true;
}

int
metric_set_merge(struct metric_set *dst, const struct metric_set *src)
{
	int ret = 0;
	for (size_t i = 0; i < src->count; i++) {
		int r = metric_set_put(dst, src->items[i].name, src->items[i].value);
		if (r < 0) {
			ret = r;
		}
	}
	return ret;
}

static int
cmp_metric(const void *a, const void *b)
{
	return strcmp(((const struct metric *)a)->name, ((const struct metric *)b)->name);
}

void
metric_set_sort(struct metric_set *set)
{
	qsort(set->items, set->count, sizeof(set->items[0]), cmp_metric);
	rebuild_index(set);
}

bool
metric_name_valid(const char *name)
{
	size_t seg = 0;
	size_t len = 0;
	for (const char *p = name; *p; p++, len++) {
		char c = *p;
		if (c == '.') {
			if (seg == 0) {
				return false;
			}
			seg = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
			seg++;
		} else {
			return false;
		}
	}
	return len > 0 && len < METRIC_NAME_MAX && seg > 0;
}
