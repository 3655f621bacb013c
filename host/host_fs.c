/* The host source's file systems (host_priv.h): statvfs of the watched mounts at their pace, and their trends. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "core/log.h"
#include "core/metric_attrs.h"
#include "core/xalloc.h"
#include "host_priv.h"

static bool
segment_taken(const struct host_source *h, size_t n, const char *seg)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(h->fs[i].segment, seg) == 0) {
			return true;
		}
	}
	return false;
}

/* statvfs() of one mount into S; false when it cannot be read */
static bool
stat_mount(const struct mount_entry *me, struct fs_state *s)
{
	struct statvfs v;
	if (statvfs(me->mountpoint, &v) != 0 || v.f_blocks == 0) {
		return false; /* gone, no permission, or a file system without blocks (none to watch) */
	}
	double block = (double)(v.f_frsize ? v.f_frsize : v.f_bsize);
	double used = (double)(v.f_blocks - (v.f_bfree < v.f_blocks ? v.f_bfree : v.f_blocks));
	s->size_bytes = (double)v.f_blocks * block;
	s->avail_bytes = (double)v.f_bavail * block;
	s->used_bytes = used * block;
	s->size_mb = s->size_bytes / 1048576.0;
	s->avail_mb = s->avail_bytes / 1048576.0;
	s->used_mb = s->used_bytes / 1048576.0;
	s->has_pct = used + (double)v.f_bavail > 0;
	s->used_pct = s->has_pct ? 100.0 * used / (used + (double)v.f_bavail) : 0;
	s->has_inodes = v.f_files > 0; /* btrfs and some others say 0: no inode limit */
	s->inodes = (double)v.f_files;
	s->inodes_free = (double)v.f_ffree;
	s->inodes_used_pct = s->has_inodes
				     ? 100.0 * (double)(v.f_files - (v.f_ffree < v.f_files ? v.f_ffree : v.f_files)) /
					       (double)v.f_files
				     : 0;
	s->readonly = (v.f_flag & ST_RDONLY) != 0 || me->readonly;
	return true;
}

/* S's scan at NOW_MS into its trend, and its time to full from it */
static void
track_fill(struct host_source *h, struct fs_state *s, int64_t now_ms)
{
	struct fs_trend *tr = NULL, *free_slot = NULL;
	for (size_t i = 0; i < FS_MAX && !tr; i++) {
		if (strcmp(h->trend[i].segment, s->segment) == 0) {
			tr = &h->trend[i];
		} else if (!free_slot && !h->trend[i].segment[0]) {
			free_slot = &h->trend[i];
		}
	}
	if (!tr && !free_slot) {
		s->has_eta = false; /* the slots of mounts gone in this very scan come back at its end */
		return;
	}
	if (!tr) {
		tr = free_slot;
		memcpy(tr->segment, s->segment, sizeof(tr->segment));
		tr->size_bytes = -1;
	}
	if (tr->size_bytes != s->size_bytes) {
		fill_trend_init(&tr->fill, h->fs_trend_ms);
		tr->size_bytes = s->size_bytes;
	}
	fill_trend_add(&tr->fill, now_ms, s->used_bytes);
	s->has_eta = fill_trend_eta_s(&tr->fill, s->avail_bytes, &s->full_eta_s) == 0;
}

/* gives back the trends of mounts no longer watched */
static void
host_fs_drop_trends(struct host_source *h)
{
	for (size_t i = 0; i < FS_MAX; i++) {
		if (h->trend[i].segment[0] && !segment_taken(h, h->fs_count, h->trend[i].segment)) {
			h->trend[i].segment[0] = '\0';
		}
	}
}

