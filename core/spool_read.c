/*
 * Reading the spool's file: the scan on open (with recovery of damaged
 * regions, rules in spool.h) and, in spill mode, the run read back in
 * order as the head drains. Writing is in spool_file.c.
 */
#include "spool_priv.h"
#include "xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define MAGIC_BYTE0 0xFEu
#define MAX_BODY_BYTES (DATA_FIXED_BYTES + MAX_TOPIC_BYTES + SPOOL_MAX_PAYLOAD_BYTES)

static uint16_t
get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t
get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t
get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | ((uint64_t)get_le32(p + 4) << 32);
}

void
spool_reader_free(struct reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->cap = 0;
	r->len = 0;
	r->start = 0;
}

/* [off, off + n) from the file, or NULL if the file ends (or fails) first. */
static const uint8_t *
reader_get(struct reader *r, uint64_t off, size_t n)
{
	if (off >= r->start && off - r->start <= r->len && n <= r->len - (off - r->start)) {
		return r->buf + (off - r->start);
	}
	if (off > r->size || n > r->size - off) {
		return NULL;
	}
	size_t want = n > IO_CHUNK_BYTES ? n : IO_CHUNK_BYTES;
	if (want > r->size - off) {
		want = (size_t)(r->size - off);
	}
	if (want > r->cap) {
		r->buf = xrealloc(r->buf, want, 1);
		r->cap = want;
	}
	size_t got = 0;
	while (got < want) {
		ssize_t k = pread(r->fd, r->buf + got, want - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR) {
			continue;
		}
		if (k <= 0) {
			/* An unreadable rest of the file is treated like a truncated one. */
			break;
		}
		got += (size_t)k;
	}
	r->start = off;
	r->len = got;
	return got >= n ? r->buf : NULL;
}

/* The next offset at or after FROM holding the magic's first byte, or the file size. */
static uint64_t
next_candidate(struct reader *r, uint64_t from)
{
	while (from < r->size) {
		size_t n = r->size - from < IO_CHUNK_BYTES ? (size_t)(r->size - from) : IO_CHUNK_BYTES;
		const uint8_t *p = reader_get(r, from, n);
		if (!p) {
			return r->size;
		}
		const uint8_t *hit = memchr(p, MAGIC_BYTE0, n);
		if (hit) {
			return from + (uint64_t)(hit - p);
		}
		from += n;
	}
	return r->size;
}

/* Decodes a valid record starting exactly at OFF; false when there is none. */
static bool
decode_at(struct reader *r, uint64_t off, uint64_t prev_id, struct view *v)
{
	const uint8_t *h = reader_get(r, off, HDR_BYTES);
	if (!h) {
		return false;
	}
	uint8_t hdr[HDR_BYTES];
	memcpy(hdr, h, sizeof(hdr)); /* the body read may move the window */
	uint32_t magic = get_le32(hdr), len = get_le32(hdr + 4);
	if (magic == MAGIC_ACK) {
		if (len != ACK_BODY_BYTES) {
			return false;
		}
	} else if (magic != MAGIC_DATA || len < DATA_FIXED_BYTES + 1 || len > MAX_BODY_BYTES) {
		return false;
	}
	const uint8_t *b = reader_get(r, off + HDR_BYTES, len);
	if (!b || frame_crc(hdr, b, len) != get_le32(hdr + 8)) {
		return false;
	}
	v->rec_bytes = HDR_BYTES + len;
	v->value = get_le64(b);
	v->is_ack = magic == MAGIC_ACK;
	if (v->is_ack) {
		return v->value <= ID_MAX;
	}
	/* A matching CRC with impossible fields is a damaged (or forged) record too. */
	size_t topic_len = get_le16(b + 10);
	if (v->value == 0 || v->value > ID_MAX || v->value <= prev_id || b[8] > 2 || b[9] > 1 || topic_len == 0 ||
	    topic_len > len - DATA_FIXED_BYTES || memchr(b + DATA_FIXED_BYTES, '\0', topic_len)) {
		return false;
	}
	v->qos = b[8];
	v->retain = b[9] == 1;
	v->topic = b + DATA_FIXED_BYTES;
	v->topic_len = topic_len;
	v->payload = v->topic + topic_len;
	v->payload_len = len - DATA_FIXED_BYTES - topic_len;
	return v->payload_len <= SPOOL_MAX_PAYLOAD_BYTES;
}

/* ---- the scan on open ---- */

enum pass {
	PASS_MARKER, /* the highest ack marker and data id */
	PASS_SIZE,   /* spill mode: the live bytes, to drop the oldest beyond the file cap */
	PASS_LOAD,
};

struct load {
	enum pass pass;
	uint64_t ack_max, max_id;
	uint64_t live_bytes; /* PASS_SIZE: what the live records need; PASS_LOAD: what is left of it */
	uint64_t dropped;
};

