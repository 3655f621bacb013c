/*
 * Cost of one full sysfs sample: board_open() once on a fixture root, then
 * board_sample() N times. Prints CPU time per sample (process CPU clock and
 * getrusage user/sys split), wall time, and the read() calls per sample from
 * /proc/self/io. Files opened per sample need strace (see bench/README.md).
 *
 * Usage: bench_sample [ROOT [SAMPLES]]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/sample.h"
#include "tegra/board.h"

#ifndef BENCH_DEFAULT_ROOT
#define BENCH_DEFAULT_ROOT "tests/fixtures/boards/agx-orin-jp5"
#endif
#define DEFAULT_SAMPLES 2000UL
#define MAX_SAMPLES 100000000UL

static int64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0) {
		return 0;
	}
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t
timeval_us(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000000 + tv->tv_usec;
}

/* syscr of /proc/self/io: read-type syscalls so far; -1 when unreadable */
static long long
read_syscalls(void)
{
	char line[128];
	long long count = -1;
	FILE *f = fopen("/proc/self/io", "r");

	if (!f) {
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "syscr:", 6) == 0) {
			char *end;

			errno = 0;
			count = strtoll(line + 6, &end, 10);
			if (errno != 0 || end == line + 6) {
				count = -1;
			}
			break;
		}
	}
	fclose(f);
	return count;
}

static int
parse_count(const char *text, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || v == 0 || v > MAX_SAMPLES ||
	    text[0] == '-') {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int
main(int argc, char **argv)
{
	const char *root = BENCH_DEFAULT_ROOT;
	unsigned long samples = DEFAULT_SAMPLES;
	struct board *b = NULL;
	struct sample *s;
	struct rusage ru0, ru1;
	int64_t open_ns, cpu0, cpu1, wall0, wall1;
	long long io0, io1;
	size_t metrics;
	int err;

	if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: %s [ROOT [SAMPLES]]\n", argv[0]);
		return 2;
	}
	if (argc > 1) {
		root = argv[1];
	}
	if (argc > 2 && parse_count(argv[2], &samples) != 0) {
		fprintf(stderr, "bench_sample: SAMPLES must be 1..%lu\n", MAX_SAMPLES);
		return 2;
	}

	/* sample holds a full metric_set (~40 KiB): keep it off the stack */
	s = calloc(1, sizeof(*s));
	if (!s) {
		fprintf(stderr, "bench_sample: out of memory\n");
		return 1;
	}

	open_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	err = board_open(root, &b);
	open_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - open_ns;
	if (err != 0) {
		fprintf(stderr, "bench_sample: board_open(%s): %s\n", root, strerror(-err));
		free(s);
		return 1;
	}

	/* one untimed sample: the first has no previous one for load deltas */
	sample_clear(s);
	err = board_sample(b, s);
	if (err != 0) {
		fprintf(stderr, "bench_sample: board_sample: %s\n", strerror(-err));
		board_destroy(b);
		free(s);
		return 1;
	}
	io0 = read_syscalls();
	getrusage(RUSAGE_SELF, &ru0);
	cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	wall0 = clock_ns(CLOCK_MONOTONIC);
	for (unsigned long i = 0; i < samples; i++) {
		sample_clear(s);
		err = board_sample(b, s);
		if (err != 0) {
			fprintf(stderr, "bench_sample: board_sample #%lu: %s\n", i + 1,
				strerror(-err));
			board_destroy(b);
			free(s);
			return 1;
		}
	}
	wall1 = clock_ns(CLOCK_MONOTONIC);
	cpu1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	getrusage(RUSAGE_SELF, &ru1);
	/* the fopen/fgets above count too: take them out with a second read */
	io1 = read_syscalls();
	/* from the last sample: the first lacks the load deltas */
	metrics = s->metrics.count;

	printf("root: %s\n", root);
	printf("samples: %lu\n", samples);
	printf("metrics_per_sample: %zu\n", metrics);
	printf("read_errors_since_open: %llu\n", (unsigned long long)board_read_errors(b));
	printf("open_cpu_us: %.1f\n", (double)open_ns / 1e3);
	printf("cpu_us_per_sample: %.2f\n", (double)(cpu1 - cpu0) / 1e3 / (double)samples);
	printf("user_us_per_sample: %.2f\n",
	       (double)(timeval_us(&ru1.ru_utime) - timeval_us(&ru0.ru_utime)) / (double)samples);
	printf("sys_us_per_sample: %.2f\n",
	       (double)(timeval_us(&ru1.ru_stime) - timeval_us(&ru0.ru_stime)) / (double)samples);
	printf("wall_us_per_sample: %.2f\n", (double)(wall1 - wall0) / 1e3 / (double)samples);
	if (io0 >= 0 && io1 >= 0) {
		/* minus the syscr of one /proc/self/io read itself */
		long long self = read_syscalls() - io1;

		printf("read_syscalls_per_sample: %.2f\n",
		       (double)(io1 - io0 - self) / (double)samples);
	} else {
		printf("read_syscalls_per_sample: unknown (no /proc/self/io)\n");
	}

	board_destroy(b);
	free(s);
	return 0;
}
