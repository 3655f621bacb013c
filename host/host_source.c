/* The host source (see host_source.h): the I/O around the pure parsers. */
#include "host_source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/metric_attrs.h"
#include "core/xalloc.h"
#include "diskstats.h"
#include "fill_trend.h"
#include "host_text.h"
#include "mounts.h"
#include "netdev.h"
#include "oom_log.h"
#include "procmem.h"

#include "host_priv.h"

static const char *const kept_paths[F_COUNT] = {"loadavg",      "uptime",          "vmstat",
						"pressure/cpu", "pressure/memory", "pressure/io",
						"diskstats",    "net/dev",         "net/wireless"};
static const char *const psi_names[] = {"cpu", "memory", "io"};

static const char *const link_files[L_COUNT] = {"carrier", "operstate", "carrier_changes"};

static char **
copy_list(char *const *list, size_t n)
{
	if (!n) {
		return NULL;
	}
	char **c = xcalloc(n + 1, sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		c[i] = xstrdup(list[i]);
	}
	return c;
}

static void
free_list(char **list)
{
	for (size_t i = 0; list && list[i]; i++) {
		free(list[i]);
	}
	free(list);
}

/* reads a kept file whole into h->text; false when it is not there */
static bool
read_kept(struct host_source *h, enum kept_file f)
{
	if (h->gone[f]) {
		return false;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		if (h->fd[f] < 0) {
			char path[HOST_PATH_MAX];
			snprintf(path, sizeof(path), "%s/%s", h->proc, kept_paths[f]);
			h->fd[f] = open(path, O_RDONLY | O_CLOEXEC);
			if (h->fd[f] < 0) {
				h->gone[f] = errno == ENOENT || errno == ENOTDIR || errno == EOPNOTSUPP;
				return false;
			}
		}
		ssize_t n = pread(h->fd[f], h->text, sizeof(h->text) - 1, 0);
		if (n >= 0) {
			h->text[n] = '\0';
			return true;
		}
		close(h->fd[f]); /* reopened once: a file replaced under us */
		h->fd[f] = -1;
	}
	return false;
}

/*
 * Reads a small sysfs attribute into BUF through *FD, kept open and read
 * again with pread(): one system call a sample instead of three. The path
 * (FMT) is made only to open it: the first time, and once more when a read
 * fails (a device that went away and came back under the same name).
 * EINVAL is an answer, not a broken file: carrier while a link is down.
 */
static bool read_attr(int *fd, char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool
read_attr(int *fd, char *buf, size_t size, const char *fmt, ...)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		if (*fd < 0) {
			char path[HOST_PATH_MAX];
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(path, sizeof(path), fmt, ap);
			va_end(ap);
			*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			if (*fd < 0) {
				return false;
			}
		}
		ssize_t n = pread(*fd, buf, size - 1, 0);
		if (n >= 0) {
			buf[n] = '\0';
			return true;
		}
		if (errno == EINVAL) {
			return false;
		}
		close(*fd);
		*fd = -1;
	}
	return false;
}

static void
close_fds(int *fd, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (fd[i] >= 0) {
			close(fd[i]);
			fd[i] = -1;
		}
	}
}

/* reads a small file whole into BUF; false when absent or unreadable */
static bool
read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		return false;
	}
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0) {
		return false;
	}
	buf[n] = '\0';
	return true;
}

/* zram; the memory shares come from the board's reading of /proc/meminfo (board_set_memory_shares) */
static void
read_memory(struct host_source *h, struct metric_set *m)
{
	for (size_t i = 0; i < h->zram_count; i++) {
		char buf[256], name[METRIC_NAME_MAX];
		struct procmem_zram z;
		if (read_attr(&h->zram_fd[i], buf, sizeof(buf), "%s/block/zram%d/mm_stat", h->sys, h->zram[i]) &&
		    procmem_parse_zram(buf, &z) == 0) {
			metric_name_num(name, "zram.", h->zram[i], ".data_mb");
			metric_set_put(m, name, (double)z.orig_data_size / 1048576.0);
			metric_name_num(name, "zram.", h->zram[i], ".compressed_mb");
			metric_set_put(m, name, (double)z.compr_data_size / 1048576.0);
			metric_name_num(name, "zram.", h->zram[i], ".used_mb");
			metric_set_put(m, name, (double)z.mem_used_total / 1048576.0);
		}
	}
}

