/*
 * procs/: the processes source and the process table on a /proc tree made
 * here (stat, status, cmdline and fd/ of each process, laid out as the real
 * files are: tests/fixtures/proc/), on the driven clock: which processes
 * each watch takes, what they use, CPU shares over the scan's window,
 * restarts, zombies and processes that exit between two reads, pid files
 * with garbage or a pid another process took, a unit's cgroup, the GPU
 * memory each holds (nvmap's clients file, a real capture under the tree's
 * /sys, or NVML's answer through the feed), and the top processes an alert
 * carries.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/cfg_tree.h"
#include "core/clock.h"
#include "core/clock_driven.h"
#include "core/diag.h"
#include "helpers.h"
#include "procs/proc_table.h"
#include "procs/procs_source.h"

#define T0 1000000
#define WALL0 1700000000000LL

/* One process as the kernel shows it. */
struct fake {
	int pid;
	const char *comm;
	char state;
	unsigned ticks;       /* utime; stime is 0 */
	unsigned long start;  /* ticks after boot */
	unsigned rss_kb;      /* status VmRSS; stat's rss is this in 4 KiB pages */
	const char *cmdline;  /* arguments separated by '\0' (NULL: "") */
	bool no_status;       /* exited between the reads of stat and status */
	bool no_fd;           /* its fd directory unreadable */
};

struct tree {
	char *root;
	char proc[512];
	char sys[512];
};

static void
mkdir_p(const char *path)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	}
	mkdir(buf, 0755);
}

static void
put_uptime(const struct tree *t, double s)
{
	char text[64];
	snprintf(text, sizeof(text), "%.2f %.2f\n", s, s / 2);
	th_write_at(t->proc, "uptime", text);
}

static void
put_proc(const struct tree *t, const struct fake *f)
{
	char dir[1024], text[1024], path[1100];
	snprintf(dir, sizeof(dir), "%s/%d", t->proc, f->pid);
	mkdir_p(dir);
	snprintf(text, sizeof(text),
		 "%d (%s) %c 1 %d %d 0 -1 4194304 0 0 0 0 %u 0 0 0 20 0 2 0 %lu %u %u 18446744073709551615 1 1 0\n",
		 f->pid, f->comm, f->state ? f->state : 'S', f->pid, f->pid, f->ticks, f->start, 2048u * 1024u,
		 f->rss_kb / 4);
	th_write_at(dir, "stat", text);
	snprintf(path, sizeof(path), "%s/status", dir);
	unlink(path);
	if (!f->no_status) {
		snprintf(text, sizeof(text), "Name:\t%s\nState:\tS (sleeping)\nVmSize:\t    2048 kB\nVmRSS:\t%8u kB\nThreads:\t2\n",
			 f->comm, f->rss_kb);
		th_write_at(dir, "status", text);
	}
	size_t n = f->cmdline ? strlen(f->cmdline) : 0;
	snprintf(path, sizeof(path), "%s/cmdline", dir);
	char cmd[256];
	memcpy(cmd, f->cmdline ? f->cmdline : "", n);
	for (size_t i = 0; i < n; i++) {
		cmd[i] = cmd[i] == ' ' ? '\0' : cmd[i]; /* arguments end with a NUL each */
	}
	cmd[n] = '\0';
	th_write_bytes(path, cmd, n ? n + 1 : 0, 0644);
	snprintf(path, sizeof(path), "%s/fd", dir);
	if (f->no_fd) {
		char *d = strdup(path);
		struct stat st;
		if (stat(d, &st) == 0) {
			th_rmtree(d);
		} else {
			free(d);
		}
		return;
	}
	mkdir_p(path);
	for (int i = 0; i < 3; i++) {
		char fd[1200];
		snprintf(fd, sizeof(fd), "%s/%d", path, i);
		th_write_text(fd, "");
	}
}

static void
drop_proc(const struct tree *t, int pid)
{
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/%d", t->proc, pid);
	th_rmtree(strdup(dir));
}

