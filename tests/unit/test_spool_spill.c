/*
 * The spool's spill: the file holds what memory does not, through a full
 * disk, a long outage, a reopen, the file cap and random operations, with
 * memory bounded.
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
#include "helpers.h"
#include "spool_checks.h"

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

int
main(void)
{
	/* Thousands of damaged files: warnings are still counted, just not printed. */
	log_set_level(LOG_ERROR);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_spill_long_outage, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_spill_full_disk_keeps_sending, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_spill_reopen, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_spill_file_cap, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_spill_random_ops, setup_dir, teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
