/*
 * A driver that answers EAGAIN, for the tests that include this (once per
 * test binary): a regular file on disk never answers EAGAIN, a sysfs
 * attribute does when its driver has no value now (Thor's GPU thermal zone
 * while the GPU is rail-gated). The board reader reads regular files with
 * pread(), so this binary's own pread() stands in for the driver: it fails
 * with EAGAIN for a descriptor whose path ends in fake_eagain_suffix,
 * fake_eagain_left times (-1: always), and passes every other call on to
 * the next pread (libc's, or a sanitizer's).
 */
#ifndef TEGRAWATCH_TEST_FAKE_EAGAIN_H
#define TEGRAWATCH_TEST_FAKE_EAGAIN_H

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char fake_eagain_suffix[256]; /* "" = off */
static int fake_eagain_left = -1;
static unsigned fake_eagain_calls; /* EAGAINs given */

static void
fake_eagain(const char *suffix, int times)
{
	snprintf(fake_eagain_suffix, sizeof(fake_eagain_suffix), "%s", suffix ? suffix : "");
	fake_eagain_left = times;
	fake_eagain_calls = 0;
}

static int
fake_eagain_matches(int fd)
{
	char link[64], path[4096];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0) {
		return 0;
	}
	path[n] = '\0';
	size_t want = strlen(fake_eagain_suffix);
	return (size_t)n >= want && strcmp(path + n - want, fake_eagain_suffix) == 0;
}

ssize_t
pread(int fd, void *buf, size_t count, off_t offset)
{
	static ssize_t (*next)(int, void *, size_t, off_t);
	if (fake_eagain_suffix[0] && fake_eagain_left != 0 && fake_eagain_matches(fd)) {
		if (fake_eagain_left > 0) {
			fake_eagain_left--;
		}
		fake_eagain_calls++;
		errno = EAGAIN;
		return -1;
	}
	if (!next) {
		*(void **)&next = dlsym(RTLD_NEXT, "pread");
	}
	return next(fd, buf, count, offset);
}

#endif
