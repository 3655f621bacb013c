/* The processes source (see procs_source.h): which processes each watch takes, what they use, restarts. */
#include "procs_source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/gpu_procs.h"
#include "core/log.h"
#include "core/metric_attrs.h"
#include "core/xalloc.h"
#include "proc_find.h"
#include "proc_match.h"
#include "nvmap_clients.h"
#include "proc_parse.h"

#define PATH_BYTES 512
#define TEXT_BYTES 4096 /* /proc/PID/status is about 1.5 KiB; a command line is cut here */
#define MIB 1048576.0
#define NVMAP_CLIENTS "kernel/debug/nvmap/iovmm/clients" /* under SYS; debugfs: root only */
#define NVMAP_BYTES_MAX (256 * 1024)                     /* about 4000 clients */

/* What a watch could not read, said once each time it changes. */
enum problem {
	P_NONE,
	P_PIDFILE_MISSING,    /* no pid file: stopped (info) */
	P_PIDFILE_UNREADABLE, /* error */
	P_PIDFILE_GARBAGE,    /* error */
	P_PIDFILE_NO_PROCESS, /* its pid is not running: stopped without removing it (info) */
	P_PID_REUSED,         /* its pid is another process now (error) */
	P_UNIT_NO_CGROUP,     /* not running, or no such unit (info) */
};

/* A process of a watch at its last scan. */
struct member {
	int32_t pid;
	uint64_t start_ticks, cpu_ticks;
};

/* A command line's verdict, kept while its process lives (a command line hardly ever changes). */
struct verdict {
	int32_t pid;
	uint64_t start_ticks;
	bool match;
};

struct watch {
	char *name, *value, *where;
	char segment[PROCS_SEGMENT_MAX];
	enum procs_match match;
	struct proc_matcher *re;
	struct member *members;
	size_t n_members;
	struct verdict *verdicts;
	size_t n_verdicts;
	bool has_main; /* the main process: the oldest of the watch, or the pid file's */
	int32_t main_pid;
	uint64_t main_start;
	uint64_t restarts;
	double cpu_s_total;
	bool pf_known; /* the pid file as first seen with its process: a pid taken again is caught */
	struct pidfile_read pf;
	uint64_t pf_start;
	enum problem problem;
	/* the last scan's values */
	int count;
	double cpu_pct, rss_bytes, vms_bytes, uptime_s;
	double gpu_bytes;     /* NAN: the platform does not tell (or not for one of the processes) */
	int64_t threads, fds; /* fds -1: a process's fd directory was unreadable */
};

struct procs_source {
	struct source base;
	char proc[PATH_BYTES / 2], sys[PATH_BYTES / 2];
	int64_t interval_ms, next_ms;
	struct proc_table *table;
	bool table_used; /* a comm: or cmdline: watch needs every process */
	struct watch *w;
	size_t n;
	double uptime_s, prev_uptime_s;
	bool scanned, have_prev;
	uint64_t errors;
	/* GPU memory per process: NVML's answer through the feed, else nvmap's clients file */
	struct gpu_procs_feed *gpu_feed;
	struct gpu_procs gpu;
	bool gpu_read;    /* this scan asked (only once a watch has a process) */
	bool gpu_known;   /* this scan's gpu tells every process's */
	bool nvmap_said;  /* why the clients file gives nothing was logged */
	char *nvmap_text; /* the clients file, read whole */
	size_t nvmap_cap;
	char text[TEXT_BYTES];
};

/* reads a small file whole into s->text; its length, or -errno */
static ssize_t
read_text(struct procs_source *s, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	ssize_t n = read(fd, s->text, sizeof(s->text) - 1);
	int err = errno;
	close(fd);
	if (n < 0) {
		return -err;
	}
	s->text[n] = '\0';
	return n;
}

