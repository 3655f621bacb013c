/* The cgroup's memory limit on v1, v2 and hybrid hosts (see cgroup_memory.h). */
#include "cgroup_memory.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* v1 reports "no limit" as the page counter's maximum rounded to a page: anything this large */
#define V1_UNLIMITED_BYTES (UINT64_C(1) << 62)

/* True when the comma-separated LIST holds WORD. */
static bool
has_word(const char *list, size_t len, const char *word)
{
	size_t wl = strlen(word);
	for (const char *p = list, *end = list + len; p < end;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);
		if (n == wl && memcmp(p, word, wl) == 0) {
			return true;
		}
		p += n + 1;
	}
	return false;
}

/*
 * The cgroup path of this process in the hierarchy: "0::PATH" for v2
 * (V1 false), "N:...memory...:PATH" for v1's memory controller.
 */
static bool
cgroup_path(const char *proc_cgroup, bool v1, char *out, size_t size)
{
	for (const char *line = proc_cgroup; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2) {
			size_t ctl_len = (size_t)(c2 - c1 - 1);
			bool match = v1 ? has_word(c1 + 1, ctl_len, "memory")
					: (ctl_len == 0 && c1 - line == 1 && line[0] == '0');
			size_t plen = len - (size_t)(c2 + 1 - line);
			if (match && plen < size) {
				memcpy(out, c2 + 1, plen);
				out[plen] = '\0';
				return true;
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return false;
}

/*
 * The mount of the hierarchy (v2: fstype cgroup2; v1: cgroup with the
 * memory option) whose root contains CG: the file's directory in DIR.
 * mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - FSTYPE SRC SUPEROPTS".
 */
static bool
mount_dir(const char *mountinfo, bool v1, const char *cg, char *dir, size_t size)
{
	for (const char *line = mountinfo; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char buf[1024];
		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			char root[512], point[512], fstype[64], super[512];
			const char *sep = strstr(buf, " - ");
			if (sep && sscanf(buf, "%*s %*s %*s %511s %511s", root, point) == 2 &&
			    sscanf(sep + 3, "%63s %*s %511s", fstype, super) == 2) {
				bool kind =
					v1 ? strcmp(fstype, "cgroup") == 0 && has_word(super, strlen(super), "memory")
					   : strcmp(fstype, "cgroup2") == 0;
				size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
				if (kind && strncmp(cg, root, rl) == 0 && (cg[rl] == '/' || cg[rl] == '\0')) {
					const char *rest = cg + rl;
					int n = snprintf(dir, size, "%s%s", point, strcmp(rest, "/") == 0 ? "" : rest);
					return n > 0 && (size_t)n < size;
				}
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return false;
}

int
cgroup_memory_files(const char *proc_cgroup, const char *mountinfo, char *paths, size_t size)
{
	size_t used = 0;
	for (int v1 = 0; v1 < 2; v1++) {
		char cg[512], dir[1024];
		if (!cgroup_path(proc_cgroup, v1, cg, sizeof(cg)) || !mount_dir(mountinfo, v1, cg, dir, sizeof(dir))) {
			continue;
		}
		int n = snprintf(paths + used, size - used, "%s/%s", dir, v1 ? "memory.limit_in_bytes" : "memory.max");
		if (n < 0 || (size_t)n + 1 >= size - used) {
			break;
		}
		used += (size_t)n + 1;
	}
	if (used == 0) {
		return -ENOENT;
	}
	paths[used] = '\0';
	return 0;
}

/* The whole small file ROOT/PATH into BUF, or false. */
static bool
read_under(const char *root, const char *path, char *buf, size_t size)
{
	char full[1200];
	int n = snprintf(full, sizeof(full), "%s%s", root, path);
	FILE *f = n > 0 && (size_t)n < sizeof(full) ? fopen(full, "re") : NULL;
	if (!f) {
		return false;
	}
	size_t len = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[len] = '\0';
	return len > 0;
}

uint64_t
cgroup_memory_limit(const char *root)
{
	char proc_cgroup[2048], mountinfo[16384], paths[2100];
	if (!read_under(root, "/proc/self/cgroup", proc_cgroup, sizeof(proc_cgroup)) ||
	    !read_under(root, "/proc/self/mountinfo", mountinfo, sizeof(mountinfo)) ||
	    cgroup_memory_files(proc_cgroup, mountinfo, paths, sizeof(paths)) < 0) {
		return 0;
	}
	for (const char *p = paths; *p; p += strlen(p) + 1) {
		char value[64];
		if (!read_under(root, p, value, sizeof(value))) {
			continue;
		}
		if (strncmp(value, "max", 3) == 0) {
			return 0;
		}
		char *end;
		errno = 0;
		unsigned long long v = strtoull(value, &end, 10);
		if (errno || end == value) {
			continue;
		}
		return v >= V1_UNLIMITED_BYTES ? 0 : (uint64_t)v;
	}
	return 0;
}
