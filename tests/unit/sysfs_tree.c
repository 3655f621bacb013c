/* What the sysfs layer tests share (see sysfs_tree.h). */
#include "sysfs_tree.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

char root[256];

static int64_t
fake_now(void *data)
{
	struct fake_clock *c = data;
	int64_t t = c->now_ms;
	c->now_ms += c->step_ms;
	return t;
}

int64_t
real_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
fixture_path(char *buf, size_t size, const char *rel)
{
	int n = snprintf(buf, size, "%s%s", root, rel);
	assert_true(n > 0 && (size_t)n < size);
}

void
make_dirs(const char *rel)
{
	char path[512];
	fixture_path(path, sizeof(path), rel);
	for (char *p = path + strlen(root) + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	}
	mkdir(path, 0755);
}

void
write_bytes(const char *rel, const void *data, size_t len)
{
	char path[512];
	fixture_path(path, sizeof(path), rel);
	th_write_bytes(path, data, len, 0644);
}

void
write_text(const char *rel, const char *text)
{
	write_bytes(rel, text, strlen(text));
}

void
make_link(const char *target, const char *rel)
{
	char path[512];
	fixture_path(path, sizeof(path), rel);
	assert_int_equal(symlink(target, path), 0);
}

int
group_setup(void **state)
{
	(void)state;
	char *dir = th_tmpdir("sysfs");
	snprintf(root, sizeof(root), "%s", dir);
	free(dir);
	return 0;
}

int
group_teardown(void **state)
{
	(void)state;
	th_rmtree(strdup(root));
	return 0;
}

struct sysfs *
open_fixture(struct fake_clock *clock)
{
	struct sysfs *fs = NULL;
	assert_int_equal(sysfs_create(root, &fs), 0);
	if (clock) {
		sysfs_set_clock(fs, fake_now, clock);
	}
	return fs;
}