static struct tree
tree_new(void)
{
	struct tree t = {.root = th_tmpdir("procs-src")};
	snprintf(t.proc, sizeof(t.proc), "%s/proc", t.root);
	snprintf(t.sys, sizeof(t.sys), "%s/sys", t.root);
	mkdir_p(t.proc);
	mkdir_p(t.sys);
	put_uptime(&t, 100);
	put_proc(&t, &(struct fake){.pid = 1, .comm = "systemd", .start = 1, .rss_kb = 8192, .cmdline = "/sbin/init"});
	return t;
}

static struct source *
source_with_feed(const struct tree *t, const char *yaml, struct proc_table **table, struct gpu_procs_feed *feed)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct cfg_tree *tree;
	assert_int_equal(cfg_tree_load_buffer("t.yaml", yaml, strlen(yaml), &tree, &diags), 0);
	struct procs_config cfg = {0};
	struct cfg_decoder dec = {.diags = &diags, .context = "processes"};
	assert_int_equal(procs_config_decode(&dec, cfg_map_get(cfg_tree_root(tree), "processes"), &cfg), 0);
	cfg_tree_destroy(tree);
	diag_list_free(&diags);
	*table = proc_table_create(t->proc);
	assert_int_equal(proc_table_hz(*table), 100); /* USER_HZ: the ticks below are hundredths */
	struct procs_source_options o = {
		.cfg = &cfg, .interval_ms = 1000, .proc = t->proc, .sys = t->sys, .table = *table, .gpu_feed = feed};
	struct source *src;
	assert_int_equal(procs_source_create(&o, &src), 0);
	procs_config_free(&cfg);
	return src;
}

static struct source *
source_for(const struct tree *t, const char *yaml, struct proc_table **table)
{
	return source_with_feed(t, yaml, table, NULL);
}

/* reads a sample now (after moving the clock MS), returns it */
static struct sample *
tick(struct source *src, struct sample *s, int64_t ms)
{
	clock_driven_advance(ms);
	sample_clear(s);
	assert_int_equal(src->ops->read(src, s), 0);
	return s;
}

static double
get(const struct sample *s, const char *name)
{
	double v;
	return metric_set_get(&s->metrics, name, &v) ? v : NAN;
}

static bool
absent(const struct sample *s, const char *name)
{
	return !metric_set_find(&s->metrics, name);
}

static int
setup(void **state)
{
	(void)state;
	clock_driven_start(T0, WALL0);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	clock_driven_stop();
	return 0;
}

