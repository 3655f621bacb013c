/* Per-metric history rings in two tiers (see history.h). */
#include "history.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/xalloc.h"

/*
 * One metric. Its memory is one block: tier 1 mins, means and maxes
 * (buckets floats each) and the bucket counts (buckets x count_width
 * bytes), then tier 0 (cap values, at a 4-byte boundary). A bucket count
 * of 0 marks a minute without the metric.
 *
 * Tier 0 is narrow (2 bytes a value) while every value the ring holds is
 * a whole number of 1/scale (scale 1, 10, 100 or 1000: MHz, tenths of a
 * MHz, thousandths of a degree) within 32,767 steps of base: the value is
 * (base + k) / scale, and gives back exactly the float a wide ring would
 * store. The first value that cannot be written so, even after a finer
 * scale or a new base, makes the ring wide (32-bit floats) for good.
 */
struct ring {
	char name[METRIC_NAME_MAX];
	unsigned char *block;
	double sum;           /* of the minute being filled */
	uint64_t born;        /* sample index of the first slot that belongs to this ring */
	uint64_t last_seen;   /* sample index of the latest value */
	uint32_t born_bucket; /* bucket index of the first bucket that belongs to this ring (minutes: 8,000 years) */
	uint32_t last_bucket; /* bucket index of the latest value */
	int64_t base;         /* narrow tier 0: value = (base + k) / scale */
	/* the bucket being filled, written to the block as it closes: a sample touches no tier 1 array */
	float live_min, live_max; /* with sum */
	uint16_t live_count;      /* at most count_max */
	uint16_t scale;           /* 0: wide tier 0 */
	bool used;
};

/* a block's room at first; blocks double as the first lap reaches their end (history.h: memory) */
#define FIRST_SAMPLES_HELD 64
#define FIRST_BUCKETS_HELD 4

#define NARROW_ABSENT INT16_MIN
#define NARROW_MAX 32767 /* |k| */
#define SCALE_FINEST 1000

/* a ring, its two index slots, its item slot and the pad before tier 0 fit what history_bytes() counts for them */
_Static_assert(sizeof(struct ring) + 3 * sizeof(uint32_t) + 3 <= HISTORY_RING_BYTES, "HISTORY_RING_BYTES too small");

struct history {
	size_t cap;
	size_t max_rings;
	/* slots each ring's block has room for: they grow with the first lap (grow_rings()) */
	size_t cap_held;
	size_t buckets_held;
	int64_t *times;         /* sample times on the history's own clock (see history_add), slot = index % cap */
	uint64_t count;         /* samples added */
	int64_t last_mono_ms;   /* the newest sample's mono_ms */
	int64_t wall_offset_ms; /* its time_ms minus its time here: what the times are told with */
	/* tier 1 */
	size_t buckets;     /* 0: no tier 1 */
	size_t count_width; /* bytes of a bucket count: 1 or 2 */
	uint32_t count_max; /* a bucket holding this many samples is closed early */
	int64_t *minutes;   /* minute start times (as the times), slot = bucket index % buckets */
	uint64_t opened;    /* buckets opened; the one being filled is opened - 1 */
	uint32_t in_bucket; /* samples in the bucket being filled */
	struct ring *rings;
	size_t rings_end; /* rings at or past this position are unused */
	size_t rings_used;
	uint32_t *index; /* open addressing: ring position + 1, 0 = empty */
	size_t index_mask;
	uint64_t dropped;
	/*
	 * The ring (position + 1, 0: none) of each item of the sets numbered items_layout (0: not known):
	 * while a sample's names sit where they sat, its values go to their rings without a lookup.
	 */
	uint64_t items_layout;
	size_t items_count;
	uint32_t *item_ring;
};

static uint32_t
name_hash(const char *s)
{
	uint64_t h = fnv1a64_str(s);
	return (uint32_t)(h ^ (h >> 32));
}

/* the most samples a minute holds at INTERVAL_MS decides the width of a count */
static size_t
count_width_for(int64_t interval_ms)
{
	return interval_ms > 0 && HISTORY_BUCKET_MS / interval_ms <= UINT8_MAX ? 1 : 2;
}

