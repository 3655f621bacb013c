/*
 * procs/: the pure parsers (proc_parse.c) on real captures of /proc/PID/stat,
 * /proc/PID/status and /proc/uptime (tests/fixtures/proc/README.md says
 * where each came from), and on what they must refuse; the processes:
 * section's decoding; pid files; a unit's cgroup in the v2, hybrid and v1
 * layouts (trees made here, laid out as systemd makes them).
 */
#include <errno.h>
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
#include "core/diag.h"
#include "helpers.h"
#include "procs/proc_find.h"
#include "procs/proc_parse.h"
#include "procs/procs_config.h"

static char *
fixture(const char *name, size_t *len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/proc/%s", FIXTURES_DIR, name);
	return th_read_file(path, len);
}

static void
stat_ok(const char *name, struct proc_stat *st)
{
	size_t len;
	char *text = fixture(name, &len);
	assert_int_equal(proc_parse_stat(text, len, st), 0);
	free(text);
}

static void
test_stat_captures(void **state)
{
	(void)state;
	struct proc_stat st;
	stat_ok("stat-init.txt", &st); /* tpgid -1 and nice -10 on the way */
	assert_int_equal(st.pid, 1);
	assert_string_equal(st.comm, "process_api");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 0);
	assert_int_equal(st.utime_ticks, 1527);
	assert_int_equal(st.stime_ticks, 5163);
	assert_int_equal(st.threads, 14);
	assert_int_equal(st.start_ticks, 21);
	assert_int_equal(st.vsize_bytes, 54591488);
	assert_int_equal(st.rss_pages, 4899);

	stat_ok("stat-kthread.txt", &st);
	assert_string_equal(st.comm, "kthreadd");
	assert_int_equal(st.vsize_bytes, 0);
	assert_int_equal(st.rss_pages, 0);

	/* a name of blanks, parentheses and a fake state: it ends at the last ')' */
	stat_ok("stat-odd-comm.txt", &st);
	assert_int_equal(st.pid, 23669);
	assert_string_equal(st.comm, "my (odd) app) S");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 23664);
	assert_int_equal(st.start_ticks, 1371446);
	assert_int_equal(st.vsize_bytes, 4464640);
	assert_int_equal(st.rss_pages, 744);

	stat_ok("stat-threads.txt", &st);
	assert_string_equal(st.comm, "python3");
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.threads, 4);
	assert_int_equal(st.utime_ticks, 7);
	assert_int_equal(st.stime_ticks, 1);
}

static void
stat_bad(const char *text)
{
	struct proc_stat st = {.pid = 77};
	assert_int_equal(proc_parse_stat(text, strlen(text), &st), -EINVAL);
	assert_int_equal(st.pid, 77); /* untouched */
}

