/*
 * The latest sample, rendered on demand: the loop only copies the sample
 * it publishes (its used metrics, not the whole table); the snapshot JSON
 * and the /metrics text are rendered by the first request after a sample
 * and kept for the following ones until the next sample. With no client
 * and no scraper nothing is rendered at all.
 *
 * Threads: the loop swaps the copy in under `lock`; a handler takes a
 * reference under the lock and renders outside it, so neither waits for
 * the other's work, and stores its text only if no newer sample came.
 */
#include <stdlib.h>
#include <string.h>

#include "core/sample_json.h"
#include "core/xalloc.h"
#include "server_priv.h"

static struct sample_copy *
copy_ref(struct sample_copy *c)
{
	if (c) {
		atomic_fetch_add(&c->refs, 1);
	}
	return c;
}

/* Drops a reference; the loop keeps the last one as its spare instead of freeing it. */
static void
copy_unref(struct sample_copy *c, struct sample_copy **spare)
{
	if (c && atomic_fetch_sub(&c->refs, 1) == 1) {
		if (spare && !*spare) {
			*spare = c;
		} else {
			free(c);
		}
	}
}

/* What rendering reads: never the index, so it is not copied (no lookups on a copy). */
static void
copy_sample(struct sample *dst, const struct sample *src)
{
	dst->seq = src->seq;
	dst->time_ms = src->time_ms;
	dst->mono_ms = src->mono_ms;
	dst->clock_step_ms = src->clock_step_ms;
	memcpy(dst->power_mode, src->power_mode, sizeof(dst->power_mode));
	dst->throttle = src->throttle;
	/* what ran and what the OOM killer ended, on the ticks that have them (about 1 KiB: copied whole) */
	dst->processes = src->processes;
	dst->oom_killed = src->oom_killed;
	dst->metrics.count = src->metrics.count;
	memcpy(dst->metrics.items, src->metrics.items, src->metrics.count * sizeof(src->metrics.items[0]));
	/* the same names: /metrics keeps their dictionary entries (core/metric_dict.h) */
	dst->metrics.layout = src->metrics.layout;
	dst->metrics.layout_count = src->metrics.count;
	dst->text = NULL; /* the loop's text is the loop's: the copy is rendered on its own */
}

void
server_render_publish(struct server_state *st, const struct sample *s)
{
	struct sample_copy *c = st->spare;
	st->spare = NULL;
	if (!c) {
		/* not zeroed: only what copy_sample writes is ever read */
		c = xrealloc(NULL, 1, sizeof(*c));
	}
	atomic_init(&c->refs, 1);
	copy_sample(&c->s, s);
	pthread_mutex_lock(&st->lock);
	struct sample_copy *old = st->latest;
	st->latest = c;
	st->latest_seq++;
	pthread_mutex_unlock(&st->lock);
	copy_unref(old, &st->spare);
}

static void
render_json(struct buf *out, const struct sample *s, struct server_state *st)
{
	(void)st;
	struct json j;
	json_init(&j);
	sample_to_json(&j, s);
	buf_add(out, j.out.buf, j.out.len);
	json_free(&j);
}

static void
render_prom(struct buf *out, const struct sample *s, struct server_state *st)
{
	pthread_mutex_lock(&st->dict_lock);
	prom_format_sample(out, s, &st->info_facts, st->prom_dict);
	pthread_mutex_unlock(&st->dict_lock);
}

/* The blob in *SLOT when it renders the latest sample, or a fresh one rendered by RENDER. */
static struct blob *
cached(struct server_state *st, struct blob **slot, uint64_t *slot_seq,
       void (*render)(struct buf *, const struct sample *, struct server_state *))
{
	pthread_mutex_lock(&st->lock);
	if (*slot_seq == st->latest_seq || !st->latest) {
		struct blob *b = blob_ref(*slot);
		pthread_mutex_unlock(&st->lock);
		return b;
	}
	struct sample_copy *c = copy_ref(st->latest);
	uint64_t seq = st->latest_seq;
	pthread_mutex_unlock(&st->lock);

	struct buf text;
	buf_init(&text);
	render(&text, &c->s, st);
	struct blob *b = blob_new(text.buf, text.len);
	buf_free(&text);

	struct blob *drop = NULL;
	pthread_mutex_lock(&st->lock);
	if (*slot_seq < seq) {
		drop = *slot;
		*slot = blob_ref(b);
		*slot_seq = seq;
	}
	pthread_mutex_unlock(&st->lock);
	blob_unref(drop);
	/* a handler never keeps the spare: only the loop reuses it */
	copy_unref(c, NULL);
	return b;
}

struct blob *
server_render_sample(struct server_state *st)
{
	return cached(st, &st->sample, &st->sample_seq, render_json);
}

struct blob *
server_render_prom(struct server_state *st)
{
	return cached(st, &st->prom, &st->prom_seq, render_prom);
}

struct blob *
server_render_event_locked(struct server_state *st, uint64_t id)
{
	struct json j;
	json_init(&j);
	sample_to_json(&j, &st->latest->s);
	struct buf text;
	buf_init(&text);
	buf_addf(&text, "id: %llu\nevent: sample\ndata: ", (unsigned long long)id);
	buf_add(&text, j.out.buf, j.out.len);
	buf_adds(&text, "\n\n");
	struct blob *b = blob_new(text.buf, text.len);
	buf_free(&text);
	json_free(&j);
	return b;
}

void
server_render_fini(struct server_state *st)
{
	copy_unref(st->latest, NULL);
	free(st->spare);
	st->latest = NULL;
	st->spare = NULL;
}
