/*
 * Cost per sample of the sources of the real host, read as the agent reads
 * them but without the agent: the host source (memory, pressure, vmstat,
 * load, uptime, disks, network every sample; file systems and eMMC health
 * at host.filesystems.interval), the processes source (WATCHES comm: or
 * cmdline: entries, each matching one child this program starts, at
 * sources.processes_interval) and the probe source (one TCP probe of a
 * loopback listener opened here, at its interval). All defaults, on this
 * machine's /proc and /sys.
 *
 * The clock is the driven one (core/clock_driven.h): before each sample it
 * moves STEP ms, so when the slow scans fall due is exact. STEP 1000 is the
 * agent's default interval (amortised: the file systems every 10th sample,
 * the processes every 5th, the probe every 10th); STEP 0 never lets one
 * fall due (a quiet tick); STEP 3600000 makes every sample a scan tick.
 * A first, untimed sample opens the kept files and makes the first scans.
 *
 * Only bench_host_read() and bench_host_dispatch() are the source's work,
 * for callgrind's --toggle-collect; two getrusage() calls bracket the timed
 * samples for strace. bench/host_cost.sh turns this into instructions and
 * syscalls per sample (bench/README.md).
 *
 * Usage: bench_host host|processes|probes [--step MS] [--watches N] [--cmdline] [SAMPLES]
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock_driven.h"
#include "core/pipeline.h"
#include "core/sample.h"
#include "host/host_source.h"
#include "host/probe_source.h"
#include "procs/proc_table.h"
#include "procs/procs_source.h"

#define DEFAULT_SAMPLES 1000L
#define MAX_SAMPLES 10000000L
#define CHILD_NAME "twbench%d" /* a comm of 15 characters at most */

/* The source's share of a tick: callgrind counts only inside these two. */
__attribute__((noinline)) int bench_host_read(struct source *src, struct sample *s);
__attribute__((noinline)) int bench_host_dispatch(struct source *src);

int
bench_host_read(struct source *src, struct sample *s)
{
	return src->ops->read(src, s);
}

int
bench_host_dispatch(struct source *src)
{
	return src->ops->dispatch(src);
}

struct bench {
	const char *what;
	long step_ms, samples;
	int watches;
	bool cmdline;
	char self[4096]; /* this program, for its children */
	pid_t children[PROCS_MAX];
	int n_children;
	int listener;
	struct proc_table *table;
	/* what the configurations point at, kept until the end */
	struct procs_watch items[PROCS_MAX];
	char names[PROCS_MAX][32], values[PROCS_MAX][64];
	struct probe_config probe;
};

static int
usage(const char *argv0)
{
	fprintf(stderr, "usage: %s host|processes|probes [--step MS] [--watches 1..%d] [--cmdline] [SAMPLES]\n", argv0,
		PROCS_MAX);
	return 2;
}

static bool
parse_long(const char *text, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < min || v > max) {
		return false;
	}
	*out = v;
	return true;
}

#define READY_FD 3 /* a child says on it that its name is set, then closes it */

/* A child watched by name: this program again as "--child NAME", its comm NAME, waiting to be killed. */
static _Noreturn void
child_main(const char *name)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, name);
	if (write(READY_FD, "", 1) != 1) {
		_exit(1);
	}
	close(READY_FD);
	for (;;) {
		pause();
	}
}

