/*
 * Board file reader below an injected root. Reads never block on a FIFO or
 * character device, are bounded in size and timed; failing paths are
 * counted, logged once and backed off so one bad sensor costs nothing on
 * later samples.
 *
 * Paths below a fixture root are resolved as if the root were "/": a
 * symlink's ".." stops at the root and an absolute link target starts at
 * the root (chroot semantics), so a fixture never reads the host's files.
 * openat2(RESOLVE_IN_ROOT) does that in the kernel (Linux 5.6+); older
 * kernels (JetPack 4 runs 4.9) use the same walk done here in user space.
 *
 * This file holds the root, the resolution below it and directories;
 * reading files and the back-off accounting are in sysfs_read.c.
 */
#include "sysfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __has_include
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2_H 1
#endif
#endif

#include "core/clock.h"
#include "core/xalloc.h"
#include "sysfs_priv.h"

#define LINKS_MAX 40
#define LIST_DIR_MAX 65536

static int64_t
default_clock(void *data)
{
	(void)data;
	return monotonic_ms();
}

static bool
is_real_root(const char *root)
{
	for (; *root; root++) {
		if (*root != '/') {
			return false;
		}
	}
	return true;
}

int
sysfs_create(const char *root, struct sysfs **out)
{
	if (!root || !out) {
		return -EINVAL;
	}
	struct sysfs *fs = xcalloc(1, sizeof(*fs));
	fs->root_fd = -1;
	fs->now_ms = default_clock;
	fs->kept_budget = sysfs_kept_budget();
	int err;
	if (is_real_root(root)) {
		fs->root = xstrdup("");
		fs->base = xstrdup("");
		*out = fs;
		return 0;
	}
	fs->root = xstrdup(root);
	/* keep the caller's spelling but drop trailing slashes */
	size_t len = strlen(fs->root);
	while (len > 1 && fs->root[len - 1] == '/') {
		fs->root[--len] = '\0';
	}
	fs->base = realpath(root, NULL);
	if (!fs->base) {
		err = -errno;
		goto fail;
	}
	fs->root_fd = open(fs->base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->root_fd < 0) {
		err = -errno;
		goto fail;
	}
	if (strcmp(fs->base, "/") == 0) {
		fs->base[0] = '\0';
	}
#if defined(HAVE_OPENAT2_H) && defined(SYS_openat2)
	fs->use_openat2 = true;
#endif
	*out = fs;
	return 0;
fail:
	sysfs_destroy(fs);
	return err;
}

void
sysfs_destroy(struct sysfs *fs)
{
	if (!fs) {
		return;
	}
	for (size_t i = 0; i < fs->used; i++) {
		free(fs->slots[i].path);
	}
	sysfs_kept_clear(fs);
	if (fs->root_fd >= 0) {
		close(fs->root_fd);
	}
	free(fs->root);
	free(fs->base);
	free(fs);
}

const char *
sysfs_root(const struct sysfs *fs)
{
	return fs->root;
}

void
sysfs_chain_begin(struct sysfs *fs, int64_t now_ms)
{
	fs->chained = true;
	fs->chain_ms = now_ms;
}

void
sysfs_chain_end(struct sysfs *fs)
{
	fs->chained = false;
}

void
sysfs_set_clock(struct sysfs *fs, int64_t (*now_ms)(void *data), void *data)
{
	fs->now_ms = now_ms ? now_ms : default_clock;
	fs->clock_data = now_ms ? data : NULL;
}

void
sysfs_disable_openat2(struct sysfs *fs)
{
	fs->use_openat2 = false;
}

uint64_t
sysfs_error_count(const struct sysfs *fs)
{
	return fs->errors;
}

/* ---- resolution below the root ---------------------------------------- */

static int
join(char *dst, size_t size, const char *a, const char *b)
{
	size_t la = strlen(a);
	size_t lb = strlen(b);
	if (la + lb + 1 > size) {
		return -ENAMETOOLONG;
	}
	memcpy(dst, a, la);
	memcpy(dst + la, b, lb + 1);
	return 0;
}

/*
 * Walks PATH one component at a time below the root, following symlinks
 * with chroot semantics, and writes the root-relative result ("/" for the
 * root itself) into OUT.
 */
static int
resolve(const struct sysfs *fs, const char *path, char *out, size_t size)
{
	char rest[PATH_MAX];
	char res[PATH_MAX];
	char full[PATH_MAX];
	char target[PATH_MAX];
	size_t rlen = 0;
	size_t pos = 0;
	int links = 0;

	size_t plen = strlen(path);
	if (plen >= sizeof(rest)) {
		return -ENAMETOOLONG;
	}
	memcpy(rest, path, plen + 1);
	res[0] = '\0';
	while (rest[pos]) {
		while (rest[pos] == '/') {
			pos++;
		}
		if (!rest[pos]) {
			break;
		}
		size_t start = pos;
		while (rest[pos] && rest[pos] != '/') {
			pos++;
		}
		size_t clen = pos - start;
		if (clen == 1 && rest[start] == '.') {
			continue;
		}
		if (clen == 2 && rest[start] == '.' && rest[start + 1] == '.') {
			/* ".." from a link target: one level up, never above the root */
			while (rlen > 0 && res[rlen - 1] != '/') {
				rlen--;
			}
			if (rlen > 0) {
				rlen--;
			}
			res[rlen] = '\0';
			continue;
		}
		if (rlen + 1 + clen >= sizeof(res)) {
			return -ENAMETOOLONG;
		}
		res[rlen] = '/';
		memcpy(res + rlen + 1, rest + start, clen);
		res[rlen + 1 + clen] = '\0';
		int err = join(full, sizeof(full), fs->base, res);
		if (err < 0) {
			return err;
		}
		struct stat st;
		if (lstat(full, &st) < 0) {
			return -errno;
		}
		if (!S_ISLNK(st.st_mode)) {
			rlen += 1 + clen;
			continue;
		}
		if (++links > LINKS_MAX) {
			return -ELOOP;
		}
		ssize_t n = readlink(full, target, sizeof(target) - 1);
		if (n < 0) {
			return -errno;
		}
		target[n] = '\0';
		res[rlen] = '\0';
		if (target[0] == '/') {
			rlen = 0;
			res[0] = '\0';
		}
		/* the link target replaces the component; the rest follows it */
		size_t tail = strlen(rest + pos);
		if ((size_t)n + tail + 1 >= sizeof(rest)) {
			return -ENAMETOOLONG;
		}
		memmove(rest + n, rest + pos, tail + 1);
		memcpy(rest, target, (size_t)n);
		pos = 0;
	}
	const char *result = rlen ? res : "/";
	size_t len = strlen(result);
	if (len + 1 > size) {
		return -ENAMETOOLONG;
	}
	memcpy(out, result, len + 1);
	return 0;
}

