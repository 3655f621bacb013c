/*
 * The MQTT spool: ring order and drops, out-of-order acknowledgements,
 * rewind, the file across close and crash, the file cap, write failures,
 * and recovery from more than a thousand damaged files checked against a
 * model of which records were touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/log.h"
#include "core/spool.h"

/* ---- helpers ---- */

static char test_dir[256];
static char spool_path[300];

/* tmpfs when there is one: the corruption cases do thousands of fsyncs. */
static int
setup_dir(void **state)
{
	(void)state;
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	snprintf(test_dir, sizeof(test_dir), "%s/tw-spool-XXXXXX", base);
	assert_non_null(mkdtemp(test_dir));
	snprintf(spool_path, sizeof(spool_path), "%s/spool", test_dir);
	return 0;
}

static int
teardown_dir(void **state)
{
	(void)state;
	char p[320];
	unlink(spool_path);
	snprintf(p, sizeof(p), "%s.tmp", spool_path);
	unlink(p);
	snprintf(p, sizeof(p), "%s/file", test_dir);
	unlink(p);
	rmdir(test_dir);
	return 0;
}

static struct spool *
open_mem(size_t max_records)
{
	struct spool_options o = {.max_records = max_records};
	struct spool *sp = NULL;
	assert_int_equal(spool_open(&o, &sp), 0);
	assert_non_null(sp);
	return sp;
}

static struct spool *
open_file(size_t max_records, uint64_t max_file_bytes)
{
	struct spool_options o = {.max_records = max_records, .path = spool_path, .max_file_bytes = max_file_bytes};
	struct spool *sp = NULL;
	assert_int_equal(spool_open(&o, &sp), 0);
	assert_non_null(sp);
	return sp;
}

static void
push_text(struct spool *sp, const char *topic, const char *payload)
{
	assert_int_equal(spool_push(sp, topic, payload, strlen(payload), 1, false), 0);
}

/* Payload "p<ID>" on topic "tw/dev/state". */
static void
push_numbered(struct spool *sp, unsigned n)
{
	char payload[32];
	snprintf(payload, sizeof(payload), "p%u", n);
	push_text(sp, "tw/dev/state", payload);
}

static void
expect_next(struct spool *sp, uint64_t id)
{
	const struct spool_record *r = spool_peek_next(sp);
	assert_non_null(r);
	assert_int_equal(r->id, id);
	char payload[32];
	snprintf(payload, sizeof(payload), "p%" PRIu64, id);
	assert_int_equal(r->payload_len, strlen(payload));
	assert_memory_equal(r->payload, payload, r->payload_len);
	assert_string_equal(r->topic, "tw/dev/state");
}

static struct spool_stats
stats(const struct spool *sp)
{
	struct spool_stats st;
	memset(&st, 0xff, sizeof(st));
	spool_get_stats(sp, &st);
	return st;
}

/* ---- the memory ring ---- */

static void
test_order_and_ids(void **state)
{
	(void)state;
	struct spool *sp = open_mem(10);
	assert_int_equal(spool_push(sp, "tw/a", "one", 3, 0, true), 0);
	assert_int_equal(spool_push(sp, "tw/b", "", 0, 1, false), 0);
	assert_int_equal(spool_push(sp, "tw/c", NULL, 0, 2, false), 0);
	struct spool_stats st = stats(sp);
	assert_int_equal(st.pushed, 3);
	assert_int_equal(st.depth, 3);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.file_bytes, 0);

	const struct spool_record *r = spool_peek_next(sp);
	assert_non_null(r);
	assert_int_equal(r->id, 1);
	assert_string_equal(r->topic, "tw/a");
	assert_int_equal(r->payload_len, 3);
	assert_memory_equal(r->payload, "one", 3);
	assert_int_equal(r->qos, 0);
	assert_true(r->retain);
	r = spool_peek_next(sp);
	assert_int_equal(r->id, 2);
	assert_string_equal(r->topic, "tw/b");
	assert_int_equal(r->payload_len, 0);
	assert_int_equal(r->qos, 1);
	assert_false(r->retain);
	r = spool_peek_next(sp);
	assert_int_equal(r->id, 3);
	assert_int_equal(r->qos, 2);
	assert_null(spool_peek_next(sp));
	/* Handed out but not acknowledged: still waiting. */
	assert_int_equal(stats(sp).depth, 3);

	spool_ack(sp, 1);
	spool_ack(sp, 2);
	spool_ack(sp, 3);
	assert_int_equal(stats(sp).depth, 0);
	push_text(sp, "tw/d", "x");
	r = spool_peek_next(sp);
	assert_int_equal(r->id, 4);
	assert_int_equal(spool_sync(sp), 0); /* memory only: nothing to do */
	spool_close(sp);
	spool_close(NULL);
}

static void
test_invalid_arguments(void **state)
{
	(void)state;
	struct spool_options o = {.max_records = 0};
	struct spool *sp = NULL;
	assert_int_equal(spool_open(&o, &sp), -EINVAL);
	assert_null(sp);
	sp = open_mem(4);
	char big[8] = "x";
	assert_int_equal(spool_push(sp, "t", big, 1, 3, false), -EINVAL);
	assert_int_equal(spool_push(sp, "t", big, 1, -1, false), -EINVAL);
	assert_int_equal(spool_push(sp, "", big, 1, 0, false), -EINVAL);
	assert_int_equal(spool_push(sp, "t", NULL, 1, 0, false), -EINVAL);
	/* The size is checked before the payload is read. */
	assert_int_equal(spool_push(sp, "t", big, SPOOL_MAX_PAYLOAD_BYTES + 1, 0, false), -EMSGSIZE);
	char *topic = malloc(65537);
	assert_non_null(topic);
	memset(topic, 'a', 65536);
	topic[65536] = '\0';
	assert_int_equal(spool_push(sp, topic, big, 1, 0, false), -EINVAL);
	topic[65535] = '\0';
	assert_int_equal(spool_push(sp, topic, big, 1, 0, false), 0);
	free(topic);
	struct spool_stats st = stats(sp);
	assert_int_equal(st.pushed, 1);
	assert_int_equal(st.depth, 1);
	spool_close(sp);
}

