/*
 * Board file reader, reading part: small files as strings or integers,
 * whole text files, and the error accounting every access goes through
 * (a failing path is counted, logged once and backed off exponentially,
 * so it costs nothing on later samples). Reads never block on a FIFO or a
 * character device and are bounded in size.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/log.h"
#include "core/xalloc.h"
#include "sysfs_priv.h"

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 300000
#define SLOW_READ_MS 100
#define READ_FILE_LIMIT (64u << 20)

#define OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)

/* ---- error accounting ----------------------------------------------- */

static struct backoff *
find_slot(struct sysfs *fs, const char *path, uint64_t hash)
{
	for (size_t i = 0; i < fs->used; i++) {
		struct backoff *b = &fs->slots[i];
		if (b->hash == hash && strcmp(b->path, path) == 0) {
			return b;
		}
	}
	return NULL;
}

/* A free slot, or the one whose last failure is the oldest. */
static struct backoff *
new_slot(struct sysfs *fs, const char *path, uint64_t hash)
{
	char *copy = xstrdup(path);
	struct backoff *b;
	if (fs->used < BACKOFF_SLOTS) {
		b = &fs->slots[fs->used++];
	} else {
		b = &fs->slots[0];
		for (size_t i = 1; i < BACKOFF_SLOTS; i++) {
			if (fs->slots[i].last_fail < b->last_fail) {
				b = &fs->slots[i];
			}
		}
		free(b->path);
	}
	*b = (struct backoff){.path = copy, .hash = hash};
	return b;
}

int
sysfs_begin(struct sysfs *fs, const char *path, struct sysfs_access *a)
{
	if (!sysfs_path_ok(path)) {
		return -EINVAL;
	}
	a->path = path;
	a->hash = hash_words(path, strlen(path));
	a->start_ms = fs->chained ? fs->chain_ms : fs->now_ms(fs->clock_data);
	if (fs->used > 0) {
		struct backoff *b = find_slot(fs, path, a->hash);
		if (b && a->start_ms < b->retry_ms) {
			return -EBUSY;
		}
	}
	return 0;
}

static void
record_failure(struct sysfs *fs, const char *path, uint64_t hash, int64_t now, const char *reason)
{
	struct backoff *b = find_slot(fs, path, hash);
	fs->errors++;
	if (!b) {
		b = new_slot(fs, path, hash);
	}
	b->delay_ms = b->delay_ms ? b->delay_ms * 2 : BACKOFF_FIRST_MS;
	if (b->delay_ms > BACKOFF_MAX_MS) {
		b->delay_ms = BACKOFF_MAX_MS;
	}
	b->retry_ms = now + b->delay_ms;
	b->last_fail = ++fs->fail_seq;
	if (!b->logged) {
		b->logged = true;
		log_warn("cannot read %s: %s", path, reason);
	}
}

void
sysfs_finish(struct sysfs *fs, const struct sysfs_access *a, int err, const char *reason)
{
	const char *path = a->path;
	int64_t start = a->start_ms;
	if (err == -ENOENT) {
		return; /* an absent sensor is normal */
	}
	int64_t end = fs->now_ms(fs->clock_data);
	fs->chain_ms = end;
	if (err < 0) {
		record_failure(fs, path, a->hash, end, reason ? reason : strerror(-err));
		return;
	}
	if (end - start > SLOW_READ_MS) {
		/*
		 * One slow read is as likely the agent waiting for a CPU as the file
		 * (a busy board, a CI machine): only a second one in a row backs off.
		 */
		struct backoff *b = find_slot(fs, path, a->hash);
		if (!b || !b->slow) {
			if (!b) {
				b = new_slot(fs, path, a->hash);
			}
			b->slow = true;
			return;
		}
		char why[64];
		snprintf(why, sizeof(why), "slow read (%lld ms, twice in a row)", (long long)(end - start));
		record_failure(fs, path, a->hash, end, why);
		return;
	}
	if (fs->used > 0) {
		struct backoff *b = find_slot(fs, path, a->hash);
		if (b) {
			b->delay_ms = 0;
			b->retry_ms = 0;
			b->slow = false;
		}
	}
}
/* ---- reading ----------------------------------------------------------- */