/* reads the nvmap clients file whole into s->nvmap_text (grown as needed, NVMAP_BYTES_MAX at most); its length or -errno */
static ssize_t
read_nvmap(struct procs_source *s, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	size_t got = 0;
	ssize_t r = 0;
	for (;;) {
		if (got == s->nvmap_cap) {
			if (s->nvmap_cap >= NVMAP_BYTES_MAX) {
				r = -EFBIG;
				break;
			}
			s->nvmap_cap = s->nvmap_cap ? s->nvmap_cap * 2 : 4096;
			s->nvmap_text = xrealloc(s->nvmap_text, s->nvmap_cap, 1);
		}
		ssize_t n = read(fd, s->nvmap_text + got, s->nvmap_cap - got);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	return r < 0 ? r : (ssize_t)got;
}

/*
 * The GPU memory of every process, for this scan: NVML's answer when it
 * gives one (a discrete GPU, Thor), else nvmap's clients file (Orin and
 * older, root only); neither: unknown, and why said once (not for a host
 * without the file).
 */
static void
read_gpu(struct procs_source *s)
{
	s->gpu_known = s->gpu_feed && gpu_procs_feed_take(s->gpu_feed, monotonic_ms(), &s->gpu);
	if (s->gpu_known) {
		return;
	}
	char path[PATH_BYTES];
	size_t bad = 0;
	snprintf(path, sizeof(path), "%s/" NVMAP_CLIENTS, s->sys);
	ssize_t n = read_nvmap(s, path);
	int r = n < 0 ? (int)n : nvmap_clients_parse(s->nvmap_text, (size_t)n, &s->gpu, &bad);
	s->gpu_known = r == 0;
	if (r < 0 && r != -ENOENT && !s->nvmap_said) {
		s->nvmap_said = true;
		log_info("processes: no GPU memory per process from %s: %s", path,
			 r == -EINVAL   ? "not nvmap's clients table"
			 : r == -EACCES ? "only root reads it"
					: strerror(-r));
	}
	s->errors += bad;
	if (bad > 0 && !s->nvmap_said) {
		s->nvmap_said = true;
		log_warn("processes: %s: %zu lines that are no client (counted; said once)", path, bad);
	}
}

/* says PROBLEM of W once (until another one comes); counts the ones that are mistakes */
static void
say(struct procs_source *s, struct watch *w, enum problem p, const char *detail)
{
	if (w->problem == p) {
		return;
	}
	w->problem = p;
	switch (p) {
	case P_NONE:
		log_info("processes: '%s' (%s): back", w->name, w->where);
		return;
	case P_PIDFILE_MISSING:
	case P_PIDFILE_NO_PROCESS:
	case P_UNIT_NO_CGROUP:
		log_info("processes: '%s' (%s): %s: down", w->name, w->where, detail);
		return;
	case P_PIDFILE_UNREADABLE:
	case P_PIDFILE_GARBAGE:
	case P_PID_REUSED:
		break;
	}
	s->errors++;
	log_warn("processes: '%s' (%s): %s: counted as down", w->name, w->where, detail);
}

/* the pids of a comm: or cmdline: watch, from the table */
static void
find_in_table(struct procs_source *s, struct watch *w, struct pid_list *out)
{
	size_t n;
	const struct proc_entry *e = proc_table_entries(s->table, &n);
	struct verdict *kept = xcalloc(n ? n : 1, sizeof(*kept));
	size_t n_kept = 0, k = 0; /* both lists by pid: the last scan's verdicts walked once */
	for (size_t i = 0; i < n; i++) {
		if (e[i].state == 'Z' || e[i].state == 'X') {
			continue; /* exited, not yet reaped: not running */
		}
		if (w->match == PROCS_COMM) {
			if (strcmp(e[i].comm, w->value) == 0) {
				pid_list_add(out, e[i].pid);
			}
			continue;
		}
		while (k < w->n_verdicts && w->verdicts[k].pid < e[i].pid) {
			k++;
		}
		const struct verdict *v = k < w->n_verdicts && w->verdicts[k].pid == e[i].pid &&
							  w->verdicts[k].start_ticks == e[i].start_ticks
						  ? &w->verdicts[k]
						  : NULL;
		struct verdict now = {e[i].pid, e[i].start_ticks, false};
		if (v) {
			now.match = v->match;
		} else {
			char path[PATH_BYTES];
			snprintf(path, sizeof(path), "%s/%d/cmdline", s->proc, (int)e[i].pid);
			ssize_t len = read_text(s, path);
			if (len < 0) {
				continue; /* gone: decided at the next scan if it is back */
			}
			proc_cmdline_text(s->text, (size_t)len);
			now.match = s->text[0] && proc_matcher_test(w->re, s->text);
		}
		kept[n_kept++] = now;
		if (now.match) {
			pid_list_add(out, e[i].pid);
		}
	}
	free(w->verdicts);
	w->verdicts = kept;
	w->n_verdicts = n_kept;
}

/* the pid of a pidfile: watch, unless the file says none or its pid is another process now */
static void
find_pidfile(struct procs_source *s, struct watch *w, struct pid_list *out)
{
	struct pidfile_read pf;
	char detail[PATH_BYTES + 64];
	int r = proc_find_pidfile(w->value, &pf);
	if (r == -ENOENT) {
		snprintf(detail, sizeof(detail), "no pid file %s", w->value);
		say(s, w, P_PIDFILE_MISSING, detail);
		return;
	}
	if (r == -EINVAL) {
		snprintf(detail, sizeof(detail), "pid file %s holds no pid (%s)", w->value, pf.shown);
		say(s, w, P_PIDFILE_GARBAGE, detail);
		return;
	}
	if (r < 0) {
		snprintf(detail, sizeof(detail), "cannot read the pid file %s: %s", w->value, strerror(-r));
		say(s, w, P_PIDFILE_UNREADABLE, detail);
		return;
	}
	char path[PATH_BYTES];
	struct proc_stat st;
	snprintf(path, sizeof(path), "%s/%d/stat", s->proc, (int)pf.pid);
	ssize_t n = read_text(s, path);
	if (n <= 0 || proc_parse_stat(s->text, (size_t)n, &st) < 0 || st.state == 'Z' || st.state == 'X') {
		snprintf(detail, sizeof(detail), "pid file %s names pid %d, which is not running", w->value,
			 (int)pf.pid);
		say(s, w, P_PIDFILE_NO_PROCESS, detail);
		return;
	}
	/* the same file, the same pid, another start: the program died and another process took its pid */
	bool same_file = w->pf_known && pf.dev == w->pf.dev && pf.ino == w->pf.ino && pf.mtime_ns == w->pf.mtime_ns &&
			 pf.pid == w->pf.pid;
	if (same_file && st.start_ticks != w->pf_start) {
		snprintf(detail, sizeof(detail),
			 "pid file %s names pid %d, now another process ('%s', started after the one it named)",
			 w->value, (int)pf.pid, st.comm);
		say(s, w, P_PID_REUSED, detail);
		return;
	}
	if (!same_file) {
		w->pf = pf;
		w->pf_start = st.start_ticks;
		w->pf_known = true;
	}
	pid_list_add(out, pf.pid);
}

/* the number of open descriptors of PID, or -1 when its fd directory cannot be read (another user's) */
static int64_t
count_fds(const struct procs_source *s, int32_t pid)
{
	char path[PATH_BYTES];
	snprintf(path, sizeof(path), "%s/%d/fd", s->proc, (int)pid);
	DIR *d = opendir(path);
	if (!d) {
		return -1;
	}
	int64_t n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		n += e->d_name[0] != '.';
	}
	closedir(d);
	return n;
}

