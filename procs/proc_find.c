/* Pid files and a unit's cgroup (see proc_find.h). */
#include "proc_find.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/xalloc.h"
#include "proc_parse.h"

#define PATH_BYTES 1024
#define PIDFILE_BYTES 64     /* "4194304\n" and room to see that it is more */
#define PROCS_FILE_MAX 65536 /* cgroup.procs read at most: 7 bytes a pid */
#define CGROUP_DEPTH 3       /* cgroups below a unit's (Delegate=yes), levels followed */

/* where systemd keeps its cgroups, under SYS: v2, the hybrid layout's v2 half, v1's name=systemd */
static const char *const roots[] = {"fs/cgroup", "fs/cgroup/unified", "fs/cgroup/systemd"};

void
pid_list_add(struct pid_list *l, int32_t pid)
{
	for (size_t i = 0; i < l->count; i++) {
		if (l->pids[i] == pid) {
			return;
		}
	}
	if (l->count == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->pids = xrealloc(l->pids, l->cap, sizeof(*l->pids));
	}
	l->pids[l->count++] = pid;
}

void
pid_list_free(struct pid_list *l)
{
	free(l->pids);
	*l = (struct pid_list){0};
}

int
proc_find_pidfile(const char *path, struct pidfile_read *out)
{
	/* O_NONBLOCK: a FIFO put where the pid file should be must not stall sampling */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		return -errno;
	}
	struct stat st;
	char buf[PIDFILE_BYTES + 1];
	ssize_t n = -1;
	int err = EINVAL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		n = read(fd, buf, PIDFILE_BYTES);
		err = errno;
	}
	close(fd);
	if (n < 0 && err == EINVAL) {
		snprintf(out->shown, sizeof(out->shown), "not a regular file");
		return -EINVAL;
	}
	if (n < 0) {
		return -err;
	}
	buf[n] = '\0';
	struct pidfile_read r = {.dev = st.st_dev, .ino = st.st_ino};
	r.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (proc_parse_pid(buf, (size_t)n, &r.pid) < 0) {
		/* what it holds, quoted, cut, control characters as '?' */
		size_t k = 0;
		out->shown[k++] = '\'';
		for (size_t i = 0; i < (size_t)n && k < sizeof(out->shown) - 2; i++) {
			unsigned char c = (unsigned char)buf[i];
			out->shown[k++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
		}
		out->shown[k++] = '\'';
		out->shown[k] = '\0';
		return -EINVAL;
	}
	*out = r;
	return 0;
}

/* adds the pids of DIR/cgroup.procs, and of the cgroups below DIR down to DEPTH more levels */
static void
read_cgroup(const char *dir, int depth, struct pid_list *out, uint64_t *bad_lines)
{
	char path[PATH_BYTES];
	int n = snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	int fd = n > 0 && (size_t)n < sizeof(path) ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		char *text = xmalloc(PROCS_FILE_MAX + 1);
		size_t len = 0;
		for (ssize_t r; len < PROCS_FILE_MAX && (r = read(fd, text + len, PROCS_FILE_MAX - len)) > 0;) {
			len += (size_t)r;
		}
		close(fd);
		text[len] = '\0';
		for (char *line = text; *line && out->count < PROC_FIND_PIDS_MAX;) {
			char *nl = strchr(line, '\n');
			size_t l = nl ? (size_t)(nl - line) : strlen(line);
			int32_t pid;
			if (l > 0 && proc_parse_pid(line, l, &pid) == 0) {
				pid_list_add(out, pid);
			} else if (l > 0 && (nl || len < PROCS_FILE_MAX)) { /* a line cut at the limit is no mistake */
				(*bad_lines)++;
			}
			line = nl ? nl + 1 : line + l;
		}
		free(text);
	}
	DIR *d = depth > 0 ? opendir(dir) : NULL;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.') {
			continue; /* cgroup file systems say the type of every entry */
		}
		n = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (n > 0 && (size_t)n < sizeof(path)) {
			read_cgroup(path, depth - 1, out, bad_lines);
		}
	}
	if (d) {
		closedir(d);
	}
}

/* true when PATH (a buffer of PATH_BYTES) = ROOT/SLICE/UNIT is a cgroup directory */
static bool
cgroup_at(char *path, const char *root, const char *slice, const char *unit)
{
	struct stat st;
	int n = snprintf(path, PATH_BYTES, "%s/%s/%s", root, slice, unit);
	return n > 0 && n < PATH_BYTES && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* the cgroup directory of UNIT under ROOT into PATH: system.slice first, then any other top slice */
static bool
find_in_root(char *path, const char *root, const char *unit)
{
	if (cgroup_at(path, root, "system.slice", unit)) {
		return true;
	}
	DIR *d = opendir(root);
	bool found = false;
	for (struct dirent *e; d && !found && (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (len > 6 && strcmp(e->d_name + len - 6, ".slice") == 0 && strcmp(e->d_name, "system.slice") != 0) {
			found = cgroup_at(path, root, e->d_name, unit);
		}
	}
	if (d) {
		closedir(d);
	}
	return found;
}

int
proc_find_unit(const char *sys, const char *unit, struct pid_list *out, uint64_t *bad_lines)
{
	char root[PATH_BYTES], path[PATH_BYTES];
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		int n = snprintf(root, sizeof(root), "%s/%s", sys, roots[i]);
		if (n > 0 && (size_t)n < sizeof(root) && find_in_root(path, root, unit)) {
			read_cgroup(path, CGROUP_DEPTH, out, bad_lines);
			return 0;
		}
	}
	return -ENOENT;
}