size_t
history_buckets_for(int64_t span_ms, int64_t interval_ms)
{
	if (span_ms <= 0) {
		return 0;
	}
	/* a minute without a sample takes no bucket: samples further apart need fewer */
	int64_t step_ms = interval_ms > HISTORY_BUCKET_MS ? interval_ms : HISTORY_BUCKET_MS;
	/* whole steps back from the bucket being filled, which is partly in the span */
	uint64_t n = (uint64_t)((span_ms + step_ms - 1) / step_ms) + 1;
	return n > HISTORY_MAX_BUCKETS ? HISTORY_MAX_BUCKETS : (size_t)n;
}

uint64_t
history_bytes(uint64_t capacity, uint64_t buckets, int64_t interval_ms, uint64_t metrics)
{
	uint64_t per_metric = capacity * sizeof(float) + buckets * (3 * sizeof(float) + count_width_for(interval_ms)) +
			      HISTORY_RING_BYTES;
	return capacity * sizeof(int64_t) + buckets * sizeof(int64_t) + metrics * per_metric;
}

struct history *
history_create(size_t capacity, size_t buckets, int64_t interval_ms)
{
	if (capacity < 1) {
		capacity = 1;
	}
	if (capacity > HISTORY_MAX_CAPACITY) {
		capacity = HISTORY_MAX_CAPACITY;
	}
	if (buckets > HISTORY_MAX_BUCKETS) {
		buckets = HISTORY_MAX_BUCKETS;
	}
	struct history *h = xcalloc(1, sizeof(*h));
	h->cap = capacity;
	h->max_rings = HISTORY_MAX_METRICS;
	h->times = xcalloc(capacity, sizeof(*h->times));
	h->buckets = buckets;
	h->count_width = count_width_for(interval_ms);
	h->count_max = h->count_width == 1 ? UINT8_MAX : UINT16_MAX;
	h->minutes = buckets ? xcalloc(buckets, sizeof(*h->minutes)) : NULL;
	h->rings = xcalloc(h->max_rings, sizeof(*h->rings));
	size_t slots = 16;
	while (slots < 2 * h->max_rings) {
		slots *= 2;
	}
	h->index = xcalloc(slots, sizeof(*h->index));
	h->index_mask = slots - 1;
	h->cap_held = capacity < FIRST_SAMPLES_HELD ? capacity : FIRST_SAMPLES_HELD;
	h->buckets_held = buckets < FIRST_BUCKETS_HELD ? buckets : FIRST_BUCKETS_HELD;
	h->item_ring = xcalloc(h->max_rings, sizeof(*h->item_ring));
	return h;
}

void
history_destroy(struct history *h)
{
	if (!h) {
		return;
	}
	for (size_t i = 0; i < h->rings_end; i++) {
		free(h->rings[i].block);
	}
	free(h->rings);
	free(h->index);
	free(h->item_ring);
	free(h->times);
	free(h->minutes);
	free(h);
}

/* ---- a ring's block ---- */

/* bytes of tier 1, rounded up so tier 0 starts at a 4-byte boundary */
static size_t
tier1_bytes(const struct history *h)
{
	return (h->buckets_held * (3 * sizeof(float) + h->count_width) + 3) & ~(size_t)3;
}

static size_t
block_bytes(const struct history *h, bool wide)
{
	return tier1_bytes(h) + h->cap_held * (wide ? sizeof(float) : sizeof(int16_t));
}

static float *
mins_of(const struct history *h, const struct ring *r)
{
	(void)h;
	return (float *)r->block;
}

static float *
means_of(const struct history *h, const struct ring *r)
{
	return (float *)r->block + h->buckets_held;
}

static float *
maxs_of(const struct history *h, const struct ring *r)
{
	return (float *)r->block + 2 * h->buckets_held;
}

static unsigned char *
counts_of(const struct history *h, const struct ring *r)
{
	return r->block + 3 * h->buckets_held * sizeof(float);
}

static float *
wide_of(const struct history *h, const struct ring *r)
{
	return (float *)(r->block + tier1_bytes(h));
}

static int16_t *
narrow_of(const struct history *h, const struct ring *r)
{
	return (int16_t *)(r->block + tier1_bytes(h));
}