static void
test_drop_oldest_when_full(void **state)
{
	(void)state;
	struct spool *sp = open_mem(5);
	for (unsigned i = 1; i <= 8; i++) {
		push_numbered(sp, i);
	}
	struct spool_stats st = stats(sp);
	assert_int_equal(st.pushed, 8);
	assert_int_equal(st.dropped, 3);
	assert_int_equal(st.depth, 5);
	for (uint64_t id = 4; id <= 8; id++) {
		expect_next(sp, id);
	}
	assert_null(spool_peek_next(sp));
	/* 1000 more through a 5-record ring: exactly 1000 more drops. */
	for (unsigned i = 9; i <= 1008; i++) {
		push_numbered(sp, i);
	}
	st = stats(sp);
	assert_int_equal(st.dropped, 1003);
	assert_int_equal(st.depth, 5);
	expect_next(sp, 1004);
	spool_close(sp);
}

static void
test_drop_handed_out_records(void **state)
{
	(void)state;
	struct spool *sp = open_mem(3);
	push_numbered(sp, 1);
	push_numbered(sp, 2);
	push_numbered(sp, 3);
	expect_next(sp, 1);
	expect_next(sp, 2);
	/* Newest data wins even over records in flight. */
	push_numbered(sp, 4);
	push_numbered(sp, 5);
	struct spool_stats st = stats(sp);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.depth, 3);
	expect_next(sp, 3);
	expect_next(sp, 4);
	expect_next(sp, 5);
	assert_null(spool_peek_next(sp));
	/* A late PUBACK for a dropped record changes nothing. */
	spool_ack(sp, 1);
	spool_ack(sp, 2);
	assert_int_equal(stats(sp).depth, 3);
	spool_ack(sp, 3);
	assert_int_equal(stats(sp).depth, 2);
	spool_rewind(sp);
	expect_next(sp, 4);
	expect_next(sp, 5);
	assert_null(spool_peek_next(sp));
	spool_close(sp);
}

static void
test_out_of_order_acks(void **state)
{
	(void)state;
	struct spool *sp = open_mem(10);
	for (unsigned i = 1; i <= 5; i++) {
		push_numbered(sp, i);
	}
	for (uint64_t id = 1; id <= 5; id++) {
		expect_next(sp, id);
	}
	spool_ack(sp, 3);
	spool_ack(sp, 5);
	assert_int_equal(stats(sp).depth, 3);
	spool_ack(sp, 1);
	assert_int_equal(stats(sp).depth, 2);
	spool_ack(sp, 99); /* never existed */
	spool_ack(sp, 0);
	spool_ack(sp, 3); /* twice */
	assert_int_equal(stats(sp).depth, 2);
	/* After a disconnect only 2 and 4 come back. */
	spool_rewind(sp);
	expect_next(sp, 2);
	expect_next(sp, 4);
	assert_null(spool_peek_next(sp));
	spool_ack(sp, 4);
	assert_int_equal(stats(sp).depth, 1);
	spool_ack(sp, 2);
	assert_int_equal(stats(sp).depth, 0);
	assert_null(spool_peek_next(sp));
	push_numbered(sp, 6);
	expect_next(sp, 6);
	/* The ring wraps: many rounds through 10 slots keep order. */
	for (unsigned i = 7; i <= 40; i++) {
		push_numbered(sp, i);
		expect_next(sp, i);
		spool_ack(sp, i - 1);
	}
	assert_int_equal(stats(sp).depth, 1);
	assert_int_equal(stats(sp).dropped, 0);
	spool_close(sp);
}

static void
test_rewind_after_disconnect(void **state)
{
	(void)state;
	struct spool *sp = open_mem(10);
	for (unsigned i = 1; i <= 5; i++) {
		push_numbered(sp, i);
	}
	expect_next(sp, 1);
	expect_next(sp, 2);
	expect_next(sp, 3);
	spool_ack(sp, 2);
	spool_rewind(sp);
	expect_next(sp, 1);
	expect_next(sp, 3);
	expect_next(sp, 4);
	/* A second rewind in the middle of the replay starts over again. */
	spool_rewind(sp);
	expect_next(sp, 1);
	expect_next(sp, 3);
	expect_next(sp, 4);
	expect_next(sp, 5);
	assert_null(spool_peek_next(sp));
	spool_close(sp);
}

/* ---- the file ---- */

static void
test_reopen_after_close(void **state)
{
	(void)state;
	struct spool *sp = open_file(100, 0);
	for (unsigned i = 1; i <= 10; i++) {
		push_numbered(sp, i);
	}
	assert_int_equal(stats(sp).file_bytes, 0); /* nothing written before a sync */
	assert_int_equal(spool_sync(sp), 0);
	/* "tw/dev/state" records: 24 + 12 + 2 bytes for "p1".."p9", 39 for "p10". */
	assert_int_equal(stats(sp).file_bytes, 9 * 38 + 39);
	expect_next(sp, 1);
	expect_next(sp, 2);
	expect_next(sp, 3);
	spool_ack(sp, 1);
	spool_ack(sp, 2);
	spool_ack(sp, 5);
	spool_close(sp);

	sp = open_file(100, 0);
	struct spool_stats st = stats(sp);
	assert_int_equal(st.corrupt_records, 0);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.pushed, 0);
	/* 3..10: the contiguous acknowledged prefix is gone, 5 (acked out of order) is back. */
	assert_int_equal(st.depth, 8);
	/* Nothing rewritten in place: the 10 records plus one 20-byte ack record "gone up to 2". */
	assert_int_equal(st.file_bytes, 9 * 38 + 39 + 20);
	for (uint64_t id = 3; id <= 10; id++) {
		expect_next(sp, id);
	}
	assert_null(spool_peek_next(sp));
	push_numbered(sp, 11);
	expect_next(sp, 11);
	for (uint64_t id = 3; id <= 11; id++) {
		spool_ack(sp, id);
	}
	/* Record 11 was delivered before any sync: it is never written. */
	assert_int_equal(spool_sync(sp), 0);
	assert_int_equal(stats(sp).file_bytes, 9 * 38 + 39 + 20 + 20);
	assert_int_equal(stats(sp).depth, 0);
	spool_close(sp);

	/* Everything delivered: nothing comes back, and ids continue. */
	sp = open_file(100, 0);
	st = stats(sp);
	assert_int_equal(st.depth, 0);
	assert_int_equal(st.corrupt_records, 0);
	assert_null(spool_peek_next(sp));
	push_numbered(sp, 12);
	expect_next(sp, 12);
	spool_close(sp);
}

