/*
 * core/atomic_file: a file is replaced whole or not at all, and a failure leaves no temporary file. A failing
 * fsync (of the file or of the directory) cannot be brought about here without a fault-injecting file system
 * (dm-flakey, a FUSE file system), so its paths are covered only by reading: they share the unlink of every
 * other failure before the rename.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/atomic_file.h"
#include "helpers.h"

struct paths {
	char *dir;
	char file[512];
	char tmp[512];
};

static int
setup(void **state)
{
	struct paths *p = calloc(1, sizeof(*p));
	p->dir = th_tmpdir("atomic");
	th_join(p->file, sizeof(p->file), p->dir, "state");
	th_join(p->tmp, sizeof(p->tmp), p->dir, "state.tmp");
	*state = p;
	umask(022);
	return 0;
}

static int
teardown(void **state)
{
	struct paths *p = *state;
	th_rmtree(p->dir);
	free(p);
	return 0;
}

static void
assert_content(const char *path, const char *want)
{
	size_t len;
	char *text = th_read_file(path, &len);
	assert_int_equal(len, strlen(want));
	assert_string_equal(text, want);
	free(text);
}

static void
assert_absent(const char *path)
{
	struct stat st;
	assert_int_equal(lstat(path, &st), -1);
	assert_int_equal(errno, ENOENT);
}

static void
test_replaced_whole(void **state)
{
	struct paths *p = *state;
	th_write_text(p->file, "an old content, longer than the new one\n");
	assert_int_equal(atomic_write_file(p->file, "new\n", 4, 0640), 0);
	assert_content(p->file, "new\n");
	assert_absent(p->tmp);
	struct stat st;
	assert_int_equal(stat(p->file, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640 & ~022); /* the mode, less the umask */
	/* a new file, and an empty one */
	char other[600];
	th_join(other, sizeof(other), p->dir, "empty");
	assert_int_equal(atomic_write_file(other, "", 0, 0600), 0);
	assert_content(other, "");
}

static void
test_missing_directory(void **state)
{
	struct paths *p = *state;
	char path[600];
	th_join(path, sizeof(path), p->dir, "missing/state");
	assert_int_equal(atomic_write_file(path, "x", 1, 0600), -ENOENT);
	struct atomic_file *af = (struct atomic_file *)p; /* outputs are written only on success */
	assert_int_equal(atomic_file_create(path, 0600, &af), -ENOENT);
	assert_ptr_equal(af, (struct atomic_file *)p);
}

static void
test_rename_fails(void **state)
{
	struct paths *p = *state;
	/* the target is a directory that is not empty: written and fsynced, the rename fails */
	char inside[600];
	assert_int_equal(mkdir(p->file, 0755), 0);
	th_join(inside, sizeof(inside), p->file, "kept");
	th_write_text(inside, "kept\n");
	assert_int_equal(atomic_write_file(p->file, "new\n", 4, 0600), -EISDIR);
	assert_content(inside, "kept\n");
	assert_absent(p->tmp);
}

static void
test_write_fails(void **state)
{
	struct paths *p = *state;
	th_write_text(p->file, "old\n");
	/* files may not grow past 16 bytes: the write fails as on a full disk, even for root */
	struct rlimit saved, small = {16, 16};
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
	small.rlim_max = saved.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	static const char big[64] = "more than sixteen bytes of new content";
	int r = atomic_write_file(p->file, big, sizeof(big), 0600);

	struct atomic_file *af;
	int c = atomic_file_create(p->file, 0600, &af);
	if (c == 0) {
		fwrite(big, 1, sizeof(big), atomic_file_stream(af));
		c = atomic_file_commit(af);
	}
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(r, -EFBIG);
	assert_true(c == -EFBIG || c == -EIO); /* the stream's error, or the flush's own */
	assert_content(p->file, "old\n");
	assert_absent(p->tmp);
}

