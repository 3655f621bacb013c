/* What several unit tests share (see helpers.h). */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* ---- directories and files ---- */

double
th_cpu_ms(void)
{
	struct timespec ts;
	assert_int_equal(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts), 0);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

char *
th_tmpdir(const char *tag)
{
	char tmpl[256];
	snprintf(tmpl, sizeof(tmpl), "/tmp/tw-%s.XXXXXX", tag);
	char *dir = strdup(tmpl);
	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

/* nftw() callbacks take no argument: the copy in progress */
static const char *copy_src;
static const char *copy_dst;

static int
copy_fd(int in, int out)
{
	char buf[8192];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			return -1;
		}
	}
	return n < 0 ? -1 : 0;
}

static int
copy_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	char dst[4096];
	snprintf(dst, sizeof(dst), "%s%s", copy_dst, path + strlen(copy_src));
	if (type == FTW_D) {
		return mkdir(dst, 0755) < 0 && errno != EEXIST ? -1 : 0;
	}
	if (type == FTW_SL) {
		char target[4096];
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (n < 0) {
			return -1;
		}
		target[n] = '\0';
		return symlink(target, dst);
	}
	if (type != FTW_F) {
		return -1;
	}
	int in = open(path, O_RDONLY);
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, st->st_mode & 0777);
	int ret = in < 0 || out < 0 ? -1 : copy_fd(in, out);
	if (in >= 0) {
		close(in);
	}
	if (out >= 0) {
		close(out);
	}
	return ret;
}

char *
th_copytree(const char *src, const char *tag)
{
	char *dir = th_tmpdir(tag);
	copy_src = src;
	copy_dst = dir;
	assert_int_equal(nftw(src, copy_entry, 16, FTW_PHYS), 0);
	return dir;
}

static int
remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

void
th_rmtree(char *dir)
{
	if (dir) {
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		free(dir);
	}
}

const char *
th_join(char *buf, size_t size, const char *dir, const char *rel)
{
	int n = snprintf(buf, size, "%s%s%s", dir, rel[0] == '/' ? "" : "/", rel);
	assert_true(n > 0 && (size_t)n < size);
	return buf;
}

void
th_write_bytes(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0) {
		fail_msg("cannot create %s: %s", path, strerror(errno));
	}
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0); /* whatever the umask */
	assert_int_equal(close(fd), 0);
}

void
th_write_text(const char *path, const char *text)
{
	th_write_bytes(path, text, strlen(text), 0644);
}

void
th_write_at(const char *dir, const char *rel, const char *text)
{
	char path[4096];
	th_write_text(th_join(path, sizeof(path), dir, rel), text);
}

char *
th_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fail_msg("cannot open %s: %s", path, strerror(errno));
	}
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n >= 0);
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	buf[n] = '\0';
	if (len) {
		*len = (size_t)n;
	}
	return buf;
}

/* ---- samples ---- */

struct sample *
th_sample_new(void)
{
	struct sample *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	sample_clear(s);
	return s;
}

void
th_sample_at(struct sample *s, int64_t time_ms, int64_t mono_ms)
{
	sample_clear(s);
	s->time_ms = time_ms;
	s->mono_ms = mono_ms;
}

void
th_put(struct sample *s, const char *name, double value)
{
	assert_int_equal(metric_set_put(&s->metrics, name, value), 0);
}

/* ---- rules ---- */

struct rule_set *
th_rule_set_new(size_t n)
{
	struct rule_set *set = calloc(1, sizeof(*set));
	assert_non_null(set);
	set->rules = calloc(n, sizeof(*set->rules));
	assert_non_null(set->rules);
	set->count = n;
	return set;
}

void
th_rule_set_free(struct rule_set *set)
{
	rule_set_free(set);
	free(set);
}

struct rule *
th_rule_init(struct rule_set *set, size_t i, const char *name, const char *metric, enum rule_op op)
{
	struct rule *r = &set->rules[i];
	r->name = strdup(name);
	r->metric = strdup(metric);
	assert_true(r->name && r->metric);
	r->op = op;
	r->event_severity = SEVERITY_WARNING;
	r->absent_severity = SEVERITY_WARNING;
	for (int s = 0; s < SEVERITY_COUNT; s++) {
		r->level[s].scale = 1;
	}
	return r;
}

void
th_level(struct rule *r, enum severity s, double v)
{
	r->level[s].set = true;
	r->level[s].ref = REF_NONE;
	r->level[s].offset = v;
}