/* Gives every ring's block room for CAP_HELD samples and BUCKETS_HELD buckets, each part moved whole. */
static void
grow_rings(struct history *h, size_t cap_held, size_t buckets_held)
{
	const struct history was = *h; /* the old layout, for the accessors */
	h->cap_held = cap_held;
	h->buckets_held = buckets_held;
	for (size_t i = 0; i < h->rings_end; i++) {
		struct ring *r = &h->rings[i];
		if (!r->used) {
			continue;
		}
		struct ring moved = *r;
		moved.block = xrealloc(NULL, block_bytes(h, !r->scale), 1);
		memcpy(mins_of(h, &moved), mins_of(&was, r), was.buckets_held * sizeof(float));
		memcpy(means_of(h, &moved), means_of(&was, r), was.buckets_held * sizeof(float));
		memcpy(maxs_of(h, &moved), maxs_of(&was, r), was.buckets_held * sizeof(float));
		memcpy(counts_of(h, &moved), counts_of(&was, r), was.buckets_held * was.count_width);
		memcpy(narrow_of(h, &moved), narrow_of(&was, r), block_bytes(&was, !r->scale) - tier1_bytes(&was));
		free(r->block);
		r->block = moved.block;
	}
}

static uint32_t
bucket_count(const struct history *h, const struct ring *r, size_t slot)
{
	const unsigned char *c = counts_of(h, r);
	if (h->count_width == 1) {
		return c[slot];
	}
	uint16_t v;
	memcpy(&v, c + 2 * slot, sizeof(v));
	return v;
}

static void
set_bucket_count(const struct history *h, struct ring *r, size_t slot, uint32_t n)
{
	unsigned char *c = counts_of(h, r);
	if (h->count_width == 1) {
		c[slot] = (unsigned char)n;
	} else {
		uint16_t v = (uint16_t)n;
		memcpy(c + 2 * slot, &v, sizeof(v));
	}
}

/* ---- tier 0 values, narrow or wide ---- */

static float
narrow_value(int64_t steps, uint16_t scale)
{
	/* a correctly rounded division: the double nearest steps / scale, as a parser reads the decimal */
	return (float)((double)steps / scale);
}

/* V as whole steps of 1/SCALE, when they give back V's float exactly. */
static bool
steps_of(double v, uint16_t scale, int64_t *steps)
{
	double x = v * scale;
	if (!(fabs(x) < 1e15)) { /* NAN and infinities too */
		return false;
	}
	int64_t n = llround(x);
	if (narrow_value(n, scale) != (float)v) {
		return false;
	}
	*steps = n;
	return true;
}

static float
value_at(const struct history *h, const struct ring *r, size_t slot)
{
	if (!r->scale) {
		return wide_of(h, r)[slot];
	}
	int16_t k = narrow_of(h, r)[slot];
	return k == NARROW_ABSENT ? NAN : narrow_value(r->base + k, r->scale);
}

/* The first sample index whose slot holds one of R's values (the slot being written excluded). */
static uint64_t
first_kept(const struct history *h, const struct ring *r)
{
	uint64_t first = h->count + 1 > h->cap ? h->count + 1 - h->cap : 0;
	return r->born > first ? r->born : first;
}

/*
 * Writes R's kept values in steps of 1/SCALE (a multiple of the ring's
 * scale) around a new base that puts STEPS in reach too. False, touching
 * nothing, when they span more than the narrow range.
 */
static bool
recode(struct history *h, struct ring *r, uint16_t scale, int64_t steps)
{
	int16_t *k = narrow_of(h, r);
	int64_t f = scale / r->scale;
	int64_t lo = steps, hi = steps;
	for (uint64_t i = first_kept(h, r); i < h->count; i++) {
		int16_t v = k[i % h->cap];
		if (v != NARROW_ABSENT) {
			int64_t n = (r->base + v) * f;
			lo = n < lo ? n : lo;
			hi = n > hi ? n : hi;
		}
	}
	if (hi - lo > 2 * NARROW_MAX) {
		return false;
	}
	int64_t base = lo + (hi - lo) / 2;
	for (uint64_t i = first_kept(h, r); i < h->count; i++) {
		int16_t *v = &k[i % h->cap];
		if (*v != NARROW_ABSENT) {
			*v = (int16_t)((r->base + *v) * f - base);
		}
	}
	r->base = base;
	r->scale = scale;
	return true;
}

/* R's tier 0 as 32-bit floats from now on. */
static void
widen(struct history *h, struct ring *r)
{
	unsigned char *block = xrealloc(NULL, block_bytes(h, true), 1);
	memcpy(block, r->block, tier1_bytes(h));
	float *w = (float *)(block + tier1_bytes(h));
	for (uint64_t i = first_kept(h, r); i < h->count; i++) {
		w[i % h->cap] = value_at(h, r, (size_t)(i % h->cap));
	}
	free(r->block);
	r->block = block;
	r->scale = 0;
}

