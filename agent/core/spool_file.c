/*
 * The spool's file: CRC-framed records appended on spool_sync(), compacted
 * from the memory ring, and read back (with recovery of damaged regions)
 * on open. Layout and recovery rules are in spool.h; the ring is in
 * spool.c and stays the truth, so this file only ever mirrors it.
 */
#include "spool_priv.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "crc32.h"
#include "log.h"

#define MAGIC_DATA 0x445053FEu /* "\xFESPD" on disk */
#define MAGIC_ACK 0x415053FEu  /* "\xFESPA" on disk */
#define MAGIC_BYTE0 0xFEu
#define ACK_BODY_BYTES 8u
#define ACK_REC_BYTES (HDR_BYTES + ACK_BODY_BYTES)
#define MAX_BODY_BYTES (DATA_FIXED_BYTES + MAX_TOPIC_BYTES + SPOOL_MAX_PAYLOAD_BYTES)
#define MIN_FILE_BYTES 4096u
#define COMPACT_MIN_BYTES (64u * 1024u)
#define IO_CHUNK_BYTES (64u * 1024u)
#define WARN_INTERVAL_MS (60 * 1000)
#define RETRY_MIN_MS 1000
#define RETRY_MAX_MS (60 * 1000)

static void
put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static void
put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

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

static uint32_t
frame_crc(const uint8_t *hdr, const uint8_t *body, uint32_t len)
{
	return crc32_ieee_update(crc32_ieee(hdr + 4, 4), body, len);
}

/* Every id at or below this is gone from the queue (delivered or dropped). */
static uint64_t
marker_now(const struct spool *sp)
{
	uint64_t marker = sp->count ? slot_at(sp, 0)->rec.id - 1 : sp->next_id - 1;
	/* Ids above ID_MAX are never written, so the clamp hides nothing live. */
	return marker < ID_MAX ? marker : ID_MAX;
}

/* ---- writing ---- */

static size_t
encode_data(uint8_t *p, const struct slot *s)
{
	size_t topic_len = s->disk_bytes - HDR_BYTES - DATA_FIXED_BYTES - s->rec.payload_len;
	uint32_t body_len = s->disk_bytes - HDR_BYTES;
	uint8_t *b = p + HDR_BYTES;
	put_le32(p, MAGIC_DATA);
	put_le32(p + 4, body_len);
	put_le64(b, s->rec.id);
	b[8] = (uint8_t)s->rec.qos;
	b[9] = s->rec.retain ? 1 : 0;
	put_le16(b + 10, (uint16_t)topic_len);
	memcpy(b + DATA_FIXED_BYTES, s->rec.topic, topic_len);
	if (s->rec.payload_len > 0) {
		memcpy(b + DATA_FIXED_BYTES + topic_len, s->rec.payload, s->rec.payload_len);
	}
	put_le32(p + 8, frame_crc(p, b, body_len));
	return s->disk_bytes;
}

static size_t
encode_ack(uint8_t *p, uint64_t marker)
{
	put_le32(p, MAGIC_ACK);
	put_le32(p + 4, ACK_BODY_BYTES);
	put_le64(p + HDR_BYTES, marker);
	put_le32(p + 8, frame_crc(p, p + HDR_BYTES, ACK_BODY_BYTES));
	return ACK_REC_BYTES;
}

static int
wbuf_reserve(struct spool *sp, size_t more)
{
	if (sp->wlen + more <= sp->wcap) {
		return 0;
	}
	size_t cap = sp->wcap ? sp->wcap : IO_CHUNK_BYTES;
	while (cap < sp->wlen + more) {
		cap *= 2;
	}
	sp->wbuf = xrealloc(sp->wbuf, cap, 1);
	sp->wcap = cap;
	return 0;
}

static int
write_at(int fd, uint64_t off, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return -errno;
		}
		if (n == 0) {
			return -EIO;
		}
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Writes the buffer at *OFF and advances it. */
static int
wbuf_flush(struct spool *sp, int fd, uint64_t *off)
{
	int ret = write_at(fd, *off, sp->wbuf, sp->wlen);
	if (ret == 0) {
		*off += sp->wlen;
	}
	sp->wlen = 0;
	return ret;
}