static void
test_stat_refused(void **state)
{
	(void)state;
	static const char whole[] = "42 (a b) S 1 42 42 0 -1 4194304 0 0 0 0 3 4 0 0 20 0 2 0 500 1000 5 18446744073709551615\n";
	struct proc_stat st;
	assert_int_equal(proc_parse_stat(whole, sizeof(whole) - 1, &st), 0);
	assert_string_equal(st.comm, "a b");
	assert_int_equal(st.rss_pages, 5);
	/* the 24th field is the last one read: a line that stops there is whole */
	assert_int_equal(proc_parse_stat("42 (a) S 1 42 42 0 -1 0 0 0 0 0 3 4 0 0 20 0 2 0 500 1000 5",
					 strlen("42 (a) S 1 42 42 0 -1 0 0 0 0 0 3 4 0 0 20 0 2 0 500 1000 5"), &st),
			 0);
	stat_bad("");
	stat_bad("42");
	stat_bad("42 (a");                                                       /* no ')' */
	stat_bad("42 (a) S 1 42 42 0 -1 0 0 0 0 0 3 4 0 0 20 0 2 0 500 1000"); /* cut: 23 fields */
	stat_bad("0 (a) S 1 42 42 0 -1 0 0 0 0 0 3 4 0 0 20 0 2 0 500 1000 5");  /* pid 0 */
	stat_bad("4194305 (a) S 1 0 0 0 -1 0 0 0 0 0 3 4 0 0 20 0 2 0 500 1000 5"); /* beyond PID_MAX_LIMIT */
	stat_bad("42 (a)  1 42 42 0 -1 0 0 0 0 0 3 4 0 0 20 0 2 0 500 1000 5");  /* no state */
	stat_bad("42 (a) S 1 42 42 0 -1 0 0 0 0 0 x 4 0 0 20 0 2 0 500 1000 5"); /* utime garbage */
	stat_bad("42 (a) S 1 42 42 0 -1 0 0 0 0 0 3 4 0 0 20 0 -2 0 500 1000 5"); /* negative threads */
	stat_bad("42 (a) S 1 42 42 0 -1 0 0 0 0 0 99999999999999999999 4 0 0 20 0 2 0 500 1000 5"); /* > 2^64 */
	stat_bad("42 (a) S 1 42 42 0 -1 0 0 0 0 0 3 4 0 0 20 0 2 0 500 1000 5x");
	stat_bad("-42 (a) S 1 42 42 0 -1 0 0 0 0 0 3 4 0 0 20 0 2 0 500 1000 5");
	/* LEN is the end: a NUL-free buffer cut there is a cut line */
	assert_int_equal(proc_parse_stat(whole, 30, &st), -EINVAL);
}

static void
test_status_captures(void **state)
{
	(void)state;
	struct proc_status ps;
	char *text = fixture("status-init.txt", NULL);
	assert_int_equal(proc_parse_status(text, &ps), 0);
	assert_string_equal(ps.name, "process_api");
	assert_int_equal(ps.threads, 14);
	assert_int_equal(ps.vm_size_kb, 53312);
	assert_int_equal(ps.vm_rss_kb, 19696);
	free(text);
	text = fixture("status-threads.txt", NULL);
	assert_int_equal(proc_parse_status(text, &ps), 0);
	assert_string_equal(ps.name, "python3");
	assert_int_equal(ps.threads, 4);
	assert_int_equal(ps.vm_size_kb, 237824);
	assert_int_equal(ps.vm_rss_kb, 13588);
	free(text);
	/* a kernel thread: no Vm lines, absent (-1), never 0 */
	text = fixture("status-kthread.txt", NULL);
	assert_int_equal(proc_parse_status(text, &ps), 0);
	assert_string_equal(ps.name, "kthreadd");
	assert_int_equal(ps.threads, 1);
	assert_int_equal(ps.vm_size_kb, -1);
	assert_int_equal(ps.vm_rss_kb, -1);
	free(text);
	text = fixture("status-odd-comm.txt", NULL);
	assert_int_equal(proc_parse_status(text, &ps), 0);
	assert_string_equal(ps.name, "my (odd) app) S");
	assert_int_equal(ps.vm_rss_kb, 3064);
	free(text);
	/* no Name line: not a status file; a bad number is refused, not read as 0 */
	assert_int_equal(proc_parse_status("Threads:\t1\n", &ps), -EINVAL);
	assert_int_equal(proc_parse_status("Name:\tx\nVmRSS:\t  12 MB\n", &ps), -EINVAL);
	assert_int_equal(proc_parse_status("Name:\tx\nVmRSS:\t  12\n", &ps), -EINVAL);
	assert_int_equal(proc_parse_status("Name:\tx\nThreads:\tmany\n", &ps), -EINVAL);
	assert_int_equal(proc_parse_status("Name:\tx\nThreads:\t99999999999999999999\n", &ps), -EINVAL);
}

