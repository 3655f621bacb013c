/*
 * The spool: bounded memory rings and the public calls of spool.h.
 * Without spill, the head ring is the whole queue and spool_file.c mirrors
 * it into an append-only file of CRC-framed records. With spill, memory
 * holds only the head (next to deliver) and the tail (newest, until
 * written); the records between them live in the file alone (the run) and
 * spool_read.c reads them back in order as the head drains.
 */
#include "spool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "spool_priv.h"
#include "xalloc.h"

/* ---- the rings ---- */

static struct slot *
ring_push_back(struct ring *r)
{
	struct slot *s = ring_at(r, r->count);
	r->count++;
	return s;
}

/* Forgets the front slot; its block now belongs to whoever copied the slot (or was freed). */
static void
ring_pop_front(struct ring *r)
{
	memset(ring_at(r, 0), 0, sizeof(struct slot));
	r->start = (r->start + 1) % r->cap;
	r->count--;
}

static size_t
block_bytes(const struct slot *s)
{
	return strlen(s->rec.topic) + 1 + s->rec.payload_len;
}

static void
free_block(struct spool *sp, struct slot *s)
{
	sp->st.memory_bytes -= block_bytes(s);
	free(s->rec.topic);
}

/* A record stops being live: take it out of the file byte counts. */
static void
unaccount(struct spool *sp, const struct slot *s)
{
	if (s->disk == DISK_PENDING) {
		sp->pending_bytes -= s->disk_bytes;
	} else if (s->disk == DISK_WRITTEN) {
		sp->live_file_bytes -= s->disk_bytes;
	}
}

static void
pop_head(struct spool *sp)
{
	struct slot *s = ring_at(&sp->head, 0);
	if (s->acked) {
		sp->n_acked--;
	}
	free_block(sp, s);
	ring_pop_front(&sp->head);
	if (sp->next_off > 0) {
		sp->next_off--;
	}
}

/* Acknowledged records at the front are done: the head is never acknowledged. */
static void
pop_acked(struct spool *sp)
{
	while (sp->head.count > 0 && ring_at(&sp->head, 0)->acked) {
		pop_head(sp);
	}
}

static void
drop_head(struct spool *sp)
{
	unaccount(sp, ring_at(&sp->head, 0));
	pop_head(sp);
	sp->st.dropped++;
	/* records acknowledged out of order behind it were waiting only for it */
	pop_acked(sp);
}

static void
drop_tail_front(struct spool *sp)
{
	struct slot *s = ring_at(&sp->tail, 0);
	unaccount(sp, s);
	free_block(sp, s);
	ring_pop_front(&sp->tail);
	sp->st.dropped++;
}

/* The tail's oldest record, written, joins the end of the run: its memory is freed. */
static void
spill_tail_front(struct spool *sp)
{
	struct slot *s = ring_at(&sp->tail, 0);
	if (sp->run_count == 0) {
		sp->run_off = s->file_off;
		sp->run_first_id = s->rec.id;
	}
	sp->run_count++;
	sp->run_bytes += s->disk_bytes;
	free_block(sp, s);
	ring_pop_front(&sp->tail);
}

static bool
tail_front_written(const struct spool *sp)
{
	return sp->tail.count > 0 && ring_at(&sp->tail, 0)->disk == DISK_WRITTEN;
}

/* With the run empty, the tail follows the head directly: move it over while the head has room. */
static void
settle(struct spool *sp)
{
	while (sp->run_count == 0 && sp->tail.count > 0 && sp->head.count < sp->head.cap) {
		*ring_push_back(&sp->head) = *ring_at(&sp->tail, 0);
		ring_pop_front(&sp->tail);
	}
	if (sp->run_count == 0 && sp->rd.buf) {
		spool_reader_free(&sp->rd);
	}
}

/* Without spill: drops the oldest records until one of DISK_BYTES fits the ring and the file cap. */
static void
make_room(struct spool *sp, uint32_t disk_bytes, bool to_file)
{
	while (sp->head.count > 0 &&
	       (sp->head.count == sp->head.cap ||
		(to_file && sp->live_file_bytes + sp->pending_bytes + disk_bytes > sp->live_cap))) {
		drop_head(sp);
	}
}

/*
 * The file refuses writes (a full disk): the tail's records wait in memory
 * for a write that may not come. While the run waits in the file for the
 * head, they yield their memory to it, oldest first; otherwise the run could
 * never be read back and sending would stop for as long as the disk is full.
 */
static bool
tail_must_yield(const struct spool *sp)
{
	return sp->fail_streak > 0 && sp->run_count > 0 && sp->tail.count > 0 && !tail_front_written(sp);
}

/*
 * With spill: frees one memory slot. A written tail record moves to the
 * run; otherwise (the file is behind or failing) the oldest record in
 * memory is dropped, the tail's first when it must yield to the run. The
 * file cap is applied by spool_sync(), which may read the file to drop from
 * the run.
 */
