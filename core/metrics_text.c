/* A sample's metrics as JSON members, formatted once (see metrics_text.h). */
#include "metrics_text.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "numfmt.h"
#include "xalloc.h"

struct metrics_text {
	/* "name": of items 0..key_count-1 of the set numbered key_layout (0: none kept) */
	uint64_t key_layout;
	size_t key_count;
	struct buf keys;
	uint32_t *key_at; /* key I is keys.buf + key_at[I] up to key_at[I + 1] */
	struct json scratch;
	/* the members of the sealed sample, once formatted */
	bool sealed, formatted, formatted_once;
	struct buf text;
	uint32_t *at;
	size_t count;
	size_t cap; /* of key_at, at and prev_at: METRIC_SET_MAX + 1 */
	/*
	 * The sample formatted before, with the same keys (prev_count 0 when
	 * not): a value with the same bits takes its text from there, so a
	 * sample formats only the numbers that changed (limits, trip points and
	 * idle counters do not).
	 */
	struct buf prev;
	uint32_t *prev_at;
	size_t prev_count;
	double *values; /* of the sample formatted last */
};

struct metrics_text *
metrics_text_create(void)
{
	struct metrics_text *t = xcalloc(1, sizeof(*t));
	t->cap = METRIC_SET_MAX + 1;
	t->key_at = xcalloc(t->cap, sizeof(*t->key_at));
	t->at = xcalloc(t->cap, sizeof(*t->at));
	t->prev_at = xcalloc(t->cap, sizeof(*t->prev_at));
	t->values = xcalloc(t->cap, sizeof(*t->values));
	json_init(&t->scratch);
	return t;
}

void
metrics_text_destroy(struct metrics_text *t)
{
	if (!t) {
		return;
	}
	buf_free(&t->keys);
	buf_free(&t->text);
	buf_free(&t->prev);
	json_free(&t->scratch);
	free(t->key_at);
	free(t->at);
	free(t->prev_at);
	free(t->values);
	free(t);
}

void
metrics_text_seal(struct metrics_text *t)
{
	t->sealed = true;
	t->formatted = false;
}

void
metrics_text_unseal(struct metrics_text *t)
{
	t->sealed = false;
	t->formatted = false;
}

/* The keys of SET's items, escaped as json_key() escapes them: again only when the names moved. */
static void
keys_for(struct metrics_text *t, const struct metric_set *set)
{
	if (set->layout != 0 && set->layout == t->key_layout && set->count <= t->key_count) {
		return;
	}
	buf_reset(&t->keys);
	for (size_t i = 0; i < set->count; i++) {
		t->key_at[i] = (uint32_t)t->keys.len;
		json_reset(&t->scratch);
		json_key(&t->scratch, set->items[i].name);
		buf_add(&t->keys, t->scratch.out.buf, t->scratch.out.len);
	}
	t->key_at[set->count] = (uint32_t)t->keys.len;
	t->key_layout = set->layout;
	t->key_count = set->count;
	t->prev_count = 0; /* other names: nothing to take from the sample before */
}

static void
format(struct metrics_text *t, const struct metric_set *set)
{
	/* the last text becomes the one before */
	struct buf b = t->prev;
	t->prev = t->text;
	t->text = b;
	uint32_t *at = t->prev_at;
	t->prev_at = t->at;
	t->at = at;
	t->prev_count = t->formatted_once ? t->count : 0;
	keys_for(t, set);
	buf_reset(&t->text);
	/* one reservation: every key, every number at its longest, the commas */
	buf_reserve(&t->text, t->key_at[set->count] + set->count * (NUMFMT_MAX + 1));
	char *o = t->text.buf;
	for (size_t i = 0; i < set->count; i++) {
		t->at[i] = (uint32_t)(o - t->text.buf);
		double v = set->items[i].value;
		if (i < t->prev_count && memcmp(&v, &t->values[i], sizeof(v)) == 0) {
			size_t len = t->prev_at[i + 1] - 1 - t->prev_at[i];
			memcpy(o, t->prev.buf + t->prev_at[i], len);
			o += len;
		} else {
			size_t klen = t->key_at[i + 1] - t->key_at[i];
			memcpy(o, t->keys.buf + t->key_at[i], klen);
			o += klen;
			o += json_number_text(o, v);
			t->values[i] = v;
		}
		*o++ = ',';
	}
	t->at[set->count] = (uint32_t)(o - t->text.buf);
	t->text.len = set->count ? (size_t)(o - t->text.buf) - 1 : 0; /* the last comma is not there */
	t->text.buf[t->text.len] = '\0';
	t->count = set->count;
	t->formatted = true;
	t->formatted_once = true;
}

bool
metrics_text_get(struct metrics_text *t, const struct metric_set *set, struct metrics_members *out)
{
	if (!t || !t->sealed) {
		return false;
	}
	if (!t->formatted || t->count != set->count) {
		format(t, set);
	}
	*out = (struct metrics_members){.text = t->text.buf, .at = t->at, .count = t->count};
	return true;
}