/* /proc/self/mountinfo: the last line of a mount point is the one on top */
void
host_fs_scan(struct host_source *h, int64_t now_ms)
{
	char path[HOST_PATH_MAX];
	snprintf(path, sizeof(path), "%s/self/mountinfo", h->proc);
	FILE *f = fopen(path, "re");
	if (!f) {
		return;
	}
	struct mount_entry *mounts = xcalloc(FS_MAX * 4, sizeof(*mounts));
	size_t n = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		struct mount_entry me;
		if (mounts_parse_line(line, (size_t)len, &me) < 0 || !mounts_selected(&me, &h->filter)) {
			continue;
		}
		size_t k = 0;
		while (k < n && strcmp(mounts[k].mountpoint, me.mountpoint) != 0) {
			k++;
		}
		if (k == n && n == FS_MAX * 4) {
			continue;
		}
		mounts[k] = me;
		n += k == n;
	}
	free(line);
	fclose(f);
	char old[FS_MAX][MOUNT_SEGMENT_MAX];
	size_t old_count = h->fs_count;
	for (size_t i = 0; i < old_count; i++) {
		memcpy(old[i], h->fs[i].segment, MOUNT_SEGMENT_MAX);
	}
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		if (count == FS_MAX) {
			if (!h->fs_full_said) {
				log_warn("host: more than %d file systems to watch: %s and later ones left out "
					 "(host.filesystems.include or exclude chooses)",
					 FS_MAX, mounts[i].mountpoint);
				h->fs_full_said = true;
			}
			break;
		}
		struct fs_state *s = &h->fs[count];
		mounts_segment(mounts[i].mountpoint, false, s->segment);
		if (segment_taken(h, count, s->segment)) {
			mounts_segment(mounts[i].mountpoint, true, s->segment);
		}
		if (!stat_mount(&mounts[i], s)) {
			continue;
		}
		track_fill(h, s, now_ms);
		static const char *const names[] = {"mountpoint", "fstype", "device"};
		const char *values[] = {mounts[i].mountpoint, mounts[i].fstype, mounts[i].source};
		metric_attrs_set("mountpoint", s->segment, 3, names, values);
		count++;
	}
	h->fs_count = count;
	host_fs_drop_trends(h);
	for (size_t i = 0; i < old_count; i++) {
		if (!segment_taken(h, count, old[i])) {
			metric_attrs_forget("mountpoint", old[i]); /* unmounted */
		}
	}
	free(mounts);
}

void
host_fs_put(const struct host_source *h, struct metric_set *m)
{
	for (size_t i = 0; i < h->fs_count; i++) {
		const struct fs_state *s = &h->fs[i];
		metric_set_put3(m, s->size_mb, "filesystem.", s->segment, ".size_mb");
		metric_set_put3(m, s->avail_mb, "filesystem.", s->segment, ".avail_mb");
		metric_set_put3(m, s->used_mb, "filesystem.", s->segment, ".used_mb");
		if (s->has_pct) {
			metric_set_put3(m, s->used_pct, "filesystem.", s->segment, ".used_pct");
		}
		if (s->has_inodes) {
			metric_set_put3(m, s->inodes, "filesystem.", s->segment, ".inodes");
			metric_set_put3(m, s->inodes_free, "filesystem.", s->segment, ".inodes_free");
			metric_set_put3(m, s->inodes_used_pct, "filesystem.", s->segment, ".inodes_used_pct");
		}
		metric_set_put3(m, s->readonly ? 1 : 0, "filesystem.", s->segment, ".readonly");
		if (s->has_eta) {
			metric_set_put3(m, s->full_eta_s, "filesystem.", s->segment, ".full_eta_s");
		}
	}
	for (size_t i = 0; i < h->emmc_count; i++) {
		const struct emmc_state *e = &h->emmc[i];
		if (e->life_a >= 0) {
			metric_set_put3(m, e->life_a, "emmc.", e->segment, ".life_time_a_pct");
		}
		if (e->life_b >= 0) {
			metric_set_put3(m, e->life_b, "emmc.", e->segment, ".life_time_b_pct");
		}
		if (e->pre_eol >= 0) {
			metric_set_put3(m, e->pre_eol, "emmc.", e->segment, ".pre_eol");
		}
	}
}

/* the entry of interface NAME in LIST, or NULL */