/* What one process of a watch uses now. */
struct usage {
	struct proc_stat st;
	double rss_bytes, vms_bytes;
	int64_t threads, fds;
};

/* reads process PID: false when it is gone (or exited between the reads) */
static bool
read_usage(struct procs_source *s, int32_t pid, struct usage *u)
{
	char path[PATH_BYTES];
	snprintf(path, sizeof(path), "%s/%d/stat", s->proc, (int)pid);
	ssize_t n = read_text(s, path);
	if (n <= 0 || proc_parse_stat(s->text, (size_t)n, &u->st) < 0 || u->st.pid != pid || u->st.state == 'Z' ||
	    u->st.state == 'X') {
		return false;
	}
	long page = proc_table_page_bytes(s->table);
	u->rss_bytes = (double)u->st.rss_pages * (double)page;
	u->vms_bytes = (double)u->st.vsize_bytes;
	u->threads = u->st.threads;
	snprintf(path, sizeof(path), "%s/%d/status", s->proc, (int)pid);
	n = read_text(s, path);
	struct proc_status ps;
	if (n == -ENOENT || n == -ESRCH) {
		return false; /* exited since its stat was read */
	}
	if (n > 0 && proc_parse_status(s->text, &ps) == 0) {
		/* kB exact, where stat says pages; a kernel thread has no Vm lines: no user memory */
		u->rss_bytes = ps.vm_rss_kb >= 0 ? (double)ps.vm_rss_kb * 1024.0 : 0;
		u->vms_bytes = ps.vm_size_kb >= 0 ? (double)ps.vm_size_kb * 1024.0 : 0;
		u->threads = ps.threads >= 0 ? ps.threads : u->threads;
	}
	u->fds = count_fds(s, pid);
	return true;
}

