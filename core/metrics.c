/*
 * Metric set: an array plus a small open-addressing hash index so that
 * put-with-replace stays O(1) on the parser's hot path.
 */
#include "metrics.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

/* The metric set's index takes the hash's top half (core/hash.h). */
static inline uint32_t
hash_name(const char *s, size_t len)
{
	return (uint32_t)(hash_words(s, len) >> 32);
}

/* Layout numbers, shared by every set: a copy of one set never meets another set's number. */
static _Atomic uint64_t last_layout;

static uint64_t
new_layout(void)
{
	return atomic_fetch_add_explicit(&last_layout, 1, memory_order_relaxed) + 1;
}

static inline bool
slot_used(const struct metric_set *set, uint32_t v)
{
	return (v >> 16) == (set->generation & 0xffff) && (v & 0xffff) != 0;
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
	set->layout = 0; /* a new name: the next clear numbers the layout */
	if (whole) {
		memcpy(m->name, name, METRIC_NAME_MAX); /* fixed size: a few vector moves */
	} else {
		memcpy(m->name, name, len);
	}
	m->name[len] = '\0';
	m->value = value;
	m->hash = hash;
	m->len = (uint16_t)len;
	m->slot = (uint16_t)slot;
	set->count++;
	set->slots[slot] = (set->generation << 16) | (uint32_t)set->count;
	return 0;
}

void
metric_set_clear(struct metric_set *set)
{
	set->replay = set->count; /* the old items stay in place: see metric_put_replay_() */
	/*
	 * Replays check the names of the items up to COUNT only: the layout
	 * stands for no more than these (a number for fewer names when the set
	 * shrank), and a new one once a name changed.
	 */
	if (set->layout == 0 || set->count < set->layout_count) {
		set->layout = new_layout();
	}
	set->layout_count = set->count;
	set->count = 0;
	set->generation = (set->generation + 1) & 0xffff;
	if (set->generation == 0) {
		/* wrapped: old slots could look current, wipe them once */
		memset(set->slots, 0, sizeof(set->slots));
		set->generation = 1;
	}
}

int
metric_set_put_n(struct metric_set *set, const char *name, size_t len, double value)
{
	if (len == 0 || len >= METRIC_NAME_MAX) {
		return -EINVAL;
	}
	if (metric_put_replay_(set, name, len, value)) {
		return 0;
	}
	return put_hashed(set, name, len, hash_name(name, len), value, false);
}

int
metric_set_put_new_(struct metric_set *set, const char *buf, size_t len, double value)
{
	return put_hashed(set, buf, len, hash_name(buf, len), value, true);
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

/* Appends TEXT at BUF + *LEN; false when the name would not fit. */
static bool
name_add(char *buf, size_t *len, const char *text)
{
	size_t n = strlen(text);
	if (n >= METRIC_NAME_MAX - *len) {
		return false;
	}
	memcpy(buf + *len, text, n + 1);
	*len += n;
	return true;
}

size_t
metric_name_join(char *buf, const char *a, const char *b, const char *c)
{
	size_t len = 0;
	buf[0] = '\0';
	return name_add(buf, &len, a) && name_add(buf, &len, b) && name_add(buf, &len, c) ? len : 0;
}

size_t
metric_name_num(char *buf, const char *prefix, long long n, const char *suffix)
{
	char digits[24];
	char *p = digits + sizeof(digits);
	unsigned long long v = n < 0 ? 0 - (unsigned long long)n : (unsigned long long)n;
	*--p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (n < 0) {
		*--p = '-';
	}
	return metric_name_join(buf, prefix, p, suffix);
}

int
metric_set_put3(struct metric_set *set, double value, const char *a, const char *b, const char *c)
{
	char name[METRIC_NAME_MAX];
	size_t n = metric_name_join(name, a, b, c);
	return n ? metric_set_put_n(set, name, n, value) : -EINVAL;
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
		struct metric *m = &set->items[i];
		size_t slot = find_slot(set, m->name, m->len, m->hash);
		set->slots[slot] = (set->generation << 16) | (uint32_t)(i + 1);
		m->slot = (uint16_t)slot;
	}
	set->replay = 0; /* the order changed */
	set->layout = 0;
}

bool
metric_set_remove(struct metric_set *set, const char *name)
{
	const struct metric *m = metric_set_find(set, name);
	if (!m) {
		return false;
	}
	size_t idx = (size_t)(m - set->items);
	memmove(&set->items[idx], &set->items[idx + 1], (set->count - idx - 1) * sizeof(set->items[0]));
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

bool
metric_is_glob(const char *pattern)
{
	return strchr(pattern, '*') != NULL;
}

/*
 * Classic wildcard match with one backtrack point: on a mismatch after a
 * '*', let that star swallow one more character. Linear for the patterns
 * rules use, never exponential.
 */
bool
metric_glob_match(const char *pattern, const char *name)
{
	const char *p = pattern;
	const char *n = name;
	const char *star = NULL;
	const char *resume = NULL;

	while (*n) {
		if (*p == '*') {
			star = p++;
			resume = n;
		} else if (*p == *n) {
			p++;
			n++;
		} else if (star) {
			p = star + 1;
			n = ++resume;
		} else {
			return false;
		}
	}
	while (*p == '*') {
		p++;
	}
	return *p == '\0';
}