/* Starts the children and waits until each has its name and command line: a scan sees them all. */
static int
start_children(struct bench *b)
{
	/* its path, not /proc/self/exe: under valgrind that is valgrind */
	ssize_t len = readlink("/proc/self/exe", b->self, sizeof(b->self) - 1);
	int ready[2];
	if (len <= 0 || pipe2(ready, O_CLOEXEC) < 0) {
		return len == 0 ? -ENOENT : -errno;
	}
	b->self[len] = '\0';
	for (int i = 0; i < b->watches; i++) {
		char name[32];
		snprintf(name, sizeof(name), CHILD_NAME, i);
		pid_t pid = fork();
		if (pid < 0) {
			break;
		}
		if (pid == 0) {
			/* exec'd, so that valgrind and strace (no -f) leave it out, and its command line is its own */
			/* the only end of the pipe a child keeps past exec (dup2 clears O_CLOEXEC) */
			if (ready[1] == READY_FD ? fcntl(READY_FD, F_SETFD, 0) < 0 : dup2(ready[1], READY_FD) < 0) {
				_exit(126);
			}
			execl(b->self, "bench_host", "--child", name, (char *)NULL);
			_exit(127);
		}
		b->children[b->n_children++] = pid;
	}
	close(ready[1]);
	/* EOF once every child has written its byte and closed its end (or died) */
	char buf[PROCS_MAX];
	int got = 0;
	for (ssize_t n; (n = read(ready[0], buf, sizeof(buf))) != 0;) {
		if (n < 0 && errno != EINTR) {
			break;
		}
		got += n > 0 ? (int)n : 0;
	}
	close(ready[0]);
	return got == b->watches ? 0 : -ECHILD;
}

static void
stop_children(struct bench *b)
{
	for (int i = 0; i < b->n_children; i++) {
		kill(b->children[i], SIGKILL);
		waitpid(b->children[i], NULL, 0);
	}
}

/* A watch of the processes: section for child I: "comm: twbenchI" or "cmdline: '--child twbenchI$'". */
static void
watch_child(struct bench *b, int i)
{
	struct procs_watch *w = &b->items[i];
	snprintf(b->names[i], sizeof(b->names[i]), "bench%d", i);
	snprintf(b->values[i], sizeof(b->values[i]), b->cmdline ? "--child " CHILD_NAME "$" : CHILD_NAME, i);
	w->name = b->names[i];
	procs_segment(w->name, w->segment);
	w->match = b->cmdline ? PROCS_CMDLINE : PROCS_COMM;
	w->value = b->values[i];
	w->where = "bench";
}

