/* Starting and stopping the programs the agent runs; see child.h. */
#include "child.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "xalloc.h"

#define REGISTERED_MAX 32 /* tegrastats and 8 running actions */
#define ADOPTED_MAX 64    /* beyond: SIGKILL at once, no grace */

extern char **environ;

/* Children started by child_spawn() and not yet reaped: everything else that is our child was adopted. */
static pid_t registered[REGISTERED_MAX];

static struct adopted {
	pid_t pid;
	int64_t first_seen_ms;
	bool seen; /* in the current sweep */
} adopted[ADOPTED_MAX];

static bool
is_registered(pid_t pid)
{
	for (size_t i = 0; i < REGISTERED_MAX; i++) {
		if (registered[i] == pid) {
			return true;
		}
	}
	return false;
}

void
child_forget(pid_t pid)
{
	for (size_t i = 0; i < REGISTERED_MAX; i++) {
		if (registered[i] == pid) {
			registered[i] = 0;
		}
	}
}

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
	if (r != 0) {
		return -r;
	}
	for (size_t i = 0; i < REGISTERED_MAX; i++) {
		if (registered[i] == 0) {
			registered[i] = *pid;
			return 0;
		}
	}
	/* never with 9 children at most; were it to happen, the sweep would stop it: better not run it */
	kill(-*pid, SIGKILL);
	waitpid(*pid, NULL, 0);
	return -EAGAIN;
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
		clock_sleep_ms(5);
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
	child_forget(pid);
	return status;
}

int
child_become_subreaper(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/* The parent and state of process NAME (a /proc entry), from /proc/NAME/stat. */
static int
proc_stat(int proc_fd, const char *name, pid_t *ppid, char *state)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "%s/stat", name);
	int fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		return -EIO;
	}
	buf[n] = '\0';
	/* "PID (COMM) STATE PPID ...": COMM may hold spaces and ')' */
	const char *p = strrchr(buf, ')');
	int pp;
	if (!p || sscanf(p + 1, " %c %d", state, &pp) != 2) {
		return -EIO;
	}
	*ppid = pp;
	return 0;
}

/* One adopted child seen now: first SIGTERM, SIGKILL after the grace; an ended one is reaped. */
static void
handle_adopted(pid_t pid, char state, int64_t now, int grace_ms, unsigned *stopped)
{
	if (state == 'Z') {
		waitpid(pid, NULL, WNOHANG); /* ours, and not registered: no owner waits for it */
		return;
	}
	struct adopted *free_slot = NULL;
	for (size_t i = 0; i < ADOPTED_MAX; i++) {
		if (adopted[i].pid == pid) {
			adopted[i].seen = true;
			if (now - adopted[i].first_seen_ms >= grace_ms) {
				kill(pid, SIGKILL);
			}
			return;
		}
		if (!free_slot && adopted[i].pid == 0) {
			free_slot = &adopted[i];
		}
	}
	(*stopped)++;
	if (!free_slot) {
		kill(pid, SIGKILL);
		return;
	}
	*free_slot = (struct adopted){.pid = pid, .first_seen_ms = now, .seen = true};
	kill(pid, SIGTERM);
}

int
child_sweep(int grace_ms, unsigned *stopped)
{
	unsigned first = 0;
	int left = 0;
	pid_t self = getpid();
	int64_t now = monotonic_ms();
	for (size_t i = 0; i < ADOPTED_MAX; i++) {
		adopted[i].seen = false;
	}
	/* signalling our own children is safe: a child's pid cannot be reused before we reap it */
	DIR *proc = opendir("/proc");
	if (!proc) {
		return -errno;
	}
	struct dirent *de;
	while ((de = readdir(proc))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9') {
			continue;
		}
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10), ppid;
		char state;
		if (proc_stat(dirfd(proc), de->d_name, &ppid, &state) < 0 || ppid != self || is_registered(pid)) {
			continue;
		}
		handle_adopted(pid, state, now, grace_ms, &first);
		left += state != 'Z';
	}
	closedir(proc);
	for (size_t i = 0; i < ADOPTED_MAX; i++) {
		if (!adopted[i].seen) {
			adopted[i].pid = 0; /* gone */
		}
	}
	if (stopped) {
		*stopped = first;
	}
	return left;
}
