/*
 * Inside the spool: the memory rings, the run of records held only in the
 * file, and the file state that spool.c (the rings and the public calls),
 * spool_file.c (writing the CRC-framed file) and spool_read.c (reading it
 * back) share. Nothing outside those files includes it: spool.h is the API.
 *
 * The queue, oldest first, is: the head ring (memory; records are handed
 * out from here), the run (spill mode only: records in the file and nowhere
 * else), the tail ring (spill mode only: the newest records, in memory
 * until they are written and spilled into the run). Ids increase along it,
 * and along the file, so the run is read back in order from run_off.
 */
#ifndef TEGRAWATCH_SPOOL_PRIV_H
#define TEGRAWATCH_SPOOL_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crc32.h"
#include "spool.h"

#define MAGIC_DATA 0x445053FEu /* "\xFESPD" on disk */
#define MAGIC_ACK 0x415053FEu  /* "\xFESPA" on disk */
#define HDR_BYTES 12u
#define DATA_FIXED_BYTES 12u
#define MAX_TOPIC_BYTES 65535u
/* Far beyond any real count; bounds ids read from a file so next_id cannot wrap. */
#define ID_MAX (UINT64_C(1) << 62)
#define ACK_BODY_BYTES 8u
#define ACK_REC_BYTES (HDR_BYTES + ACK_BODY_BYTES)
#define IO_CHUNK_BYTES (64u * 1024u)

enum disk_state {
	DISK_NONE,    /* memory only (no file, or too large for the file cap) */
	DISK_PENDING, /* meant for the file, not written yet */
	DISK_WRITTEN, /* in the file and fsynced */
};

struct slot {
	struct spool_record rec; /* topic and payload share one allocation at rec.topic */
	uint64_t file_off;       /* DISK_WRITTEN: where the record starts in the file */
	uint32_t disk_bytes;     /* encoded size of the record */
	uint8_t disk;            /* enum disk_state */
	bool acked;
};

struct ring {
	struct slot *slots;
	size_t cap, start, count;
};

/* A window over the file, refilled with pread so memory stays bounded. */
struct reader {
	int fd;
	uint64_t size;
	uint8_t *buf;
	size_t cap, len;
	uint64_t start;
};

/* One valid record decoded from the file; the pointers are into a reader's window. */
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

struct spool {
	struct ring head; /* the oldest records in memory, handed out from here */
	struct ring tail; /* spill mode: the newest records, behind the run */
	size_t mem_max;   /* records in memory at most (head and tail together) */
	bool spill;       /* records beyond mem_max wait in the file only */
	size_t next_off;  /* head offset from which peek hands out */
	size_t n_acked;   /* acknowledged but still behind an unacknowledged record */
	uint64_t next_id;
	struct spool_stats st;

	/* The run: records between head and tail that are only in the file. */
	uint64_t run_off;      /* file offset of its first record */
	uint64_t run_count;    /* records in it */
	uint64_t run_bytes;    /* their encoded bytes (part of live_file_bytes) */
	uint64_t run_first_id; /* at most the id of its first record */
	struct reader rd;      /* reads the run back; its window is dropped when the file is replaced */

	/* The file; fd is -1 without one. Byte counts cover unacked records only. */
	int fd;
	char *path, *tmp_path;
	uint64_t max_file_bytes, live_cap, compact_min;
	uint64_t file_bytes;
	uint64_t live_file_bytes; /* DISK_WRITTEN, the run included */
	uint64_t pending_bytes;   /* DISK_PENDING */
	uint64_t written_marker;  /* highest ack value in the file */
	uint64_t file_max_id;     /* highest data id in the file */
	bool need_compact;        /* the tail or the fsync state is uncertain */
	uint8_t *wbuf;
	size_t wcap, wlen;

	/* Write failures: back-off and rate-limited warnings (monotonic ms). */
	unsigned fail_streak;
	int64_t retry_at_ms;
	int64_t compact_retry_at_ms; /* an optional compaction failed: not before this */
	int last_err;
	bool warned;
	int64_t last_warn_ms;
};

static inline struct slot *
ring_at(const struct ring *r, size_t off)
{
	return &r->slots[(r->start + off) % r->cap];
}

/* A record's CRC: the 4 length bytes of HDR, then the body. */
static inline uint32_t
frame_crc(const uint8_t *hdr, const uint8_t *body, uint32_t len)
{
	return crc32_ieee_update(crc32_ieee(hdr + 4, 4), body, len);
}

/* Records in memory, oldest first: the head, then the tail. */
static inline size_t
mem_count(const struct spool *sp)
{
	return sp->head.count + sp->tail.count;
}

static inline struct slot *
mem_at(const struct spool *sp, size_t i)
{
	return i < sp->head.count ? ring_at(&sp->head, i) : ring_at(&sp->tail, i - sp->head.count);
}

/* ---- spool.c: the rings ---- */

/*
 * A live record found at OFF when the file is opened: into the head
 * (without spill dropping the oldest to make room), or with spill, once
 * the head is full, into the run. Counts it in live_file_bytes.
 */
void spool_load_record(struct spool *sp, const struct view *v, uint64_t off);

/* Every id at or below this is gone from the queue (delivered or dropped). */
uint64_t spool_marker(const struct spool *sp);

/* Drops the oldest record (head, run front, tail); false when the queue is empty. Reads the file for the run. */
bool spool_drop_oldest(struct spool *sp);

/* ---- spool_file.c: writing the file ---- */

/* Opens, locks and loads the file at OPTS->path into SP. Returns 0 or -errno. */
int spool_file_open(struct spool *sp, const struct spool_options *opts);

/* One sync attempt, without back-off: append the pending records, or compact. Returns 0 or -errno. */
int spool_file_sync(struct spool *sp);

/* ---- spool_read.c: reading the file ---- */

/*
 * Scans the whole file: the marker, the live records into the head (and
 * the run). Sets *DAMAGED to the damaged regions found and *DROPPED to the
 * records left out (over the caps). Returns 0 or -errno.
 */
int spool_read_load(struct spool *sp, uint64_t *damaged, uint64_t *dropped);

/*
 * The next record of the run at R (which must read the file SP->fd), or
 * false when the run ends: its records are gone (a read error or damage:
 * counted) or it is empty. A record returned is taken out of the run
 * (run_off, run_count, run_bytes and run_first_id move past it); its
 * bytes stay in live_file_bytes for the caller to account.
 */
bool spool_run_next(struct spool *sp, struct reader *r, struct view *v, uint64_t *off);

/* Drops R's window and buffer. */
void spool_reader_free(struct reader *r);

#endif