/* the member of W's last scan that is PID started at START, or NULL */
static const struct member *
member_of(const struct watch *w, int32_t pid, uint64_t start)
{
	for (size_t i = 0; i < w->n_members; i++) {
		if (w->members[i].pid == pid && w->members[i].start_ticks == start) {
			return &w->members[i];
		}
	}
	return NULL;
}

/* the GPU memory PID holds: 0 when the platform's list leaves it out, NAN when it cannot tell */
static double
gpu_bytes_of(const struct procs_source *s, int32_t pid)
{
	uint64_t bytes;
	if (!s->gpu_known) {
		return NAN;
	}
	if (!gpu_procs_find(&s->gpu, pid, &bytes)) {
		return 0;
	}
	return bytes == GPU_PROC_UNKNOWN ? NAN : (double)bytes;
}

/* what the processes PIDS of W use, summed; restarts; the members for the next scan */
static void
measure(struct procs_source *s, struct watch *w, const struct pid_list *pids)
{
	long hz = proc_table_hz(s->table);
	struct member *now = xcalloc(pids->count ? pids->count : 1, sizeof(*now));
	size_t count = 0;
	double used_ticks = 0, rss = 0, vms = 0;
	int64_t threads = 0, fds = 0;
	uint64_t oldest = UINT64_MAX;
	int32_t main_pid = 0;
	if (pids->count > 0 && !s->gpu_read) {
		s->gpu_read = true;
		read_gpu(s);
	}
	double gpu = s->gpu_known ? 0 : NAN;
	for (size_t i = 0; i < pids->count; i++) {
		struct usage u;
		if (!read_usage(s, pids->pids[i], &u)) {
			continue;
		}
		uint64_t ticks = u.st.utime_ticks + u.st.stime_ticks;
		const struct member *before = member_of(w, u.st.pid, u.st.start_ticks);
		if (before && ticks >= before->cpu_ticks) {
			used_ticks += (double)(ticks - before->cpu_ticks);
		} else if (s->have_prev && (double)u.st.start_ticks / (double)hz >= s->prev_uptime_s) {
			used_ticks += (double)ticks; /* started since the last scan: all its time is in the window */
		}
		now[count++] = (struct member){u.st.pid, u.st.start_ticks, ticks};
		rss += u.rss_bytes;
		vms += u.vms_bytes;
		gpu += gpu_bytes_of(s, u.st.pid);
		threads += u.threads;
		fds = fds < 0 || u.fds < 0 ? -1 : fds + u.fds;
		if (u.st.start_ticks < oldest || (u.st.start_ticks == oldest && u.st.pid < main_pid)) {
			oldest = u.st.start_ticks;
			main_pid = u.st.pid;
		}
	}
	free(w->members);
	w->members = now;
	w->n_members = count;
	w->count = (int)count;
	double window = s->uptime_s - s->prev_uptime_s;
	w->cpu_pct = s->have_prev && window > 0 && count ? 100.0 * used_ticks / (double)hz / window : NAN;
	w->cpu_s_total += s->have_prev ? used_ticks / (double)hz : 0;
	w->rss_bytes = rss;
	w->vms_bytes = vms;
	w->gpu_bytes = gpu;
	w->threads = threads;
	w->fds = fds;
	/* /proc/uptime has hundredths: no more digits than that */
	w->uptime_s = count ? round((s->uptime_s - (double)oldest / (double)hz) * 100) / 100 : NAN;
	if (count == 0) {
		return; /* the main process is kept: its coming back, with another pid, is a restart */
	}
	if (w->has_main && (w->main_pid != main_pid || w->main_start != oldest)) {
		w->restarts++;
	}
	w->has_main = true;
	w->main_pid = main_pid;
	w->main_start = oldest;
}

