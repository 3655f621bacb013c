/*
 * The board read through sysfs/procfs below a root. board_open() finds
 * what this board has by walking the standard places (thermal class,
 * devfreq class, cpufreq policies, hwmon class, the JetPack 4 iio
 * driver), never by looking the model up in a table, and keeps every path
 * a sample needs. board_sample() then only reads those files.
 *
 * Values that rarely change (trip points, limits, the nvpmodel status) are
 * re-read every BOARD_SLOW_MS instead of on each sample.
 *
 * This file holds the shared helpers, memory and the public API; each
 * subsystem has its own file: board_thermal.c, board_clocks.c (GPU, CPU,
 * EMC), board_power.c (rails, OC counters, fans) and board_identity.c
 * (identity, nvpmodel).
 */
#include "board.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/xalloc.h"
#include "board_priv.h"

#define MEMINFO_MAX (64u * 1024)

/* ---- helpers ------------------------------------------------------------- */

static int64_t
default_clock(void *data)
{
	(void)data;
	return monotonic_ms();
}

bool
board_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		buf[0] = '\0';
		return false;
	}
	return true;
}

void
board_put(struct metric_set *set, double value, const char *a, const char *b, const char *c)
{
	metric_set_put3(set, value, a, b, c ? c : "");
}

bool
board_segment(const char *text, char *buf, size_t size)
{
	size_t len = strlen(text);
	bool usable = false;
	if (len == 0 || len >= size) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
		}
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
			usable = true;
		} else {
			c = '_';
		}
		buf[i] = c;
	}
	buf[len] = '\0';
	return usable;
}

bool
board_read_i64(struct board *b, const char *path, int64_t *out)
{
	int err = sysfs_read_i64(b->fs, path, out);
	board_note_result(b, err);
	return err == 0;
}

bool
board_read_str(struct board *b, const char *path, char *buf, size_t size)
{
	int err = sysfs_read_str(b->fs, path, buf, size);
	board_note_result(b, err);
	return err > 0;
}

void
board_resolve(struct board *b, char *path, size_t size)
{
	char real[BOARD_PATH_LEN];
	if (sysfs_realpath(b->fs, path, real, sizeof(real)) == 0 && strlen(real) < size) {
		memcpy(path, real, strlen(real) + 1);
	}
}

bool
board_numbered(const char *name, const char *prefix, unsigned *n)
{
	size_t pl = strlen(prefix);
	if (strncmp(name, prefix, pl) != 0 || name[pl] == '\0') {
		return false;
	}
	unsigned v = 0;
	for (const char *p = name + pl; *p; p++) {
		if (*p < '0' || *p > '9' || v > 100000) {
			return false;
		}
		v = v * 10 + (unsigned)(*p - '0');
	}
	*n = v;
	return true;
}

static int
collect_name(const char *name, void *data)
{
	struct board_names *l = data;
	if (l->count < BOARD_NAMES_MAX && strlen(name) < BOARD_NAME_LEN) {
		memcpy(l->name[l->count++], name, strlen(name) + 1);
	}
	return 0;
}

struct board_names *
board_list_names(struct board *b, const char *dir)
{
	struct board_names *l = xcalloc(1, sizeof(*l));
	sysfs_list_dir(b->fs, dir, collect_name, l);
	return l;
}

/* ---- memory ----------------------------------------------------------------- */

static void
sample_memory(struct board *b, struct metric_set *set)
{
	char *text = NULL;
	struct meminfo mi;
	int n = sysfs_read_file(b->fs, "/proc/meminfo", MEMINFO_MAX, &text);
	board_note_result(b, n);
	if (n < 0) {
		return;
	}
	int err = procfs_parse_meminfo(text, &mi);
	free(text);
	if (err < 0) {
		b->parse_errors++;
		return;
	}
	int64_t avail = mi.mem_available_kb;
	if (avail < 0 && mi.mem_free_kb >= 0) {
		/* kernels before 3.14 have no MemAvailable */
		avail = mi.mem_free_kb + (mi.buffers_kb > 0 ? mi.buffers_kb : 0) +
			(mi.cached_kb > 0 ? mi.cached_kb : 0);
	}
	metric_set_put(set, "ram.total_mb", (double)mi.mem_total_kb / 1024.0);
	if (avail >= 0) {
		metric_set_put(set, "ram.used_mb", (double)(mi.mem_total_kb - avail) / 1024.0);
	}
	if (mi.swap_total_kb >= 0) {
		metric_set_put(set, "swap.total_mb", (double)mi.swap_total_kb / 1024.0);
		if (mi.swap_free_kb >= 0) {
			metric_set_put(set, "swap.used_mb", (double)(mi.swap_total_kb - mi.swap_free_kb) / 1024.0);
		}
	}
	if (mi.swap_cached_kb >= 0) {
		metric_set_put(set, "swap.cached_mb", (double)mi.swap_cached_kb / 1024.0);
	}
	if (!b->memory_shares) {
		return;
	}
	/* the kernel's own estimate only: no fallback from MemFree here */
	if (mi.mem_available_kb >= 0 && mi.mem_available_kb <= mi.mem_total_kb && mi.mem_total_kb > 0) {
		metric_set_put(set, "ram.available_mb", (double)mi.mem_available_kb / 1024.0);
		metric_set_put(set, "ram.used_pct",
			       100.0 * (double)(mi.mem_total_kb - mi.mem_available_kb) / (double)mi.mem_total_kb);
	}
	if (mi.swap_total_kb > 0 && mi.swap_free_kb >= 0 && mi.swap_free_kb <= mi.swap_total_kb) {
		metric_set_put(set, "swap.used_pct",
			       100.0 * (double)(mi.swap_total_kb - mi.swap_free_kb) / (double)mi.swap_total_kb);
	}
}

