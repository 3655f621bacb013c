/*
 * Whole-file replacement through PATH.tmp, fsync, rename and the directory's
 * fsync (see atomic_file.h). No policy: callers decide what to log.
 */
#include "atomic_file.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xalloc.h"

#define OPEN_TRIES 3

struct atomic_file {
	char *path;
	char *tmp;
	int fd;
	FILE *stream; /* NULL until atomic_file_stream() */
};

/*
 * Opens and locks TMP, then checks that the name still leads to the file
 * locked: a writer that held it may have renamed it away in between, and
 * truncating that file would truncate the target.
 */
static int
open_temp(const char *tmp, mode_t mode)
{
	for (int i = 0; i < OPEN_TRIES; i++) {
		int fd = open(tmp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0) {
			return -errno;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
			close(fd);
			return -EBUSY;
		}
		struct stat held, named;
		if (fstat(fd, &held) < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
		if (lstat(tmp, &named) == 0 && named.st_dev == held.st_dev && named.st_ino == held.st_ino) {
			if (ftruncate(fd, 0) < 0) {
				int e = errno;
				close(fd);
				return -e;
			}
			return fd;
		}
		close(fd);
	}
	return -EBUSY;
}

int
atomic_file_create(const char *path, mode_t mode, struct atomic_file **ret)
{
	size_t len = strlen(path);
	if (len == 0 || path[len - 1] == '/') {
		return -EISDIR;
	}
	char *tmp = xmalloc(len + 5);
	memcpy(tmp, path, len);
	memcpy(tmp + len, ".tmp", 5);
	int fd = open_temp(tmp, mode);
	if (fd < 0) {
		free(tmp);
		return fd;
	}
	struct atomic_file *af = xcalloc(1, sizeof(*af));
	af->path = xstrdup(path);
	af->tmp = tmp;
	af->fd = fd;
	*ret = af;
	return 0;
}

FILE *
atomic_file_stream(struct atomic_file *af)
{
	if (!af->stream) {
		af->stream = fdopen(af->fd, "w"); /* on AF's own descriptor: it fails only without memory */
		if (!af->stream) {
			abort_out_of_memory();
		}
	}
	return af->stream;
}

int
atomic_file_fd(const struct atomic_file *af)
{
	return af->fd;
}

static void
release(struct atomic_file *af, bool keep_fd)
{
	/* after the rename or the unlink: the lock holds until then */
	if (af->stream) {
		fclose(af->stream); /* closes the descriptor too */
	} else if (!keep_fd) {
		close(af->fd);
	}
	free(af->path);
	free(af->tmp);
	free(af);
}

void
atomic_file_abort(struct atomic_file *af)
{
	if (!af) {
		return;
	}
	unlink(af->tmp);
	release(af, false);
}

/* Everything up to and including the rename; on failure the temporary file is removed. */
static int
publish(struct atomic_file *af)
{
	int r = 0;
	if (af->stream) {
		if (fflush(af->stream) != 0) {
			r = -errno;
		} else if (ferror(af->stream)) {
			r = -EIO; /* an earlier write failed; its errno is long gone */
		}
	}
	if (r == 0 && fsync(af->fd) < 0) {
		r = -errno;
	}
	if (r == 0 && rename(af->tmp, af->path) < 0) {
		r = -errno;
	}
	if (r < 0) {
		unlink(af->tmp);
	}
	return r;
}

/* The rename is durable only once the directory holding PATH is. */
static int
sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = !slash ? xstrdup(".") : slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0) {
		return 0; /* a directory we may enter but not read: nothing more can be done */
	}
	int r = fsync(fd) < 0 && errno != EINVAL ? -errno : 0; /* EINVAL: a file system without it */
	close(fd);
	return r;
}

int
atomic_file_commit(struct atomic_file *af)
{
	int r = publish(af);
	if (r == 0) {
		r = sync_dir(af->path);
	}
	release(af, false);
	return r;
}

int
atomic_file_commit_keep(struct atomic_file *af, int *fd)
{
	assert(!af->stream);
	int r = publish(af);
	if (r == 0) {
		(void)sync_dir(af->path);
		*fd = af->fd;
	}
	release(af, r == 0);
	return r;
}

int
atomic_write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	struct atomic_file *af;
	int r = atomic_file_create(path, mode, &af);
	if (r < 0) {
		return r;
	}
	const char *p = data;
	while (len > 0) {
		ssize_t n = write(af->fd, p, len);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			atomic_file_abort(af);
			return r;
		}
		p += n;
		len -= (size_t)n;
	}
	return atomic_file_commit(af);
}