/* Writes V (NAN: absent) in R's tier 0 SLOT, the slot of sample h->count. */
static void
put_value(struct history *h, struct ring *r, size_t slot, double v)
{
	if (r->scale && isnan(v)) {
		narrow_of(h, r)[slot] = NARROW_ABSENT;
		return;
	}
	int64_t n;
	if (r->scale && steps_of(v, r->scale, &n) && n - r->base >= -NARROW_MAX && n - r->base <= NARROW_MAX) {
		narrow_of(h, r)[slot] = (int16_t)(n - r->base);
		return;
	}
	for (uint16_t scale = r->scale; scale && scale <= SCALE_FINEST; scale *= 10) {
		if (steps_of(v, scale, &n) && recode(h, r, scale, n)) {
			narrow_of(h, r)[slot] = (int16_t)(n - r->base);
			return;
		}
	}
	if (r->scale) {
		widen(h, r);
	}
	wide_of(h, r)[slot] = (float)v;
}

/* Empties R's bucket being filled. */
static void
open_bucket(struct ring *r)
{
	r->live_count = 0;
	r->sum = 0;
}

/* Writes R's bucket being filled, bucket index K, to its slot in the block (count 0: the metric was absent). */
static void
close_bucket(struct history *h, struct ring *r, uint64_t k)
{
	size_t slot = (size_t)(k % h->buckets);
	if (r->live_count) {
		mins_of(h, r)[slot] = r->live_min;
		means_of(h, r)[slot] = (float)(r->sum / r->live_count);
		maxs_of(h, r)[slot] = r->live_max;
	}
	set_bucket_count(h, r, slot, r->live_count);
}

/* Adds V to R's bucket being filled. */
static void
bucket_add(struct history *h, struct ring *r, double v)
{
	float f = (float)v;
	if (r->live_count == 0 || f < r->live_min) {
		r->live_min = f;
	}
	if (r->live_count == 0 || f > r->live_max) {
		r->live_max = f;
	}
	r->sum += v;
	r->live_count++;
	r->last_bucket = (uint32_t)(h->opened - 1);
}

/* ---- the ring index ---- */

static struct ring *
find_ring(const struct history *h, const char *name)
{
	for (size_t i = name_hash(name) & h->index_mask;; i = (i + 1) & h->index_mask) {
		uint32_t v = h->index[i];
		if (v == 0) {
			return NULL;
		}
		struct ring *r = &h->rings[v - 1];
		if (strcmp(r->name, name) == 0) {
			return r;
		}
	}
}

static void
index_insert(struct history *h, size_t pos)
{
	size_t i = name_hash(h->rings[pos].name) & h->index_mask;
	while (h->index[i] != 0) {
		i = (i + 1) & h->index_mask;
	}
	h->index[i] = (uint32_t)(pos + 1);
}

static struct ring *
new_ring(struct history *h, const char *name)
{
	if (h->rings_used == h->max_rings) {
		return NULL;
	}
	size_t pos = 0;
	while (h->rings[pos].used) {
		pos++;
	}
	struct ring *r = &h->rings[pos];
	/* not zeroed: pages are touched only as samples arrive; narrow until a value says otherwise */
	r->block = xrealloc(NULL, block_bytes(h, false), 1);
	r->base = 0;
	r->scale = 1;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->born = h->count;
	r->last_seen = h->count;
	r->born_bucket = (uint32_t)(h->opened - 1);
	r->last_bucket = (uint32_t)(h->opened - 1);
	r->used = true;
	if (h->buckets) {
		open_bucket(r);
	}
	h->rings_used++;
	if (pos >= h->rings_end) {
		h->rings_end = pos + 1;
	}
	index_insert(h, pos);
	return r;
}

/* A ring holds nothing once its metric was absent for a whole tier 0 and a whole tier 1. */
static bool
ring_empty(const struct history *h, const struct ring *r)
{
	return h->count - r->last_seen > h->cap && h->opened - r->last_bucket > h->buckets;
}

static void
evict(struct history *h)
{
	bool freed = false;
	for (size_t i = 0; i < h->rings_end; i++) {
		struct ring *r = &h->rings[i];
		if (r->used && ring_empty(h, r)) {
			free(r->block);
			memset(r, 0, sizeof(*r));
			h->rings_used--;
			freed = true;
		}
	}
	if (freed) {
		h->items_layout = 0; /* a freed place may take another name */
		while (h->rings_end > 0 && !h->rings[h->rings_end - 1].used) {
			h->rings_end--;
		}
		memset(h->index, 0, (h->index_mask + 1) * sizeof(*h->index));
		for (size_t i = 0; i < h->rings_end; i++) {
			if (h->rings[i].used) {
				index_insert(h, i);
			}
		}
	}
}