static void
test_pid_uptime_cmdline(void **state)
{
	(void)state;
	int32_t pid = -7;
	assert_int_equal(proc_parse_pid("1234\n", 5, &pid), 0);
	assert_int_equal(pid, 1234);
	assert_int_equal(proc_parse_pid("  42 \r\n", 7, &pid), 0);
	assert_int_equal(pid, 42);
	assert_int_equal(proc_parse_pid("4194304", 7, &pid), 0);
	static const char *const bad[] = {"", "\n", "0\n", "-5\n", "abc\n", "12 34\n", "12abc", "4194305",
					  "99999999999999999999", "1234\nextra\n", "0x10"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pid = -7;
		assert_int_equal(proc_parse_pid(bad[i], strlen(bad[i]), &pid), -EINVAL);
		assert_int_equal(pid, -7);
	}
	double up = -1;
	char *text = fixture("uptime.txt", NULL);
	assert_int_equal(proc_parse_uptime(text, &up), 0);
	assert_true(fabs(up - 13715.31) < 1e-6);
	free(text);
	assert_int_equal(proc_parse_uptime("12", &up), 0);
	assert_true(up == 12);
	assert_int_equal(proc_parse_uptime("", &up), -EINVAL);
	assert_int_equal(proc_parse_uptime("12.", &up), -EINVAL);
	assert_int_equal(proc_parse_uptime("x 12", &up), -EINVAL);
	assert_int_equal(proc_parse_uptime("12.5x", &up), -EINVAL);
	char cmd[] = "python3\0app.py\0--serve\0\0";
	assert_int_equal(proc_cmdline_text(cmd, sizeof(cmd) - 1), strlen("python3 app.py --serve"));
	assert_string_equal(cmd, "python3 app.py --serve");
	char empty[1] = "";
	assert_int_equal(proc_cmdline_text(empty, 0), 0);
}

/* decodes TEXT's processes: list; the diagnostics in DIAGS */
static int
decode(const char *text, struct procs_config *cfg, struct diag_list *diags)
{
	struct cfg_tree *tree;
	assert_int_equal(cfg_tree_load_buffer("t.yaml", text, strlen(text), &tree, diags), 0);
	struct cfg_decoder dec = {.diags = diags, .context = "processes"};
	int r = procs_config_decode(&dec, cfg_map_get(cfg_tree_root(tree), "processes"), cfg);
	cfg_tree_destroy(tree);
	return r;
}

/* TEXT is refused with one message at LINE:COL holding WORDS */
static void
refused(const char *text, int line, int col, const char *words)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct procs_config cfg = {0};
	assert_int_equal(decode(text, &cfg, &diags), -EINVAL);
	assert_true(diags.count >= 1);
	char buf[512];
	diag_format(&diags.items[0], buf, sizeof(buf));
	char where[32];
	snprintf(where, sizeof(where), "t.yaml:%d:%d: ", line, col);
	if (!strstr(buf, where) || !strstr(buf, words)) {
		fail_msg("expected %s...%s, got: %s", where, words, buf);
	}
	procs_config_free(&cfg);
	diag_list_free(&diags);
}