int
sysfs_open_readable(struct sysfs *fs, const char *path, bool *regular)
{
	int fd = sysfs_open_path(fs, path, OPEN_FLAGS);
	if (fd < 0) {
		return fd;
	}
	struct stat st;
	int err = 0;
	if (fstat(fd, &st) < 0) {
		err = -errno;
	} else if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
	} else if (!S_ISREG(st.st_mode)) {
		/* FIFO or device: a stuck driver must not stall the sample */
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, 0);
		if (r < 0) {
			err = -errno;
		} else if (r == 0) {
			err = -EAGAIN;
		} else if (p.revents & (POLLERR | POLLNVAL)) {
			err = -EIO;
		}
	}
	if (err < 0) {
		close(fd);
		return err;
	}
	*regular = S_ISREG(st.st_mode);
	return fd;
}

/*
 * Reads from FD into BUF until EOF or *N reaches CAP. st_size is not
 * trusted (sysfs says 4096, procfs 0). A regular file is read with pread()
 * from offset *N (a kept descriptor is never seeked) and a short read is
 * its end, so a small attribute costs one call. A non-regular file stops
 * at EAGAIN once some data came.
 */
static int
fill(int fd, bool regular, char *buf, size_t cap, size_t *n)
{
	while (*n < cap) {
		size_t want = cap - *n;
		ssize_t r = regular ? pread(fd, buf + *n, want, (off_t)*n) : read(fd, buf + *n, want);
		if (r > 0) {
			*n += (size_t)r;
			if (regular && (size_t)r < want) {
				return 0;
			}
			continue;
		}
		if (r == 0) {
			return 0;
		}
		if (errno == EINTR) {
			continue;
		}
		if (!regular && (errno == EAGAIN || errno == EWOULDBLOCK) && *n > 0) {
			return 0;
		}
		return -errno;
	}
	return 0;
}

/*
 * Fills BUF from the regular file FD; a driver that answers EAGAIN ("no
 * value now": a sensor under load, or one whose rail is power-gated) is
 * asked once more at once. Sets *GATED when it said EAGAIN both times.
 */
static int
fill_regular(int fd, char *buf, size_t *n, bool *gated)
{
	int err = fill(fd, true, buf, SYSFS_SMALL_MAX + 1, n);
	if (err == -EAGAIN) {
		*n = 0;
		err = fill(fd, true, buf, SYSFS_SMALL_MAX + 1, n);
		*gated = err == -EAGAIN;
	}
	return err;
}

/*
 * Reads at most SYSFS_SMALL_MAX + 1 bytes of PATH into BUF; returns the
 * length. *GATED: a regular file whose driver said EAGAIN twice.
 */
static int
read_small(struct sysfs *fs, const struct sysfs_access *a, char *buf, bool *gated)
{
	size_t n = 0;
	int err;
	*gated = false;
	int fd = sysfs_kept_fd(fs, a);
	if (fd >= 0) {
		err = fill_regular(fd, buf, &n, gated);
		if (*gated) {
			return err; /* the file is fine, the driver has no value: keep the descriptor */
		}
		if (err < 0) {
			/* the device went away (ENODEV, ESTALE...): reopen once, below */
			sysfs_kept_drop(fs, a);
			n = 0;
			fd = -1;
		}
	}
	if (fd < 0) {
		bool regular = false;
		fd = sysfs_open_readable(fs, a->path, &regular);
		if (fd < 0) {
			return fd;
		}
		err = regular ? fill_regular(fd, buf, &n, gated) : fill(fd, false, buf, SYSFS_SMALL_MAX + 1, &n);
		close(fd);
		if (err < 0) {
			return err;
		}
	}
	if (n > SYSFS_SMALL_MAX) {
		return -EFBIG;
	}
	return (int)n;
}

static size_t
trim_end(const char *buf, size_t len)
{
	while (len > 0) {
		char c = buf[len - 1];
		if (c != '\0' && c != ' ' && c != '\n' && c != '\t' && c != '\r' && c != '\v' && c != '\f') {
			break;
		}
		len--;
	}
	return len;
}

/* The read part of sysfs_read_str() without accounting. */
static int
read_trimmed(struct sysfs *fs, const struct sysfs_access *a, char *buf, size_t size)
{
	char tmp[SYSFS_SMALL_MAX + 1];
	bool gated;
	int n = read_small(fs, a, tmp, &gated);
	if (n < 0) {
		return n;
	}
	size_t len = trim_end(tmp, (size_t)n);
	if (len == 0) {
		return -ENODATA;
	}
	if (len + 1 > size) {
		return -EFBIG;
	}
	memcpy(buf, tmp, len);
	buf[len] = '\0';
	return (int)len;
}

