/* Opening configured files without blocking on FIFOs; see readfile.h. */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "xalloc.h"

int
readfile_open(const char *path, struct stat *st)
{
	/* a FIFO opened for reading without O_NONBLOCK waits for a writer: the loop would stop with it */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	if (fstat(fd, st) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int
readfile_all(const char *path, size_t max, char **out, size_t *len, struct stat *st)
{
	struct stat own;
	int fd = readfile_open(path, st ? st : &own);
	if (fd < 0) {
		return fd;
	}
	/* one byte more than allowed tells a file that is too large (or grew) */
	char *buf = xmalloc(max + 2);
	size_t got = 0;
	int r = 0;
	while (got <= max) {
		ssize_t n = read(fd, buf + got, max + 1 - got);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0) {
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (r == 0 && got > max) {
		r = -EFBIG;
	}
	if (r < 0) {
		explicit_bzero(buf, got);
		free(buf);
		return r;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

int
readfile_private(const char *path, unsigned *mode)
{
	struct stat st;
	int fd = readfile_open(path, &st);
	if (fd < 0) {
		return fd;
	}
	close(fd);
	*mode = (unsigned)(st.st_mode & 07777);
	if (!(st.st_mode & (S_IRWXG | S_IRWXO))) {
		return 0;
	}
	const char *creds = getenv("CREDENTIALS_DIRECTORY");
	size_t n = creds ? strlen(creds) : 0;
	if (n > 0 && creds[0] == '/' && strncmp(path, creds, n) == 0 && path[n] == '/') {
		return 0; /* systemd made it, in a directory only this service can read */
	}
	return -EACCES;
}

const char *
readfile_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	default:
		return "not a regular file";
	}
}