static void
test_config(void **state)
{
	(void)state;
	struct diag_list diags;
	diag_list_init(&diags);
	struct procs_config cfg = {0};
	assert_int_equal(decode("processes:\n"
				"  - {name: Inference-Server, comm: trtexec}\n"
				"  - {name: rec, cmdline: 'python3 .*record\\.py'}\n"
				"  - {name: broker, pidfile: /run/mosquitto.pid}\n"
				"  - {name: camera, unit: nvargus-daemon}\n"
				"  - {name: ssh, unit: ssh.socket}\n",
				&cfg, &diags),
			 0);
	assert_int_equal(diags.count, 0);
	assert_int_equal(cfg.count, 5);
	assert_string_equal(cfg.items[0].name, "Inference-Server");
	assert_string_equal(cfg.items[0].segment, "inference_server");
	assert_int_equal(cfg.items[0].match, PROCS_COMM);
	assert_string_equal(cfg.items[0].where, "t.yaml:2:5");
	assert_int_equal(cfg.items[1].match, PROCS_CMDLINE);
	assert_string_equal(cfg.items[2].value, "/run/mosquitto.pid");
	assert_string_equal(cfg.items[3].value, "nvargus-daemon.service"); /* as systemctl reads it */
	assert_string_equal(cfg.items[4].value, "ssh.socket");
	struct procs_config same = {0};
	assert_int_equal(decode("processes:\n  - {name: Inference-Server, comm: trtexec}\n", &same, &diags), 0);
	assert_false(procs_config_equal(&cfg, &same));
	procs_config_free(&cfg);
	assert_true(procs_config_equal(&cfg, &(struct procs_config){0}));
	assert_int_equal(decode("processes:\n", &cfg, &diags), 0); /* nothing under it: none watched */
	assert_int_equal(cfg.count, 0);
	procs_config_free(&same);
	diag_list_free(&diags);

	refused("processes: {name: a, comm: b}\n", 1, 12, "expected a list");
	refused("processes:\n  - {comm: b}\n", 2, 5, "missing 'name'");
	refused("processes:\n  - {name: a}\n", 2, 5, "give exactly one of comm, cmdline, pidfile or unit (none given)");
	refused("processes:\n  - {name: a, comm: b, unit: c}\n", 2, 5, "(more than one given)");
	refused("processes:\n  - {name: a, command: b}\n", 2, 15, "unknown key 'command' in processes[0] (did you mean 'comm'?)");
	refused("processes:\n  - {name: a, comm: inference-server-main}\n", 2, 21,
		"the kernel keeps the first 15 of a process's name ('inference-serve'");
	refused("processes:\n  - {name: a, cmdline: 'python3 (record'}\n", 2, 24, "is no regular expression");
	refused("processes:\n  - {name: a, pidfile: run/x.pid}\n", 2, 24, "is no absolute path");
	refused("processes:\n  - {name: a, unit: ../etc}\n", 2, 21, "is no systemd unit name");
	refused("processes:\n  - {name: a, unit: 'a b.service'}\n", 2, 21, "is no systemd unit name");
	refused("processes:\n  - {name: My App, comm: x}\n  - {name: my-app, comm: y}\n", 3, 12,
		"'my-app' and 'My App' (processes[0]) both make the metrics process.my_app.*");
	refused("processes:\n  - {name: an-application-name-longer-than-31, comm: x}\n", 2, 12, "1 to 31 characters");
	refused("processes:\n  - {name: '', comm: x}\n", 2, 12, "must not be empty");
	char many[2048] = "processes:\n";
	size_t at = strlen(many);
	for (int i = 0; i <= PROCS_MAX; i++) {
		at += (size_t)snprintf(many + at, sizeof(many) - at, "  - {name: p%d, comm: x}\n", i);
	}
	refused(many, 2 + PROCS_MAX, 5, "at most 16 entries");
}

static char *
mkdirs(const char *root, const char *rel)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	}
	mkdir(path, 0755);
	return strdup(path);
}

static void
unit_pids(const char *sys, const char *unit, const int32_t *want, size_t n, uint64_t want_bad)
{
	struct pid_list l = {0};
	uint64_t bad = 0;
	assert_int_equal(proc_find_unit(sys, unit, &l, &bad), 0);
	assert_int_equal(l.count, n);
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (size_t k = 0; k < l.count; k++) {
			found = found || l.pids[k] == want[i];
		}
		assert_true(found);
	}
	assert_int_equal(bad, want_bad);
	pid_list_free(&l);
}

