/*
 * Programs the agent starts (tegrastats, exec actions), started one way:
 * no shell, each the leader of its own process group, with an empty signal
 * mask and every signal at its default action. The loop blocks SIGINT,
 * SIGTERM and SIGHUP for its signalfd and the MQTT and webhook code ignore
 * SIGPIPE; a mask and ignored signals survive exec, so without this a
 * program started from the loop could not be stopped with SIGTERM.
 *
 * Nothing a program starts outlives it: the agent is a child subreaper
 * (PR_SET_CHILD_SUBREAPER), so a process left behind by a program (in its
 * group, or escaped with setsid) becomes the agent's child when its parent
 * ends, and child_sweep() stops it. Children started here are registered,
 * so the sweep tells them from the processes it adopted.
 */
#ifndef TEGRAWATCH_CHILD_H
#define TEGRAWATCH_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

struct child_spec {
	char *const *argv; /* argv[0] is the program */
	char *const *envp;
	int stdout_fd;    /* the child's stdout; -1: /dev/null (stdin is always /dev/null) */
	bool search_path; /* look argv[0] up in $PATH when it has no '/' */
};

/**
 * The inherited environment without our own TEGRAWATCH_* variables (the
 * configuration overrides, TEGRAWATCH_MQTT_PASSWORD): a program has no use
 * for them, and a secret must not reach it. An array of pointers into
 * environ (not copies), NULL-terminated: free() it after the spawn.
 */
char **child_environ(void);

/** Starts SPEC and registers it; *PID is also its process group. Returns 0 or -errno. */
int child_spawn(const struct child_spec *spec, pid_t *pid);

/** PID, started by child_spawn(), was reaped by its owner: it is no longer ours. */
void child_forget(pid_t pid);

/** Makes this process the reaper of orphans of its descendants. Returns 0 or -errno. */
int child_become_subreaper(void);

/**
 * Stops the processes this process adopted (children it did not start):
 * SIGTERM when first seen, SIGKILL when still there GRACE_MS later, and
 * reaps those that ended. Returns how many are still there; *STOPPED (may be
 * NULL) gets how many were first seen (and sent SIGTERM) by this call.
 * Reads /proc: call it while programs run and a little after.
 */
int child_sweep(int grace_ms, unsigned *stopped);

/**
 * Stops the process group PID (SIGTERM, SIGKILL after GRACE_MS), reaps its
 * leader and forgets it. Returns the leader's wait status, or -errno.
 */
int child_stop(pid_t pid, int grace_ms);

#endif