static void
scan_watch(struct procs_source *s, struct watch *w)
{
	struct pid_list pids = {0};
	uint64_t bad = 0;
	enum problem before = w->problem;
	switch (w->match) {
	case PROCS_COMM:
	case PROCS_CMDLINE:
		find_in_table(s, w, &pids);
		break;
	case PROCS_PIDFILE:
		find_pidfile(s, w, &pids);
		break;
	case PROCS_UNIT:
		if (proc_find_unit(s->sys, w->value, &pids, &bad) < 0) {
			char detail[PATH_BYTES];
			snprintf(detail, sizeof(detail), "unit %s has no cgroup (not running, or no such unit)",
				 w->value);
			say(s, w, P_UNIT_NO_CGROUP, detail);
		}
		if (bad > 0) {
			s->errors += bad;
			log_warn("processes: '%s' (%s): the cgroup of %s lists %llu lines that are no pid", w->name,
				 w->where, w->value, (unsigned long long)bad);
		}
		break;
	}
	measure(s, w, &pids);
	pid_list_free(&pids);
	if (w->count > 0 && before == w->problem && w->problem != P_NONE) {
		say(s, w, P_NONE, NULL);
	}
}

static void
scan(struct procs_source *s)
{
	double uptime;
	if (s->table_used) {
		int r = proc_table_scan(s->table);
		if (r < 0) {
			log_warn("processes: cannot scan %s: %s", s->proc, strerror(-r));
			return;
		}
		uptime = proc_table_uptime_s(s->table);
	} else {
		char path[PATH_BYTES];
		snprintf(path, sizeof(path), "%s/uptime", s->proc);
		if (read_text(s, path) < 0 || proc_parse_uptime(s->text, &uptime) < 0) {
			log_warn("processes: cannot read %s", path);
			return;
		}
	}
	s->have_prev = s->scanned;
	s->prev_uptime_s = s->uptime_s;
	s->uptime_s = uptime;
	s->gpu_read = false;
	for (size_t i = 0; i < s->n; i++) {
		scan_watch(s, &s->w[i]);
	}
	s->scanned = true;
}

static void
put(const struct watch *w, struct metric_set *m)
{
	const char *g = w->segment;
	metric_set_putf(m, w->count > 0 ? 1 : 0, "process.%s.up", g);
	metric_set_putf(m, w->count, "process.%s.count", g);
	metric_set_putf(m, (double)w->restarts, "process.%s.restarts_total", g);
	metric_set_putf(m, w->cpu_s_total, "process.%s.cpu_seconds_total", g);
	if (w->count == 0) {
		return; /* nothing runs: no usage to say */
	}
	if (isfinite(w->cpu_pct)) {
		metric_set_putf(m, w->cpu_pct, "process.%s.cpu_pct", g);
	}
	metric_set_putf(m, w->rss_bytes / MIB, "process.%s.resident_mb", g);
	metric_set_putf(m, w->vms_bytes / MIB, "process.%s.virtual_mb", g);
	metric_set_putf(m, (double)w->threads, "process.%s.threads", g);
	if (w->fds >= 0) {
		metric_set_putf(m, (double)w->fds, "process.%s.open_fds", g);
	}
	if (isfinite(w->gpu_bytes)) {
		metric_set_putf(m, w->gpu_bytes / MIB, "process.%s.gpu_memory_mb", g);
	}
	if (isfinite(w->uptime_s)) {
		metric_set_putf(m, w->uptime_s, "process.%s.uptime_s", g);
	}
}