static void
read_system(struct host_source *h, struct metric_set *m)
{
	for (size_t r = 0; r < 3; r++) {
		struct procmem_psi psi;
		if (!read_kept(h, (enum kept_file)(F_PSI_CPU + r)) || procmem_parse_psi(h->text, &psi) < 0) {
			continue;
		}
		metric_set_put3(m, psi.some_avg10, "pressure.", psi_names[r], ".some_avg10_pct");
		metric_set_put3(m, (double)psi.some_total_us / 1e6, "pressure.", psi_names[r], ".some_seconds_total");
		if (psi.full) {
			metric_set_put3(m, psi.full_avg10, "pressure.", psi_names[r], ".full_avg10_pct");
			metric_set_put3(m, (double)psi.full_total_us / 1e6, "pressure.", psi_names[r],
					".full_seconds_total");
		}
	}
	uint64_t kills;
	if (read_kept(h, F_VMSTAT) && procmem_parse_vmstat_oom(h->text, &kills) == 0) {
		metric_set_put(m, "oom.kills_total", (double)kills);
	}
	struct procmem_loadavg la;
	if (read_kept(h, F_LOADAVG) && procmem_parse_loadavg(h->text, &la) == 0) {
		metric_set_put(m, "load.avg_1m", la.avg1);
		metric_set_put(m, "load.avg_5m", la.avg5);
		metric_set_put(m, "load.avg_15m", la.avg15);
		metric_set_put(m, "tasks.running", (double)la.running);
		metric_set_put(m, "tasks.count", (double)la.tasks);
	}
	double up;
	if (read_kept(h, F_UPTIME) && procmem_parse_uptime(h->text, &up) == 0) {
		metric_set_put(m, "system.uptime_s", up);
	}
}

static void
read_disks(struct host_source *h, struct metric_set *m)
{
	if (!read_kept(h, F_DISKSTATS)) {
		return;
	}
	size_t disks = 0;
	for (const char *line = h->text; *line && disks < DISK_MAX;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		struct disk_stat d;
		if (diskstats_parse_line(line, len, &d) == 0 && diskstats_default_device(d.name)) {
			char seg[DISK_NAME_MAX];
			diskstats_segment(d.name, seg);
			metric_set_put3(m, (double)d.sectors_read * 512.0, "disk.", seg, ".read_bytes_total");
			metric_set_put3(m, (double)d.sectors_written * 512.0, "disk.", seg, ".written_bytes_total");
			metric_set_put3(m, (double)d.reads, "disk.", seg, ".reads_total");
			metric_set_put3(m, (double)d.writes, "disk.", seg, ".writes_total");
			metric_set_put3(m, (double)d.io_ms, "disk.", seg, ".busy_ms_total");
			disks++;
		}
		line = nl ? nl + 1 : line + len;
	}
}

/* eMMC health of every mmcblkN disk (JEDEC eMMC 5.0 EXT_CSD through the mmc driver's sysfs attributes) */
static void
scan_emmc(struct host_source *h)
{
	h->emmc_count = 0;
	char path[HOST_PATH_MAX];
	snprintf(path, sizeof(path), "%s/block", h->sys);
	DIR *dir = opendir(path);
	if (!dir) {
		return;
	}
	for (struct dirent *e; (e = readdir(dir)) && h->emmc_count < DISK_MAX;) {
		if (strncmp(e->d_name, "mmcblk", 6) != 0 || !diskstats_default_device(e->d_name) ||
		    strlen(e->d_name) >= DISK_NAME_MAX) {
			continue;
		}
		struct emmc_state *s = &h->emmc[h->emmc_count];
		char buf[64];
		s->life_a = s->life_b = s->pre_eol = -1;
		int n = snprintf(path, sizeof(path), "%s/block/%s/device/life_time", h->sys, e->d_name);
		if (n > 0 && (size_t)n < sizeof(path) && read_small(path, buf, sizeof(buf))) {
			emmc_parse_life_time(buf, &s->life_a, &s->life_b);
		}
		n = snprintf(path, sizeof(path), "%s/block/%s/device/pre_eol_info", h->sys, e->d_name);
		if (n > 0 && (size_t)n < sizeof(path) && read_small(path, buf, sizeof(buf))) {
			emmc_parse_pre_eol(buf, &s->pre_eol);
		}
		if (s->life_a >= 0 || s->life_b >= 0 || s->pre_eol >= 0) {
			diskstats_segment(e->d_name, s->segment);
			h->emmc_count++;
		}
	}
	closedir(dir);
}