/* Encodes one data record into the buffer, writing the buffer out first when it is full. */
static int
wbuf_add_data(struct spool *sp, int fd, uint64_t *off, const struct slot *s)
{
	int ret = 0;
	if (sp->wlen > 0 && sp->wlen + s->disk_bytes > IO_CHUNK_BYTES) {
		ret = wbuf_flush(sp, fd, off);
	}
	if (ret == 0) {
		ret = wbuf_reserve(sp, s->disk_bytes);
	}
	if (ret == 0) {
		sp->wlen += encode_data(sp->wbuf + sp->wlen, s);
	}
	return ret;
}

static int
wbuf_add_ack(struct spool *sp, uint64_t marker)
{
	int ret = wbuf_reserve(sp, ACK_REC_BYTES);
	if (ret == 0) {
		sp->wlen += encode_ack(sp->wbuf + sp->wlen, marker);
	}
	return ret;
}

static void
fsync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	if (!slash) {
		snprintf(dir, sizeof(dir), ".");
	} else if (slash == path) {
		snprintf(dir, sizeof(dir), "/");
	} else if ((size_t)(slash - path) < sizeof(dir)) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	} else {
		return;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		/* Best effort: the rename itself already happened. */
		(void)fsync(fd);
		close(fd);
	}
}

/* Counts a failed write and warns, at most once a minute. */
static void
count_write_error(struct spool *sp, int err, const char *what, int64_t now)
{
	sp->st.write_errors++;
	if (!sp->warned || now - sp->last_warn_ms >= WARN_INTERVAL_MS) {
		log_warn("spool: %s: %s failed: %s; records stay in memory (%" PRIu64 " write errors so far)", sp->path,
			 what, strerror(-err), sp->st.write_errors);
		sp->warned = true;
		sp->last_warn_ms = now;
	}
}

/* A failure that stops file writes for a while: 1 s, doubling up to 60 s. */
static void
note_write_error(struct spool *sp, int err, const char *what)
{
	int64_t now = monotonic_ms();
	count_write_error(sp, err, what, now);
	sp->last_err = err;
	sp->fail_streak++;
	int64_t delay = RETRY_MIN_MS;
	for (unsigned i = 1; i < sp->fail_streak && delay < RETRY_MAX_MS; i++) {
		delay *= 2;
	}
	sp->retry_at_ms = now + (delay < RETRY_MAX_MS ? delay : RETRY_MAX_MS);
}

static void
note_write_ok(struct spool *sp)
{
	if (sp->fail_streak > 0) {
		log_info("spool: %s: writing again after %u failed attempts", sp->path, sp->fail_streak);
	}
	sp->fail_streak = 0;
	sp->retry_at_ms = 0;
	sp->last_err = 0;
}

/*
 * Rewrites the file from memory: an ack record, then every live record,
 * into PATH.tmp; fsync; rename over PATH. On failure the old file stays.
 */