static void
test_second_opener_is_refused(void **state)
{
	(void)state;
	struct spool *sp = open_file(10, 0);
	struct spool_options o = {.max_records = 10, .path = spool_path};
	struct spool *other = NULL;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* flock belongs to the open file description: only another open() conflicts. */
		_exit(spool_open(&o, &other) == -EBUSY ? 0 : 1);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	spool_close(sp);
}

/* The crash: a child writes, syncs and dies without spool_close(). */
static void
crash_child_push(void)
{
	struct spool_options o = {.max_records = 1000, .path = spool_path};
	struct spool *sp = NULL;
	if (spool_open(&o, &sp) != 0) {
		_exit(10);
	}
	for (unsigned i = 1; i <= 100; i++) {
		char payload[32];
		snprintf(payload, sizeof(payload), "p%u", i);
		if (spool_push(sp, "tw/dev/state", payload, strlen(payload), 1, false) != 0) {
			_exit(11);
		}
		if (i % 25 == 0 && spool_sync(sp) != 0) {
			_exit(12);
		}
	}
	/* Pushed after the last sync: allowed to be lost. */
	for (unsigned i = 101; i <= 105; i++) {
		if (spool_push(sp, "tw/dev/state", "late", 4, 1, false) != 0) {
			_exit(13);
		}
	}
	_exit(0);
}

static void
crash_child_ack(void)
{
	struct spool_options o = {.max_records = 1000, .path = spool_path};
	struct spool *sp = NULL;
	if (spool_open(&o, &sp) != 0) {
		_exit(20);
	}
	for (unsigned i = 1; i <= 40; i++) {
		if (!spool_peek_next(sp)) {
			_exit(21);
		}
	}
	/* 1..39 out of order, 40 never: the durable marker is 39. */
	for (uint64_t id = 39; id >= 1; id--) {
		spool_ack(sp, id);
	}
	if (spool_sync(sp) != 0) {
		_exit(22);
	}
	if (spool_push(sp, "tw/dev/state", "late", 4, 1, false) != 0) {
		_exit(23);
	}
	_exit(0);
}

static void
run_child(void (*fn)(void))
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fn();
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void
test_restart_after_crash(void **state)
{
	(void)state;
	run_child(crash_child_push);
	/* A compaction cut short by the crash left its temporary file behind. */
	char tmp[320];
	snprintf(tmp, sizeof(tmp), "%s.tmp", spool_path);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fputs("half a compaction", f);
	fclose(f);

	struct spool *sp = open_file(1000, 0);
	assert_int_equal(access(tmp, F_OK), -1);
	struct spool_stats st = stats(sp);
	assert_int_equal(st.depth, 100);
	assert_int_equal(st.corrupt_records, 0);
	for (uint64_t id = 1; id <= 100; id++) {
		expect_next(sp, id);
	}
	assert_null(spool_peek_next(sp));
	push_numbered(sp, 101);
	expect_next(sp, 101); /* ids continue after the file's last one */
	spool_close(sp);

	/* Now 1..101 are in the file; a child acknowledges 1..39 and crashes. */
	run_child(crash_child_ack);
	sp = open_file(1000, 0);
	st = stats(sp);
	assert_int_equal(st.depth, 62);
	assert_int_equal(st.corrupt_records, 0);
	for (uint64_t id = 40; id <= 101; id++) {
		expect_next(sp, id);
	}
	assert_null(spool_peek_next(sp));
	spool_close(sp);
}

static void
test_file_cap_drops_oldest(void **state)
{
	(void)state;
	/* 24 + 3 + 485 = 512 bytes a record; 3/4 of 8192 = 6144 = 12 records. */
	char payload[486];
	memset(payload, 'x', 485);
	payload[485] = '\0';
	struct spool *sp = open_file(1000, 8192);
	for (unsigned i = 1; i <= 100; i++) {
		snprintf(payload, 8, "%07u", i);
		payload[7] = 'x';
		assert_int_equal(spool_push(sp, "t/x", payload, 485, 1, false), 0);
		if (i % 10 == 0) {
			assert_int_equal(spool_sync(sp), 0);
			assert_true(stats(sp).file_bytes <= 8192);
		}
	}
	struct spool_stats st = stats(sp);
	assert_int_equal(st.pushed, 100);
	assert_int_equal(st.dropped, 88);
	assert_int_equal(st.depth, 12);
	assert_int_equal(st.write_errors, 0);
	spool_close(sp);

	sp = open_file(1000, 8192);
	st = stats(sp);
	assert_int_equal(st.depth, 12);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.corrupt_records, 0);
	/* The ack marker record (20 bytes) plus 12 records. */
	assert_int_equal(st.file_bytes, 20 + 12 * 512);
	for (unsigned id = 89; id <= 100; id++) {
		const struct spool_record *r = spool_peek_next(sp);
		assert_non_null(r);
		assert_int_equal(r->id, id);
		snprintf(payload, 8, "%07u", id);
		assert_memory_equal(r->payload, payload, 7);
	}
	/* A record bigger than the whole file cap is kept, in memory only. */
	char *huge = calloc(1, 7000);
	assert_non_null(huge);
	assert_int_equal(spool_push(sp, "t/huge", huge, 7000, 1, false), 0);
	free(huge);
	assert_int_equal(spool_sync(sp), 0);
	assert_int_equal(stats(sp).depth, 13);
	assert_true(stats(sp).file_bytes <= 8192);
	spool_close(sp);
}