static int
procs_read(struct source *src, struct sample *sample)
{
	struct procs_source *s = (struct procs_source *)src;
	int64_t now = monotonic_ms();
	if (now >= s->next_ms) {
		scan(s);
		s->next_ms = now + s->interval_ms;
	}
	if (!s->scanned) {
		return 0;
	}
	for (size_t i = 0; i < s->n; i++) {
		put(&s->w[i], &sample->metrics);
	}
	metric_set_put(&sample->metrics, "agent.process_errors_total", (double)s->errors);
	return 0;
}

static void
procs_destroy(struct source *src)
{
	struct procs_source *s = (struct procs_source *)src;
	for (size_t i = 0; i < s->n; i++) {
		struct watch *w = &s->w[i];
		metric_attrs_forget("name", w->segment);
		proc_matcher_destroy(w->re);
		free(w->members);
		free(w->verdicts);
		free(w->name);
		free(w->value);
		free(w->where);
	}
	free(s->w);
	proc_table_unref(s->table);
	gpu_procs_feed_unref(s->gpu_feed);
	gpu_procs_free(&s->gpu);
	free(s->nvmap_text);
	free(s);
}

static const struct source_ops procs_ops = {
	.name = "processes",
	.read = procs_read,
	.destroy = procs_destroy,
};

/* /proc mounted with hidepid, or ProtectProc=invisible in the unit: only this agent's own processes show */
static void
check_visibility(const struct procs_source *s)
{
	char path[PATH_BYTES];
	struct stat st;
	snprintf(path, sizeof(path), "%s/1", s->proc);
	if (stat(path, &st) != 0 && errno == ENOENT) {
		log_warn("processes: %s shows this agent only its own processes (ProtectProc=invisible in the unit, or "
			 "hidepid): other users' processes look down; 'systemctl edit tegrawatch' and set "
			 "ProtectProc=default (docs/service.md)",
			 s->proc);
	}
}

int
procs_source_create(const struct procs_source_options *o, struct source **out)
{
	struct procs_source *s = xcalloc(1, sizeof(*s));
	s->base.ops = &procs_ops;
	snprintf(s->proc, sizeof(s->proc), "%s", o->proc ? o->proc : "/proc");
	snprintf(s->sys, sizeof(s->sys), "%s", o->sys ? o->sys : "/sys");
	s->interval_ms = o->interval_ms > 0 ? o->interval_ms : PROCS_INTERVAL_DEFAULT_MS;
	s->table = proc_table_ref(o->table);
	s->gpu_feed = o->gpu_feed ? gpu_procs_feed_ref(o->gpu_feed) : NULL;
	s->w = xcalloc(o->cfg->count ? o->cfg->count : 1, sizeof(*s->w));
	for (size_t i = 0; i < o->cfg->count; i++) {
		const struct procs_watch *c = &o->cfg->items[i];
		struct watch *w = &s->w[s->n++];
		w->name = xstrdup(c->name);
		w->value = xstrdup(c->value);
		w->where = xstrdup(c->where ? c->where : "");
		memcpy(w->segment, c->segment, sizeof(w->segment));
		w->match = c->match;
		w->cpu_pct = w->uptime_s = w->gpu_bytes = NAN;
		s->table_used = s->table_used || c->match == PROCS_COMM || c->match == PROCS_CMDLINE;
		static const char *const names[] = {"name"};
		const char *values[] = {c->name};
		metric_attrs_set("name", c->segment, 1, names, values);
		if (c->match == PROCS_CMDLINE && !(w->re = proc_matcher_create(c->value))) {
			procs_destroy(&s->base);
			return -EINVAL;
		}
	}
	check_visibility(s);
	*out = &s->base;
	return 0;
}
