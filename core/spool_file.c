/*
 * Writing the spool's file: CRC-framed records appended on spool_sync(),
 * compaction (the queue rewritten into a fresh file), write errors with
 * back-off, and opening. Layout and recovery rules are in spool.h; reading
 * is in spool_read.c. The file holds what memory holds and, in spill
 * mode, the run that only it holds.
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

#include "atomic_file.h"
#include "clock.h"
#include "log.h"

#define MIN_FILE_BYTES 4096u
#define COMPACT_MIN_BYTES (64u * 1024u)
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

/* ---- writing ---- */

/* A data record as it is on disk: the view of one read back, or a memory slot's fields. */
static size_t
encode_data(uint8_t *p, const struct view *v)
{
	uint32_t body_len = (uint32_t)(DATA_FIXED_BYTES + v->topic_len + v->payload_len);
	uint8_t *b = p + HDR_BYTES;
	put_le32(p, MAGIC_DATA);
	put_le32(p + 4, body_len);
	put_le64(b, v->value);
	b[8] = (uint8_t)v->qos;
	b[9] = v->retain ? 1 : 0;
	put_le16(b + 10, (uint16_t)v->topic_len);
	memcpy(b + DATA_FIXED_BYTES, v->topic, v->topic_len);
	if (v->payload_len > 0) {
		memcpy(b + DATA_FIXED_BYTES + v->topic_len, v->payload, v->payload_len);
	}
	put_le32(p + 8, frame_crc(p, b, body_len));
	return HDR_BYTES + body_len;
}