static void
test_fewer_records_on_reopen(void **state)
{
	(void)state;
	struct spool *sp = open_file(20, 0);
	for (unsigned i = 1; i <= 20; i++) {
		push_numbered(sp, i);
	}
	spool_close(sp);
	/* A smaller ring keeps only the newest; the rest count as dropped. */
	sp = open_file(5, 0);
	struct spool_stats st = stats(sp);
	assert_int_equal(st.depth, 5);
	assert_int_equal(st.dropped, 15);
	for (uint64_t id = 16; id <= 20; id++) {
		expect_next(sp, id);
	}
	spool_close(sp);
	sp = open_file(20, 0);
	st = stats(sp);
	assert_int_equal(st.depth, 5);
	assert_int_equal(st.dropped, 0);
	expect_next(sp, 16);
	spool_close(sp);
}

static void
test_unwritable_path(void **state)
{
	(void)state;
	char file[300], bad[320];
	snprintf(file, sizeof(file), "%s/file", test_dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	/* A parent that is a regular file stops root too. */
	snprintf(bad, sizeof(bad), "%s/spool", file);
	struct spool_options o = {.max_records = 10, .path = bad};
	struct spool *sp = NULL;
	assert_int_equal(spool_open(&o, &sp), -ENOTDIR);
	assert_null(sp);
}

#define CHILD_CHECK(cond)                                                                                      \
	do {                                                                                                   \
		if (!(cond)) {                                                                                 \
			fprintf(stderr, "child check failed: %s (line %d)\n", #cond, __LINE__);                \
			_exit(1);                                                                              \
		}                                                                                              \
	} while (0)

/* File writes fail (RLIMIT_FSIZE: EFBIG, like a full disk); memory carries on. */
static void
write_error_child(void)
{
	signal(SIGXFSZ, SIG_IGN);
	struct spool_options o = {.max_records = 1000, .path = spool_path};
	struct spool *sp = NULL;
	CHILD_CHECK(spool_open(&o, &sp) == 0);
	struct rlimit lim = {.rlim_cur = 2048, .rlim_max = RLIM_INFINITY};
	CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	unsigned long warnings = log_warning_count();
	char payload[200];
	memset(payload, 'y', sizeof(payload));
	for (unsigned i = 1; i <= 50; i++) {
		CHILD_CHECK(spool_push(sp, "tw/dev/state", payload, sizeof(payload), 1, false) == 0);
	}
	CHILD_CHECK(spool_sync(sp) == -EFBIG);
	for (int i = 0; i < 20; i++) {
		CHILD_CHECK(spool_push(sp, "tw/dev/state", payload, sizeof(payload), 1, false) == 0);
		CHILD_CHECK(spool_sync(sp) < 0);
	}
	struct spool_stats st;
	spool_get_stats(sp, &st);
	CHILD_CHECK(st.write_errors == 1); /* back-off: no retry within a second */
	CHILD_CHECK(st.depth == 70);
	CHILD_CHECK(st.dropped == 0);
	CHILD_CHECK(st.file_bytes == 0); /* the torn tail was cut */
	CHILD_CHECK(log_warning_count() - warnings == 1);
	for (uint64_t id = 1; id <= 70; id++) {
		const struct spool_record *r = spool_peek_next(sp);
		CHILD_CHECK(r && r->id == id && r->payload_len == sizeof(payload));
	}
	CHILD_CHECK(spool_peek_next(sp) == NULL);
	for (uint64_t id = 1; id <= 70; id++) {
		spool_ack(sp, id);
	}
	spool_get_stats(sp, &st);
	CHILD_CHECK(st.depth == 0);

	/* Still failing after the back-off: counted, but no second warning within the minute. */
	struct timespec pause = {.tv_sec = 1, .tv_nsec = 100000000};
	for (int i = 0; i < 10; i++) {
		CHILD_CHECK(spool_push(sp, "tw/dev/state", payload, sizeof(payload), 1, false) == 0);
	}
	nanosleep(&pause, NULL);
	CHILD_CHECK(spool_sync(sp) == -EFBIG);
	spool_get_stats(sp, &st);
	CHILD_CHECK(st.write_errors == 2);
	CHILD_CHECK(log_warning_count() - warnings == 1);

	/* The disk has room again: after the (now 2 s) back-off the records are written. */
	lim.rlim_cur = RLIM_INFINITY;
	CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	CHILD_CHECK(spool_sync(sp) == -EFBIG); /* still backing off */
	pause.tv_sec = 2;
	nanosleep(&pause, NULL);
	CHILD_CHECK(spool_sync(sp) == 0);
	spool_get_stats(sp, &st);
	CHILD_CHECK(st.file_bytes == 10 * (24 + 12 + 200));
	spool_close(sp);
	_exit(0);
}

static void
test_write_errors_keep_memory(void **state)
{
	(void)state;
	run_child(write_error_child);
	struct spool *sp = open_file(1000, 0);
	struct spool_stats st = stats(sp);
	assert_int_equal(st.corrupt_records, 0);
	assert_int_equal(st.depth, 10);
	const struct spool_record *r = spool_peek_next(sp);
	assert_non_null(r);
	assert_int_equal(r->id, 71);
	spool_close(sp);
}

/* ---- spill: the file holds what memory does not ---- */

#define BIG_PAYLOAD 1000

static struct spool *
open_spill(size_t max_records, uint64_t max_file_bytes)
{
	struct spool_options o = {
		.max_records = max_records, .path = spool_path, .max_file_bytes = max_file_bytes, .spill = true};
	struct spool *sp = NULL;
	assert_int_equal(spool_open(&o, &sp), 0);
	assert_non_null(sp);
	return sp;
}

/* A 1000-byte payload that names its record: "p<N>" then x. */
static void
push_big(struct spool *sp, unsigned n)
{
	char payload[BIG_PAYLOAD];
	memset(payload, 'x', sizeof(payload));
	int k = snprintf(payload, sizeof(payload), "p%u", n);
	payload[k] = '.';
	assert_int_equal(spool_push(sp, "tw/dev/state", payload, sizeof(payload), 1, false), 0);
}

static void
check_big(const struct spool_record *r, uint64_t id)
{
	assert_non_null(r);
	assert_int_equal(r->id, id);
	char head[32];
	int k = snprintf(head, sizeof(head), "p%" PRIu64 ".", id);
	assert_int_equal(r->payload_len, BIG_PAYLOAD);
	assert_memory_equal(r->payload, head, (size_t)k);
	assert_int_equal(((const char *)r->payload)[BIG_PAYLOAD - 1], 'x');
	assert_string_equal(r->topic, "tw/dev/state");
}

static size_t
heap_in_use(void)
{
	return mallinfo2().uordblks;
}

/* What memory the spool holds never passes its bound, and the heap does not grow with the backlog. */
static void
check_bounded(const struct spool *sp, size_t max_records, size_t heap_base, size_t *heap_peak)
{
	struct spool_stats st = stats(sp);
	assert_true(st.memory_records <= max_records);
	assert_true(st.memory_bytes <= max_records * (BIG_PAYLOAD + 16));
	size_t heap = heap_in_use();
	if (heap > *heap_peak) {
		*heap_peak = heap;
	}
	/* the records in memory, the read window and the write buffer (64 KiB each), some slack */
	assert_true(heap < heap_base + max_records * (BIG_PAYLOAD + 64) + 256 * 1024);
}

/*
 * A full disk behind a spill (goal A10): the run waits in the file, the
 * newest records in memory cannot be written. The memory they hold must
 * yield to the run, or the head never refills and sending stops for as long
 * as the disk is full (before: nothing after the first window came out).
 * Expected: the run in order, then the newest of memory; what is missing
 * was dropped and counted.
 */
static void
spill_full_disk_child(void)
{
	signal(SIGXFSZ, SIG_IGN);
	struct spool_options o = {.max_records = 8, .path = spool_path, .spill = true};
	struct spool *sp = NULL;
	CHILD_CHECK(spool_open(&o, &sp) == 0);
	char payload[BIG_PAYLOAD];
	memset(payload, 'x', sizeof(payload));
	for (unsigned i = 1; i <= 20; i++) {
		CHILD_CHECK(spool_push(sp, "tw/dev/state", payload, sizeof(payload), 1, false) == 0);
		CHILD_CHECK(spool_sync(sp) == 0);
	}
	struct stat fst;
	CHILD_CHECK(stat(spool_path, &fst) == 0);
	struct rlimit lim = {.rlim_cur = (rlim_t)fst.st_size, .rlim_max = RLIM_INFINITY};
	CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	for (unsigned i = 21; i <= 40; i++) {
		CHILD_CHECK(spool_push(sp, "tw/dev/state", payload, sizeof(payload), 1, false) == 0);
		CHILD_CHECK(spool_sync(sp) < 0);
	}
	uint64_t got[40], n = 0;
	for (const struct spool_record *r; n < 40 && (r = spool_peek_next(sp)) != NULL;) {
		got[n++] = r->id;
		spool_ack(sp, r->id);
	}
	struct spool_stats st;
	spool_get_stats(sp, &st);
	CHILD_CHECK(n >= 20);
	for (uint64_t i = 0; i < 20; i++) {
		CHILD_CHECK(got[i] == i + 1); /* the whole run, in order */
	}
	for (uint64_t i = 20; i < n; i++) {
		CHILD_CHECK(got[i] > got[i - 1]);
	}
	CHILD_CHECK(got[n - 1] == 40); /* the newest kept */
	CHILD_CHECK(st.dropped == 40 - n && st.depth == 0);
	CHILD_CHECK(st.memory_records <= 8);
	/* live records still go through while the disk stays full */
	CHILD_CHECK(spool_push(sp, "tw/dev/state", payload, sizeof(payload), 1, false) == 0);
	const struct spool_record *r = spool_peek_next(sp);
	CHILD_CHECK(r && r->id == 41);
	spool_close(sp);
	_exit(0);
}

static void
test_spill_full_disk_keeps_sending(void **state)
{
	(void)state;
	run_child(spill_full_disk_child);
}

/*
 * Finding 1: a long outage with a small memory bound and a file. 5,000
 * records of 1 KB (5 MB) through a 16-record memory window: none dropped,
 * delivered in order after the outage while new records keep coming, with
 * a disconnect in the middle; memory and heap stay bounded throughout.
 */
static void
test_spill_long_outage(void **state)
{
	(void)state;
	const size_t window = 16;
	struct spool *sp = open_spill(window, 0);
	push_big(sp, 1);
	assert_int_equal(spool_sync(sp), 0);
	size_t base = heap_in_use(), peak = base;
	unsigned pushed_n = 1;
	while (pushed_n < 5000) {
		push_big(sp, ++pushed_n);
		if (pushed_n % 4 == 0) {
			/* once a second at 4 Hz: the tail (half the window) holds what waits for a sync */
			assert_int_equal(spool_sync(sp), 0);
		}
		check_bounded(sp, window, base, &peak);
	}
	assert_int_equal(spool_sync(sp), 0);
	struct spool_stats st = stats(sp);
	assert_int_equal(st.pushed, 5000);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.depth, 5000);
	assert_int_equal(st.file_bytes, 5000 * (24 + 12 + BIG_PAYLOAD));

	/* The broker is back: 4 in flight, acknowledged out of order, new records keep coming. */
	uint64_t next = 1, inflight[4];
	size_t n_inflight = 0;
	unsigned delivered = 0;
	bool reconnected = false;
	while (delivered < pushed_n) {
		while (n_inflight < 4) {
			const struct spool_record *r = spool_peek_next(sp);
			if (!r) {
				break;
			}
			check_big(r, next++);
			inflight[n_inflight++] = r->id;
		}
		assert_true(n_inflight > 0);
		if (!reconnected && delivered >= 2500) {
			/* the link drops with 4 in flight: they come back, in order */
			reconnected = true;
			spool_rewind(sp);
			next = inflight[0];
			n_inflight = 0;
			continue;
		}
		/* PUBACKs in reverse order */
		while (n_inflight > 0) {
			spool_ack(sp, inflight[--n_inflight]);
			delivered++;
		}
		if (delivered % 20 == 0 && pushed_n < 6000) {
			push_big(sp, ++pushed_n);
			assert_int_equal(spool_sync(sp), 0);
		}
		check_bounded(sp, window, base, &peak);
	}
	assert_null(spool_peek_next(sp));
	st = stats(sp);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.depth, 0);
	assert_int_equal(next - 1, pushed_n);
	printf("spill: %u records of %u bytes through a %zu-record window, heap peak +%zu KiB\n", pushed_n,
	       BIG_PAYLOAD, window, (peak - base) / 1024);
	spool_close(sp);
}