static int
compact(struct spool *sp)
{
	int tfd = open(sp->tmp_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (tfd < 0) {
		return -errno;
	}
	/* Locked before it gets the real name, so a second opener never sees it unlocked. */
	(void)flock(tfd, LOCK_EX | LOCK_NB);
	uint64_t marker = marker_now(sp), off = 0, last_id = 0;
	sp->wlen = 0;
	int ret = wbuf_add_ack(sp, marker);
	for (size_t i = 0; i < sp->count && ret == 0; i++) {
		const struct slot *s = slot_at(sp, i);
		if (!s->acked && s->disk != DISK_NONE) {
			ret = wbuf_add_data(sp, tfd, &off, s);
			last_id = s->rec.id;
		}
	}
	if (ret == 0 && sp->wlen > 0) {
		ret = wbuf_flush(sp, tfd, &off);
	}
	if (ret == 0 && fsync(tfd) < 0) {
		ret = -errno;
	}
	if (ret == 0 && rename(sp->tmp_path, sp->path) < 0) {
		ret = -errno;
	}
	sp->wlen = 0;
	if (ret < 0) {
		close(tfd);
		unlink(sp->tmp_path);
		return ret;
	}
	fsync_dir(sp->path);
	close(sp->fd);
	sp->fd = tfd;
	for (size_t i = 0; i < sp->count; i++) {
		struct slot *s = slot_at(sp, i);
		if (!s->acked && s->disk == DISK_PENDING) {
			s->disk = DISK_WRITTEN;
		}
	}
	sp->live_file_bytes += sp->pending_bytes;
	sp->pending_bytes = 0;
	sp->file_bytes = off;
	sp->written_marker = marker;
	sp->file_max_id = last_id;
	sp->need_compact = false;
	return 0;
}

/* Appends the pending records (and the marker) at the end of the file and fsyncs. */
static int
append_pending(struct spool *sp, bool write_marker, uint64_t marker)
{
	uint64_t off = sp->file_bytes, last_id = 0;
	sp->wlen = 0;
	int ret = 0;
	for (size_t i = 0; i < sp->count && ret == 0; i++) {
		const struct slot *s = slot_at(sp, i);
		if (!s->acked && s->disk == DISK_PENDING) {
			ret = wbuf_add_data(sp, sp->fd, &off, s);
			last_id = s->rec.id;
		}
	}
	if (ret == 0 && write_marker) {
		ret = wbuf_add_ack(sp, marker);
	}
	if (ret == 0 && sp->wlen > 0) {
		ret = wbuf_flush(sp, sp->fd, &off);
	}
	sp->wlen = 0;
	if (ret == 0 && fsync(sp->fd) < 0) {
		/* After a failed fsync the page state is unknown: rewrite everything later. */
		ret = -errno;
		sp->need_compact = true;
	}
	if (ret < 0) {
		/* Cut a torn tail so later appends follow a clean record. */
		if (ftruncate(sp->fd, (off_t)sp->file_bytes) < 0) {
			sp->need_compact = true;
		}
		return ret;
	}
	for (size_t i = 0; i < sp->count; i++) {
		struct slot *s = slot_at(sp, i);
		if (!s->acked && s->disk == DISK_PENDING) {
			s->disk = DISK_WRITTEN;
		}
	}
	sp->live_file_bytes += sp->pending_bytes;
	sp->pending_bytes = 0;
	sp->file_bytes = off;
	if (last_id) {
		sp->file_max_id = last_id;
	}
	if (write_marker) {
		sp->written_marker = marker;
	}
	return 0;
}

/* One sync attempt, without back-off. */
int
spool_file_sync(struct spool *sp)
{
	uint64_t marker = marker_now(sp);
	/* The marker matters only while the file holds records it would hide. */
	bool want_marker = marker > sp->written_marker && sp->file_max_id > sp->written_marker;
	uint64_t dead = sp->file_bytes - sp->live_file_bytes;
	bool over = sp->file_bytes + sp->pending_bytes + (want_marker ? ACK_REC_BYTES : 0) > sp->max_file_bytes;
	bool mostly_dead = sp->file_bytes >= sp->compact_min && dead > sp->file_bytes / 2;
	int64_t now = monotonic_ms();
	int ret;
	if (over || ((sp->need_compact || mostly_dead) && now >= sp->compact_retry_at_ms)) {
		ret = compact(sp);
		if (ret == 0) {
			note_write_ok(sp);
			return 0;
		}
		if (over) {
			note_write_error(sp, ret, "compaction");
			return ret;
		}
		/* Appending is still correct, only less tidy: retry the rewrite later. */
		count_write_error(sp, ret, "compaction", now);
		sp->compact_retry_at_ms = now + RETRY_MAX_MS;
	}
	if (sp->pending_bytes == 0 && !want_marker) {
		return 0;
	}
	ret = append_pending(sp, want_marker, marker);
	if (ret < 0) {
		note_write_error(sp, ret, "write");
		return ret;
	}
	note_write_ok(sp);
	return 0;
}

/* ---- reading a file back ---- */

/* A window over the file, refilled with pread so memory stays bounded. */
struct reader {
	int fd;
	uint64_t size;
	uint8_t *buf;
	size_t cap, len;
	uint64_t start;
};

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

struct view {
	bool is_ack;
	uint64_t value; /* data: id; ack: marker */
	int qos;
	bool retain;
	const uint8_t *topic;
	size_t topic_len;
	const uint8_t *payload;
	size_t payload_len;
	uint32_t rec_bytes;
};

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

struct load {
	uint64_t ack_max, max_id;
	bool pass2;
};

static int
load_record(struct spool *sp, struct load *ld, const struct view *v)
{
	if (!ld->pass2) {
		if (v->is_ack) {
			ld->ack_max = v->value > ld->ack_max ? v->value : ld->ack_max;
		} else {
			ld->max_id = v->value;
		}
		return 0;
	}
	if (v->is_ack || v->value <= ld->ack_max) {
		return 0;
	}
	if (v->rec_bytes > sp->live_cap) {
		/* The file cap shrank below this record: it cannot be kept. */
		sp->st.dropped++;
		return 0;
	}
	return spool_ring_load(sp, v->value, v->topic, v->topic_len, v->payload, v->payload_len, v->qos, v->retain);
}

/*
 * Walks every valid record in file order. Damaged bytes are skipped up to
 * the next offset where a valid record starts; each damaged run counts once.
 */
static int
scan(struct spool *sp, struct reader *r, struct load *ld, uint64_t *damaged)
{
	uint64_t off = 0, prev_id = 0, runs = 0;
	bool in_damage = false;
	while (off < r->size) {
		struct view v = {0};
		if (decode_at(r, off, prev_id, &v)) {
			int ret = load_record(sp, ld, &v);
			if (ret < 0) {
				return ret;
			}
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
	return 0;
}

static int
load_file(struct spool *sp)
{
	struct stat st;
	if (fstat(sp->fd, &st) < 0) {
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		return -EINVAL;
	}
	struct reader r = {.fd = sp->fd, .size = (uint64_t)st.st_size};
	struct load ld = {0};
	uint64_t damaged = 0;
	/* Pass 1 finds the marker, so pass 2 loads (and counts as dropped) only live records. */
	int ret = scan(sp, &r, &ld, &damaged);
	if (ret == 0) {
		ld.pass2 = true;
		ret = scan(sp, &r, &ld, &damaged);
	}
	free(r.buf);
	if (ret < 0) {
		return ret;
	}
	uint64_t dropped = sp->st.dropped;
	sp->st.corrupt_records = damaged;
	sp->file_bytes = r.size;
	sp->written_marker = ld.ack_max;
	sp->file_max_id = ld.max_id;
	sp->next_id = (ld.max_id > ld.ack_max ? ld.max_id : ld.ack_max) + 1;
	if (damaged > 0) {
		log_warn("spool: %s: skipped %" PRIu64 " damaged region(s), recovered %zu record(s)", sp->path, damaged,
			 sp->count);
	}
	if (dropped > 0) {
		log_warn("spool: %s: %" PRIu64 " old record(s) over the spool limits dropped", sp->path, dropped);
	}
	uint64_t dead = sp->file_bytes - sp->live_file_bytes;
	if (damaged > 0 || dropped > 0 || sp->file_bytes > sp->max_file_bytes ||
	    (sp->file_bytes >= sp->compact_min && dead > sp->file_bytes / 2)) {
		/* Rewrite clean now, so the same damage is not met (and counted) again. */
		ret = compact(sp);
		if (ret < 0) {
			sp->need_compact = true;
			count_write_error(sp, ret, "compaction", monotonic_ms());
		}
	}
	return 0;
}

int
spool_file_open(struct spool *sp, const struct spool_options *opts)
{
	size_t len = strlen(opts->path);
	sp->path = xmalloc(len + 1);
	sp->tmp_path = xmalloc(len + 5);
	memcpy(sp->path, opts->path, len + 1);
	memcpy(sp->tmp_path, opts->path, len);
	memcpy(sp->tmp_path + len, ".tmp", 5);
	sp->max_file_bytes = opts->max_file_bytes ? opts->max_file_bytes : SPOOL_DEFAULT_FILE_BYTES;
	if (sp->max_file_bytes < MIN_FILE_BYTES) {
		sp->max_file_bytes = MIN_FILE_BYTES;
	}
	/* A quarter of the cap is room to append between compactions. */
	sp->live_cap = sp->max_file_bytes - sp->max_file_bytes / 4;
	sp->compact_min = sp->max_file_bytes / 2 < COMPACT_MIN_BYTES ? sp->max_file_bytes / 2 : COMPACT_MIN_BYTES;

	sp->fd = open(sp->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (sp->fd < 0) {
		return -errno;
	}
	if (flock(sp->fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
		return -EBUSY;
	}
	/* Left by a crash during compaction; the real file is still complete. */
	unlink(sp->tmp_path);
	return load_file(sp);
}