static struct view
slot_view(const struct slot *s)
{
	size_t topic_len = s->disk_bytes - HDR_BYTES - DATA_FIXED_BYTES - s->rec.payload_len;
	return (struct view){
		.value = s->rec.id,
		.qos = s->rec.qos,
		.retain = s->rec.retain,
		.topic = (const uint8_t *)s->rec.topic,
		.topic_len = topic_len,
		.payload = s->rec.payload,
		.payload_len = s->rec.payload_len,
		.rec_bytes = s->disk_bytes,
	};
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

static void
wbuf_reserve(struct spool *sp, size_t more)
{
	if (sp->wlen + more <= sp->wcap) {
		return;
	}
	size_t cap = sp->wcap ? sp->wcap : IO_CHUNK_BYTES;
	while (cap < sp->wlen + more) {
		cap *= 2;
	}
	sp->wbuf = xrealloc(sp->wbuf, cap, 1);
	sp->wcap = cap;
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
wbuf_add_data(struct spool *sp, int fd, uint64_t *off, const struct view *v)
{
	int ret = 0;
	if (sp->wlen > 0 && sp->wlen + v->rec_bytes > IO_CHUNK_BYTES) {
		ret = wbuf_flush(sp, fd, off);
	}
	if (ret == 0) {
		wbuf_reserve(sp, v->rec_bytes);
		sp->wlen += encode_data(sp->wbuf + sp->wlen, v);
	}
	return ret;
}

static void
wbuf_add_ack(struct spool *sp, uint64_t marker)
{
	wbuf_reserve(sp, ACK_REC_BYTES);
	sp->wlen += encode_ack(sp->wbuf + sp->wlen, marker);
}

/* Counts a failed write and warns, at most once a minute. */
static void
spool_count_write_error(struct spool *sp, int err, const char *what, int64_t now)
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
	spool_count_write_error(sp, err, what, now);
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

/* Memory records the file should hold: not acknowledged, not memory-only. */
static bool
for_file(const struct slot *s)
{
	return !s->acked && s->disk != DISK_NONE;
}

/* After a successful rewrite or append: where each record of SELECTED now starts, from OFF. */
static uint64_t
place_records(struct spool *sp, size_t from, size_t to, uint64_t off, bool only_pending)
{
	for (size_t i = from; i < to; i++) {
		struct slot *s = mem_at(sp, i);
		if (!for_file(s) || (only_pending && s->disk != DISK_PENDING)) {
			continue;
		}
		if (s->disk == DISK_PENDING) {
			s->disk = DISK_WRITTEN;
		}
		s->file_off = off;
		off += s->disk_bytes;
	}
	return off;
}

/* The run's place, kept to undo a compaction that failed after reading it. */
struct run_state {
	uint64_t off, count, bytes, first_id, live, dropped, corrupt;
};

static struct run_state
run_save(const struct spool *sp)
{
	return (struct run_state){sp->run_off,         sp->run_count,  sp->run_bytes,         sp->run_first_id,
				  sp->live_file_bytes, sp->st.dropped, sp->st.corrupt_records};
}

static void
run_restore(struct spool *sp, const struct run_state *rs)
{
	sp->run_off = rs->off;
	sp->run_count = rs->count;
	sp->run_bytes = rs->bytes;
	sp->run_first_id = rs->first_id;
	sp->live_file_bytes = rs->live;
	sp->st.dropped = rs->dropped;
	sp->st.corrupt_records = rs->corrupt;
}

/* Copies the run from the old file into TFD at *OFF; counts what it copied. */
static int
copy_run(struct spool *sp, int tfd, uint64_t *off, uint64_t *count, uint64_t *bytes, uint64_t *first_id,
	 uint64_t *last_id)
{
	struct view v;
	uint64_t at;
	int ret = 0;
	while (ret == 0 && spool_run_next(sp, &sp->rd, &v, &at)) {
		ret = wbuf_add_data(sp, tfd, off, &v);
		if (*count == 0) {
			*first_id = v.value;
		}
		(*count)++;
		*bytes += v.rec_bytes;
		*last_id = v.value;
	}
	return ret;
}

/*
 * Rewrites the file from the queue: an ack record, then every live record
 * (the head, the run copied from the old file, the tail), replacing PATH
 * whole (atomic_file.h); the new file stays open as the spool's. On failure
 * the old file stays.
 */
static int
spool_file_compact(struct spool *sp)
{
	/* PATH.tmp is locked before it gets the real name, so a second opener never sees it unlocked. */
	struct atomic_file *af;
	int ret = atomic_file_create(sp->path, 0600, &af);
	if (ret < 0) {
		return ret;
	}
	int tfd = atomic_file_fd(af);
	uint64_t marker = spool_marker(sp), off = 0, last_id = 0;
	struct run_state saved = run_save(sp);
	uint64_t run_count = 0, run_bytes = 0, run_first = saved.first_id;
	sp->wlen = 0;
	wbuf_add_ack(sp, marker);
	for (size_t i = 0; i < sp->head.count && ret == 0; i++) {
		const struct slot *s = mem_at(sp, i);
		if (for_file(s)) {
			struct view v = slot_view(s);
			ret = wbuf_add_data(sp, tfd, &off, &v);
			last_id = s->rec.id;
		}
	}
	if (ret == 0) {
		ret = copy_run(sp, tfd, &off, &run_count, &run_bytes, &run_first, &last_id);
	}
	for (size_t i = sp->head.count; i < mem_count(sp) && ret == 0; i++) {
		const struct slot *s = mem_at(sp, i);
		if (for_file(s)) {
			struct view v = slot_view(s);
			ret = wbuf_add_data(sp, tfd, &off, &v);
			last_id = s->rec.id;
		}
	}
	if (ret == 0 && sp->wlen > 0) {
		ret = wbuf_flush(sp, tfd, &off);
	}
	if (ret == 0) {
		ret = atomic_file_commit_keep(af, &tfd);
	} else {
		atomic_file_abort(af);
	}
	sp->wlen = 0;
	if (ret < 0) {
		run_restore(sp, &saved);
		return ret;
	}
	close(sp->fd);
	sp->fd = tfd;
	spool_reader_free(&sp->rd); /* its window showed the old file */
	uint64_t at = place_records(sp, 0, sp->head.count, ACK_REC_BYTES, false);
	sp->run_off = at;
	sp->run_count = run_count;
	sp->run_bytes = run_bytes;
	sp->run_first_id = run_first;
	place_records(sp, sp->head.count, mem_count(sp), at + run_bytes, false);
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
	for (size_t i = 0; i < mem_count(sp) && ret == 0; i++) {
		const struct slot *s = mem_at(sp, i);
		if (for_file(s) && s->disk == DISK_PENDING) {
			struct view v = slot_view(s);
			ret = wbuf_add_data(sp, sp->fd, &off, &v);
			last_id = s->rec.id;
		}
	}
	if (ret == 0 && write_marker) {
		wbuf_add_ack(sp, marker);
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
	place_records(sp, 0, mem_count(sp), sp->file_bytes, true);
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
	if (sp->spill) {
		/* The file cap, which spool_push() leaves to us: the run's records are dropped by reading them. */
		while (sp->live_file_bytes + sp->pending_bytes > sp->live_cap && spool_drop_oldest(sp)) {
		}
	}
	uint64_t marker = spool_marker(sp);
	/* The marker matters only while the file holds records it would hide. */
	bool want_marker = marker > sp->written_marker && sp->file_max_id > sp->written_marker;
	uint64_t dead = sp->file_bytes - sp->live_file_bytes;
	bool over = sp->file_bytes + sp->pending_bytes + (want_marker ? ACK_REC_BYTES : 0) > sp->max_file_bytes;
	bool mostly_dead = sp->file_bytes >= sp->compact_min && dead > sp->file_bytes / 2;
	int64_t now = monotonic_ms();
	int ret;
	if (over || ((sp->need_compact || mostly_dead) && now >= sp->compact_retry_at_ms)) {
		ret = spool_file_compact(sp);
		if (ret == 0) {
			note_write_ok(sp);
			return 0;
		}
		if (over) {
			note_write_error(sp, ret, "compaction");
			return ret;
		}
		/* Appending is still correct, only less tidy: retry the rewrite later. */
		spool_count_write_error(sp, ret, "compaction", now);
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

/* ---- opening ---- */

static int
load_file(struct spool *sp)
{
	uint64_t damaged = 0, dropped = 0;
	int ret = spool_read_load(sp, &damaged, &dropped);
	if (ret < 0) {
		return ret;
	}
	sp->st.corrupt_records = damaged;
	if (damaged > 0) {
		log_warn("spool: %s: skipped %" PRIu64 " damaged region(s), recovered %" PRIu64 " record(s)", sp->path,
			 damaged, sp->head.count - sp->n_acked + sp->run_count);
	}
	if (dropped > 0) {
		log_warn("spool: %s: %" PRIu64 " old record(s) over the spool limits dropped", sp->path, dropped);
	}
	uint64_t dead = sp->file_bytes - sp->live_file_bytes;
	if (damaged > 0 || dropped > 0 || sp->file_bytes > sp->max_file_bytes ||
	    (sp->file_bytes >= sp->compact_min && dead > sp->file_bytes / 2)) {
		/* Rewrite clean now, so the same damage is not met (and counted) again. */
		ret = spool_file_compact(sp);
		if (ret < 0) {
			sp->need_compact = true;
			spool_count_write_error(sp, ret, "compaction", monotonic_ms());
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