/* A restart in the middle of a spilled backlog: the file gives back the rest, in order, into a small window. */
static void
test_spill_reopen(void **state)
{
	(void)state;
	struct spool *sp = open_spill(8, 0);
	for (unsigned i = 1; i <= 3000; i++) {
		push_big(sp, i);
		if (i % 4 == 0) {
			assert_int_equal(spool_sync(sp), 0);
		}
	}
	for (uint64_t id = 1; id <= 1000; id++) {
		check_big(spool_peek_next(sp), id);
		spool_ack(sp, id);
	}
	spool_close(sp);

	sp = open_spill(8, 0);
	struct spool_stats st = stats(sp);
	assert_int_equal(st.depth, 2000);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.corrupt_records, 0);
	assert_true(st.memory_records <= 8);
	for (uint64_t id = 1001; id <= 1500; id++) {
		check_big(spool_peek_next(sp), id);
		spool_ack(sp, id);
	}
	push_big(sp, 3001);
	spool_close(sp);

	/* The same file without spill: the format did not change, the ring keeps the newest 100. */
	struct spool *plain = open_file(100, 0);
	st = stats(plain);
	assert_int_equal(st.depth, 100);
	assert_int_equal(st.dropped, 1401);
	check_big(spool_peek_next(plain), 2902);
	spool_close(plain);
}