/* A loopback listener for the probe: connections queue unaccepted (one per attempt, fewer than its backlog). */
static int
open_listener(struct bench *b, int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	b->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (b->listener < 0 || bind(b->listener, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(b->listener, 4096) < 0 || getsockname(b->listener, (struct sockaddr *)&a, &len) < 0) {
		return -errno;
	}
	*port = ntohs(a.sin_port);
	return 0;
}

static int
create_source(struct bench *b, struct source **out)
{
	if (strcmp(b->what, "host") == 0) {
		static const struct host_config defaults = {.enabled = 1, .disks = 1};
		struct host_source_options o = {.cfg = &defaults};
		return host_source_create(&o, out);
	}
	if (strcmp(b->what, "processes") == 0) {
		int r = start_children(b);
		if (r < 0) {
			return r;
		}
		for (int i = 0; i < b->watches; i++) {
			watch_child(b, i);
		}
		struct procs_config cfg = {.items = b->items, .count = (size_t)b->watches};
		b->table = proc_table_create(NULL);
		struct procs_source_options o = {
			.cfg = &cfg, .interval_ms = PROCS_INTERVAL_DEFAULT_MS, .table = b->table};
		return procs_source_create(&o, out);
	}
	if (strcmp(b->what, "probes") == 0) {
		int port = 0, r = open_listener(b, &port);
		if (r < 0) {
			return r;
		}
		b->probe = (struct probe_config){.name = "bench",
						 .host = "127.0.0.1",
						 .port = port,
						 .interval_ms = 10000,
						 .timeout_ms = 2000,
						 .window = 6};
		struct host_probes probes = {.items = &b->probe, .count = 1};
		return probe_source_create(&probes, out);
	}
	return -EINVAL;
}

/* One tick: the clock moves, the source reads; then what the loop's poll() finds ready is dispatched. */
static int
tick(struct bench *b, struct source *src, struct sample *s, bool timed)
{
	if (timed) {
		clock_driven_advance(b->step_ms);
	}
	sample_clear(s);
	int r = timed ? bench_host_read(src, s) : src->ops->read(src, s);
	if (r < 0 && r != -EAGAIN) {
		return r;
	}
	int fd = src->ops->get_fd ? src->ops->get_fd(src) : -1;
	/* the loop's own poll (it polls every tick anyway); a loopback connect is done by now */
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (fd >= 0 && poll(&p, 1, 0) == 1) {
		r = timed ? bench_host_dispatch(src) : src->ops->dispatch(src);
	}
	return r < 0 && r != -EAGAIN ? r : 0;
}

/* The last sample says what the bench meant to measure: every child found, the probe answered, the memory read. */
static bool
measured_all(const struct bench *b, const struct sample *s)
{
	double v;
	if (b->table) {
		int found = 0;
		for (int i = 0; i < b->watches; i++) {
			char name[64];
			snprintf(name, sizeof(name), "process.%s.count", b->items[i].segment);
			found += metric_set_get(&s->metrics, name, &v) && v == 1;
		}
		printf("watches_found: %d of %d\n", found, b->watches);
		return found == b->watches;
	}
	const char *name = b->listener >= 0 ? "probe.bench.up" : "system.uptime_s";
	bool ok = metric_set_get(&s->metrics, name, &v) && v > 0;
	printf("%s: %s\n", name, ok ? "yes" : "NO");
	return ok;
}

static int
run(struct bench *b)
{
	struct source *src = NULL;
	/* a sample holds a whole metric set: off the stack */
	struct sample *s = calloc(1, sizeof(*s));
	int r = s ? create_source(b, &src) : -ENOMEM;
	if (r < 0) {
		fprintf(stderr, "bench_host: %s: %s\n", b->what, strerror(-r));
		free(s);
		return 1;
	}
	r = tick(b, src, s, false);
	/* the two getrusage() calls mark the timed samples in an strace log (bench/host_cost.sh) */
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	double listed = 0; /* processes in the table, summed over the samples */
	for (long i = 0; i < b->samples && r == 0; i++) {
		r = tick(b, src, s, true);
		size_t n = 0;
		if (b->table) {
			proc_table_entries(b->table, &n);
		}
		listed += (double)n;
	}
	getrusage(RUSAGE_SELF, &ru1);
	if (r < 0) {
		fprintf(stderr, "bench_host: %s: read: %s\n", b->what, strerror(-r));
	}
	double cpu_us =
		(double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec + ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1e6 +
		(double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec + ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec);
	printf("source: %s\n", b->what);
	printf("samples: %ld\n", b->samples);
	printf("step_ms: %ld\n", b->step_ms);
	if (b->table) {
		printf("watches: %d (%s)\n", b->watches, b->cmdline ? "cmdline" : "comm");
		printf("processes_on_host: %.0f (the table's mean over the samples)\n", listed / (double)b->samples);
	}
	printf("metrics_per_sample: %zu\n", s->metrics.count);
	if (r == 0 && !measured_all(b, s)) {
		r = -ESRCH;
	}
	printf("cpu_us_per_sample: %.2f (getrusage, for orientation only)\n", cpu_us / (double)b->samples);
	source_destroy(src);
	proc_table_unref(b->table);
	free(s);
	if (r == -ESRCH) {
		fprintf(stderr, "bench_host: %s: the last sample lacks what was measured\n", b->what);
	}
	return r < 0;
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--child") == 0) {
		child_main(argv[2]);
	}
	struct bench b = {.step_ms = 1000, .samples = DEFAULT_SAMPLES, .watches = 1, .listener = -1};
	long v;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--step") == 0 && i + 1 < argc && parse_long(argv[i + 1], 0, 86400000, &v)) {
			b.step_ms = v;
			i++;
		} else if (strcmp(argv[i], "--watches") == 0 && i + 1 < argc &&
			   parse_long(argv[i + 1], 1, PROCS_MAX, &v)) {
			b.watches = (int)v;
			i++;
		} else if (strcmp(argv[i], "--cmdline") == 0) {
			b.cmdline = true;
		} else if (!b.what && argv[i][0] != '-') {
			b.what = argv[i];
		} else if (b.what && parse_long(argv[i], 1, MAX_SAMPLES, &v)) {
			b.samples = v;
		} else {
			return usage(argv[0]);
		}
	}
	if (!b.what) {
		return usage(argv[0]);
	}
	clock_driven_start(1000000, 1700000000000);
	int rc = run(&b);
	stop_children(&b);
	if (b.listener >= 0) {
		close(b.listener);
	}
	clock_driven_stop();
	return rc;
}