static void
test_comm_and_cmdline(void **state)
{
	(void)state;
	struct tree t = tree_new();
	put_proc(&t, &(struct fake){.pid = 100, .comm = "worker", .ticks = 100, .start = 5000, .rss_kb = 512});
	put_proc(&t, &(struct fake){.pid = 101, .comm = "worker", .ticks = 10, .start = 6000, .rss_kb = 512});
	put_proc(&t, &(struct fake){.pid = 102, .comm = "worker", .state = 'Z', .start = 6100}); /* exited, unreaped */
	put_proc(&t, &(struct fake){.pid = 103, .comm = "worker", .start = 6200, .no_status = true}); /* exiting */
	put_proc(&t, &(struct fake){.pid = 200, .comm = "python3", .start = 7000, .rss_kb = 4096,
				    .cmdline = "python3 app.py --serve"});
	put_proc(&t, &(struct fake){.pid = 201, .comm = "python3", .start = 7000, .rss_kb = 4096,
				    .cmdline = "python3 other.py"});
	struct proc_table *table;
	struct source *src =
		source_for(&t, "processes:\n  - {name: Worker, comm: worker}\n  - {name: app, cmdline: 'app\\.py'}\n",
			   &table);
	struct sample *s = th_sample_new();
	tick(src, s, 0);
	assert_true(get(s, "process.worker.up") == 1);
	assert_true(get(s, "process.worker.count") == 2); /* not the zombie, not the one that exited between reads */
	assert_true(get(s, "process.worker.threads") == 4);
	assert_true(get(s, "process.worker.resident_mb") == 1.0);
	assert_true(get(s, "process.worker.virtual_mb") == 4.0);
	assert_true(get(s, "process.worker.open_fds") == 6);
	assert_true(get(s, "process.worker.uptime_s") == 50); /* 100 s since boot, the oldest started at 50 */
	assert_true(get(s, "process.worker.restarts_total") == 0);
	assert_true(get(s, "process.worker.cpu_seconds_total") == 0);
	assert_true(absent(s, "process.worker.cpu_pct")); /* no window yet: absent, not 0 */
	assert_true(get(s, "process.app.count") == 1);
	assert_true(get(s, "process.app.resident_mb") == 4.0);
	assert_true(get(s, "agent.process_errors_total") == 0);

	/* a second later: 50 ticks more for pid 100, half a core */
	put_uptime(&t, 101);
	put_proc(&t, &(struct fake){.pid = 100, .comm = "worker", .ticks = 150, .start = 5000, .rss_kb = 512});
	tick(src, s, 500); /* not yet due: the last scan's values again */
	assert_true(absent(s, "process.worker.cpu_pct"));
	assert_true(get(s, "process.worker.count") == 2);
	tick(src, s, 500);
	assert_true(fabs(get(s, "process.worker.cpu_pct") - 50) < 1e-9);
	assert_true(fabs(get(s, "process.worker.cpu_seconds_total") - 0.5) < 1e-9);
	assert_true(get(s, "process.app.cpu_pct") == 0);

	/* the main (oldest) one exits and a new one starts: a restart; its ticks since it started count */
	put_uptime(&t, 102);
	drop_proc(&t, 100);
	put_proc(&t, &(struct fake){.pid = 104, .comm = "worker", .ticks = 20, .start = 10150, .rss_kb = 512});
	tick(src, s, 1000);
	assert_true(get(s, "process.worker.restarts_total") == 1);
	assert_true(get(s, "process.worker.count") == 2);
	assert_true(fabs(get(s, "process.worker.cpu_pct") - 20) < 1e-9);
	assert_true(get(s, "process.worker.uptime_s") == 42); /* 102 - 60: pid 101 is the oldest now */

	/* all gone: down, nothing used said; the counters stay */
	put_uptime(&t, 103);
	drop_proc(&t, 101);
	drop_proc(&t, 104);
	tick(src, s, 1000);
	assert_true(get(s, "process.worker.up") == 0);
	assert_true(get(s, "process.worker.count") == 0);
	assert_true(absent(s, "process.worker.resident_mb"));
	assert_true(absent(s, "process.worker.cpu_pct"));
	assert_true(get(s, "process.worker.restarts_total") == 1);
	assert_true(fabs(get(s, "process.worker.cpu_seconds_total") - 0.7) < 1e-9);

	/* back, with a descriptor directory it cannot read: a restart; open_fds absent, not a partial sum */
	put_uptime(&t, 104);
	put_proc(&t, &(struct fake){.pid = 105, .comm = "worker", .start = 10350, .rss_kb = 512, .no_fd = true});
	tick(src, s, 1000);
	assert_true(get(s, "process.worker.up") == 1);
	assert_true(get(s, "process.worker.restarts_total") == 2);
	assert_true(absent(s, "process.worker.open_fds"));

	src->ops->destroy(src);
	proc_table_unref(table);
	free(s);
	th_rmtree(t.root);
}

