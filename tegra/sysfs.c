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
 */
#include "sysfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifdef __has_include
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2_H 1
#endif
#endif

#include "agent/core/log.h"

#define BACKOFF_SLOTS 256
#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 300000
#define SLOW_READ_MS 100
#define LINKS_MAX 40
#define LIST_DIR_MAX 65536
#define READ_FILE_LIMIT (64u << 20)

#define OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)

struct backoff {
	char *path;          /* NULL: free slot */
	uint64_t hash;
	int64_t retry_ms;    /* reads before this time give -EBUSY */
	int64_t delay_ms;    /* current back-off; 0 after a success */
	uint64_t last_fail;  /* failure sequence number: the smallest is reused first */
	bool logged;
};

struct sysfs {
	char *root;          /* as given, "" for the real system */
	char *base;          /* canonical absolute root, "" for the real system */
	int root_fd;         /* -1 for the real system */
	bool use_openat2;
	int64_t (*now_ms)(void *data);
	void *clock_data;
	uint64_t errors;
	uint64_t fail_seq;
	size_t used;
	struct backoff slots[BACKOFF_SLOTS];
};

static int64_t
monotonic_ms(void *data)
{
	(void)data;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
	struct sysfs *fs = calloc(1, sizeof(*fs));
	if (!fs) {
		return -ENOMEM;
	}
	fs->root_fd = -1;
	fs->now_ms = monotonic_ms;
	int err = -ENOMEM;
	if (is_real_root(root)) {
		fs->root = strdup("");
		fs->base = strdup("");
		if (!fs->root || !fs->base) {
			goto fail;
		}
		*out = fs;
		return 0;
	}
	fs->root = strdup(root);
	if (!fs->root) {
		goto fail;
	}
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
sysfs_set_clock(struct sysfs *fs, int64_t (*now_ms)(void *data), void *data)
{
	fs->now_ms = now_ms ? now_ms : monotonic_ms;
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

/* Absolute, shorter than PATH_MAX, and without ".." components. */
static bool
path_ok(const char *path)
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

/* Opens PATH below the root; returns the fd or -errno. */
static int
open_path(struct sysfs *fs, const char *path, int flags)
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
		fd = (int)syscall(SYS_openat2, fs->root_fd, path, &how, sizeof(how));
		if (fd >= 0) {
			return fd;
		}
		if (errno != ENOSYS) {
			return -errno;
		}
		/* kernel before 5.6 (or a filter): use the user-space walk from now on */
		fs->use_openat2 = false;
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

/* ---- error accounting ----------------------------------------------- */

static uint64_t
hash_path(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

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
	char *copy = strdup(path);
	if (!copy) {
		return NULL;
	}
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

/*
 * Checks the back-off of PATH at the start of a read. Returns -EBUSY while
 * backing off, -EINVAL for a bad path, or 0 and the current time.
 */
static int
begin(struct sysfs *fs, const char *path, int64_t *now)
{
	if (!path_ok(path)) {
		return -EINVAL;
	}
	*now = fs->now_ms(fs->clock_data);
	if (fs->used > 0) {
		struct backoff *b = find_slot(fs, path, hash_path(path));
		if (b && *now < b->retry_ms) {
			return -EBUSY;
		}
	}
	return 0;
}

static void
record_failure(struct sysfs *fs, const char *path, int64_t now, const char *reason)
{
	uint64_t hash = hash_path(path);
	struct backoff *b = find_slot(fs, path, hash);
	fs->errors++;
	if (!b) {
		b = new_slot(fs, path, hash);
	}
	if (!b) {
		log_warn("cannot read %s: %s", path, reason);
		return;
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

/*
 * Accounts for one finished read that started at START: ERR is its result
 * (0 or -errno), REASON an optional text for the log instead of strerror.
 */
static void
finish(struct sysfs *fs, const char *path, int err, int64_t start, const char *reason)
{
	if (err == -ENOENT) {
		return; /* an absent sensor is normal */
	}
	int64_t end = fs->now_ms(fs->clock_data);
	if (err < 0) {
		record_failure(fs, path, end, reason ? reason : strerror(-err));
		return;
	}
	if (end - start > SLOW_READ_MS) {
		char why[64];
		snprintf(why, sizeof(why), "slow read (%lld ms)", (long long)(end - start));
		record_failure(fs, path, end, why);
		return;
	}
	if (fs->used > 0) {
		struct backoff *b = find_slot(fs, path, hash_path(path));
		if (b) {
			b->delay_ms = 0;
			b->retry_ms = 0;
		}
	}
}

/* ---- reading ----------------------------------------------------------- */

/*
 * Opens PATH for reading and checks that a read cannot block. Sets
 * *REGULAR. Returns the fd or -errno (-EAGAIN: nothing to read now).
 */
static int
open_readable(struct sysfs *fs, const char *path, bool *regular)
{
	int fd = open_path(fs, path, OPEN_FLAGS);
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
 * trusted (sysfs says 4096, procfs 0). A non-regular file stops at EAGAIN
 * once some data came.
 */
static int
fill(int fd, bool regular, char *buf, size_t cap, size_t *n)
{
	while (*n < cap) {
		ssize_t r = read(fd, buf + *n, cap - *n);
		if (r > 0) {
			*n += (size_t)r;
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

/* Reads at most SYSFS_SMALL_MAX + 1 bytes of PATH into BUF; returns the length. */
static int
read_small(struct sysfs *fs, const char *path, char *buf)
{
	bool regular = false;
	int fd = open_readable(fs, path, &regular);
	if (fd < 0) {
		return fd;
	}
	size_t n = 0;
	int err = fill(fd, regular, buf, SYSFS_SMALL_MAX + 1, &n);
	close(fd);
	if (err < 0) {
		return err;
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
		if (c != '\0' && c != ' ' && c != '\n' && c != '\t' && c != '\r' && c != '\v' &&
		    c != '\f') {
			break;
		}
		len--;
	}
	return len;
}

/* The read part of sysfs_read_str() without accounting. */
static int
read_trimmed(struct sysfs *fs, const char *path, char *buf, size_t size)
{
	char tmp[SYSFS_SMALL_MAX + 1];
	int n = read_small(fs, path, tmp);
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
	int64_t start;
	int err = begin(fs, path, &start);
	if (err < 0) {
		return err;
	}
	if (!buf || size == 0) {
		return -EINVAL;
	}
	int n = read_trimmed(fs, path, buf, size);
	finish(fs, path, n < 0 ? n : 0, start, NULL);
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

int
sysfs_read_i64(struct sysfs *fs, const char *path, int64_t *out)
{
	int64_t start;
	int err = begin(fs, path, &start);
	if (err < 0) {
		return err;
	}
	char buf[SYSFS_SMALL_MAX + 1];
	const char *reason = NULL;
	int64_t v = 0;
	int n = read_small(fs, path, buf);
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
	finish(fs, path, n, start, reason);
	if (n < 0) {
		return n;
	}
	*out = v;
	return 0;
}

/* The read part of sysfs_read_file() without accounting. */
static int
read_whole(struct sysfs *fs, const char *path, size_t max, char **out)
{
	bool regular = false;
	int fd = open_readable(fs, path, &regular);
	if (fd < 0) {
		return fd;
	}
	size_t cap = max + 1 < 4096 ? max + 1 : 4096;
	size_t n = 0;
	char *buf = NULL;
	int err;
	for (;;) {
		char *grown = realloc(buf, cap + 1);
		if (!grown) {
			err = -ENOMEM;
			goto out;
		}
		buf = grown;
		err = fill(fd, regular, buf, cap, &n);
		if (err < 0 || n < cap || cap == max + 1) {
			break;
		}
		cap = cap * 2 < max + 1 ? cap * 2 : max + 1;
	}
	if (err == 0 && n > max) {
		err = -EFBIG;
	}
out:
	close(fd);
	if (err < 0) {
		free(buf);
		return err;
	}
	buf[n] = '\0';
	*out = buf;
	return (int)n;
}

int
sysfs_read_file(struct sysfs *fs, const char *path, size_t max, char **out)
{
	int64_t start;
	int err = begin(fs, path, &start);
	if (err < 0) {
		return err;
	}
	if (!out || max > READ_FILE_LIMIT) {
		return -EINVAL;
	}
	char *buf = NULL;
	int n = read_whole(fs, path, max, &buf);
	finish(fs, path, n < 0 ? n : 0, start, NULL);
	if (n < 0) {
		return n;
	}
	*out = buf;
	return n;
}

bool
sysfs_exists(struct sysfs *fs, const char *path)
{
	if (!path_ok(path)) {
		return false;
	}
	int fd = open_path(fs, path, O_PATH | O_CLOEXEC);
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
	int fd = open_path(fs, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
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
			size_t ncap = cap ? cap * 2 : 32;
			char **grown = realloc(names, ncap * sizeof(*names));
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			names = grown;
			cap = ncap;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			err = -ENOMEM;
			break;
		}
		n++;
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
sysfs_list_dir(struct sysfs *fs, const char *path,
	       int (*fn)(const char *name, void *data), void *data)
{
	int64_t start;
	int err = begin(fs, path, &start);
	if (err < 0) {
		return err;
	}
	if (!fn) {
		return -EINVAL;
	}
	char **names = NULL;
	size_t count = 0;
	err = read_names(fs, path, &names, &count);
	finish(fs, path, err, start, NULL);
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
	if (!path_ok(path) || !buf) {
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
