/*
 * Board files kept open between samples. A file read a second time keeps
 * its descriptor and is read with pread() at offset 0 from then on: on a
 * board each open() walks kernfs and the driver, and a sample reads about
 * forty files. Files read once (identity, /etc) are never kept.
 *
 * A kept descriptor goes stale in two ways, both handled here:
 *  - sysfs/procfs (and any read-only mount) never replace a file, but a
 *    device can go away (hotplug, an unbound driver): the read fails
 *    (ENODEV, ESTALE...), the caller drops the descriptor and reopens once;
 *  - a file on an ordinary file system (a fixture tree given with --root)
 *    can be rewritten in place (pread sees the new text) or replaced by a
 *    rename or a delete and re-create: the old inode loses its last link,
 *    so an fstat() per read (st_nlink == 0) reopens the path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/xalloc.h"
#include "sysfs_priv.h"

/* f_type of the kernel's attribute file systems (linux/magic.h) */
#define MAGIC_SYSFS 0x62656572
#define MAGIC_PROC 0x9fa0

/* Never more than this many descriptors, and never more than an eighth of RLIMIT_NOFILE. */
#define KEPT_MAX 128

size_t
sysfs_kept_budget(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 8 < KEPT_MAX) {
		return (size_t)(rl.rlim_cur / 8);
	}
	return KEPT_MAX;
}

/* A file that cannot be replaced under an open descriptor. */
static bool
never_replaced(int fd)
{
	struct statfs sfs;
	if (fstatfs(fd, &sfs) < 0) {
		return false;
	}
	if (sfs.f_type == MAGIC_SYSFS || sfs.f_type == MAGIC_PROC) {
		return true;
	}
	return (sfs.f_flags & ST_RDONLY) != 0;
}

/*
 * Opens KF->path below the root for keeping: 0 and KF->fd, -ENOTSUP for a
 * file that is not regular (never kept), or -errno.
 */
static int
kept_file_open(struct kept_file *kf, struct sysfs *fs)
{
	bool regular = false;
	int fd = sysfs_open_readable(fs, kf->path, &regular);
	if (fd < 0) {
		return fd;
	}
	if (!regular) {
		/* FIFOs and devices are polled on every open; keep none */
		close(fd);
		return -ENOTSUP;
	}
	kf->fd = fd;
	kf->trusted = never_replaced(fd);
	return 0;
}

/* Closes KF's descriptor, if open. */
static void
kept_file_close(struct kept_file *kf)
{
	if (kf->fd >= 0) {
		close(kf->fd);
		kf->fd = -1;
	}
}

/* The entry of PATH, or the empty slot where it goes (open addressing). */
static struct kept_file *
lookup(struct sysfs *fs, const char *path, uint64_t hash)
{
	size_t mask = fs->kept_cap - 1;
	for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
		struct kept_file *kf = &fs->kept[i];
		if (!kf->path || (kf->hash == hash && strcmp(kf->path, path) == 0)) {
			return kf;
		}
	}
}

static void
grow(struct sysfs *fs)
{
	struct kept_file *old = fs->kept;
	size_t old_cap = fs->kept_cap;
	fs->kept_cap = old_cap ? old_cap * 2 : 64;
	fs->kept = xcalloc(fs->kept_cap, sizeof(*fs->kept));
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i].path) {
			*lookup(fs, old[i].path, old[i].hash) = old[i];
		}
	}
	free(old);
}

/* Is the kept descriptor still the file PATH names? */
static bool
still_current(const struct kept_file *kf)
{
	if (kf->trusted) {
		return true;
	}
	struct stat st;
	return fstat(kf->fd, &st) == 0 && st.st_nlink > 0;
}

int
sysfs_kept_fd(struct sysfs *fs, const struct sysfs_access *a)
{
	const char *path = a->path;
	uint64_t hash = a->hash;
	if (!fs->kept_cap) {
		grow(fs);
	}
	struct kept_file *kf = lookup(fs, path, hash);
	if (!kf->path) {
		/* first read: remember the path, keep nothing yet */
		if (fs->kept_used >= 4 * KEPT_MAX) {
			return -ENOSPC;
		}
		if ((fs->kept_used + 1) * 2 > fs->kept_cap) {
			/* entries are never removed: the table stays at most half full */
			grow(fs);
			kf = lookup(fs, path, hash);
		}
		*kf = (struct kept_file){.path = xstrdup(path), .hash = hash, .fd = -1};
		fs->kept_used++;
		return -ENOENT;
	}
	if (kf->fd >= 0 && !still_current(kf)) {
		kept_file_close(kf);
		fs->kept_open--;
	}
	if (kf->fd < 0) {
		if (fs->kept_open >= fs->kept_budget || kept_file_open(kf, fs) < 0) {
			return -ENOENT; /* read it the ordinary way; errors are reported there */
		}
		fs->kept_open++;
	}
	return kf->fd;
}

void
sysfs_kept_drop(struct sysfs *fs, const struct sysfs_access *a)
{
	if (!fs->kept_cap) {
		return;
	}
	struct kept_file *kf = lookup(fs, a->path, a->hash);
	if (kf->path && kf->fd >= 0) {
		kept_file_close(kf);
		fs->kept_open--;
	}
}

void
sysfs_kept_clear(struct sysfs *fs)
{
	for (size_t i = 0; i < fs->kept_cap; i++) {
		kept_file_close(&fs->kept[i]);
		free(fs->kept[i].path);
	}
	free(fs->kept);
	fs->kept = NULL;
	fs->kept_cap = 0;
	fs->kept_used = 0;
	fs->kept_open = 0;
}

size_t
sysfs_open_files(const struct sysfs *fs)
{
	return fs->kept_open;
}