static void
test_pidfile(void **state)
{
	(void)state;
	struct tree t = tree_new();
	char pidfile[600], yaml[800];
	snprintf(pidfile, sizeof(pidfile), "%s/app.pid", t.root);
	snprintf(yaml, sizeof(yaml), "processes:\n  - {name: app, pidfile: %s}\n", pidfile);
	put_proc(&t, &(struct fake){.pid = 300, .comm = "app", .start = 8000, .rss_kb = 1024});
	put_proc(&t, &(struct fake){.pid = 301, .comm = "app", .start = 9500, .rss_kb = 1024});
	th_write_text(pidfile, "300\n");
	struct proc_table *table;
	struct source *src = source_for(&t, yaml, &table);
	struct sample *s = th_sample_new();
	tick(src, s, 0);
	assert_true(get(s, "process.app.up") == 1);
	assert_true(get(s, "process.app.resident_mb") == 1.0);

	/* the program died and another process took its pid: the pid file, untouched, names someone else */
	put_proc(&t, &(struct fake){.pid = 300, .comm = "bash", .start = 9000, .rss_kb = 1024});
	tick(src, s, 1000);
	assert_true(get(s, "process.app.up") == 0);
	assert_true(get(s, "agent.process_errors_total") == 1);
	tick(src, s, 1000); /* counted once, not at every scan */
	assert_true(get(s, "agent.process_errors_total") == 1);

	/* restarted: a new pid file names the new process */
	th_write_text(pidfile, "301\n");
	struct timespec when[2] = {{0, UTIME_NOW}, {12345, 0}}; /* another mtime for sure */
	utimensat(AT_FDCWD, pidfile, when, 0);
	tick(src, s, 1000);
	assert_true(get(s, "process.app.up") == 1);
	assert_true(get(s, "process.app.restarts_total") == 1);

	/* garbage: down and counted; no file: down (stopped), not a mistake */
	th_write_text(pidfile, "started\n");
	tick(src, s, 1000);
	assert_true(get(s, "process.app.up") == 0);
	assert_true(get(s, "agent.process_errors_total") == 2);
	unlink(pidfile);
	tick(src, s, 1000);
	assert_true(get(s, "process.app.up") == 0);
	assert_true(get(s, "agent.process_errors_total") == 2);
	/* the pid of a process that is gone */
	th_write_text(pidfile, "999\n");
	tick(src, s, 1000);
	assert_true(get(s, "process.app.up") == 0);
	assert_true(get(s, "agent.process_errors_total") == 2);

	src->ops->destroy(src);
	proc_table_unref(table);
	free(s);
	th_rmtree(t.root);
}

static void
test_unit(void **state)
{
	(void)state;
	struct tree t = tree_new();
	char cg[1100];
	snprintf(cg, sizeof(cg), "%s/fs/cgroup/systemd/system.slice/camera.service", t.sys); /* v1 */
	mkdir_p(cg);
	th_write_at(cg, "cgroup.procs", "400\n401\n");
	put_proc(&t, &(struct fake){.pid = 400, .comm = "nvargus-daemon", .start = 300, .rss_kb = 2048});
	put_proc(&t, &(struct fake){.pid = 401, .comm = "nvargus-daemon", .start = 400, .rss_kb = 2048});
	struct proc_table *table;
	struct source *src =
		source_for(&t, "processes:\n  - {name: camera, unit: camera}\n  - {name: gone, unit: nosuch}\n", &table);
	struct sample *s = th_sample_new();
	tick(src, s, 0);
	assert_true(get(s, "process.camera.up") == 1);
	assert_true(get(s, "process.camera.count") == 2);
	assert_true(get(s, "process.camera.resident_mb") == 4.0);
	assert_true(get(s, "process.gone.up") == 0); /* no such unit: down, said once at info */
	assert_true(get(s, "agent.process_errors_total") == 0);
	/* a line that is no pid is counted; the main process restarted with another pid */
	th_write_at(cg, "cgroup.procs", "401\n402\nbogus\n");
	put_proc(&t, &(struct fake){.pid = 402, .comm = "nvargus-daemon", .start = 9000, .rss_kb = 2048});
	drop_proc(&t, 400);
	tick(src, s, 1000);
	assert_true(get(s, "process.camera.count") == 2);
	assert_true(get(s, "process.camera.restarts_total") == 1);
	assert_true(get(s, "agent.process_errors_total") == 1);
	th_write_at(cg, "cgroup.procs", ""); /* stopped: systemd keeps no process in it */
	tick(src, s, 1000);
	assert_true(get(s, "process.camera.up") == 0);
	src->ops->destroy(src);
	proc_table_unref(table);
	free(s);
	th_rmtree(t.root);
}

/* nvmap's clients file where the kernel has it, under the tree's /sys: the capture, or TEXT; NULL removes it */
static void
put_nvmap(const struct tree *t, const char *text)
{
	char dir[1100], path[1200];
	snprintf(dir, sizeof(dir), "%s/kernel/debug/nvmap/iovmm", t->sys);
	snprintf(path, sizeof(path), "%s/clients", dir);
	unlink(path);
	if (!text) {
		return;
	}
	mkdir_p(dir);
	if (text[0]) {
		th_write_text(path, text);
		return;
	}
	size_t len;
	char *capture = th_read_file(FIXTURES_DIR "/nvmap/clients", &len);
	th_write_bytes(path, capture, len, 0644);
	free(capture);
}