int
sysfs_read_str(struct sysfs *fs, const char *path, char *buf, size_t size)
{
	struct sysfs_access a;
	int err = sysfs_begin(fs, path, &a);
	if (err < 0) {
		return err;
	}
	if (!buf || size == 0) {
		return -EINVAL;
	}
	int n = read_trimmed(fs, &a, buf, size);
	sysfs_finish(fs, &a, n < 0 ? n : 0, NULL);
	return n;
}

/* Decimal integer with optional leading whitespace and sign, nothing after. */
static int
parse_i64(const char *s, size_t len, int64_t *out)
{
	const char *p = s;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
		p++;
	}
	if (*p == '+' || *p == '-') {
		p++;
	}
	if (*p < '0' || *p > '9') {
		return -EINVAL;
	}
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end != s + len) {
		return -EINVAL;
	}
	if (errno == ERANGE) {
		return -ERANGE;
	}
	*out = (int64_t)v;
	return 0;
}

/* sysfs_read_i64() and, with GATE_OK, sysfs_read_sensor(). */
static int
read_i64(struct sysfs *fs, const char *path, int64_t *out, bool gate_ok)
{
	struct sysfs_access a;
	int err = sysfs_begin(fs, path, &a);
	if (err < 0) {
		return err;
	}
	char buf[SYSFS_SMALL_MAX + 1];
	const char *reason = NULL;
	int64_t v = 0;
	bool gated;
	int n = read_small(fs, &a, buf, &gated);
	if (gated && gate_ok) {
		/* a state of the sensor, not a fault: nothing counted, logged or backed off */
		sysfs_finish(fs, &a, 0, NULL);
		return SYSFS_GATED;
	}
	if (n >= 0) {
		size_t len = trim_end(buf, (size_t)n);
		buf[len] = '\0';
		if (len == 0) {
			n = -ENODATA;
		} else {
			n = parse_i64(buf, len, &v);
			if (n == -EINVAL) {
				reason = "not a decimal integer";
			} else if (n == -ERANGE) {
				reason = "integer out of range";
			}
		}
	}
	sysfs_finish(fs, &a, n, reason);
	if (n < 0) {
		return n;
	}
	*out = v;
	return 0;
}

int
sysfs_read_i64(struct sysfs *fs, const char *path, int64_t *out)
{
	return read_i64(fs, path, out, false);
}

int
sysfs_read_sensor(struct sysfs *fs, const char *path, int64_t *out)
{
	return read_i64(fs, path, out, true);
}

/* Reads all of FD, at most MAX bytes, into a malloc'd buffer; returns the length. */
static int
read_all(int fd, bool regular, size_t max, char **out)
{
	size_t cap = max + 1 < 4096 ? max + 1 : 4096;
	size_t n = 0;
	char *buf = NULL;
	int err;
	for (;;) {
		buf = xrealloc(buf, cap + 1, 1);
		err = fill(fd, regular, buf, cap, &n);
		if (err < 0 || n < cap || cap == max + 1) {
			break;
		}
		cap = cap * 2 < max + 1 ? cap * 2 : max + 1;
	}
	if (err == 0 && n > max) {
		err = -EFBIG;
	}
	if (err < 0) {
		free(buf);
		return err;
	}
	buf[n] = '\0';
	*out = buf;
	return (int)n;
}

/* The read part of sysfs_read_file() without accounting. */
static int
read_whole(struct sysfs *fs, const struct sysfs_access *a, size_t max, char **out)
{
	int fd = sysfs_kept_fd(fs, a);
	if (fd >= 0) {
		int n = read_all(fd, true, max, out);
		if (n >= 0 || n == -EFBIG) {
			return n;
		}
		sysfs_kept_drop(fs, a); /* gone: reopen once, below */
	}
	bool regular = false;
	fd = sysfs_open_readable(fs, a->path, &regular);
	if (fd < 0) {
		return fd;
	}
	int n = read_all(fd, regular, max, out);
	close(fd);
	return n;
}

int
sysfs_read_file(struct sysfs *fs, const char *path, size_t max, char **out)
{
	struct sysfs_access a;
	int err = sysfs_begin(fs, path, &a);
	if (err < 0) {
		return err;
	}
	if (!out || max > READ_FILE_LIMIT) {
		return -EINVAL;
	}
	char *buf = NULL;
	int n = read_whole(fs, &a, max, &buf);
	sysfs_finish(fs, &a, n < 0 ? n : 0, NULL);
	if (n < 0) {
		return n;
	}
	*out = buf;
	return n;
}
