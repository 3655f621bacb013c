/*
 * Where the processes of a pidfile: or unit: watch are: the pid a file
 * names, and the pids of a systemd unit's cgroup, in each layout systemd
 * makes: cgroup v2 (JetPack 6 and 7: SYS/fs/cgroup/system.slice/UNIT), the
 * hybrid one (SYS/fs/cgroup/unified/...) and v1 (JetPack 4 and 5:
 * SYS/fs/cgroup/systemd/system.slice/UNIT, the name=systemd hierarchy).
 * The I/O; the text goes to proc_parse.c.
 */
#ifndef TEGRAWATCH_PROCS_PROC_FIND_H
#define TEGRAWATCH_PROCS_PROC_FIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROC_FIND_PIDS_MAX 4096 /* pids of one unit taken; more are left out */
#define PROC_FIND_SHOW_MAX 24   /* of a pid file's garbage, quoted in a message */

/* A growing list of pids. */
struct pid_list {
	int32_t *pids;
	size_t count, cap;
};

void pid_list_add(struct pid_list *l, int32_t pid);
void pid_list_free(struct pid_list *l);

/* What a pid file says, and which file it was (a pid file written again is another file). */
struct pidfile_read {
	int32_t pid;
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	char shown[PROC_FIND_SHOW_MAX]; /* -EINVAL: the start of what it holds, quoted, or "not a regular file" */
};

/**
 * Reads the pid file PATH. Returns 0 and *OUT; -ENOENT (no file: the
 * program is stopped), another -errno when it cannot be read, or -EINVAL
 * when it holds no pid or is no regular file (a FIFO, a directory: never
 * waited on); OUT->shown then says what it is.
 */
int proc_find_pidfile(const char *path, struct pidfile_read *out);

/**
 * Adds to OUT the pids of UNIT's cgroup and of the cgroups below it, in
 * the first layout under SYS where UNIT has one (system.slice first, then
 * any other top slice). Returns 0; -ENOENT when UNIT has no cgroup (not
 * running, or no such unit). *BAD_LINES counts lines that were no pid.
 */
int proc_find_unit(const char *sys, const char *unit, struct pid_list *out, uint64_t *bad_lines);

#endif
