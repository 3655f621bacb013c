/*
 * The spool: the memory ring (order, drops, out-of-order acknowledgements,
 * rewind), and the file across close and crash, its cap and write failures.
 * What spills to the file: test_spool_spill.c; damaged files:
 * test_spool_corrupt.c.
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

#include "core/clock_driven.h"
#include "core/log.h"
#include "core/spool.h"
#include "helpers.h"
#include "spool_checks.h"

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

/* File writes fail (RLIMIT_FSIZE: EFBIG, like a full disk); memory carries on. */
static void
write_error_child(void)
{
	signal(SIGXFSZ, SIG_IGN);
	clock_driven_start(1000, 1700000000000LL); /* the back-offs pass at an advance, not in real seconds */
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
	for (int i = 0; i < 10; i++) {
		CHILD_CHECK(spool_push(sp, "tw/dev/state", payload, sizeof(payload), 1, false) == 0);
	}
	clock_driven_advance(1100);
	CHILD_CHECK(spool_sync(sp) == -EFBIG);
	spool_get_stats(sp, &st);
	CHILD_CHECK(st.write_errors == 2);
	CHILD_CHECK(log_warning_count() - warnings == 1);

	/* The disk has room again: after the (now 2 s) back-off the records are written. */
	lim.rlim_cur = RLIM_INFINITY;
	CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	CHILD_CHECK(spool_sync(sp) == -EFBIG); /* still backing off */
	clock_driven_advance(999); /* not yet */
	CHILD_CHECK(spool_sync(sp) == -EFBIG);
	clock_driven_advance(1101);
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