static int64_t
minute_of(int64_t time_ms)
{
	int64_t m = time_ms / HISTORY_BUCKET_MS;
	return (time_ms % HISTORY_BUCKET_MS < 0) ? m - 1 : m; /* floor, also before 1970 */
}

/*
 * Opens the next bucket when T (here) is in a later wall clock minute than
 * the bucket being filled starts in (told as now), or that bucket cannot
 * count one more sample. After a step back the bucket being filled takes
 * the samples until the clock is past its start: bucket starts never go
 * back.
 */
static void
advance_minute(struct history *h, int64_t t)
{
	int64_t start = minute_of(t + h->wall_offset_ms) * HISTORY_BUCKET_MS - h->wall_offset_ms;
	if (h->opened > 0) {
		int64_t filling = h->minutes[(h->opened - 1) % h->buckets];
		if (start <= filling && h->in_bucket < h->count_max) {
			h->in_bucket++;
			return;
		}
		start = start > filling ? start : filling; /* a full bucket: the next has its start */
	}
	for (size_t i = 0; h->opened > 0 && i < h->rings_end; i++) {
		if (h->rings[i].used) {
			close_bucket(h, &h->rings[i], h->opened - 1);
		}
	}
	size_t slot = (size_t)(h->opened % h->buckets);
	if (slot == h->buckets_held) { /* closed above within the blocks, the next bucket past them */
		grow_rings(h, h->cap_held, 2 * slot < h->buckets ? 2 * slot : h->buckets);
	}
	h->opened++;
	h->in_bucket = 1;
	h->minutes[(h->opened - 1) % h->buckets] = start;
	for (size_t i = 0; i < h->rings_end; i++) {
		if (h->rings[i].used) {
			open_bucket(&h->rings[i]);
		}
	}
}

/*
 * The history's clock moves with the samples' mono_ms and never back, from
 * the first sample's time_ms; the offset to the newest sample's wall clock
 * is kept apart. A step of the wall clock changes only the offset: every
 * point keeps its place and its spacing, and is told at the wall clock
 * time it has now (history.h).
 */
static int64_t
history_time(struct history *h, const struct sample *s)
{
	int64_t t = s->time_ms;
	if (h->count > 0) {
		int64_t ran = s->mono_ms - h->last_mono_ms;
		t = h->times[(h->count - 1) % h->cap] + (ran > 0 ? ran : 0);
	}
	h->last_mono_ms = s->mono_ms;
	h->wall_offset_ms = s->time_ms - t;
	return t;
}

void
history_add(struct history *h, const struct sample *s)
{
	size_t slot = (size_t)(h->count % h->cap);
	if (slot == h->cap_held) { /* the first lap goes on past the blocks' end */
		grow_rings(h, 2 * slot < h->cap ? 2 * slot : h->cap, h->buckets_held);
	}
	int64_t t = history_time(h, s);
	h->times[slot] = t;
	if (h->buckets) {
		advance_minute(h, t);
	}
	const struct metric_set *set = &s->metrics;
	bool known = set->layout != 0 && set->layout == h->items_layout && set->count <= h->items_count;
	for (size_t i = 0; i < set->count; i++) {
		const struct metric *m = &set->items[i];
		struct ring *r = known && h->item_ring[i] ? &h->rings[h->item_ring[i] - 1] : NULL;
		if (!r) {
			r = find_ring(h, m->name);
			r = r ? r : new_ring(h, m->name);
			h->item_ring[i] = r ? (uint32_t)(r - h->rings) + 1 : 0;
			if (!r) {
				h->dropped++;
				continue;
			}
		}
		put_value(h, r, slot, m->value);
		r->last_seen = h->count;
		if (h->buckets && !isnan(m->value)) {
			bucket_add(h, r, m->value);
		}
	}
	if (!known) {
		h->items_layout = set->layout;
		h->items_count = set->count;
	}
	/* the rings this sample has no value for: absent in its slot */
	for (size_t i = 0; i < h->rings_end; i++) {
		struct ring *r = &h->rings[i];
		if (r->used && r->last_seen != h->count) {
			put_value(h, r, slot, NAN);
		}
	}
	h->count++;
	evict(h);
}

