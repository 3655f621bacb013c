/*
 * GPU memory per process: the list and the feed (core/gpu_procs.c) and the
 * parser of nvmap's clients file (procs/nvmap_clients.c) on a real capture
 * (tests/fixtures/nvmap/README.md says where it came from) and on what it
 * must refuse or count.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/gpu_procs.h"
#include "helpers.h"
#include "procs/nvmap_clients.h"

#define KIB 1024ULL

static uint64_t
bytes_of(const struct gpu_procs *l, int32_t pid)
{
	uint64_t b = 12345;
	assert_true(gpu_procs_find(l, pid, &b));
	return b;
}

static void
test_merge_and_find(void **state)
{
	(void)state;
	struct gpu_procs l = {0};
	assert_false(gpu_procs_find(&l, 1, &(uint64_t){0})); /* empty */
	/* one GPU's two lists: a process in both is the same memory, told twice */
	gpu_procs_add(&l, 300, 500);
	gpu_procs_add(&l, 100, 7);
	gpu_procs_add(&l, 300, 200);
	gpu_procs_add(&l, 200, GPU_PROC_UNKNOWN);
	gpu_procs_add(&l, 200, 9);
	gpu_procs_merge(&l, GPU_PROCS_MAX);
	assert_int_equal(l.count, 3);
	assert_int_equal(l.items[0].pid, 100); /* sorted by pid */
	assert_true(bytes_of(&l, 300) == 500);
	assert_true(bytes_of(&l, 200) == GPU_PROC_UNKNOWN); /* unknown stays unknown */
	assert_false(gpu_procs_find(&l, 150, &(uint64_t){0}));
	/* two GPUs, or two clients: they add up, saturating below "unknown" */
	gpu_procs_add(&l, 100, 3);
	gpu_procs_add(&l, 400, UINT64_MAX - 1);
	gpu_procs_add(&l, 400, 10);
	gpu_procs_merge(&l, GPU_PROCS_SUM);
	assert_true(bytes_of(&l, 100) == 10);
	assert_true(bytes_of(&l, 400) == UINT64_MAX - 1);
	gpu_procs_clear(&l);
	assert_int_equal(l.count, 0);
	gpu_procs_free(&l);
}

static void
test_feed(void **state)
{
	(void)state;
	struct gpu_procs_feed *f = gpu_procs_feed_create();
	struct gpu_procs l = {0}, out = {0};
	gpu_procs_add(&out, 1, 1); /* left as it was when nothing is taken */
	assert_false(gpu_procs_feed_take(f, 0, &out));
	assert_int_equal(out.count, 1);
	gpu_procs_add(&l, 42, 4096);
	gpu_procs_feed_publish(f, &l, 1000);
	gpu_procs_clear(&l); /* the feed has its own copy */
	assert_true(gpu_procs_feed_take(f, 999, &out));
	assert_int_equal(out.count, 1);
	assert_true(bytes_of(&out, 42) == 4096);
	assert_false(gpu_procs_feed_take(f, 1000, &out)); /* too old: a writer that stopped answering */
	gpu_procs_feed_publish(f, &l, 5000);          /* an empty answer is an answer: nobody uses the GPU */
	assert_true(gpu_procs_feed_take(f, 2000, &out));
	assert_int_equal(out.count, 0);
	gpu_procs_feed_publish(f, NULL, 9000); /* withdrawn: the driver could not tell */
	assert_false(gpu_procs_feed_take(f, 2000, &out));
	struct gpu_procs_feed *g = gpu_procs_feed_ref(f);
	gpu_procs_feed_unref(f); /* either may go first */
	gpu_procs_feed_unref(g);
	gpu_procs_feed_unref(NULL);
	gpu_procs_free(&l);
	gpu_procs_free(&out);
}

static char *
capture(size_t *len)
{
	return th_read_file(FIXTURES_DIR "/nvmap/clients", len);
}