static const struct net_state *
net_find(const struct net_state *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i].name, name) == 0) {
			return &list[i];
		}
	}
	return NULL;
}

/* true when SEG is the segment of an interface other than NAME in LIST */
static bool
net_segment_taken(const struct net_state *list, size_t n, const char *name, const char *seg)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i].segment, seg) == 0 && strcmp(list[i].name, name) != 0) {
			return true;
		}
	}
	return false;
}

/* operstate, carrier and carrier_changes of one interface (sysfs-class-net) */
static void
read_link(const struct host_source *h, struct net_state *s, struct metric_set *m)
{
	char state[64], buf[64];
	int carrier = -1; /* the kernel answers EINVAL while the interface is down */
	const char *dir = "%s/class/net/%s/%s";
	if (read_attr(&s->fd[L_CARRIER], buf, sizeof(buf), dir, h->sys, s->name, link_files[L_CARRIER])) {
		carrier = buf[0] == '1' ? 1 : buf[0] == '0' ? 0 : -1;
	}
	int up = read_attr(&s->fd[L_OPERSTATE], state, sizeof(state), dir, h->sys, s->name, link_files[L_OPERSTATE])
			 ? netdev_link_up(state, carrier)
			 : -1;
	if (up >= 0) {
		/* links never up since the start (a USB gadget without a host, an unused CAN bus) are not lost */
		s->was_up = s->was_up || up == 1;
		metric_set_put3(m, up, "network.", s->segment, ".up");
		metric_set_put3(m, up == 0 && s->was_up, "network.", s->segment, ".link_lost");
	}
	const char *p = buf;
	uint64_t changes;
	if (read_attr(&s->fd[L_CARRIER_CHANGES], buf, sizeof(buf), dir, h->sys, s->name,
		      link_files[L_CARRIER_CHANGES]) &&
	    host_read_counter(&p, &changes) && host_at_end(p)) {
		metric_set_put3(m, (double)changes, "network.", s->segment, ".carrier_changes_total");
	}
}

static void
put_netdev(const struct net_state *s, const struct netdev_stat *d, struct metric_set *m)
{
	metric_set_put3(m, (double)d->rx_bytes, "network.", s->segment, ".receive_bytes_total");
	metric_set_put3(m, (double)d->tx_bytes, "network.", s->segment, ".transmit_bytes_total");
	metric_set_put3(m, (double)d->rx_packets, "network.", s->segment, ".receive_packets_total");
	metric_set_put3(m, (double)d->tx_packets, "network.", s->segment, ".transmit_packets_total");
	metric_set_put3(m, (double)d->rx_errors, "network.", s->segment, ".receive_errors_total");
	metric_set_put3(m, (double)d->tx_errors, "network.", s->segment, ".transmit_errors_total");
	metric_set_put3(m, (double)d->rx_drop, "network.", s->segment, ".receive_drop_total");
	metric_set_put3(m, (double)d->tx_drop, "network.", s->segment, ".transmit_drop_total");
}

/* the signal level of the watched interfaces /proc/net/wireless names */
static void
read_wireless(struct host_source *h, struct metric_set *m)
{
	if (!read_kept(h, F_WIRELESS)) {
		return;
	}
	for (const char *line = h->text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char name[NETDEV_NAME_MAX];
		int dbm;
		const struct net_state *s;
		if (netdev_parse_wireless(line, len, name, &dbm) == 0 && (s = net_find(h->net, h->net_count, name))) {
			metric_set_put3(m, dbm, "network.", s->segment, ".wifi_signal_dbm");
		}
		line = nl ? nl + 1 : line + len;
	}
}