static void
make_memory_room(struct spool *sp)
{
	while (mem_count(sp) >= sp->mem_max) {
		if (tail_front_written(sp)) {
			spill_tail_front(sp);
		} else if (tail_must_yield(sp)) {
			drop_tail_front(sp);
		} else if (sp->head.count > 0) {
			drop_head(sp);
		} else {
			drop_tail_front(sp);
		}
	}
}

static void
fill_slot(struct slot *s, uint64_t id, char *block, size_t topic_len, size_t payload_len, int qos, bool retain,
	  enum disk_state disk)
{
	s->rec.id = id;
	s->rec.topic = block;
	s->rec.payload = block + topic_len + 1;
	s->rec.payload_len = payload_len;
	s->rec.qos = qos;
	s->rec.retain = retain;
	s->disk_bytes = (uint32_t)(HDR_BYTES + DATA_FIXED_BYTES + topic_len + payload_len);
	s->disk = (uint8_t)disk;
	s->acked = false;
	s->file_off = 0;
}

/* Aborts when out of memory (xalloc.h). */
static char *
copy_block(struct spool *sp, const void *topic, size_t topic_len, const void *payload, size_t payload_len)
{
	char *block = xmalloc(topic_len + 1 + payload_len);
	memcpy(block, topic, topic_len);
	block[topic_len] = '\0';
	if (payload_len > 0) {
		memcpy(block + topic_len + 1, payload, payload_len);
	}
	sp->st.memory_bytes += topic_len + 1 + payload_len;
	return block;
}

/*
 * Appends a copy of a record read from the file at OFF (DISK_WRITTEN) to
 * the head, which has room (the caller checked).
 */
static void
spool_head_load(struct spool *sp, const struct view *v, uint64_t off)
{
	char *block = copy_block(sp, v->topic, v->topic_len, v->payload, v->payload_len);
	struct slot *s = ring_push_back(&sp->head);
	fill_slot(s, v->value, block, v->topic_len, v->payload_len, v->qos, v->retain, DISK_WRITTEN);
	s->file_off = off;
}

void
spool_load_record(struct spool *sp, const struct view *v, uint64_t off)
{
	if (!sp->spill) {
		make_room(sp, v->rec_bytes, true);
	} else if (sp->run_count > 0 || sp->head.count == sp->head.cap) {
		if (sp->run_count == 0) {
			sp->run_off = off;
			sp->run_first_id = v->value;
		}
		sp->run_count++;
		sp->run_bytes += v->rec_bytes;
		sp->live_file_bytes += v->rec_bytes;
		return;
	}
	spool_head_load(sp, v, off);
	sp->live_file_bytes += v->rec_bytes;
}

uint64_t
spool_marker(const struct spool *sp)
{
	uint64_t first = sp->next_id;
	if (sp->head.count > 0) {
		first = ring_at(&sp->head, 0)->rec.id;
	} else if (sp->run_count > 0) {
		first = sp->run_first_id;
	} else if (sp->tail.count > 0) {
		first = ring_at(&sp->tail, 0)->rec.id;
	}
	uint64_t marker = first - 1;
	/* Ids above ID_MAX are never written, so the clamp hides nothing live. */
	return marker < ID_MAX ? marker : ID_MAX;
}

bool
spool_drop_oldest(struct spool *sp)
{
	if (sp->head.count > 0) {
		drop_head(sp);
		return true;
	}
	if (sp->run_count > 0) {
		struct view v;
		uint64_t off;
		if (spool_run_next(sp, &sp->rd, &v, &off)) {
			sp->live_file_bytes -= v.rec_bytes;
			sp->st.dropped++;
		}
		settle(sp);
		return true;
	}
	if (sp->tail.count > 0) {
		drop_tail_front(sp);
		return true;
	}
	return false;
}

/* Spill mode: brings the next records into the head, from the run, or from the tail once the run is empty. */
static void
refill(struct spool *sp)
{
	while (sp->head.count < sp->head.cap && sp->run_count > 0) {
		while (mem_count(sp) >= sp->mem_max && tail_front_written(sp)) {
			spill_tail_front(sp);
		}
		while (mem_count(sp) >= sp->mem_max && tail_must_yield(sp)) {
			drop_tail_front(sp);
		}
		if (mem_count(sp) >= sp->mem_max) {
			break; /* memory holds records not written yet: the next sync frees it */
		}
		struct view v;
		uint64_t off;
		if (spool_run_next(sp, &sp->rd, &v, &off)) {
			spool_head_load(sp, &v, off);
		}
	}
	settle(sp);
}

/* ---- the public interface ---- */

static void
destroy(struct spool *sp)
{
	if (sp->head.slots) {
		while (sp->head.count > 0) {
			pop_head(sp);
		}
	}
	while (sp->tail.count > 0) {
		free_block(sp, ring_at(&sp->tail, 0));
		ring_pop_front(&sp->tail);
	}
	free(sp->head.slots);
	free(sp->tail.slots);
	spool_reader_free(&sp->rd);
	if (sp->fd >= 0) {
		close(sp->fd);
	}
	free(sp->wbuf);
	free(sp->path);
	free(sp->tmp_path);
	free(sp);
}

