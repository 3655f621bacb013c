/*
 * tegrawatch-driven: the agent of build/tegrawatch (agent/main.c, compiled
 * with main renamed tegrawatch_main, and the same libraries) on the driven
 * clock (core/clock_driven.h), for the integration tests only; never
 * installed. TEGRAWATCH_DRIVEN_CLOCK=FD names a stream socket the test holds
 * the other end of: one command a line, each answered "ok ..." once applied
 * ("error ..." when not understood):
 *
 *   advance MS       both clocks MS forward at once, every wait woken
 *   run MS PACE      the loop's waits move the clock (each lasts PACE real
 *                    ms, then jumps to its end) until MS later; answered
 *                    when the clock is there and the loop waits again
 *   pace PACE        as run, with no end
 *   pause            the clock stands still
 *   real             the clock runs with the real one from where it stands
 *   now              "ok MONO WALL", the driven clocks in ms
 *
 * The clock starts still at the real time of the start, or with the wall
 * clock at TEGRAWATCH_DRIVEN_WALL_MS (an agent started after one whose clock
 * ran ahead of real time keeps its stamps after the other's). Without the
 * first variable the binary runs on the real clocks. The socket's end of the
 * test closed: the clock stays as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/clock_driven.h"

/* agent/main.c's main (tests/meson.build compiles it with -Dmain=tegrawatch_main) */
int tegrawatch_main(int argc, char **argv);

static void
answer(int fd, const char *text)
{
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return;
		}
		off += (size_t)n;
	}
}

/* One command line (no newline); the answer into OUT. */
static void
command(const char *line, char *out, size_t size)
{
	long long a = 0, b = 0;
	if (sscanf(line, "advance %lld", &a) == 1 && a >= 0) {
		clock_driven_advance(a);
		snprintf(out, size, "ok\n");
	} else if (sscanf(line, "run %lld %lld", &a, &b) == 2 && a >= 0 && b >= 0) {
		clock_driven_run(a, b);
		while (!clock_driven_run_wait(1000)) {
		}
		snprintf(out, size, "ok\n");
	} else if (sscanf(line, "pace %lld", &a) == 1 && a >= 0) {
		clock_driven_run(-1, a);
		snprintf(out, size, "ok\n");
	} else if (strcmp(line, "pause") == 0) {
		clock_driven_pause();
		snprintf(out, size, "ok\n");
	} else if (strcmp(line, "real") == 0) {
		clock_driven_follow_real();
		snprintf(out, size, "ok\n");
	} else if (strcmp(line, "now") == 0) {
		snprintf(out, size, "ok %" PRId64 " %" PRId64 "\n", monotonic_ms(), clock_wall_ms());
	} else {
		snprintf(out, size, "error unknown command: %.60s\n", line);
	}
}

static void *
control(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[256], out[128];
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			break;
		}
		len += (size_t)n;
		buf[len] = '\0';
		char *nl;
		while ((nl = strchr(buf, '\n')) != NULL) {
			*nl = '\0';
			command(buf, out, sizeof(out));
			answer(fd, out);
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len + 1);
		}
		if (len == sizeof(buf) - 1) {
			answer(fd, "error line too long\n");
			len = 0;
		}
	}
	close(fd);
	return NULL;
}

int
main(int argc, char **argv)
{
	const char *v = getenv("TEGRAWATCH_DRIVEN_CLOCK");
	if (v && *v) {
		char *end;
		long fd = strtol(v, &end, 10);
		if (*end || fd < 0 || fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0) {
			fprintf(stderr, "tegrawatch-driven: TEGRAWATCH_DRIVEN_CLOCK=%s: not an open descriptor\n", v);
			return 2;
		}
		struct timespec m, w;
		clock_gettime(CLOCK_MONOTONIC, &m);
		clock_gettime(CLOCK_REALTIME, &w);
		int64_t wall_ms = (int64_t)w.tv_sec * 1000 + w.tv_nsec / 1000000;
		const char *at = getenv("TEGRAWATCH_DRIVEN_WALL_MS");
		if (at && *at) {
			long long ms = strtoll(at, &end, 10);
			if (*end || ms <= 0) {
				fprintf(stderr, "tegrawatch-driven: TEGRAWATCH_DRIVEN_WALL_MS=%s: not a time in ms\n", at);
				return 2;
			}
			wall_ms = ms;
		}
		clock_driven_start((int64_t)m.tv_sec * 1000 + m.tv_nsec / 1000000, wall_ms);
		/* the agent takes its signals through a signalfd: this thread must never receive one */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		pthread_t t;
		int r = pthread_create(&t, NULL, control, (void *)(intptr_t)fd);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (r != 0) {
			fprintf(stderr, "tegrawatch-driven: cannot start the clock's control: %s\n", strerror(r));
			return 2;
		}
		pthread_detach(t);
	}
	return tegrawatch_main(argc, argv);
}
