/*
 * Inside the spool: the ring of slots and the file state that spool.c (the
 * memory ring and the public calls) and spool_file.c (the CRC-framed file)
 * share. Nothing outside those two files includes it: spool.h is the API.
 */
#ifndef TEGRAWATCH_SPOOL_PRIV_H
#define TEGRAWATCH_SPOOL_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spool.h"

#define HDR_BYTES 12u
#define DATA_FIXED_BYTES 12u
#define MAX_TOPIC_BYTES 65535u
/* Far beyond any real count; bounds ids read from a file so next_id cannot wrap. */
#define ID_MAX (UINT64_C(1) << 62)

enum disk_state {
	DISK_NONE,    /* memory only (no file, or too large for the file cap) */
	DISK_PENDING, /* meant for the file, not written yet */
	DISK_WRITTEN, /* in the file and fsynced */
};

struct slot {
	struct spool_record rec; /* topic and payload share one allocation at rec.topic */
	uint32_t disk_bytes;     /* encoded size of the record */
	uint8_t disk;            /* enum disk_state */
	bool acked;
};

struct spool {
	struct slot *slots;
	size_t cap, head, count;
	size_t next_off; /* ring offset from which peek hands out */
	size_t n_acked;  /* acknowledged but still behind an unacknowledged record */
	uint64_t next_id;
	struct spool_stats st;

	/* The file; fd is -1 without one. Byte counts cover unacked records only. */
	int fd;
	char *path, *tmp_path;
	uint64_t max_file_bytes, live_cap, compact_min;
	uint64_t file_bytes;
	uint64_t live_file_bytes; /* DISK_WRITTEN */
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
slot_at(const struct spool *sp, size_t off)
{
	return &sp->slots[(sp->head + off) % sp->cap];
}

/* ---- spool.c: the ring, which loading a file fills ---- */

/*
 * Appends a copy of a record read from the file (DISK_WRITTEN), dropping
 * the oldest records to make room. Returns 0 or -ENOMEM.
 */
int spool_ring_load(struct spool *sp, uint64_t id, const void *topic, size_t topic_len, const void *payload,
		    size_t payload_len, int qos, bool retain);

/* ---- spool_file.c: the file behind the ring ---- */

/* Opens, locks and loads the file at OPTS->path into SP. Returns 0 or -errno. */
int spool_file_open(struct spool *sp, const struct spool_options *opts);

/* One sync attempt, without back-off: append the pending records, or compact. Returns 0 or -errno. */
int spool_file_sync(struct spool *sp);

#endif