/* /proc/net/dev every sample: interfaces come and go (USB gadgets, Wi-Fi dongles, VPNs) */
static void
read_network(struct host_source *h, struct metric_set *m)
{
	if (!read_kept(h, F_NETDEV)) {
		return;
	}
	struct net_state now[NET_MAX];
	struct netdev_stat stats[NET_MAX];
	size_t n = 0;
	for (const char *line = h->text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		struct netdev_stat d;
		if (netdev_parse_line(line, len, &d) == 0 && netdev_selected(d.name, &h->net_filter)) {
			if (n == NET_MAX) {
				if (!h->net_full_said) {
					log_warn(
						"host: more than %d network interfaces to watch: %s and later ones left "
						"out (host.network.include or exclude chooses)",
						NET_MAX, d.name);
					h->net_full_said = true;
				}
				break;
			}
			struct net_state *s = &now[n];
			memcpy(s->name, d.name, sizeof(s->name));
			const struct net_state *old = net_find(h->net, h->net_count, d.name);
			s->was_up = old && old->was_up; /* one that went and came back starts again */
			if (old) {
				memcpy(s->segment, old->segment, sizeof(s->segment));
				memcpy(s->fd, old->fd, sizeof(s->fd));
			} else {
				for (size_t f = 0; f < L_COUNT; f++) {
					s->fd[f] = -1;
				}
				netdev_segment(d.name, false, s->segment);
				if (net_segment_taken(now, n, d.name, s->segment) ||
				    net_segment_taken(h->net, h->net_count, d.name, s->segment)) {
					netdev_segment(d.name, true, s->segment);
				}
				static const char *const names[] = {"device"};
				const char *values[] = {d.name};
				metric_attrs_set("device", s->segment, 1, names, values);
			}
			stats[n++] = d;
		}
		line = nl ? nl + 1 : line + len;
	}
	for (size_t i = 0; i < h->net_count; i++) {
		if (!net_find(now, n, h->net[i].name)) {
			metric_attrs_forget("device", h->net[i].segment); /* gone */
			close_fds(h->net[i].fd, L_COUNT);
		}
	}
	memcpy(h->net, now, n * sizeof(now[0]));
	h->net_count = n;
	for (size_t i = 0; i < n; i++) {
		put_netdev(&h->net[i], &stats[i], m);
		read_link(h, &h->net[i], m);
	}
	read_wireless(h, m);
}

/*
 * The OOM killer's victims since the last sample, from /dev/kmsg: one
 * record a read(), non-blocking, so a quiet log costs one EAGAIN.
 */
static void
read_oom_victims(struct host_source *h, struct oom_victims *v)
{
	for (int i = 0; h->kmsg_fd >= 0 && i < KMSG_READS_MAX; i++) {
		ssize_t n = read(h->kmsg_fd, h->text, sizeof(h->text));
		if (n < 0 && (errno == EPIPE || errno == EINTR)) {
			continue; /* EPIPE: records overwritten before they were read; the next read goes on after them */
		}
		if (n <= 0) {
			return; /* EAGAIN: read to the end */
		}
		struct oom_victim victim;
		if (oom_log_parse_record(h->text, (size_t)n, &victim) == 0) {
			if (v->count < OOM_VICTIMS_MAX) {
				v->list[v->count++] = victim;
			} else {
				v->more++;
			}
		}
	}
}

static int
host_read(struct source *src, struct sample *sample)
{
	struct host_source *h = (struct host_source *)src;
	struct metric_set *m = &sample->metrics;
	read_memory(h, m);
	read_system(h, m);
	if (h->disks_on) {
		read_disks(h, m);
	}
	if (h->net_on) {
		read_network(h, m);
	}
	int64_t now = monotonic_ms();
	if (now >= h->next_scan_ms) {
		if (h->fs_on) {
			host_fs_scan(h, now);
		}
		if (h->disks_on) {
			scan_emmc(h);
		}
		h->next_scan_ms = now + h->fs_interval_ms;
	}
	host_fs_put(h, m);
	/* last: the kill line follows the oom_kill count read above by a few microseconds */
	read_oom_victims(h, &sample->oom_killed);
	return 0;
}