int
sysfs_open_path(struct sysfs *fs, const char *path, int flags)
{
	int fd;
	if (fs->root_fd < 0) {
		fd = open(path, flags);
		return fd < 0 ? -errno : fd;
	}
#if defined(HAVE_OPENAT2_H) && defined(SYS_openat2)
	if (fs->use_openat2) {
		struct open_how how = {
			.flags = (uint64_t)flags,
			.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
		};
		/*
		 * EAGAIN: a rename or mount anywhere on the machine raced a ".."
		 * in the walk (a symlink such as cdev4 -> ../../cooling_device4),
		 * so the kernel could not prove the result stays in the root. It
		 * is asked again; a machine that keeps renaming gets the
		 * user-space walk for this path.
		 */
		int tries = 4;
		do {
			fd = (int)syscall(SYS_openat2, fs->root_fd, path, &how, sizeof(how));
		} while (fd < 0 && errno == EAGAIN && --tries > 0);
		if (fd >= 0) {
			return fd;
		}
		if (errno == ENOSYS) {
			/* kernel before 5.6 (or a filter): use the user-space walk from now on */
			fs->use_openat2 = false;
		} else if (errno != EAGAIN) {
			return -errno;
		}
	}
#endif
	char rel[PATH_MAX];
	char full[PATH_MAX];
	int err = resolve(fs, path, rel, sizeof(rel));
	if (err < 0) {
		return err;
	}
	err = join(full, sizeof(full), fs->base, rel);
	if (err < 0) {
		return err;
	}
	fd = open(full, flags | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

/* ---- directories, links ---------------------------------------------- */

bool
sysfs_exists(struct sysfs *fs, const char *path)
{
	if (!sysfs_path_ok(path)) {
		return false;
	}
	int fd = sysfs_open_path(fs, path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		return false;
	}
	close(fd);
	return true;
}

static int
compare_names(const void *a, const void *b)
{
	/* version order: thermal_zone9 before thermal_zone10 */
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

static void
free_names(char **names, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(names[i]);
	}
	free(names);
}

/* Reads the entry names of PATH; the read part of sysfs_list_dir(). */
static int
read_names(struct sysfs *fs, const char *path, char ***out, size_t *count)
{
	int fd = sysfs_open_path(fs, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		return fd;
	}
	DIR *dir = fdopendir(fd);
	if (!dir) {
		int err = -errno;
		close(fd);
		return err;
	}
	char **names = NULL;
	size_t n = 0;
	size_t cap = 0;
	int err = 0;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(dir);
		if (!de) {
			err = errno ? -errno : 0;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
			continue;
		}
		if (n == LIST_DIR_MAX) {
			err = -EFBIG;
			break;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			names = xrealloc(names, cap, sizeof(*names));
		}
		names[n++] = xstrdup(de->d_name);
	}
	closedir(dir);
	if (err < 0) {
		free_names(names, n);
		return err;
	}
	if (n > 1) {
		qsort(names, n, sizeof(*names), compare_names);
	}
	*out = names;
	*count = n;
	return 0;
}

int
sysfs_list_dir(struct sysfs *fs, const char *path, int (*fn)(const char *name, void *data), void *data)
{
	struct sysfs_access a;
	int err = sysfs_begin(fs, path, &a);
	if (err < 0) {
		return err;
	}
	if (!fn) {
		return -EINVAL;
	}
	char **names = NULL;
	size_t count = 0;
	err = read_names(fs, path, &names, &count);
	sysfs_finish(fs, &a, err, NULL);
	if (err < 0) {
		return err;
	}
	int ret = 0;
	for (size_t i = 0; i < count && ret == 0; i++) {
		ret = fn(names[i], data);
	}
	free_names(names, count);
	return ret;
}

int
sysfs_realpath(struct sysfs *fs, const char *path, char *buf, size_t size)
{
	if (!sysfs_path_ok(path) || !buf) {
		return -EINVAL;
	}
	char rel[PATH_MAX];
	int err = resolve(fs, path, rel, sizeof(rel));
	if (err < 0) {
		return err;
	}
	size_t len = strlen(rel);
	if (len + 1 > size) {
		return -ENAMETOOLONG;
	}
	memcpy(buf, rel, len + 1);
	return 0;
}
