/* What the spool tests share (see spool_checks.h). */
#include "spool_checks.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

char test_dir[256];
char spool_path[300];

/* tmpfs when there is one: the corruption cases do thousands of fsyncs. */
int
setup_dir(void **state)
{
	(void)state;
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	snprintf(test_dir, sizeof(test_dir), "%s/tw-spool-XXXXXX", base);
	assert_non_null(mkdtemp(test_dir));
	snprintf(spool_path, sizeof(spool_path), "%s/spool", test_dir);
	return 0;
}

int
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

struct spool *
open_mem(size_t max_records)
{
	struct spool_options o = {.max_records = max_records};
	struct spool *sp = NULL;
	assert_int_equal(spool_open(&o, &sp), 0);
	assert_non_null(sp);
	return sp;
}

struct spool *
open_file(size_t max_records, uint64_t max_file_bytes)
{
	struct spool_options o = {.max_records = max_records, .path = spool_path, .max_file_bytes = max_file_bytes};
	struct spool *sp = NULL;
	assert_int_equal(spool_open(&o, &sp), 0);
	assert_non_null(sp);
	return sp;
}

void
push_text(struct spool *sp, const char *topic, const char *payload)
{
	assert_int_equal(spool_push(sp, topic, payload, strlen(payload), 1, false), 0);
}

void
push_numbered(struct spool *sp, unsigned n)
{
	char payload[32];
	snprintf(payload, sizeof(payload), "p%u", n);
	push_text(sp, "tw/dev/state", payload);
}

void
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

struct spool_stats
stats(const struct spool *sp)
{
	struct spool_stats st;
	memset(&st, 0xff, sizeof(st));
	spool_get_stats(sp, &st);
	return st;
}

void
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