void
board_set_memory_shares(struct board *b, bool on)
{
	b->memory_shares = on;
}

/* ---- public API ------------------------------------------------------------- */

int
board_open(const char *root, struct board **out)
{
	if (!root || !out) {
		return -EINVAL;
	}
	struct board *b = xcalloc(1, sizeof(*b));
	int err = sysfs_create(root, &b->fs);
	if (err < 0) {
		free(b);
		return err;
	}
	b->now_ms = default_clock;
	board_probe_identity(b);
	board_probe_thermal(b);
	board_probe_clocks(b);
	board_probe_power(b);
	board_probe_nvpmodel(b);
	*out = b;
	return 0;
}

void
board_destroy(struct board *b)
{
	if (!b) {
		return;
	}
	sysfs_destroy(b->fs);
	free(b->zones);
	free(b->cdevs);
	free(b);
}

void
board_set_clock(struct board *b, int64_t (*now_ms)(void *data), void *data)
{
	b->now_ms = now_ms ? now_ms : default_clock;
	b->clock_data = now_ms ? data : NULL;
	sysfs_set_clock(b->fs, now_ms, data);
}

size_t
board_unreadable(const struct board *b, char *buf, size_t size)
{
	static const struct {
		unsigned bit;
		const char *what;
	} denied[] = {
		{BOARD_DENIED_EMC, "the EMC clock (emc.freq_mhz: debugfs is root only)"},
		{BOARD_DENIED_CPU_MEASURED, "the measured CPU clocks (cpuinfo_cur_freq is root only; "
					    "cpu.N.freq_mhz is the requested clock)"},
	};
	size_t n = 0, at = 0;
	if (size) {
		buf[0] = '\0';
	}
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		if (!(b->denied & denied[i].bit)) {
			continue;
		}
		int w = snprintf(buf + at, size > at ? size - at : 0, "%s%s", n ? "; " : "", denied[i].what);
		if (w > 0 && at + (size_t)w < size) {
			at += (size_t)w;
		}
		n++;
	}
	return n;
}

const struct nvpmodel_conf *
board_power_modes(const struct board *b)
{
	return b->conf_ok ? &b->conf : NULL;
}

const struct board_identity *
board_identity(const struct board *b)
{
	return &b->id;
}

bool
board_is_jetson(const struct board *b)
{
	return strncmp(b->id.soc, "tegra", 5) == 0 || b->id.l4t[0] != '\0' || b->gpu.found || b->jetson_hint;
}

static void
refresh_slow(struct board *b)
{
	board_refresh_thermal(b);
	board_refresh_clocks(b);
	board_refresh_power(b);
	board_refresh_nvpmodel(b);
}

int
board_sample(struct board *b, struct sample *s)
{
	struct metric_set *set = &s->metrics;
	int64_t now = b->now_ms(b->clock_data);
	bool slow = !b->slow_done || now - b->slow_last_ms >= BOARD_SLOW_MS;
	b->reads_ok = 0;
	b->first_err = 0;
	sysfs_chain_begin(b->fs, now); /* one clock reading a file */
	if (slow) {
		refresh_slow(b);
		b->slow_done = true;
		b->slow_last_ms = now;
	}
	board_sample_thermal(b, set, slow);
	board_sample_gpu(b, set);
	board_sample_cpu(b, set);
	sample_memory(b, set);
	board_sample_emc(b, set);
	board_sample_power(b, set);
	board_sample_nvpmodel(b, s, slow);
	sysfs_chain_end(b->fs);
	if (b->reads_ok == 0) {
		return b->first_err ? b->first_err : -ENODATA;
	}
	return 0;
}

bool
board_gpu_clock(const struct board *b, char *buf, size_t size)
{
	if (!b->gpu.found) {
		return false;
	}
	snprintf(buf, size, "devfreq %s (%s%s)", b->gpu.name,
		 b->gpu.known_name ? "the name its generation gives it" : "a name or device-tree node with \"gpu\"",
		 b->gpu.mhz_per_unit > 1e-6 ? ", in kHz" : "");
	return true;
}

void
board_nvidia_gpus(const struct board *b, unsigned *pci, bool *igpu_without_load)
{
	*pci = b->nvidia_pci;
	*igpu_without_load = b->gpu.found && !b->gpu.load_path[0];
}

bool
board_has_metrics(const struct board *b)
{
	return b->zone_count || b->cdev_count || b->core_count || b->rail_count || b->fan_count || b->oc_count ||
	       b->gpu.found || sysfs_exists(b->fs, "/proc/meminfo");
}

uint64_t
board_read_errors(const struct board *b)
{
	return sysfs_error_count(b->fs) + b->parse_errors;
}