int
spool_open(const struct spool_options *opts, struct spool **out)
{
	if (!opts || !out || opts->max_records == 0) {
		return -EINVAL;
	}
	struct spool *sp = xcalloc(1, sizeof(*sp));
	sp->fd = -1;
	sp->rd.fd = -1;
	sp->next_id = 1;
	bool file = opts->path && opts->path[0];
	sp->spill = file && opts->spill;
	sp->mem_max = opts->max_records;
	sp->head.cap = opts->max_records;
	if (sp->spill) {
		/* half for the head (next to send), the rest for the newest until they are written */
		sp->mem_max = opts->max_records < 2 ? 2 : opts->max_records;
		sp->head.cap = sp->mem_max / 2;
		sp->tail.cap = sp->mem_max;
		sp->tail.slots = xcalloc(sp->tail.cap, sizeof(*sp->tail.slots));
	}
	sp->head.slots = xcalloc(sp->head.cap, sizeof(*sp->head.slots));
	if (file) {
		int ret = spool_file_open(sp, opts);
		if (ret < 0) {
			destroy(sp);
			return ret;
		}
	}
	*out = sp;
	return 0;
}

void
spool_close(struct spool *sp)
{
	if (!sp) {
		return;
	}
	if (sp->fd >= 0) {
		/* One last attempt, whatever the back-off says. */
		(void)spool_file_sync(sp);
	}
	destroy(sp);
}

int
spool_push(struct spool *sp, const char *topic, const void *payload, size_t len, int qos, bool retain)
{
	if (!sp || !topic || (!payload && len > 0) || qos < 0 || qos > 2) {
		return -EINVAL;
	}
	size_t topic_len = strnlen(topic, MAX_TOPIC_BYTES + 1);
	if (topic_len == 0 || topic_len > MAX_TOPIC_BYTES) {
		return -EINVAL;
	}
	if (len > SPOOL_MAX_PAYLOAD_BYTES) {
		return -EMSGSIZE;
	}
	uint32_t disk_bytes = (uint32_t)(HDR_BYTES + DATA_FIXED_BYTES + topic_len + len);
	enum disk_state disk = DISK_NONE;
	if (sp->fd >= 0 && disk_bytes <= sp->live_cap && sp->next_id <= ID_MAX) {
		disk = DISK_PENDING;
	}
	struct ring *to = &sp->head;
	if (sp->spill) {
		make_memory_room(sp);
		settle(sp);
		if (sp->run_count > 0 || sp->tail.count > 0 || sp->head.count == sp->head.cap) {
			to = &sp->tail;
		}
	} else {
		make_room(sp, disk_bytes, disk != DISK_NONE);
	}
	char *block = copy_block(sp, topic, topic_len, payload, len);
	fill_slot(ring_push_back(to), sp->next_id++, block, topic_len, len, qos, retain, disk);
	if (disk == DISK_PENDING) {
		sp->pending_bytes += disk_bytes;
	}
	sp->st.pushed++;
	return 0;
}

const struct spool_record *
spool_peek_next(struct spool *sp)
{
	if (!sp) {
		return NULL;
	}
	for (;;) {
		while (sp->next_off < sp->head.count) {
			struct slot *s = ring_at(&sp->head, sp->next_off++);
			if (!s->acked) {
				return &s->rec;
			}
		}
		size_t before = sp->head.count;
		if (sp->spill) {
			refill(sp);
		}
		if (sp->head.count == before) {
			return NULL;
		}
	}
}

void
spool_ack(struct spool *sp, uint64_t id)
{
	if (!sp || sp->head.count == 0) {
		return;
	}
	/* Ids in the head are strictly increasing, and only the head is handed out: binary search. */
	size_t lo = 0, hi = sp->head.count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ring_at(&sp->head, mid)->rec.id < id) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (lo == sp->head.count) {
		return;
	}
	struct slot *s = ring_at(&sp->head, lo);
	if (s->rec.id != id || s->acked) {
		return;
	}
	s->acked = true;
	sp->n_acked++;
	unaccount(sp, s);
	pop_acked(sp);
	if (sp->spill) {
		settle(sp);
	}
}

void
spool_rewind(struct spool *sp)
{
	if (sp) {
		sp->next_off = 0;
	}
}

int
spool_sync(struct spool *sp)
{
	if (!sp || sp->fd < 0) {
		return 0;
	}
	if (sp->retry_at_ms != 0 && monotonic_ms() < sp->retry_at_ms) {
		return sp->last_err;
	}
	return spool_file_sync(sp);
}

void
spool_get_stats(const struct spool *sp, struct spool_stats *out)
{
	if (!sp || !out) {
		return;
	}
	*out = sp->st;
	out->depth = sp->head.count - sp->n_acked + sp->run_count + sp->tail.count;
	out->file_bytes = sp->fd >= 0 ? sp->file_bytes : 0;
	out->memory_records = mem_count(sp);
}