static void
test_nvmap_capture(void **state)
{
	(void)state;
	size_t len, bad = 99;
	char *text = capture(&len);
	struct gpu_procs l = {0};
	assert_int_equal(nvmap_clients_parse(text, len, &l, &bad), 0);
	assert_int_equal(bad, 0);
	assert_int_equal(l.count, 4);
	assert_true(bytes_of(&l, 4481) == 118372 * KIB); /* gem */
	assert_true(bytes_of(&l, 2831) == 5384 * KIB);   /* gnome-shell */
	assert_true(bytes_of(&l, 1731) == 18140 * KIB);  /* Xorg */
	assert_true(bytes_of(&l, 1012) == 0);            /* nvargus-daemon: a client holding nothing */
	assert_false(gpu_procs_find(&l, 141896, &(uint64_t){0})); /* the total is no process */
	/* the same without its last newline, and every prefix of it parses or is refused, never more */
	assert_int_equal(nvmap_clients_parse(text, len - 1, &l, &bad), 0);
	assert_int_equal(l.count, 4);
	for (size_t n = 0; n < len; n++) {
		char *cut = malloc(n ? n : 1); /* exactly N bytes: ASan sees a read past them */
		memcpy(cut, text, n);
		int r = nvmap_clients_parse(cut, n, &l, &bad);
		assert_true(r == 0 || r == -EINVAL);
		assert_true(r < 0 || l.count <= 4);
		free(cut);
	}
	free(text);
	gpu_procs_free(&l);
}

/* The capture's header and total around LINES (made here from its lines, in the driver's formats): parsed, with
 * BAD lines that are no client and COUNT processes */
static void
parse_with(const char *lines, size_t bad, size_t count, struct gpu_procs *l)
{
	char text[2048];
	size_t got = 99;
	snprintf(text, sizeof(text),
		 "CLIENT                        PROCESS      PID        SIZE\n%s"
		 "total                                              141896K\n",
		 lines);
	assert_int_equal(nvmap_clients_parse(text, strlen(text), l, &got), 0);
	assert_int_equal(got, bad);
	assert_int_equal(l->count, count);
}

static void
test_nvmap_shapes(void **state)
{
	(void)state;
	struct gpu_procs l = {0};
	size_t bad;
	/* a process with two clients adds up; a kernel client (pid 0) is no process; a name with a blank */
	parse_with("user                              gem     4481     118372K\n"
		   "user                              gem     4481         16K\n"
		   "nvhost                        kernel        0       2048K\n"
		   "user                      Web Content     5000          4M\n"
		   "\n",
		   0, 2, &l);
	assert_true(bytes_of(&l, 4481) == 118388 * KIB);
	assert_true(bytes_of(&l, 5000) == 4 * 1024 * KIB);
	assert_false(gpu_procs_find(&l, 0, &(uint64_t){0}));
	/* lines that are no client: counted, the others kept */
	parse_with("user                              gem     4481     118372K\n"
		   "user                              gem     abcd     118372K\n" /* no pid */
		   "user                              gem     4481     118372\n"  /* no unit */
		   "user                              gem     4481     118372B\n" /* no such unit */
		   "user                              gem     4481     1x8372K\n"
		   "user                              gem  4194305         16K\n" /* beyond PID_MAX */
		   "user                              gem     4481 99999999999999999999K\n"
		   "user                              gem     4481 18014398509481984K\n" /* 2^64 bytes */
		   "garbage\n"
		   "total\n",
		   9, 1, &l);
	assert_true(bytes_of(&l, 4481) == 118372 * KIB);
	/* not that file: refused, the list left as it was */
	static const char *const refused[] = {"", "\n", "total 5K\n", "CLIENT PROCESS PID\n",
					      "user gem 4481 118372K\n", "BASE SIZE FLAGS\n"};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		bad = 77;
		assert_int_equal(nvmap_clients_parse(refused[i], strlen(refused[i]), &l, &bad), -EINVAL);
		assert_int_equal(l.count, 1);
		assert_int_equal(bad, 77);
	}
	/* the header alone: no client at all */
	assert_int_equal(nvmap_clients_parse("CLIENT PROCESS PID SIZE", 23, &l, &bad), 0);
	assert_int_equal(l.count, 0);
	gpu_procs_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_and_find),
		cmocka_unit_test(test_feed),
		cmocka_unit_test(test_nvmap_capture),
		cmocka_unit_test(test_nvmap_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