/* The file cap still bounds the spool: the oldest go, counted, and order holds. */
static void
test_spill_file_cap(void **state)
{
	(void)state;
	/* 1036 bytes a record; 3/4 of 256 KiB holds 189 of them */
	struct spool *sp = open_spill(10, 256 * 1024);
	for (unsigned i = 1; i <= 1000; i++) {
		push_big(sp, i);
		if (i % 7 == 0) {
			assert_int_equal(spool_sync(sp), 0);
			assert_true(stats(sp).file_bytes <= 256 * 1024);
		}
	}
	assert_int_equal(spool_sync(sp), 0);
	struct spool_stats st = stats(sp);
	assert_int_equal(st.depth, 189);
	assert_int_equal(st.dropped, 1000 - 189);
	assert_true(st.memory_records <= 10);
	for (uint64_t id = 1000 - 189 + 1; id <= 1000; id++) {
		check_big(spool_peek_next(sp), id);
		spool_ack(sp, id);
	}
	assert_null(spool_peek_next(sp));
	spool_close(sp);
}

/*
 * Random pushes, syncs, hand-outs, out-of-order acknowledgements and
 * rewinds through small windows, with a file (spill) and without: records come out in order, each record
 * is either delivered, dropped (counted) or still waiting, and memory
 * never holds more than the window.
 */
static void
test_spill_random_ops(void **state)
{
	(void)state;
	uint64_t rng = 0x5eed0003;
	for (int round = 0; round < 40; round++) {
		unlink(spool_path);
		size_t window = 2 + (size_t)(rng % 11);
		/* odd rounds: memory only, where a drop in front of acknowledged records was counted twice */
		struct spool *sp = round % 2 ? open_mem(window) : open_spill(window, 0);
		static bool acked[4001];
		memset(acked, 0, sizeof(acked));
		uint64_t out[8], last = 0, pushed_n = 0, acked_n = 0;
		size_t n_out = 0;
		for (int op = 0; op < 3000; op++) {
			rng ^= rng >> 12;
			rng ^= rng << 25;
			rng ^= rng >> 27;
			unsigned r = (unsigned)((rng * 2685821657736338717ull) >> 40) % 100;
			if (r < 35 && pushed_n < 4000) {
				push_big(sp, (unsigned)++pushed_n);
			} else if (r < 50) {
				assert_int_equal(spool_sync(sp), 0);
			} else if (r < 80 && n_out < 8) {
				const struct spool_record *rec = spool_peek_next(sp);
				if (rec) {
					assert_true(rec->id > last);
					check_big(rec, rec->id);
					last = rec->id;
					out[n_out++] = rec->id;
				}
			} else if (r < 97 && n_out > 0) {
				size_t k = (size_t)(rng % n_out);
				uint64_t id = out[k];
				out[k] = out[--n_out];
				if (!acked[id] && stats(sp).depth > 0) {
					uint64_t before = stats(sp).depth;
					spool_ack(sp, id);
					if (stats(sp).depth < before) {
						acked[id] = true;
						acked_n++;
					}
				}
			} else {
				spool_rewind(sp);
				n_out = 0;
				last = 0;
			}
			struct spool_stats st = stats(sp);
			assert_true(st.memory_records <= (window < 2 ? 2 : window));
			assert_int_equal(st.depth + st.dropped + acked_n, pushed_n);
		}
		spool_close(sp);
	}
}

/* ---- corruption: damaged files against a model ---- */

struct pushed {
	char topic[48];
	char payload[512];
	size_t payload_len;
	int qos;
	bool retain;
};

#define MAX_PUSHED 200
static struct pushed pushed[MAX_PUSHED + 1]; /* by id */

/* An entry of the pristine file, found by this test's own reading of the documented layout. */
struct entry {
	size_t off, len;
	bool is_ack;
	uint64_t value;
};

#define MAX_ENTRIES 256

static uint64_t rng_state;

static uint64_t
rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static unsigned
rnd_below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static uint8_t *
read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void
write_all(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	if (len > 0) {
		assert_int_equal(fwrite(buf, 1, len, f), len);
	}
	assert_int_equal(fclose(f), 0);
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t
le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32);
}

static size_t
parse_entries(const uint8_t *buf, size_t len, struct entry *e)
{
	size_t n = 0, off = 0;
	while (off < len) {
		assert_true(len - off >= 20);
		uint32_t magic = le32(buf + off);
		assert_true(magic == 0x445053FEu || magic == 0x415053FEu);
		assert_true(n < MAX_ENTRIES);
		e[n].off = off;
		e[n].len = 12 + le32(buf + off + 4);
		e[n].is_ack = magic == 0x415053FEu;
		e[n].value = le64(buf + off + 12);
		assert_true(off + e[n].len <= len);
		off += e[n].len;
		n++;
	}
	return n;
}