/* a unit's cgroup where systemd puts it in each layout, the cgroups below it, and one that is not there */
static void
test_unit_layouts(void **state)
{
	(void)state;
	char *root = th_tmpdir("procs-cg");
	char sys[512], *d;
	/* v2 (JetPack 6, 7): the unified hierarchy at /sys/fs/cgroup */
	snprintf(sys, sizeof(sys), "%s/v2", root);
	free(mkdirs(sys, "fs/cgroup"));
	th_write_at(sys, "fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
	d = mkdirs(sys, "fs/cgroup/system.slice/app.service");
	th_write_at(d, "cgroup.procs", "400\n401\n");
	free(d);
	d = mkdirs(sys, "fs/cgroup/system.slice/app.service/worker"); /* Delegate=yes: a cgroup below */
	th_write_at(d, "cgroup.procs", "402\nnot-a-pid\n");
	free(d);
	d = mkdirs(sys, "fs/cgroup/apps.slice/other.service"); /* Slice=apps.slice */
	th_write_at(d, "cgroup.procs", "500\n");
	free(d);
	unit_pids(sys, "app.service", (const int32_t[]){400, 401, 402}, 3, 1);
	unit_pids(sys, "other.service", (const int32_t[]){500}, 1, 0);
	struct pid_list l = {0};
	uint64_t bad = 0;
	assert_int_equal(proc_find_unit(sys, "nosuch.service", &l, &bad), -ENOENT);
	assert_int_equal(l.count, 0);
	/* a unit that runs nothing now: its cgroup, empty */
	d = mkdirs(sys, "fs/cgroup/system.slice/idle.service");
	th_write_at(d, "cgroup.procs", "");
	free(d);
	unit_pids(sys, "idle.service", NULL, 0, 0);
	/* hybrid (Ubuntu 20.04's default): the v2 half at /sys/fs/cgroup/unified, v1 controllers beside it */
	snprintf(sys, sizeof(sys), "%s/hybrid", root);
	free(mkdirs(sys, "fs/cgroup/cpu,cpuacct/system.slice/app.service"));
	d = mkdirs(sys, "fs/cgroup/unified/system.slice/app.service");
	th_write_at(d, "cgroup.procs", "600\n");
	free(d);
	unit_pids(sys, "app.service", (const int32_t[]){600}, 1, 0);
	/* v1 (JetPack 4, 5): the name=systemd hierarchy at /sys/fs/cgroup/systemd */
	snprintf(sys, sizeof(sys), "%s/v1", root);
	free(mkdirs(sys, "fs/cgroup/memory/system.slice"));
	d = mkdirs(sys, "fs/cgroup/systemd/system.slice/nvargus-daemon.service");
	th_write_at(d, "cgroup.procs", "700\n701\n");
	free(d);
	unit_pids(sys, "nvargus-daemon.service", (const int32_t[]){700, 701}, 2, 0);
	assert_int_equal(proc_find_unit(sys, "app.service", &l, &bad), -ENOENT);
	th_rmtree(root);
}

static void
test_pidfile(void **state)
{
	(void)state;
	char *dir = th_tmpdir("procs-pf");
	char path[512];
	struct pidfile_read pf;
	snprintf(path, sizeof(path), "%s/good.pid", dir);
	th_write_text(path, "1234\n");
	assert_int_equal(proc_find_pidfile(path, &pf), 0);
	assert_int_equal(pf.pid, 1234);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(pf.ino == st.st_ino);
	snprintf(path, sizeof(path), "%s/garbage.pid", dir);
	th_write_text(path, "pid=12\x01\n");
	assert_int_equal(proc_find_pidfile(path, &pf), -EINVAL);
	assert_string_equal(pf.shown, "'pid=12?" "?'"); /* split: no trigraph */
	snprintf(path, sizeof(path), "%s/empty.pid", dir);
	th_write_text(path, "");
	assert_int_equal(proc_find_pidfile(path, &pf), -EINVAL);
	snprintf(path, sizeof(path), "%s/none.pid", dir);
	assert_int_equal(proc_find_pidfile(path, &pf), -ENOENT);
	/* a FIFO where the pid file should be: refused at once, never a read that waits */
	snprintf(path, sizeof(path), "%s/fifo.pid", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(proc_find_pidfile(path, &pf), -EINVAL);
	assert_string_equal(pf.shown, "not a regular file");
	/* a directory */
	assert_int_equal(proc_find_pidfile(dir, &pf), -EINVAL);
	th_rmtree(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_captures),	cmocka_unit_test(test_stat_refused),
		cmocka_unit_test(test_status_captures), cmocka_unit_test(test_pid_uptime_cmdline),
		cmocka_unit_test(test_config),		cmocka_unit_test(test_unit_layouts),
		cmocka_unit_test(test_pidfile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
