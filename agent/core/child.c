/* Starting and stopping the programs the agent runs; see child.h. */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "xalloc.h"

extern char **environ;

char **
child_environ(void)
{
	size_t n = 0;
	while (environ[n]) {
		n++;
	}
	char **env = xcalloc(n + 1, sizeof(*env));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(environ[i], "TEGRAWATCH_", 11) != 0) {
			env[k++] = environ[i];
		}
	}
	return env;
}

int
child_spawn(const struct child_spec *spec, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (spec->stdout_fd >= 0) {
		posix_spawn_file_actions_adddup2(&fa, spec->stdout_fd, STDOUT_FILENO);
	} else {
		posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	}
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	/* the loop's signalfd mask and SIGPIPE's SIG_IGN would survive exec: give the program a clean slate */
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	/* its own process group: stopping it stops what it started too (unless that left the group) */
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
	int r = spec->search_path ? posix_spawnp(pid, spec->argv[0], &fa, &attr, spec->argv, spec->envp)
				  : posix_spawn(pid, spec->argv[0], &fa, &attr, spec->argv, spec->envp);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return -r;
}

/* Whether the leader PID has ended; it stays a zombie, so its group id cannot be reused yet. */
static int
leader_ended(pid_t pid)
{
	siginfo_t si = {0};
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
		return errno == EINTR ? 0 : -errno;
	}
	return si.si_pid == pid;
}

int
child_stop(pid_t pid, int grace_ms)
{
	kill(-pid, SIGTERM);
	int64_t until = monotonic_ms() + grace_ms;
	int r;
	while ((r = leader_ended(pid)) == 0 && monotonic_ms() < until) {
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (r < 0) {
		return r;
	}
	/*
	 * A program that ignores SIGTERM must not hold up the agent's stop, and
	 * what it left in its group goes with it: killed while the unreaped
	 * leader still holds the group id.
	 */
	kill(-pid, SIGKILL);
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			return -errno;
		}
	}
	return status;
}