static void
test_gpu_memory(void **state)
{
	(void)state;
	struct tree t = tree_new();
	/* the capture's processes (tests/fixtures/nvmap/clients), and one that holds no GPU memory */
	put_proc(&t, &(struct fake){.pid = 4481, .comm = "gem", .start = 5000, .rss_kb = 512});
	put_proc(&t, &(struct fake){.pid = 1012, .comm = "nvargus-daemon", .start = 300, .rss_kb = 512});
	put_proc(&t, &(struct fake){.pid = 600, .comm = "idle", .start = 400, .rss_kb = 512});
	struct gpu_procs_feed *feed = gpu_procs_feed_create();
	struct proc_table *table;
	struct source *src = source_with_feed(
		&t, "processes:\n  - {name: gem, comm: gem}\n  - {name: camera, comm: nvargus-daemon}\n"
		    "  - {name: idle, comm: idle}\n",
		&table, feed);
	struct sample *s = th_sample_new();
	/* no nvmap (no debugfs, not root, not a Jetson) and no NVML: not told, so absent, never 0 */
	tick(src, s, 0);
	assert_true(get(s, "process.gem.up") == 1);
	assert_true(absent(s, "process.gem.gpu_memory_mb"));
	assert_true(absent(s, "process.idle.gpu_memory_mb"));

	/* the clients file: what each holds; one it does not list holds none */
	put_nvmap(&t, "");
	tick(src, s, 1000);
	assert_true(get(s, "process.gem.gpu_memory_mb") == 118372.0 / 1024); /* 118372K */
	assert_true(get(s, "process.camera.gpu_memory_mb") == 0);             /* listed with 0K */
	assert_true(get(s, "process.idle.gpu_memory_mb") == 0);               /* not a client */
	assert_true(get(s, "agent.process_errors_total") == 0);

	/* NVML's answer, while good, comes first (a synthetic answer of the feed's shape: pid 4481 holds 1 MiB) */
	struct gpu_procs nvml = {0};
	gpu_procs_add(&nvml, 4481, 1048576);
	gpu_procs_add(&nvml, 1012, GPU_PROC_UNKNOWN);
	gpu_procs_feed_publish(feed, &nvml, monotonic_ms() + 1500);
	tick(src, s, 1000);
	assert_true(get(s, "process.gem.gpu_memory_mb") == 1);
	assert_true(absent(s, "process.camera.gpu_memory_mb")); /* NVML lists it, without its memory */
	assert_true(get(s, "process.idle.gpu_memory_mb") == 0);
	/* no newer answer (a hung driver): the file again */
	tick(src, s, 1000);
	assert_true(get(s, "process.gem.gpu_memory_mb") == 118372.0 / 1024);
	assert_true(get(s, "process.camera.gpu_memory_mb") == 0);

	/* a line that is no client: counted, the rest read */
	put_nvmap(&t, "CLIENT                        PROCESS      PID        SIZE\n"
		      "user                              gem     4481     118372K\n"
		      "user                              gem     4481     ?\n");
	tick(src, s, 1000);
	assert_true(get(s, "process.gem.gpu_memory_mb") == 118372.0 / 1024);
	assert_true(get(s, "agent.process_errors_total") == 1);
	/* not that table, then no file at all: absent again */
	put_nvmap(&t, "Max allocatable IOVMM memory: 1 bytes\n");
	tick(src, s, 1000);
	assert_true(absent(s, "process.gem.gpu_memory_mb"));
	assert_true(get(s, "process.gem.up") == 1);
	put_nvmap(&t, NULL);
	tick(src, s, 1000);
	assert_true(absent(s, "process.gem.gpu_memory_mb"));
	assert_true(absent(s, "process.idle.gpu_memory_mb"));

	src->ops->destroy(src);
	gpu_procs_feed_unref(feed); /* the source held its own reference */
	gpu_procs_free(&nvml);
	proc_table_unref(table);
	free(s);
	th_rmtree(t.root);
}

