/*
 * What reading a file costs the kernel: each FILE read whole N times (default
 * 20,000) with pread() on one kept descriptor, as the agent reads its kept
 * files, and the mean wall time of a read in microseconds. Warm: the first
 * read is not counted. bench/README.md ("Third session") has this VM's figures.
 *
 *   build/bench/bench_file_cost [-n N] FILE...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int
main(int argc, char **argv)
{
	long n = 20000;
	int first = 1;
	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		n = strtol(argv[2], NULL, 10);
		first = 3;
	}
	if (n < 1 || first >= argc) {
		fprintf(stderr, "usage: %s [-n N] FILE...\n", argv[0]);
		return 2;
	}
	static char buf[1 << 16];
	int failed = 0;
	for (int i = first; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		ssize_t len = fd < 0 ? -1 : pread(fd, buf, sizeof(buf), 0);
		if (len < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			failed = 1;
			if (fd >= 0) {
				close(fd);
			}
			continue;
		}
		double t0 = now_us();
		for (long k = 0; k < n; k++) {
			if (pread(fd, buf, sizeof(buf), 0) < 0) {
				break;
			}
		}
		printf("%-40s %6zd bytes %8.2f us a read\n", argv[i], len, (now_us() - t0) / (double)n);
		close(fd);
	}
	return failed;
}