static void
test_read_only_directory(void **state)
{
	struct paths *p = *state;
	if (geteuid() == 0) {
		skip(); /* root writes anywhere; test_write_fails and test_rename_fails cover the failures then */
	}
	th_write_text(p->file, "old\n");
	assert_int_equal(chmod(p->dir, 0555), 0);
	int r = atomic_write_file(p->file, "new\n", 4, 0600);
	assert_int_equal(chmod(p->dir, 0755), 0);
	assert_int_equal(r, -EACCES);
	assert_content(p->file, "old\n");
	assert_absent(p->tmp);
}

static void
test_stream_and_abort(void **state)
{
	struct paths *p = *state;
	th_write_text(p->file, "old\n");
	struct atomic_file *af;
	assert_int_equal(atomic_file_create(p->file, 0600, &af), 0);
	fprintf(atomic_file_stream(af), "half of a new %s", "file");
	atomic_file_abort(af);
	assert_content(p->file, "old\n");
	assert_absent(p->tmp);
	atomic_file_abort(NULL);

	assert_int_equal(atomic_file_create(p->file, 0600, &af), 0);
	fprintf(atomic_file_stream(af), "line %d\n", 1);
	fprintf(atomic_file_stream(af), "line %d\n", 2);
	assert_int_equal(atomic_file_commit(af), 0);
	assert_content(p->file, "line 1\nline 2\n");
	assert_absent(p->tmp);
}

static void
test_second_writer_busy(void **state)
{
	struct paths *p = *state;
	struct atomic_file *a, *b;
	assert_int_equal(atomic_file_create(p->file, 0600, &a), 0);
	assert_int_equal(atomic_file_create(p->file, 0600, &b), -EBUSY);
	assert_int_equal(atomic_write_file(p->file, "b\n", 2, 0600), -EBUSY);
	assert_int_equal(write(atomic_file_fd(a), "a\n", 2), 2);
	assert_int_equal(atomic_file_commit(a), 0);
	assert_content(p->file, "a\n");
	assert_int_equal(atomic_write_file(p->file, "b\n", 2, 0600), 0);
	assert_content(p->file, "b\n");
}

static void
test_stale_temp_taken_over(void **state)
{
	struct paths *p = *state;
	th_write_text(p->tmp, "left by a crash, longer than what comes\n");
	assert_int_equal(atomic_write_file(p->file, "new\n", 4, 0600), 0);
	assert_content(p->file, "new\n");
	assert_absent(p->tmp);
}

static void
test_temp_link_refused(void **state)
{
	struct paths *p = *state;
	char victim[600];
	th_join(victim, sizeof(victim), p->dir, "victim");
	th_write_text(victim, "victim\n");
	assert_int_equal(symlink(victim, p->tmp), 0);
	assert_int_equal(atomic_write_file(p->file, "new\n", 4, 0600), -ELOOP);
	assert_content(victim, "victim\n");
	assert_absent(p->file);
}

static void
test_commit_keep(void **state)
{
	struct paths *p = *state;
	th_write_text(p->file, "old\n");
	struct atomic_file *af;
	assert_int_equal(atomic_file_create(p->file, 0600, &af), 0);
	assert_int_equal(write(atomic_file_fd(af), "kept\n", 5), 5);
	int fd = -1;
	assert_int_equal(atomic_file_commit_keep(af, &fd), 0);
	assert_true(fd >= 0);
	assert_content(p->file, "kept\n");
	assert_absent(p->tmp);
	/* the descriptor is the file now at PATH, readable, and still locked */
	char buf[8] = "";
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 5);
	assert_memory_equal(buf, "kept\n", 5);
	struct stat held, named;
	assert_int_equal(fstat(fd, &held), 0);
	assert_int_equal(stat(p->file, &named), 0);
	assert_true(held.st_ino == named.st_ino);
	int other = open(p->file, O_RDONLY);
	assert_true(other >= 0);
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	close(other);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_replaced_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rename_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_only_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_and_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_second_writer_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_temp_taken_over, setup, teardown),
		cmocka_unit_test_setup_teardown(test_temp_link_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_keep, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
