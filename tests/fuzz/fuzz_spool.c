/*
 * Fuzz target: bytes -> a spool file -> spool_open(), the reader of
 * core/spool_read.c. Opening must always succeed; what it loads must be sane
 * (ids increasing, valid topics and QoS); a second open must find no
 * damage and exactly the same records (the first open rewrote the file),
 * and so must a third through a small memory window (spill);
 * after everything is acknowledged, a third open finds only the record
 * pushed last. Crashes, leaks and broken invariants all abort.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/crc32.h"
#include "core/log.h"
#include "core/spool.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS 64

static char dir[128];
static char path[160];
static char tmp_path[170];

static void
remove_dir(void)
{
	unlink(path);
	unlink(tmp_path);
	rmdir(dir);
}

static void
init_paths(void)
{
	if (dir[0]) {
		return;
	}
	snprintf(dir, sizeof(dir), "%s/tw-fuzz-spool-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/spool", dir);
	snprintf(tmp_path, sizeof(tmp_path), "%s.tmp", path);
	atexit(remove_dir);
	log_set_level(LOG_ERROR);
}

struct seen {
	uint64_t id;
	uint32_t crc; /* of topic and payload */
	int qos;
	bool retain;
};

static struct spool *
open_spool_as(size_t max_records, bool spill)
{
	struct spool_options o = {
		.max_records = max_records, .path = path, .max_file_bytes = 64 * 1024, .spill = spill};
	struct spool *sp = NULL;
	CHECK(spool_open(&o, &sp) == 0);
	CHECK(sp != NULL);
	return sp;
}

static struct spool *
open_spool(void)
{
	return open_spool_as(MAX_RECORDS, false);
}

/* Peeks every record, checking each (and acknowledging it when ACK); returns how many. */
static size_t
collect(struct spool *sp, struct seen *out, bool ack)
{
	size_t n = 0;
	uint64_t prev = 0;
	const struct spool_record *r;
	while ((r = spool_peek_next(sp)) != NULL) {
		CHECK(n < MAX_RECORDS);
		CHECK(r->id > prev);
		prev = r->id;
		size_t topic_len = strlen(r->topic);
		CHECK(topic_len >= 1 && topic_len <= 65535);
		CHECK(r->qos >= 0 && r->qos <= 2);
		CHECK(r->payload_len <= SPOOL_MAX_PAYLOAD_BYTES);
		CHECK(r->payload != NULL);
		out[n].id = r->id;
		out[n].crc = crc32_ieee_update(crc32_ieee(r->topic, topic_len + 1), r->payload, r->payload_len);
		out[n].qos = r->qos;
		out[n].retain = r->retain;
		n++;
		if (ack) {
			spool_ack(sp, r->id);
		}
	}
	return n;
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/*
 * libFuzzer cannot forge a CRC, so records it mutates never get past the
 * checksum. In this mode every frame with a known magic and a length that
 * fits gets its CRC recomputed, which lets the fuzzer reach the checks on
 * ids, QoS, topics and ack values behind it.
 */
static void
fix_crcs(uint8_t *buf, size_t len)
{
	size_t off = 0;
	while (off + 12 <= len) {
		uint32_t magic = le32(buf + off), body = le32(buf + off + 4);
		if ((magic == 0x445053FEu || magic == 0x415053FEu) && body <= len - off - 12) {
			uint32_t crc = crc32_ieee_update(crc32_ieee(buf + off + 4, 4), buf + off + 12, body);
			for (int i = 0; i < 4; i++) {
				buf[off + 8 + i] = (uint8_t)(crc >> (8 * i));
			}
			off += 12 + body;
		} else {
			off++;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	init_paths();
	uint8_t *fixed = NULL;
	/* First byte odd: the rest is the file, CRCs fixed up; otherwise the input is the file as is. */
	if (size > 0 && (data[0] & 1)) {
		fixed = malloc(size);
		CHECK(fixed != NULL);
		memcpy(fixed, data + 1, size - 1);
		size--;
		fix_crcs(fixed, size);
		data = fixed;
	}
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	CHECK(size == 0 || fwrite(data, 1, size, f) == size);
	CHECK(fclose(f) == 0);

	struct seen first[MAX_RECORDS], again[MAX_RECORDS];
	memset(first, 0, sizeof(first)); /* padding too: they are compared with memcmp */
	memset(again, 0, sizeof(again));
	struct spool *sp = open_spool();
	struct spool_stats st;
	spool_get_stats(sp, &st);
	CHECK(st.pushed == 0);
	CHECK(st.depth <= MAX_RECORDS);
	/* A damaged run needs at least one byte. */
	CHECK(st.corrupt_records <= size);
	/* Every record loaded costs at least 25 bytes of input. */
	CHECK(st.depth * 25 <= size);
	size_t n = collect(sp, first, false);
	CHECK(n == st.depth);
	spool_close(sp);

	sp = open_spool();
	spool_get_stats(sp, &st);
	CHECK(st.corrupt_records == 0);
	CHECK(st.dropped == 0);
	CHECK(collect(sp, again, false) == n);
	CHECK(n == 0 || memcmp(first, again, n * sizeof(first[0])) == 0);
	spool_close(sp);

	/* The same records through a 4-record memory window, read back from the file; delivered as they come. */
	sp = open_spool_as(4, true);
	spool_get_stats(sp, &st);
	CHECK(st.corrupt_records == 0);
	CHECK(st.depth == n);
	CHECK(st.memory_records <= 4);
	memset(again, 0, sizeof(again));
	CHECK(collect(sp, again, true) == n);
	CHECK(n == 0 || memcmp(first, again, n * sizeof(first[0])) == 0);
	spool_get_stats(sp, &st);
	CHECK(st.depth == 0);
	CHECK(spool_push(sp, "t/last", "x", 1, 1, false) == 0);
	const struct spool_record *last = spool_peek_next(sp);
	CHECK(last != NULL);
	uint64_t last_id = last->id;
	CHECK(n == 0 || last_id > first[n - 1].id);
	spool_close(sp);

	sp = open_spool();
	spool_get_stats(sp, &st);
	CHECK(st.corrupt_records == 0);
	if (last_id <= (UINT64_C(1) << 62)) {
		CHECK(st.depth == 1);
		last = spool_peek_next(sp);
		CHECK(last != NULL && last->id == last_id);
		CHECK(strcmp(last->topic, "t/last") == 0);
	} else {
		/* Past the id sanity bound records stay in memory only (spool.h). */
		CHECK(st.depth == 0);
	}
	spool_close(sp);
	free(fixed);
	return 0;
}
