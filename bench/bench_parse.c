/*
 * bench_parse: throughput of tegrastats_parse_line().
 *
 *   bench_parse [--rounds N] [FILE]
 *
 * Reads the data lines (not '#' comments, not blank) of FILE, or of every
 * tests/fixtures/tegrastats/NAME.txt by default, then parses them round-robin
 * for about 2 s of process CPU time, clearing the metric set before each
 * line as the agent does. Prints lines/s and ns/line for the whole mix and
 * for the longest line alone (the 12-core AGX Orin shape).
 *
 * With --rounds N it parses every line exactly N times instead and prints
 * the count, so that an instruction count (callgrind) divides exactly.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tegra/tegrastats.h"

#define MAX_LINES 4096
#define LINE_MAX_BYTES 4096
#define RUN_NS 2000000000LL

struct corpus {
	size_t count;
	char *lines[MAX_LINES];
	size_t lens[MAX_LINES];
};

static struct metric_set set;

static long long
cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int
load_file(struct corpus *c, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "bench_parse: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	char buf[LINE_MAX_BYTES];
	while (fgets(buf, sizeof(buf), f) && c->count < MAX_LINES) {
		size_t len = strlen(buf);
		while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) {
			len--;
		}
		if (len == 0 || buf[0] == '#') {
			continue;
		}
		char *copy = malloc(len + 1);
		if (!copy) {
			fclose(f);
			return -ENOMEM;
		}
		memcpy(copy, buf, len);
		copy[len] = '\0';
		c->lines[c->count] = copy;
		c->lens[c->count] = len;
		c->count++;
	}
	fclose(f);
	return 0;
}

static int
load_dir(struct corpus *c, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "bench_parse: %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	struct dirent *e;
	int ret = 0;
	while ((e = readdir(d)) && ret == 0) {
		size_t n = strlen(e->d_name);
		if (n < 5 || strcmp(e->d_name + n - 4, ".txt") != 0) {
			continue;
		}
		char path[4096];
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path)) {
			continue;
		}
		ret = load_file(c, path);
	}
	closedir(d);
	return ret;
}

/* Parses lines [0, n) round-robin until RUN_NS of CPU time has passed. */
static void
run(const char *label, char *const *lines, const size_t *lens, size_t n)
{
	struct tegrastats_info info;
	struct parse_error err;
	unsigned long long parsed = 0, failed = 0;
	long long start = cpu_ns(), now;
	do {
		for (int rep = 0; rep < 1000; rep++) {
			size_t i = parsed % n;
			metric_set_clear(&set);
			if (tegrastats_parse_line(lines[i], lens[i], &set, &info, &err) < 0) {
				failed++;
			}
			parsed++;
		}
		now = cpu_ns();
	} while (now - start < RUN_NS);
	double secs = (double)(now - start) / 1e9;
	printf("%-28s %10.0f lines/s %8.1f ns/line (%llu lines, %llu errors, %.2f s CPU)\n", label,
	       (double)parsed / secs, secs * 1e9 / (double)parsed, parsed, failed, secs);
}

/* Parses every line ROUNDS times: a fixed amount of work for callgrind. */
static void
run_rounds(const struct corpus *c, unsigned long rounds)
{
	struct tegrastats_info info;
	struct parse_error err;
	unsigned long long parsed = 0, failed = 0;
	for (unsigned long k = 0; k < rounds; k++) {
		for (size_t i = 0; i < c->count; i++) {
			metric_set_clear(&set);
			if (tegrastats_parse_line(c->lines[i], c->lens[i], &set, &info, &err) < 0) {
				failed++;
			}
			parsed++;
		}
	}
	printf("%llu lines parsed (%lu rounds), %llu errors\n", parsed, rounds, failed);
}

int
main(int argc, char **argv)
{
	static struct corpus c;
	unsigned long rounds = 0;
	if (argc > 2 && strcmp(argv[1], "--rounds") == 0) {
		rounds = strtoul(argv[2], NULL, 10);
		argc -= 2;
		argv += 2;
		if (rounds == 0) {
			fprintf(stderr, "bench_parse: --rounds needs a positive count\n");
			return 2;
		}
	}
	int r = argc > 1 ? load_file(&c, argv[1]) : load_dir(&c, BENCH_DEFAULT_DIR);
	if (r < 0) {
		return 1;
	}
	if (c.count == 0) {
		fprintf(stderr, "bench_parse: no data lines\n");
		return 1;
	}
	size_t longest = 0, bytes = 0;
	for (size_t i = 0; i < c.count; i++) {
		bytes += c.lens[i];
		if (c.lens[i] > c.lens[longest]) {
			longest = i;
		}
	}
	printf("%zu lines, %.0f bytes on average, longest %zu bytes\n", c.count,
	       (double)bytes / (double)c.count, c.lens[longest]);
	if (rounds > 0) {
		run_rounds(&c, rounds);
	} else {
		run("all lines", c.lines, c.lens, c.count);
		run("longest line", &c.lines[longest], &c.lens[longest], 1);
	}
	for (size_t i = 0; i < c.count; i++) {
		free(c.lines[i]);
	}
	return 0;
}