static void
load_record(struct spool *sp, struct load *ld, const struct view *v, uint64_t off)
{
	if (ld->pass == PASS_MARKER) {
		if (v->is_ack) {
			ld->ack_max = v->value > ld->ack_max ? v->value : ld->ack_max;
		} else {
			ld->max_id = v->value;
		}
		return;
	}
	if (v->is_ack || v->value <= ld->ack_max) {
		return;
	}
	if (v->rec_bytes > sp->live_cap) {
		/* The file cap shrank below this record: it cannot be kept. */
		ld->dropped += ld->pass == PASS_LOAD;
		return;
	}
	if (ld->pass == PASS_SIZE) {
		ld->live_bytes += v->rec_bytes;
		return;
	}
	if (sp->spill && ld->live_bytes > sp->live_cap) {
		/* more than the file may hold: the oldest go */
		ld->live_bytes -= v->rec_bytes;
		ld->dropped++;
		return;
	}
	uint64_t before = sp->st.dropped;
	spool_load_record(sp, v, off);
	/* records the ring pushed out to make room (without spill) */
	ld->dropped += sp->st.dropped - before;
	sp->st.dropped = before;
}

/*
 * Walks every valid record in file order. Damaged bytes are skipped up to
 * the next offset where a valid record starts; each damaged run counts once.
 */
static void
scan(struct spool *sp, struct reader *r, struct load *ld, uint64_t *damaged)
{
	uint64_t off = 0, prev_id = 0, runs = 0;
	bool in_damage = false;
	while (off < r->size) {
		struct view v = {0};
		if (decode_at(r, off, prev_id, &v)) {
			load_record(sp, ld, &v, off);
			if (!v.is_ack) {
				prev_id = v.value;
			}
			in_damage = false;
			off += v.rec_bytes;
			continue;
		}
		if (!in_damage) {
			in_damage = true;
			runs++;
		}
		off = next_candidate(r, off + 1);
	}
	*damaged = runs;
}

int
spool_read_load(struct spool *sp, uint64_t *damaged, uint64_t *dropped)
{
	struct stat st;
	if (fstat(sp->fd, &st) < 0) {
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		return -EINVAL;
	}
	struct reader r = {.fd = sp->fd, .size = (uint64_t)st.st_size};
	struct load ld = {.pass = PASS_MARKER};
	/* The marker first, so the later passes load (and count as dropped) only live records. */
	scan(sp, &r, &ld, damaged);
	if (sp->spill) {
		ld.pass = PASS_SIZE;
		scan(sp, &r, &ld, damaged);
	}
	ld.pass = PASS_LOAD;
	scan(sp, &r, &ld, damaged);
	free(r.buf);
	sp->file_bytes = r.size;
	sp->written_marker = ld.ack_max;
	sp->file_max_id = ld.max_id;
	sp->next_id = (ld.max_id > ld.ack_max ? ld.max_id : ld.ack_max) + 1;
	sp->st.dropped += ld.dropped;
	*dropped = ld.dropped;
	return 0;
}

/* ---- the run, read back ---- */

/* The run is over: whatever it still counts was lost to damage or a read error. */
static void
run_lost(struct spool *sp, bool damaged)
{
	if (sp->run_count > 0) {
		log_warn("spool: %s: %" PRIu64 " record(s) could not be read back from the file (%s)", sp->path,
			 sp->run_count, damaged ? "damaged" : "missing");
		sp->st.dropped += sp->run_count;
	}
	sp->st.corrupt_records += damaged;
	sp->live_file_bytes -= sp->run_bytes;
	sp->run_count = 0;
	sp->run_bytes = 0;
}

bool
spool_run_next(struct spool *sp, struct reader *r, struct view *v, uint64_t *off_out)
{
	if (sp->run_count == 0) {
		return false;
	}
	/* Records from here on belong to the tail (or were never written): the run ends before them. */
	uint64_t end_id = sp->tail.count > 0 ? ring_at(&sp->tail, 0)->rec.id : sp->next_id;
	r->fd = sp->fd;
	r->size = sp->file_bytes;
	uint64_t off = sp->run_off;
	bool damaged = false;
	while (off < r->size) {
		if (!decode_at(r, off, 0, v)) {
			damaged = true;
			off = next_candidate(r, off + 1);
			continue;
		}
		if (v->is_ack || v->value < sp->run_first_id) {
			off += v->rec_bytes;
			continue;
		}
		if (v->value >= end_id) {
			break;
		}
		if (damaged) {
			/* skipped over a damaged region to this record: the records in it are gone */
			sp->st.corrupt_records++;
		}
		*off_out = off;
		sp->run_off = off + v->rec_bytes;
		sp->run_count--;
		sp->run_bytes -= v->rec_bytes < sp->run_bytes ? v->rec_bytes : sp->run_bytes;
		sp->run_first_id = v->value + 1;
		if (sp->run_count == 0 && sp->run_bytes > 0) {
			/* records were lost in a damaged region: their bytes are not live any more */
			sp->live_file_bytes -= sp->run_bytes;
			sp->run_bytes = 0;
		}
		return true;
	}
	run_lost(sp, damaged);
	return false;
}
