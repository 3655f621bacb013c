/*
 * The spool: a bounded memory ring and the public calls of spool.h. The
 * ring is the truth; spool_file.c mirrors it on spool_sync() into an
 * append-only file of CRC-framed records, read back on open.
 */
#include "spool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "spool_priv.h"
#include "xalloc.h"

/* ---- the memory ring ---- */

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
	struct slot *s = slot_at(sp, 0);
	if (s->acked) {
		sp->n_acked--;
	}
	free(s->rec.topic);
	memset(s, 0, sizeof(*s));
	sp->head = (sp->head + 1) % sp->cap;
	sp->count--;
	if (sp->next_off > 0) {
		sp->next_off--;
	}
}

/* The head is never acknowledged (acknowledged heads are popped at once). */
static void
drop_head(struct spool *sp)
{
	unaccount(sp, slot_at(sp, 0));
	pop_head(sp);
	sp->st.dropped++;
}

/* Drops the oldest records until one of DISK_BYTES fits the ring and the file cap. */
static void
make_room(struct spool *sp, uint32_t disk_bytes, bool to_file)
{
	while (sp->count > 0 && (sp->count == sp->cap ||
				 (to_file && sp->live_file_bytes + sp->pending_bytes + disk_bytes > sp->live_cap))) {
		drop_head(sp);
	}
}

/* Takes ownership of BLOCK (topic, NUL, payload). */
static void
ring_append(struct spool *sp, uint64_t id, char *block, size_t topic_len, size_t payload_len, int qos, bool retain,
	    enum disk_state disk)
{
	uint32_t disk_bytes = (uint32_t)(HDR_BYTES + DATA_FIXED_BYTES + topic_len + payload_len);
	make_room(sp, disk_bytes, disk != DISK_NONE);
	struct slot *s = slot_at(sp, sp->count);
	s->rec.id = id;
	s->rec.topic = block;
	s->rec.payload = block + topic_len + 1;
	s->rec.payload_len = payload_len;
	s->rec.qos = qos;
	s->rec.retain = retain;
	s->disk_bytes = disk_bytes;
	s->disk = (uint8_t)disk;
	s->acked = false;
	sp->count++;
	if (disk == DISK_PENDING) {
		sp->pending_bytes += disk_bytes;
	} else if (disk == DISK_WRITTEN) {
		sp->live_file_bytes += disk_bytes;
	}
}

/* Aborts when out of memory (xalloc.h). Static, so spool_push() inlines it. */
static char *
copy_block(const void *topic, size_t topic_len, const void *payload, size_t payload_len)
{
	char *block = xmalloc(topic_len + 1 + payload_len);
	memcpy(block, topic, topic_len);
	block[topic_len] = '\0';
	if (payload_len > 0) {
		memcpy(block + topic_len + 1, payload, payload_len);
	}
	return block;
}

int
spool_ring_load(struct spool *sp, uint64_t id, const void *topic, size_t topic_len, const void *payload,
		size_t payload_len, int qos, bool retain)
{
	char *block = copy_block(topic, topic_len, payload, payload_len);
	ring_append(sp, id, block, topic_len, payload_len, qos, retain, DISK_WRITTEN);
	return 0;
}

/* ---- the public interface ---- */

static void
destroy(struct spool *sp)
{
	if (sp->slots) {
		while (sp->count > 0) {
			pop_head(sp);
		}
		free(sp->slots);
	}
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
	sp->next_id = 1;
	sp->cap = opts->max_records;
	sp->slots = xcalloc(sp->cap, sizeof(*sp->slots));
	if (opts->path && opts->path[0]) {
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
	char *block = copy_block(topic, topic_len, payload, len);
	enum disk_state disk = DISK_NONE;
	if (sp->fd >= 0 && HDR_BYTES + DATA_FIXED_BYTES + topic_len + len <= sp->live_cap && sp->next_id <= ID_MAX) {
		disk = DISK_PENDING;
	}
	ring_append(sp, sp->next_id++, block, topic_len, len, qos, retain, disk);
	sp->st.pushed++;
	return 0;
}

const struct spool_record *
spool_peek_next(struct spool *sp)
{
	if (!sp) {
		return NULL;
	}
	while (sp->next_off < sp->count) {
		struct slot *s = slot_at(sp, sp->next_off++);
		if (!s->acked) {
			return &s->rec;
		}
	}
	return NULL;
}

void
spool_ack(struct spool *sp, uint64_t id)
{
	if (!sp || sp->count == 0) {
		return;
	}
	/* Ids in the ring are strictly increasing: binary search. */
	size_t lo = 0, hi = sp->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (slot_at(sp, mid)->rec.id < id) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (lo == sp->count) {
		return;
	}
	struct slot *s = slot_at(sp, lo);
	if (s->rec.id != id || s->acked) {
		return;
	}
	s->acked = true;
	sp->n_acked++;
	unaccount(sp, s);
	while (sp->count > 0 && slot_at(sp, 0)->acked) {
		pop_head(sp);
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
	out->depth = sp->count - sp->n_acked;
	out->file_bytes = sp->fd >= 0 ? sp->file_bytes : 0;
}