/*
 * A spool file written through the API: records of random topics, JSON-like
 * payloads, QoS and retain; sometimes a prefix acknowledged (an ack record);
 * sometimes a second batch. Returns the number of ids used.
 */
static unsigned
make_layout(unsigned max_payload, unsigned min_first, unsigned max_first, unsigned max_second)
{
	unlink(spool_path);
	struct spool *sp = open_file(1000, 0);
	unsigned n1 = min_first + rnd_below(max_first - min_first + 1), n2 = rnd_below(max_second + 1), id = 0;
	for (unsigned batch = 0; batch < 2; batch++) {
		unsigned n = batch == 0 ? n1 : n2;
		for (unsigned i = 0; i < n; i++) {
			struct pushed *p = &pushed[++id];
			assert_true(id <= MAX_PUSHED);
			snprintf(p->topic, sizeof(p->topic), "tw/dev%u/%s", rnd_below(100),
				 rnd_below(4) ? "state" : "alerts");
			size_t len = rnd_below(max_payload + 1);
			int k = snprintf(p->payload, sizeof(p->payload), "{\"seq\":%u,\"v\":\"", id);
			while ((size_t)k < len && (size_t)k < sizeof(p->payload) - 1) {
				p->payload[k++] = (char)('a' + rnd_below(26));
			}
			p->payload_len = len < (size_t)k ? len : (size_t)k;
			p->qos = (int)rnd_below(3);
			p->retain = rnd_below(5) == 0;
			assert_int_equal(spool_push(sp, p->topic, p->payload, p->payload_len, p->qos, p->retain), 0);
		}
		assert_int_equal(spool_sync(sp), 0);
		if (batch == 0 && rnd_below(3)) {
			/* Deliver a prefix, out of order: the next sync appends an ack record. */
			unsigned k = 1 + rnd_below(n1);
			for (unsigned i = 0; i < k; i++) {
				assert_non_null(spool_peek_next(sp));
			}
			for (unsigned i = k; i >= 1; i--) {
				spool_ack(sp, i);
			}
		}
	}
	spool_close(sp);
	return id;
}

struct expect {
	uint64_t ids[MAX_ENTRIES];
	size_t count;
	uint64_t runs;
};

/*
 * What recovery must give for DAMAGED (of LEN bytes) made from PRISTINE:
 * every data record whose bytes are all unchanged and above the highest
 * intact ack marker, and one corrupt count per maximal run of touched
 * records (a zero tail beyond the old end joins the run before it).
 */
static void
model(const uint8_t *pristine, size_t plen, const uint8_t *damaged, size_t len, struct expect *ex)
{
	static struct entry e[MAX_ENTRIES];
	size_t n = parse_entries(pristine, plen, e);
	bool bad[MAX_ENTRIES];
	uint64_t marker = 0;
	bool prev_bad = false;
	ex->count = 0;
	ex->runs = 0;
	for (size_t i = 0; i < n; i++) {
		if (e[i].off >= len) {
			bad[i] = false;
			break;
		}
		bad[i] = e[i].off + e[i].len > len || memcmp(pristine + e[i].off, damaged + e[i].off, e[i].len) != 0;
		if (bad[i] && !prev_bad) {
			ex->runs++;
		}
		prev_bad = bad[i];
		if (!bad[i] && e[i].is_ack && e[i].value > marker) {
			marker = e[i].value;
		}
	}
	if (len > plen && !prev_bad) {
		ex->runs++;
	}
	for (size_t i = 0; i < n && e[i].off < len; i++) {
		if (!bad[i] && !e[i].is_ack && e[i].value > marker) {
			ex->ids[ex->count++] = e[i].value;
		}
	}
}

static unsigned cases_run;

/* Opens DAMAGED as the spool file and checks recovery against the model, twice. */
static void
check_case(const uint8_t *pristine, size_t plen, const uint8_t *damaged, size_t len)
{
	struct expect ex;
	model(pristine, plen, damaged, len, &ex);
	write_all(spool_path, damaged, len);
	for (int round = 0; round < 2; round++) {
		struct spool *sp = open_file(1000, 0);
		struct spool_stats st = stats(sp);
		/* The first open rewrote the file: the second finds no damage. */
		assert_int_equal(st.corrupt_records, round == 0 ? ex.runs : 0);
		assert_int_equal(st.depth, ex.count);
		assert_int_equal(st.dropped, 0);
		for (size_t i = 0; i < ex.count; i++) {
			const struct spool_record *r = spool_peek_next(sp);
			assert_non_null(r);
			assert_int_equal(r->id, ex.ids[i]);
			const struct pushed *p = &pushed[r->id];
			assert_string_equal(r->topic, p->topic);
			assert_int_equal(r->payload_len, p->payload_len);
			assert_memory_equal(r->payload, p->payload, p->payload_len);
			assert_int_equal(r->qos, p->qos);
			assert_int_equal(r->retain, p->retain);
		}
		assert_null(spool_peek_next(sp));
		spool_close(sp);
	}
	cases_run++;
}

static void
test_corrupt_truncate_every_offset(void **state)
{
	(void)state;
	rng_state = 0x5eed0001;
	make_layout(60, 10, 12, 6);
	size_t plen;
	uint8_t *pristine = read_all(spool_path, &plen);
	assert_true(plen > 500);
	for (size_t cut = 0; cut <= plen; cut++) {
		check_case(pristine, plen, pristine, cut);
	}
	free(pristine);
}

enum damage {
	DAMAGE_TRUNCATE,
	DAMAGE_FLIP_BYTES,
	DAMAGE_FLIP_HEADER,
	DAMAGE_ZERO_PAGES,
	DAMAGE_ZERO_TAIL,
	DAMAGE_MIXED,
	DAMAGE_KINDS,
};

static void
zero_random_page(uint8_t *buf, size_t len)
{
	size_t pages = (len + 4095) / 4096;
	size_t start = (size_t)rnd_below((unsigned)pages) * 4096;
	size_t end = start + 4096 < len ? start + 4096 : len;
	memset(buf + start, 0, end - start);
}

