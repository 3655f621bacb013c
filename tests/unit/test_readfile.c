/* core/readfile: the one small-file reader (secrets, tokens, machine-id, boot_id) never waits on a FIFO. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/readfile.h"

static char dir[64];

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/tw-readfile-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *
write_file(const char *name, const char *text, size_t len)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void
test_whole_file(void **state)
{
	(void)state;
	char *out = NULL;
	size_t len = 0;
	struct stat st;
	const char *path = write_file("a", "abc\n", 4);
	assert_int_equal(readfile_all(path, 4, &out, &len, &st), 0);
	assert_int_equal(len, 4);
	assert_string_equal(out, "abc\n");
	assert_true(S_ISREG(st.st_mode));
	free(out);
	/* empty is fine, NUL-terminated */
	path = write_file("empty", "", 0);
	assert_int_equal(readfile_all(path, 4, &out, &len, NULL), 0);
	assert_int_equal(len, 0);
	assert_string_equal(out, "");
	free(out);
}

static void
test_refusals(void **state)
{
	(void)state;
	char *out = (char *)"untouched";
	size_t len = 7;
	const char *path = write_file("big", "abcde", 5);
	assert_int_equal(readfile_all(path, 4, &out, &len, NULL), -EFBIG);
	assert_string_equal(out, "untouched"); /* outputs only on success */
	assert_int_equal(len, 7);
	char missing[128], fifo[128];
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	assert_int_equal(readfile_all(missing, 4, &out, &len, NULL), -ENOENT);
	assert_int_equal(readfile_all(dir, 4, &out, &len, NULL), -EINVAL); /* a directory */
	/* a FIFO without a writer: refused at once, not waited on */
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	struct stat st;
	assert_int_equal(readfile_all(fifo, 4, &out, &len, &st), -EINVAL);
	assert_true(S_ISFIFO(st.st_mode));
	assert_string_equal(readfile_kind(st.st_mode), "a FIFO");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_file),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
