/* GPU memory per process (gpu_procs.h): the list, and the feed between two threads (one mutex, atomic references). */
#include "gpu_procs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

void
gpu_procs_add(struct gpu_procs *l, int32_t pid, uint64_t bytes)
{
	if (l->count == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->items = xrealloc(l->items, l->cap, sizeof(*l->items));
	}
	l->items[l->count++] = (struct gpu_proc){pid, bytes};
}

static int
by_pid(const void *a, const void *b)
{
	int32_t x = ((const struct gpu_proc *)a)->pid, y = ((const struct gpu_proc *)b)->pid;
	return (x > y) - (x < y);
}

static uint64_t
join_bytes(uint64_t a, uint64_t b, enum gpu_procs_join join)
{
	if (a == GPU_PROC_UNKNOWN || b == GPU_PROC_UNKNOWN) {
		return GPU_PROC_UNKNOWN;
	}
	if (join == GPU_PROCS_MAX) {
		return a > b ? a : b;
	}
	return a > GPU_PROC_UNKNOWN - 1 - b ? GPU_PROC_UNKNOWN - 1 : a + b; /* saturates below "unknown" */
}

void
gpu_procs_merge(struct gpu_procs *l, enum gpu_procs_join join)
{
	if (l->count < 2) {
		return;
	}
	qsort(l->items, l->count, sizeof(*l->items), by_pid);
	size_t out = 0;
	for (size_t i = 1; i < l->count; i++) {
		if (l->items[i].pid == l->items[out].pid) {
			l->items[out].bytes = join_bytes(l->items[out].bytes, l->items[i].bytes, join);
		} else {
			l->items[++out] = l->items[i];
		}
	}
	l->count = out + 1;
}

bool
gpu_procs_find(const struct gpu_procs *l, int32_t pid, uint64_t *bytes)
{
	struct gpu_proc key = {pid, 0};
	const struct gpu_proc *p = l->count ? bsearch(&key, l->items, l->count, sizeof(key), by_pid) : NULL;
	if (!p) {
		return false;
	}
	*bytes = p->bytes;
	return true;
}

void
gpu_procs_clear(struct gpu_procs *l)
{
	l->count = 0;
}

void
gpu_procs_free(struct gpu_procs *l)
{
	free(l->items);
	*l = (struct gpu_procs){0};
}

/* ---- the feed ---- */

struct gpu_procs_feed {
	pthread_mutex_t lock;
	atomic_int refs;
	bool published;
	int64_t valid_until_ms;
	struct gpu_procs last;
};

struct gpu_procs_feed *
gpu_procs_feed_create(void)
{
	struct gpu_procs_feed *f = xcalloc(1, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	atomic_init(&f->refs, 1);
	return f;
}

struct gpu_procs_feed *
gpu_procs_feed_ref(struct gpu_procs_feed *f)
{
	atomic_fetch_add(&f->refs, 1);
	return f;
}

void
gpu_procs_feed_unref(struct gpu_procs_feed *f)
{
	if (f && atomic_fetch_sub(&f->refs, 1) == 1) {
		pthread_mutex_destroy(&f->lock);
		gpu_procs_free(&f->last);
		free(f);
	}
}

/* DST becomes a copy of SRC's entries, in DST's own memory */
static void
copy(struct gpu_procs *dst, const struct gpu_procs *src)
{
	gpu_procs_clear(dst);
	for (size_t i = 0; i < src->count; i++) {
		gpu_procs_add(dst, src->items[i].pid, src->items[i].bytes);
	}
}

void
gpu_procs_feed_publish(struct gpu_procs_feed *f, const struct gpu_procs *l, int64_t valid_until_ms)
{
	pthread_mutex_lock(&f->lock);
	f->published = l != NULL;
	f->valid_until_ms = valid_until_ms;
	if (l) {
		copy(&f->last, l);
		gpu_procs_merge(&f->last, GPU_PROCS_SUM); /* for gpu_procs_find(): a merged list stays as it is */
	}
	pthread_mutex_unlock(&f->lock);
}

bool
gpu_procs_feed_take(struct gpu_procs_feed *f, int64_t now_ms, struct gpu_procs *out)
{
	pthread_mutex_lock(&f->lock);
	bool good = f->published && now_ms < f->valid_until_ms;
	if (good) {
		copy(out, &f->last);
	}
	pthread_mutex_unlock(&f->lock);
	return good;
}
