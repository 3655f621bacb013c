/* One scan of every process in /proc (see proc_table.h): the I/O around proc_parse.c. */
#include "proc_table.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/xalloc.h"

#define PATH_BYTES 512
#define STAT_BYTES 1024 /* a stat line is about 300 bytes; a name of 64 cannot push it past this */
#define MIN_WINDOW_S 0.05
#define ENTRIES_MAX 32768 /* processes a scan keeps (the default pid_max; 8 MiB for the two scans kept at most) */

struct proc_table {
	int refs;
	char proc[PATH_BYTES / 2];
	long hz, page_bytes;
	struct proc_entry *cur, *prev; /* by pid */
	size_t n_cur, n_prev, cap_cur, cap_prev;
	double uptime_s, prev_uptime_s;
	bool scanned, have_prev;
	int64_t scanned_ms; /* monotonic */
};

struct proc_table *
proc_table_create(const char *proc)
{
	struct proc_table *t = xcalloc(1, sizeof(*t));
	t->refs = 1;
	snprintf(t->proc, sizeof(t->proc), "%s", proc ? proc : "/proc");
	t->hz = sysconf(_SC_CLK_TCK);
	t->hz = t->hz > 0 ? t->hz : 100; /* USER_HZ is 100 on every Linux port */
	t->page_bytes = sysconf(_SC_PAGESIZE);
	t->page_bytes = t->page_bytes > 0 ? t->page_bytes : 4096;
	return t;
}

struct proc_table *
proc_table_ref(struct proc_table *t)
{
	t->refs++;
	return t;
}

void
proc_table_unref(struct proc_table *t)
{
	if (t && --t->refs == 0) {
		free(t->cur);
		free(t->prev);
		free(t);
	}
}

double
proc_cpu_pct(uint64_t ticks, uint64_t start_ticks, double uptime_s, bool have_prev, uint64_t prev_ticks,
	     double prev_uptime_s, long hz)
{
	double used_s, window_s;
	if (have_prev && ticks >= prev_ticks) {
		used_s = (double)(ticks - prev_ticks) / (double)hz;
		window_s = uptime_s - prev_uptime_s;
	} else {
		used_s = (double)ticks / (double)hz;
		window_s = uptime_s - (double)start_ticks / (double)hz;
	}
	return window_s >= MIN_WINDOW_S ? 100.0 * used_s / window_s : NAN;
}

/* reads a small file whole into BUF (SIZE - 1 bytes at most, NUL-terminated); its length, or -errno */
static ssize_t
read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	ssize_t n = read(fd, buf, size - 1);
	int err = errno;
	close(fd);
	if (n < 0) {
		return -err;
	}
	buf[n] = '\0';
	return n;
}

static int
by_pid(const void *a, const void *b)
{
	int32_t x = ((const struct proc_entry *)a)->pid, y = ((const struct proc_entry *)b)->pid;
	return (x > y) - (x < y);
}

static const struct proc_entry *
find_in(const struct proc_entry *list, size_t n, int32_t pid)
{
	struct proc_entry key = {.pid = pid};
	return n ? bsearch(&key, list, n, sizeof(*list), by_pid) : NULL;
}

/* the pid a /proc entry names, or 0 */
static int32_t
dir_pid(const char *name)
{
	int32_t pid;
	return name[0] >= '1' && name[0] <= '9' && proc_parse_pid(name, strlen(name), &pid) == 0 ? pid : 0;
}

/* reads /proc/PID/stat into E; false when the process is gone (or its file makes no sense) */
static bool
read_entry(struct proc_table *t, int32_t pid, struct proc_entry *e)
{
	char path[PATH_BYTES], buf[STAT_BYTES];
	snprintf(path, sizeof(path), "%s/%d/stat", t->proc, (int)pid);
	ssize_t n = read_text(path, buf, sizeof(buf));
	struct proc_stat st;
	if (n <= 0 || proc_parse_stat(buf, (size_t)n, &st) < 0 || st.pid != pid) {
		return false;
	}
	*e = (struct proc_entry){
		.pid = pid,
		.state = st.state,
		.start_ticks = st.start_ticks,
		.cpu_ticks = st.utime_ticks + st.stime_ticks,
		.threads = st.threads,
		.vsize_bytes = st.vsize_bytes,
		.rss_bytes = (uint64_t)st.rss_pages * (uint64_t)t->page_bytes,
	};
	memcpy(e->comm, st.comm, sizeof(e->comm));
	return true;
}