static void
flip_random_bytes(uint8_t *buf, size_t len, unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		buf[rnd_below((unsigned)len)] ^= (uint8_t)(1 + rnd_below(255));
	}
}

static void
test_corrupt_generated_cases(void **state)
{
	(void)state;
	rng_state = 0x5eed0002;
	static struct entry e[MAX_ENTRIES];
	unsigned kinds[DAMAGE_KINDS] = {0};
	for (unsigned layout = 0; layout < 100; layout++) {
		make_layout(400, 20, 60, 40);
		size_t plen;
		uint8_t *pristine = read_all(spool_path, &plen);
		size_t n = parse_entries(pristine, plen, e);
		uint8_t *buf = malloc(plen + 8192);
		assert_non_null(buf);
		for (unsigned c = 0; c < DAMAGE_KINDS * 2; c++) {
			enum damage kind = (enum damage)(c % DAMAGE_KINDS);
			size_t len = plen;
			memcpy(buf, pristine, plen);
			switch (kind) {
			case DAMAGE_TRUNCATE:
				len = rnd_below((unsigned)plen + 1);
				break;
			case DAMAGE_FLIP_BYTES:
				flip_random_bytes(buf, len, 1 + rnd_below(8));
				break;
			case DAMAGE_FLIP_HEADER: {
				/* magic, length or CRC of one record */
				const struct entry *t = &e[rnd_below((unsigned)n)];
				buf[t->off + rnd_below(12)] ^= (uint8_t)(1 + rnd_below(255));
				break;
			}
			case DAMAGE_ZERO_PAGES:
				zero_random_page(buf, len);
				if (rnd_below(2)) {
					zero_random_page(buf, len);
				}
				break;
			case DAMAGE_ZERO_TAIL:
				/* What a power cut can leave: the size grew, the data never came. */
				memset(buf + plen, 0, 8192);
				len = plen + 1 + rnd_below(8191);
				break;
			case DAMAGE_MIXED:
				len = plen / 2 + rnd_below((unsigned)(plen / 2 + 1));
				if (len > 0) {
					flip_random_bytes(buf, len, 1 + rnd_below(4));
				}
				if (len > 0 && rnd_below(2)) {
					zero_random_page(buf, len);
				}
				break;
			case DAMAGE_KINDS:
				break;
			}
			check_case(pristine, plen, buf, len);
			kinds[kind]++;
		}
		free(buf);
		free(pristine);
	}
	for (int k = 0; k < DAMAGE_KINDS; k++) {
		assert_int_equal(kinds[k], 200);
	}
}

static void
test_corrupt_case_count(void **state)
{
	(void)state;
	/* Runs after the two corruption tests: the acceptance figure is at least 1,000 cases. */
	printf("spool corruption cases checked: %u\n", cases_run);
	assert_true(cases_run >= 1000);
}

/* Garbage before, between and after records: skipped, counted, never fatal. */
static void
test_corrupt_handmade(void **state)
{
	(void)state;
	struct spool *sp = open_file(100, 0);
	for (unsigned i = 1; i <= 3; i++) {
		push_numbered(sp, i);
	}
	spool_close(sp);
	size_t len;
	uint8_t *good = read_all(spool_path, &len);
	assert_int_equal(len, 3 * 38);
	/* A fake magic with an absurd length, a run of 0xFE, text, and a second copy of record 2. */
	static const uint8_t junk[] = {0xFE, 'S', 'P', 'D', 0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 0xFE, 0xFE, 0xFE, 'x'};
	uint8_t buf[512];
	size_t n = 0;
	memcpy(buf + n, junk, sizeof(junk));
	n += sizeof(junk);
	memcpy(buf + n, good, 38); /* id 1 */
	n += 38;
	memcpy(buf + n, junk, sizeof(junk));
	n += sizeof(junk);
	memcpy(buf + n, good + 38, 76); /* ids 2, 3 */
	n += 76;
	memcpy(buf + n, good + 38, 38); /* id 2 again: not above 3, so refused */
	n += 38;
	memcpy(buf + n, junk, 5);
	n += 5;
	write_all(spool_path, buf, n);
	sp = open_file(100, 0);
	struct spool_stats st = stats(sp);
	assert_int_equal(st.corrupt_records, 3);
	assert_int_equal(st.depth, 3);
	for (uint64_t id = 1; id <= 3; id++) {
		expect_next(sp, id);
	}
	spool_close(sp);
	/* An empty file and a file of zeros. */
	write_all(spool_path, buf, 0);
	sp = open_file(100, 0);
	assert_int_equal(stats(sp).corrupt_records, 0);
	assert_int_equal(stats(sp).depth, 0);
	spool_close(sp);
	memset(buf, 0, sizeof(buf));
	write_all(spool_path, buf, sizeof(buf));
	sp = open_file(100, 0);
	assert_int_equal(stats(sp).corrupt_records, 1);
	assert_int_equal(stats(sp).depth, 0);
	push_numbered(sp, 1);
	expect_next(sp, 1);
	spool_close(sp);
	free(good);
}

int
main(void)
{
	/* Thousands of damaged files: warnings are still counted, just not printed. */
	log_set_level(LOG_ERROR);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_ids),
		cmocka_unit_test(test_invalid_arguments),
		cmocka_unit_test(test_drop_oldest_when_full),
		cmocka_unit_test(test_drop_handed_out_records),
		cmocka_unit_test(test_out_of_order_acks),
		cmocka_unit_test(test_rewind_after_disconnect),
		cmocka_unit_test_setup_teardown(test_reopen_after_close, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_second_opener_is_refused, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_restart_after_crash, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_file_cap_drops_oldest, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_fewer_records_on_reopen, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_unwritable_path, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_write_errors_keep_memory, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_spill_long_outage, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_spill_full_disk_keeps_sending, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_spill_reopen, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_spill_file_cap, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_spill_random_ops, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_corrupt_handmade, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_corrupt_truncate_every_offset, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_corrupt_generated_cases, setup_dir, teardown_dir),
		cmocka_unit_test(test_corrupt_case_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