static void
test_top(void **state)
{
	(void)state;
	struct tree t = tree_new();
	put_proc(&t, &(struct fake){.pid = 10, .comm = "trtexec", .ticks = 5000, .start = 0, .rss_kb = 2097152});
	put_proc(&t, &(struct fake){.pid = 11, .comm = "python3", .ticks = 1000, .start = 0, .rss_kb = 409600});
	put_proc(&t, &(struct fake){.pid = 12, .comm = "dead", .state = 'Z', .ticks = 9000, .start = 0});
	put_proc(&t, &(struct fake){.pid = 13, .comm = "kworker/0:1-events", .ticks = 200, .start = 0});
	struct proc_table *table = proc_table_create(t.proc);
	struct top_processes top;
	assert_int_equal(proc_table_scan(table), 0);
	proc_table_top(table, &top);
	/* no scan before: each one's share over its life (100 s): 50 s of CPU is half a core */
	assert_true(top.cpu_window_s == 0);
	assert_int_equal(top.cpu_count, 3); /* systemd (pid 1) took none: left out; the zombie too */
	assert_int_equal(top.by_cpu[0].pid, 10);
	assert_string_equal(top.by_cpu[0].comm, "trtexec");
	assert_true(fabs(top.by_cpu[0].cpu_pct - 50) < 1e-9);
	assert_int_equal(top.by_cpu[1].pid, 11);
	assert_int_equal(top.by_cpu[2].pid, 13);
	assert_int_equal(top.memory_count, 3); /* the kernel worker has no memory of its own */
	assert_int_equal(top.by_memory[0].pid, 10);
	assert_true(top.by_memory[0].rss_bytes == 2147483648.0);
	assert_int_equal(top.by_memory[2].pid, 1);

	/* within a second the scan is reused (an alert burst costs one scan); after it, a window */
	put_uptime(&t, 102);
	put_proc(&t, &(struct fake){.pid = 11, .comm = "python3", .ticks = 1400, .start = 0, .rss_kb = 409600});
	clock_driven_advance(PROC_TABLE_FRESH_MS - 1);
	assert_int_equal(proc_table_refresh(table), 0);
	assert_true(proc_table_uptime_s(table) == 100);
	clock_driven_advance(1);
	assert_int_equal(proc_table_refresh(table), 0);
	assert_true(proc_table_uptime_s(table) == 102);
	proc_table_top(table, &top);
	assert_true(top.cpu_window_s == 2);
	assert_int_equal(top.cpu_count, 1); /* only python3 used CPU in the window: 4 s in 2 s, two cores */
	assert_int_equal(top.by_cpu[0].pid, 11);
	assert_true(fabs(top.by_cpu[0].cpu_pct - 200) < 1e-9);

	/* more than five: the five largest, in order */
	for (int i = 0; i < 8; i++) {
		put_proc(&t, &(struct fake){.pid = 50 + i, .comm = "w", .ticks = (unsigned)(100 * i), .start = 10100,
					    .rss_kb = 1024u * (unsigned)(i + 1)});
	}
	put_uptime(&t, 103);
	clock_driven_advance(PROC_TABLE_FRESH_MS);
	assert_int_equal(proc_table_refresh(table), 0);
	proc_table_top(table, &top);
	assert_int_equal(top.cpu_count, TOP_PROCESSES_MAX);
	for (int i = 0; i < TOP_PROCESSES_MAX; i++) {
		assert_int_equal(top.by_cpu[i].pid, 57 - i); /* started in the window: ticks over their life */
	}
	assert_int_equal(top.by_memory[0].pid, 10);
	assert_int_equal(top.by_memory[2].pid, 1);
	assert_int_equal(top.by_memory[3].pid, 57);
	assert_true(proc_table_find(table, 57) != NULL);
	assert_true(proc_table_find(table, 12345) == NULL);
	proc_table_unref(table);
	th_rmtree(t.root);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_comm_and_cmdline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pidfile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_top, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
