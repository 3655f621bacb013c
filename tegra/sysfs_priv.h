/*
 * Internals of the board file reader, shared by sysfs.c (the root, path
 * resolution below it, directories) and sysfs_read.c (reading files, and
 * the error accounting with back-off every access goes through). Not a
 * public API.
 */
#ifndef TEGRAWATCH_SYSFS_PRIV_H
#define TEGRAWATCH_SYSFS_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sysfs.h"

#define BACKOFF_SLOTS 256

struct backoff {
	char *path; /* NULL: free slot */
	uint64_t hash;
	int64_t retry_ms;   /* reads before this time give -EBUSY */
	int64_t delay_ms;   /* current back-off; 0 after a success */
	uint64_t last_fail; /* failure sequence number: the smallest is reused first */
	bool logged;
};

struct sysfs {
	char *root;  /* as given, "" for the real system */
	char *base;  /* canonical absolute root, "" for the real system */
	int root_fd; /* -1 for the real system */
	bool use_openat2;
	int64_t (*now_ms)(void *data);
	void *clock_data;
	uint64_t errors;
	uint64_t fail_seq;
	size_t used;
	struct backoff slots[BACKOFF_SLOTS];
};

/* Absolute, shorter than PATH_MAX, and without ".." components. */
static inline bool
sysfs_path_ok(const char *path)
{
	if (!path || path[0] != '/' || strnlen(path, PATH_MAX) >= PATH_MAX) {
		return false;
	}
	const char *p = path;
	while (*p) {
		while (*p == '/') {
			p++;
		}
		const char *start = p;
		while (*p && *p != '/') {
			p++;
		}
		if (p - start == 2 && start[0] == '.' && start[1] == '.') {
			return false;
		}
	}
	return true;
}

/* Path resolution (sysfs.c) */

/** Opens PATH below the root with FLAGS; returns the fd or -errno. */
int sysfs_open_path(struct sysfs *fs, const char *path, int flags);

/* Error accounting (sysfs_read.c) */

/**
 * Checks the back-off of PATH at the start of an access. Returns -EBUSY
 * while backing off, -EINVAL for a bad path, or 0 and the current time.
 */
int sysfs_begin(struct sysfs *fs, const char *path, int64_t *now);

/**
 * Accounts for one finished access that started at START: ERR is its
 * result (0 or -errno), REASON an optional text for the log instead of
 * strerror.
 */
void sysfs_finish(struct sysfs *fs, const char *path, int err, int64_t start, const char *reason);

#endif