int
proc_table_scan(struct proc_table *t)
{
	char path[PATH_BYTES], buf[128];
	double uptime;
	snprintf(path, sizeof(path), "%s/uptime", t->proc);
	ssize_t r = read_text(path, buf, sizeof(buf));
	if (r < 0) {
		return (int)r;
	}
	if (proc_parse_uptime(buf, &uptime) < 0) {
		return -EINVAL;
	}
	DIR *dir = opendir(t->proc);
	if (!dir) {
		return -errno;
	}
	/* this scan's list becomes the one before */
	struct proc_entry *swap = t->prev;
	size_t cap = t->cap_prev;
	t->prev = t->cur;
	t->cap_prev = t->cap_cur;
	t->n_prev = t->n_cur;
	t->have_prev = t->scanned;
	t->prev_uptime_s = t->uptime_s;
	t->cur = swap;
	t->cap_cur = cap;
	t->n_cur = 0;
	bool in_order = true; /* the kernel lists /proc by pid: then no sort (and its buffer) is needed */
	for (struct dirent *d; (d = readdir(dir));) {
		int32_t pid = dir_pid(d->d_name);
		if (pid == 0) {
			continue;
		}
		if (t->n_cur == ENTRIES_MAX) {
			break;
		}
		if (t->n_cur == t->cap_cur) {
			t->cap_cur = t->cap_cur ? 2 * t->cap_cur : 256;
			t->cur = xrealloc(t->cur, t->cap_cur, sizeof(*t->cur));
		}
		struct proc_entry *e = &t->cur[t->n_cur];
		if (!read_entry(t, pid, e)) {
			continue; /* exited between the listing and the read */
		}
		in_order = in_order && (t->n_cur == 0 || e[-1].pid < pid);
		t->n_cur++;
	}
	closedir(dir);
	if (!in_order) {
		qsort(t->cur, t->n_cur, sizeof(*t->cur), by_pid);
	}
	t->uptime_s = uptime;
	for (size_t i = 0; i < t->n_cur; i++) {
		struct proc_entry *e = &t->cur[i];
		const struct proc_entry *p = t->have_prev ? find_in(t->prev, t->n_prev, e->pid) : NULL;
		bool same = p && p->start_ticks == e->start_ticks;
		e->cpu_pct = proc_cpu_pct(e->cpu_ticks, e->start_ticks, uptime, same, same ? p->cpu_ticks : 0,
					  t->prev_uptime_s, t->hz);
	}
	t->scanned = true;
	t->scanned_ms = monotonic_ms();
	return 0;
}

int
proc_table_refresh(struct proc_table *t)
{
	if (t->scanned && monotonic_ms() - t->scanned_ms < PROC_TABLE_FRESH_MS) {
		return 0;
	}
	return proc_table_scan(t);
}

const struct proc_entry *
proc_table_entries(const struct proc_table *t, size_t *n)
{
	*n = t->n_cur;
	return t->cur;
}

const struct proc_entry *
proc_table_find(const struct proc_table *t, int32_t pid)
{
	return find_in(t->cur, t->n_cur, pid);
}

double
proc_table_uptime_s(const struct proc_table *t)
{
	return t->uptime_s;
}

long
proc_table_hz(const struct proc_table *t)
{
	return t->hz;
}

long
proc_table_page_bytes(const struct proc_table *t)
{
	return t->page_bytes;
}

/* A before B in a top list: the larger value first (an unknown one last), then the lower pid. */
static bool
ahead(double a, int32_t pa, double b, int32_t pb)
{
	if (isnan(a) || isnan(b)) {
		return !isnan(a) || (isnan(b) && pa < pb);
	}
	return a > b || (a == b && pa < pb);
}

/* inserts E into LIST (*COUNT of TOP_PROCESSES_MAX, ordered) by the value V of each */
static void
top_insert(struct top_process *list, int *count, const struct proc_entry *e, bool memory)
{
	double v = memory ? (double)e->rss_bytes : e->cpu_pct;
	int at = *count;
	while (at > 0 && ahead(v, e->pid, memory ? list[at - 1].rss_bytes : list[at - 1].cpu_pct, list[at - 1].pid)) {
		at--;
	}
	if (at >= TOP_PROCESSES_MAX) {
		return;
	}
	int last = *count < TOP_PROCESSES_MAX ? *count : TOP_PROCESSES_MAX - 1;
	memmove(&list[at + 1], &list[at], (size_t)(last - at) * sizeof(*list));
	struct top_process *p = &list[at];
	p->pid = e->pid;
	snprintf(p->comm, sizeof(p->comm), "%s", e->comm);
	p->cpu_pct = e->cpu_pct;
	p->rss_bytes = (double)e->rss_bytes;
	*count = last + 1;
}

void
proc_table_top(const struct proc_table *t, struct top_processes *out)
{
	out->cpu_count = out->memory_count = 0;
	out->cpu_window_s = t->have_prev ? t->uptime_s - t->prev_uptime_s : 0;
	for (size_t i = 0; i < t->n_cur; i++) {
		const struct proc_entry *e = &t->cur[i];
		if (e->state == 'Z' || e->state == 'X') {
			continue; /* dead: nothing left to take */
		}
		if (e->cpu_pct > 0) { /* an idle process says nothing about what ran */
			top_insert(out->by_cpu, &out->cpu_count, e, false);
		}
		if (e->rss_bytes > 0) {
			top_insert(out->by_memory, &out->memory_count, e, true);
		}
	}
}
