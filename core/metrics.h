/*
 * A flat set of named metrics (canonical dotted names, unit in the last
 * segment) as produced by every source for one sample. Fixed capacity, no
 * allocation, so parsers can fill it on the hot path.
 */
#ifndef TEGRAWATCH_METRICS_H
#define TEGRAWATCH_METRICS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define METRIC_NAME_MAX 64 /* including the NUL */
#define METRIC_SET_MAX 512
#define METRIC_HASH_SLOTS 1024 /* power of two, > 1.5 x METRIC_SET_MAX */

struct metric {
	char name[METRIC_NAME_MAX];
	double value;
	uint32_t hash; /* of the name, for the index */
	uint16_t len;  /* of the name */
	uint16_t slot; /* where the index points at this item */
};

struct metric_set {
	size_t count;
	struct metric items[METRIC_SET_MAX];
	/*
	 * Open-addressing index: (generation << 16) | (item index + 1). A slot
	 * from an older generation is empty, so clearing the set is O(1).
	 */
	uint32_t generation;
	uint32_t slots[METRIC_HASH_SLOTS];
	/*
	 * A source fills its set with the same names in the same order sample
	 * after sample. While puts repeat the names left over from before the
	 * last clear, item by item, nothing needs hashing or copying: the
	 * names are known distinct and land in the same slots. REPLAY is how
	 * many old items may still be repeated; 0 once a name differs.
	 */
	size_t replay;
	/*
	 * Which names sit where: a number, unique in the process, that stands
	 * for the names of items 0..LAYOUT_COUNT-1 (and fewer of them after a
	 * clear), so a consumer that classifies names (core/metric_dict.h)
	 * does it again only when they changed. 0 = not known: a name was put
	 * that was no replay; the next clear gives a new number. Replays keep
	 * it. A copy of the items carries it along.
	 */
	uint64_t layout;
	size_t layout_count;
};

/**
 * Empties the set in O(1). A set must start zeroed (static, calloc) before
 * its first use: the index relies on it.
 */
void metric_set_clear(struct metric_set *set);

/**
 * Sets NAME (LEN bytes, no NUL needed) to VALUE, replacing an earlier value
 * of the same name. Returns 0, -EINVAL for an empty or too long name, or
 * -ENOSPC when the set is full.
 */
int metric_set_put_n(struct metric_set *set, const char *name, size_t len, double value);

/*
 * metric_set_put_buf() is inline (below): the tegrastats parser puts ~50
 * names a line, and a repeated name costs a compare, not a hash and a copy.
 */

/** As metric_set_put_n() for a NUL-terminated name. */
int metric_set_put(struct metric_set *set, const char *name, double value);

/** As metric_set_put() with a printf-style name. Not for hot paths. */
int metric_set_putf(struct metric_set *set, double value, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/**
 * A, B and C as one name into BUF (METRIC_NAME_MAX bytes): its length, 0
 * when it does not fit. For names made on every sample ("network." "eth0"
 * ".up"): about a tenth of what snprintf() costs.
 */
size_t metric_name_join(char *buf, const char *a, const char *b, const char *c);

/** PREFIX, N in decimal and SUFFIX as one name ("cpu." 3 ".freq_mhz"), as metric_name_join(). */
size_t metric_name_num(char *buf, const char *prefix, long long n, const char *suffix);

/** metric_set_put() of metric_name_join(A, B, C); -EINVAL when it does not fit. */
int metric_set_put3(struct metric_set *set, double value, const char *a, const char *b, const char *c);

/** Returns the metric called NAME, or NULL. */
const struct metric *metric_set_find(const struct metric_set *set, const char *name);

/** Writes the value of NAME to *out and returns true when present. */
bool metric_set_get(const struct metric_set *set, const char *name, double *out);

/** Removes NAME if present; returns true when something was removed. */
bool metric_set_remove(struct metric_set *set, const char *name);

/** Copies every metric of SRC into DST (replacing same names). */
int metric_set_merge(struct metric_set *dst, const struct metric_set *src);

/** Sorts the items by name (for stable output); keeps the index valid. */
void metric_set_sort(struct metric_set *set);

/**
 * Returns true when NAME is a canonical metric name: lower-case ASCII
 * letters, digits, '_' and '.' separated segments, none empty.
 */
bool metric_name_valid(const char *name);

/* ---- inline hot path; the names ending in '_' are internal ---- */

/* The general put for a whole-word name buffer (metrics.c). */
int metric_set_put_new_(struct metric_set *set, const char *buf, size_t len, double value);

/* NAME (LEN bytes) equals ITEM's name: whole words, the last overlapping. */
static inline bool
metric_name_equal_(const struct metric *item, const char *name, size_t len)
{
	if (item->len != len) {
		return false;
	}
	if (len < 8) {
		return memcmp(item->name, name, len) == 0;
	}
	/* first and last word (all of a name up to 16 bytes), then the middle */
	uint64_t a0, b0, a1, b1;
	memcpy(&a0, item->name, 8);
	memcpy(&b0, name, 8);
	memcpy(&a1, item->name + len - 8, 8);
	memcpy(&b1, name + len - 8, 8);
	if (((a0 ^ b0) | (a1 ^ b1)) != 0) {
		return false;
	}
	return len <= 16 || memcmp(item->name + 8, name + 8, len - 16) == 0;
}

/* Puts VALUE when NAME repeats the next old item; false when it does not. */
static inline bool
metric_put_replay_(struct metric_set *set, const char *name, size_t len, double value)
{
	if (set->count >= set->replay) {
		return false;
	}
	struct metric *m = &set->items[set->count];
	if (!metric_name_equal_(m, name, len)) {
		set->replay = 0;
		set->layout = 0; /* another name in an old one's place */
		return false;
	}
	m->value = value;
	set->count++;
	set->slots[m->slot] = (set->generation << 16) | (uint32_t)set->count;
	return true;
}

/**
 * As metric_set_put_n() for a name at the start of BUF, which must have at
 * least METRIC_NAME_MAX readable bytes (a parser's name buffer): the name
 * is then copied in whole words.
 */
static inline int
metric_set_put_buf(struct metric_set *set, const char *buf, size_t len, double value)
{
	if (len == 0 || len >= METRIC_NAME_MAX) {
		return -EINVAL;
	}
	if (metric_put_replay_(set, buf, len, value)) {
		return 0;
	}
	return metric_set_put_new_(set, buf, len, value);
}

/** True when NAME matches the glob PATTERN ('*' matches any run of characters, also '.'). */
bool metric_glob_match(const char *pattern, const char *name);

/** True when PATTERN is a glob (contains '*'). */
bool metric_is_glob(const char *pattern);

#endif