static void
host_destroy(struct source *src)
{
	struct host_source *h = (struct host_source *)src;
	close_fds(h->fd, F_COUNT);
	close_fds(h->zram_fd, h->zram_count);
	if (h->kmsg_fd >= 0) {
		close(h->kmsg_fd);
	}
	for (size_t i = 0; i < h->fs_count; i++) {
		metric_attrs_forget("mountpoint", h->fs[i].segment);
	}
	for (size_t i = 0; i < h->net_count; i++) {
		metric_attrs_forget("device", h->net[i].segment);
		close_fds(h->net[i].fd, L_COUNT);
	}
	free_list(h->include);
	free_list(h->exclude);
	free_list(h->net_include);
	free_list(h->net_exclude);
	free(h);
}

static const struct source_ops host_ops = {
	.name = "host",
	.read = host_read,
	.destroy = host_destroy,
};

/* zramN devices under SYS/block */
static void
find_zram(struct host_source *h)
{
	char path[HOST_PATH_MAX];
	snprintf(path, sizeof(path), "%s/block", h->sys);
	DIR *dir = opendir(path);
	if (!dir) {
		return;
	}
	for (struct dirent *e; (e = readdir(dir)) && h->zram_count < ZRAM_MAX;) {
		int n, end = 0;
		if (sscanf(e->d_name, "zram%d%n", &n, &end) == 1 && e->d_name[end] == '\0' && n >= 0) {
			h->zram_fd[h->zram_count] = -1;
			h->zram[h->zram_count++] = n;
		}
	}
	closedir(dir);
}

/* the kernel log, read from its end on: root, or CAP_SYSLOG where kernel.dmesg_restrict is 1 */
static void
open_kmsg(struct host_source *h, const char *path)
{
	h->kmsg_fd = path[0] ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	if (h->kmsg_fd < 0) {
		if (path[0]) {
			log_info("host: the kernel log (%s) is not readable (%s): the oom-kill alert will not name the "
				 "process the OOM killer killed",
				 path, strerror(errno));
		}
		return;
	}
	if (lseek(h->kmsg_fd, 0, SEEK_END) < 0) {
		close(h->kmsg_fd); /* a kernel before 3.5, or no kmsg: its whole history would be read as new */
		h->kmsg_fd = -1;
	}
}

int
host_source_create(const struct host_source_options *o, struct source **out)
{
	struct host_source *h = xcalloc(1, sizeof(*h));
	h->base.ops = &host_ops;
	snprintf(h->proc, sizeof(h->proc), "%s", o->proc ? o->proc : "/proc");
	snprintf(h->sys, sizeof(h->sys), "%s", o->sys ? o->sys : "/sys");
	for (size_t f = 0; f < F_COUNT; f++) {
		h->fd[f] = -1;
	}
	const struct host_config *cfg = o->cfg;
	h->fs_on = !cfg->fs.off;
	h->disks_on = cfg->disks != 0;
	h->fs_interval_ms = host_config_fs_interval_ms(cfg);
	h->fs_trend_ms = host_config_fs_trend_ms(cfg);
	h->include = copy_list(cfg->fs.include, cfg->fs.include_count);
	h->exclude = copy_list(cfg->fs.exclude, cfg->fs.exclude_count);
	h->filter.include = (const char *const *)h->include;
	h->filter.include_count = cfg->fs.include_count;
	h->filter.exclude = (const char *const *)h->exclude;
	h->filter.exclude_count = cfg->fs.exclude_count;
	h->gone[F_DISKSTATS] = !h->disks_on;
	h->net_on = !cfg->net.off;
	h->net_include = copy_list(cfg->net.include, cfg->net.include_count);
	h->net_exclude = copy_list(cfg->net.exclude, cfg->net.exclude_count);
	h->net_filter.include = (const char *const *)h->net_include;
	h->net_filter.include_count = cfg->net.include_count;
	h->net_filter.exclude = (const char *const *)h->net_exclude;
	h->net_filter.exclude_count = cfg->net.exclude_count;
	h->gone[F_NETDEV] = h->gone[F_WIRELESS] = !h->net_on;
	find_zram(h);
	open_kmsg(h, o->kmsg ? o->kmsg : "/dev/kmsg");
	h->next_scan_ms = 0;
	*out = &h->base;
	return 0;
}
