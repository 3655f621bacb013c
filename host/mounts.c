/*
 * Mounts (see mounts.h). A mountinfo line (proc.rst):
 *   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
 *   (1)(2) (3)   (4)   (5)      (6)      (7)   (8) (9)    (10)         (11)
 * mount ID, parent ID, major:minor, root, mount point, mount options,
 * optional fields ending with "-", type, source, super options. The
 * kernel escapes space, tab, newline and backslash as \040 \011 \012 \134.
 */
#include "mounts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/hash.h"
#include "host_text.h"

/* the next space-separated field of [*P, END): its start and length; false at the end */
static bool
next_field(const char **p, const char *end, const char **start, size_t *n)
{
	while (*p < end && **p == ' ') {
		(*p)++;
	}
	if (*p >= end) {
		return false;
	}
	*start = *p;
	while (*p < end && **p != ' ') {
		(*p)++;
	}
	*n = (size_t)(*p - *start);
	return true;
}

/* copies a field, undoing the kernel's octal escapes; false when it does not fit */
static bool
unescape(const char *s, size_t n, char *dst, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
		    s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		}
		if (c == '\0' || o + 1 >= size) {
			return false;
		}
		dst[o++] = c;
	}
	dst[o] = '\0';
	return o > 0;
}

int
mounts_parse_line(const char *line, size_t len, struct mount_entry *out)
{
	const char *p = line, *end = line + len, *f[6];
	size_t n[6];
	/* mount ID, parent ID, major:minor, root, mount point, mount options */
	for (size_t i = 0; i < 6; i++) {
		if (!next_field(&p, end, &f[i], &n[i])) {
			return -EINVAL;
		}
	}
	const char *s;
	size_t sn;
	do { /* optional fields, up to the separator */
		if (!next_field(&p, end, &s, &sn)) {
			return -EINVAL;
		}
	} while (!(sn == 1 && s[0] == '-'));
	const char *type, *source;
	size_t tn, srcn;
	if (!next_field(&p, end, &type, &tn) || !next_field(&p, end, &source, &srcn)) {
		return -EINVAL;
	}
	if (n[4] == 0 || f[4][0] != '/' || !unescape(f[4], n[4], out->mountpoint, sizeof(out->mountpoint)) ||
	    !unescape(type, tn, out->fstype, sizeof(out->fstype)) ||
	    !unescape(source, srcn, out->source, sizeof(out->source))) {
		return -EINVAL;
	}
	out->readonly = n[5] >= 2 && strncmp(f[5], "ro", 2) == 0 && (n[5] == 2 || f[5][2] == ',');
	return 0;
}

static bool
in_list(const char *word, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(word, list[i]) == 0) {
			return true;
		}
	}
	return false;
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

bool
mounts_fstype_network(const char *fstype)
{
	static const char *const network[] = {"nfs", "nfs4", "cifs",   "smb3",  "smbfs", "ncpfs", "ceph",  "glusterfs",
					      "9p",  "afs",  "lustre", "davfs", "sshfs", "gpfs",  "ocfs2", "beegfs"};
	/* FUSE file systems but fuseblk (a local disk through FUSE) answer from a program: sshfs, rclone, s3fs */
	return in_list(fstype, network, N_OF(network)) || strncmp(fstype, "fuse.", 5) == 0 ||
	       strcmp(fstype, "fuse") == 0;
}

bool
mounts_fstype_pseudo(const char *fstype)
{
	/* node_exporter's default --collector.filesystem.fs-types-exclude, and the in-memory ones */
	static const char *const pseudo[] = {
		"autofs",   "binfmt_misc", "bpf",     "cgroup",     "cgroup2",    "configfs",  "debugfs",  "devpts",
		"devtmpfs", "efivarfs",    "fusectl", "hugetlbfs",  "iso9660",    "mqueue",    "nsfs",     "overlay",
		"proc",     "procfs",      "pstore",  "rpc_pipefs", "securityfs", "selinuxfs", "squashfs", "erofs",
		"sysfs",    "tracefs",     "tmpfs",   "ramfs",      "nfsd",       "rootfs",    "none",
	};
	return in_list(fstype, pseudo, N_OF(pseudo));
}

bool
mounts_selected(const struct mount_entry *m, const struct mounts_filter *f)
{
	static const char *const system_paths[] = {
		"/dev",
		"/dev/*",
		"/proc",
		"/proc/*",
		"/sys",
		"/sys/*",
		"/run/credentials/*",
		"/var/lib/docker/*",
		"/var/lib/containers/storage/*",
		"/var/lib/kubelet/*",
	};
	if (host_glob_any(m->mountpoint, f->exclude, f->exclude_count)) {
		return false;
	}
	if (f->include_count > 0) {
		return host_glob_any(m->mountpoint, f->include, f->include_count);
	}
	return !mounts_fstype_pseudo(m->fstype) && !mounts_fstype_network(m->fstype) &&
	       !host_glob_any(m->mountpoint, system_paths, N_OF(system_paths));
}

void
mounts_segment(const char *mountpoint, bool hashed, char *buf)
{
	if (strcmp(mountpoint, "/") == 0 && !hashed) {
		snprintf(buf, MOUNT_SEGMENT_MAX, "root");
		return;
	}
	const char *s = mountpoint[0] == '/' ? mountpoint + 1 : mountpoint;
	size_t n = 0, len = strlen(s);
	bool cut = hashed || len >= MOUNT_SEGMENT_MAX || len == 0;
	size_t keep = cut ? MOUNT_SEGMENT_MAX - 1 - 9 : len;
	for (; n < keep && s[n]; n++) {
		char c = s[n];
		if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
		}
		buf[n] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '_';
	}
	if (cut) {
		snprintf(buf + n, MOUNT_SEGMENT_MAX - n, "%s%08" PRIx32, n ? "_" : "",
			 (uint32_t)fnv1a64_str(mountpoint));
		return;
	}
	buf[n] = '\0';
}