double
history_float_value(float f)
{
	if (!isfinite(f)) {
		return (double)f;
	}
	/* most values are whole numbers (mW, MHz, %) */
	if (fabsf(f) < 1e7f && f == truncf(f)) {
		return (double)f;
	}
	char buf[32];
	snprintf(buf, sizeof(buf), "%.7g", (double)f);
	double d = strtod(buf, NULL);
	if ((float)d == f) {
		return d;
	}
	snprintf(buf, sizeof(buf), "%.9g", (double)f);
	return strtod(buf, NULL);
}

int
history_window(const struct history *h, const char *name, int64_t window_ms, struct history_point **out, size_t *count)
{
	const struct ring *r = find_ring(h, name);
	if (!r) {
		return -ENOENT;
	}
	uint64_t first = h->count > h->cap ? h->count - h->cap : 0;
	if (r->born > first) {
		first = r->born;
	}
	struct history_point *pts = NULL;
	size_t n = 0;
	if (h->count > first) {
		pts = xrealloc(NULL, (size_t)(h->count - first), sizeof(*pts));
		int64_t newest = h->times[(h->count - 1) % h->cap];
		for (uint64_t k = first; k < h->count; k++) {
			size_t slot = (size_t)(k % h->cap);
			float v = value_at(h, r, slot);
			if (isnan(v)) {
				continue;
			}
			int64_t t = h->times[slot];
			if (window_ms > 0 && t <= newest - window_ms) {
				continue;
			}
			pts[n].time_ms = t + h->wall_offset_ms;
			pts[n].value = history_float_value(v);
			n++;
		}
	}
	if (n == 0) {
		free(pts);
		pts = NULL;
	}
	*out = pts;
	*count = n;
	return 0;
}

int
history_window_minutes(const struct history *h, const char *name, int64_t window_ms, struct history_bucket **out,
		       size_t *count)
{
	const struct ring *r = find_ring(h, name);
	if (!r || h->buckets == 0) {
		return -ENOENT;
	}
	uint64_t first = h->opened > h->buckets ? h->opened - h->buckets : 0;
	if (r->born_bucket > first) {
		first = r->born_bucket;
	}
	struct history_bucket *b = NULL;
	size_t n = 0;
	if (h->opened > first) {
		b = xrealloc(NULL, (size_t)(h->opened - first), sizeof(*b));
		int64_t newest = h->times[(h->count - 1) % h->cap];
		for (uint64_t k = first; k < h->opened; k++) {
			size_t slot = (size_t)(k % h->buckets);
			bool live = k == h->opened - 1; /* the bucket being filled is in the ring itself */
			uint32_t c = live ? r->live_count : bucket_count(h, r, slot);
			int64_t t = h->minutes[slot];
			if (c == 0 || (window_ms > 0 && t + HISTORY_BUCKET_MS <= newest - window_ms)) {
				continue;
			}
			b[n] = (struct history_bucket){
				.time_ms = t + h->wall_offset_ms,
				.min = history_float_value(live ? r->live_min : mins_of(h, r)[slot]),
				.mean = history_float_value(live ? (float)(r->sum / c) : means_of(h, r)[slot]),
				.max = history_float_value(live ? r->live_max : maxs_of(h, r)[slot]),
				.count = c,
			};
			n++;
		}
	}
	if (n == 0) {
		free(b);
		b = NULL;
	}
	*out = b;
	*count = n;
	return 0;
}

size_t
history_capacity(const struct history *h)
{
	return h->cap;
}

size_t
history_bucket_count(const struct history *h)
{
	return h->buckets;
}

uint64_t
history_held_bytes(const struct history *h)
{
	uint64_t n = (h->cap + h->buckets) * sizeof(int64_t);
	for (size_t i = 0; i < h->rings_end; i++) {
		const struct ring *r = &h->rings[i];
		if (r->used) {
			n += block_bytes(h, !r->scale) + HISTORY_RING_BYTES;
		}
	}
	return n;
}

size_t
history_narrow_count(const struct history *h)
{
	size_t n = 0;
	for (size_t i = 0; i < h->rings_end; i++) {
		n += h->rings[i].used && h->rings[i].scale;
	}
	return n;
}

size_t
history_metric_count(const struct history *h)
{
	return h->rings_used;
}

size_t
history_max_metrics(const struct history *h)
{
	return h->max_rings;
}

uint64_t
history_dropped(const struct history *h)
{
	return h->dropped;
}
