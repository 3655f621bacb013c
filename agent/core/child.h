/*
 * Programs the agent starts (tegrastats, exec actions), started one way:
 * no shell, each the leader of its own process group, with an empty signal
 * mask and every signal at its default action. The loop blocks SIGINT,
 * SIGTERM and SIGHUP for its signalfd and the MQTT and webhook code ignore
 * SIGPIPE; a mask and ignored signals survive exec, so without this a
 * program started from the loop could not be stopped with SIGTERM.
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

/** Starts SPEC; *PID is also its process group. Returns 0 or -errno. */
int child_spawn(const struct child_spec *spec, pid_t *pid);

/**
 * Stops the process group PID (SIGTERM, SIGKILL after GRACE_MS) and reaps
 * its leader. Returns the leader's wait status, or -errno.
 */
int child_stop(pid_t pid, int grace_ms);

#endif
