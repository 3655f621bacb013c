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
	bool slow; /* the last read was slow: one more in a row backs off */
};

/*
 * One access to PATH, from sysfs_begin() to sysfs_finish(): the path's hash
 * is worked out once for the back-off and kept tables (it was three times,
 * about 10 % of a tick's instructions).
 */
struct sysfs_access {
	const char *path;
	uint64_t hash; /* hash_words() of the path */
	int64_t start_ms;
};

/* A board file kept open between samples (sysfs_keep.c). */
struct kept_file {
	char *path; /* NULL: free entry of the table */
	uint64_t hash;
	int fd;       /* -1: read once so far, or closed after an error */
	bool trusted; /* sysfs, procfs or a read-only mount: never replaced under the fd */
};

struct sysfs {
	char *root;  /* as given, "" for the real system */
	char *base;  /* canonical absolute root, "" for the real system */
	int root_fd; /* -1 for the real system */
	bool use_openat2;
	int64_t (*now_ms)(void *data);
	void *clock_data;
	bool chained; /* sysfs_chain_begin(): a read starts at chain_ms, the end of the one before */
	int64_t chain_ms;
	uint64_t errors;
	uint64_t fail_seq;
	size_t used;
	struct backoff slots[BACKOFF_SLOTS];
	struct kept_file *kept; /* open addressing, kept_cap a power of two */
	size_t kept_cap;
	size_t kept_used;   /* paths in the table */
	size_t kept_open;   /* of them, with an open descriptor */
	size_t kept_budget; /* most descriptors held at once */
};

/* Absolute, shorter than PATH_MAX, and without ".." components. */
static inline bool
sysfs_path_ok(const char *path)
{
	if (!path || path[0] != '/' || strnlen(path, PATH_MAX) >= PATH_MAX) {
		return false;
	}
	/* a ".." component follows a '/' and ends at the next '/' or the end; strstr() finds them fast */
	for (const char *p = path; (p = strstr(p, "/..")) != NULL; p += 3) {
		if (p[3] == '/' || p[3] == '\0') {
			return false;
		}
	}
	return true;
}

/* Path resolution (sysfs.c) */

/** Opens PATH below the root with FLAGS; returns the fd or -errno. */
int sysfs_open_path(struct sysfs *fs, const char *path, int flags);

/* Reading (sysfs_read.c) */

/**
 * Opens PATH for reading and checks that a read cannot block. Sets
 * *REGULAR. Returns the fd or -errno (-EAGAIN: nothing to read now).
 */
int sysfs_open_readable(struct sysfs *fs, const char *path, bool *regular);

/* Kept-open files (sysfs_keep.c) */

/** Most descriptors to keep: KEPT_MAX, or an eighth of RLIMIT_NOFILE when that is less. */
size_t sysfs_kept_budget(void);

/**
 * The kept descriptor of PATH (read it with pread; do not close it),
 * opened on its second read and reopened when the file was replaced.
 * Negative when PATH is not kept (first read, not regular, over budget):
 * the caller opens and closes it itself.
 */
int sysfs_kept_fd(struct sysfs *fs, const struct sysfs_access *a);

/** Closes the kept descriptor after a failed read: the next read reopens it. */
void sysfs_kept_drop(struct sysfs *fs, const struct sysfs_access *a);

/** Closes every kept descriptor and forgets the paths. */
void sysfs_kept_clear(struct sysfs *fs);

/* Error accounting (sysfs_read.c) */

/**
 * Checks the back-off of PATH at the start of an access and fills *A.
 * Returns -EBUSY while backing off, -EINVAL for a bad path, or 0.
 */
int sysfs_begin(struct sysfs *fs, const char *path, struct sysfs_access *a);

/**
 * Accounts for the finished access A: ERR is its result (0 or -errno),
 * REASON an optional text for the log instead of strerror.
 */
void sysfs_finish(struct sysfs *fs, const struct sysfs_access *a, int err, const char *reason);

#endif
