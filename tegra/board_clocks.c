/*
 * Clock side of the sysfs board source: the GPU through devfreq, the CPU
 * cores through cpufreq (clocks, limits, online state, loads from
 * /proc/stat) and the EMC clock where debugfs shows it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "board_priv.h"
#include "core/log.h"

#define STAT_MAX (256u * 1024)
/* measured below this share of the request: the measurement is the clock */
#define MEASURED_GAP 0.9

/* ---- GPU ------------------------------------------------------------------- */

static bool
gpu_node_name(const char *name)
{
	static const char *const known[] = {"gv11b", "gp10b", "ga10b", "gb10b", "gpu"};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(name, known[i]) == 0) {
			return true;
		}
	}
	return strstr(name, "gpu") != NULL;
}

/*
 * A GPU clock below this many units cannot be in Hz: the driver counts in
 * kHz (jtop reads Thor's gpu-gpc-0 as kHz; unconfirmed on a capture).
 */
#define GPU_HZ_MIN 10000000

/* Accepts the devfreq device in DIR (class entry NAME), with its parent device at DEV. */
static bool
use_gpu(struct board *b, const char *dir, const char *dev, const char *name, bool known)
{
	struct gpu *g = &b->gpu;
	char cur[BOARD_PATH_LEN];
	if (!board_path(cur, sizeof(cur), "%s/cur_freq", dir) || !sysfs_exists(b->fs, cur) ||
	    !board_path(g->max_path, sizeof(g->max_path), "%s/max_freq", dir) ||
	    !board_path(g->min_path, sizeof(g->min_path), "%s/min_freq", dir) ||
	    !board_path(g->avail_path, sizeof(g->avail_path), "%s/available_frequencies", dir)) {
		return false;
	}
	memcpy(g->cur_path, cur, sizeof(cur));
	const char *const loads[] = {NULL, "/sys/devices/gpu.0/load", "/sys/devices/platform/gpu.0/load"};
	g->load_path[0] = '\0';
	for (size_t i = 0; i < sizeof(loads) / sizeof(loads[0]) && !g->load_path[0]; i++) {
		char path[BOARD_PATH_LEN];
		if (!loads[i]) {
			if (!dev || !board_path(path, sizeof(path), "%s/load", dev)) {
				continue;
			}
		} else {
			board_path(path, sizeof(path), "%s", loads[i]);
		}
		if (sysfs_exists(b->fs, path)) {
			memcpy(g->load_path, path, sizeof(path));
		}
	}
	int64_t max = 0;
	g->mhz_per_unit = 1e-6;
	if (sysfs_read_i64(b->fs, g->max_path, &max) == 0 && max > 0 && max < GPU_HZ_MIN) {
		g->mhz_per_unit = 1e-3;
	}
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->known_name = known;
	g->found = true;
	return true;
}

/*
 * The names each generation gives its GPU's devfreq entry, newest first:
 * Thor's gpu-gpc-0 (its codecs are gpu-nvd-0), Orin's 17000000.gpu
 * (JetPack 6) and 17000000.ga10b (JetPack 5), Xavier's gv11b, TX2's gp10b,
 * Nano's 57000000.gpu. Any other entry is taken by its name or of_node
 * only when none of these is there, so the directory order never chooses.
 */
static const char *const gpu_known_entries[] = {
	"gpu-gpc-0", "17000000.gpu", "17000000.ga10b", "17000000.gv11b", "17000000.gp10b", "57000000.gpu",
};

/* Tries the class entry NAME: by a known name when KNOWN, else by its name or of_node. */
static void
try_devfreq_entry(struct board *b, const char *entry, bool known)
{
	char dir[BOARD_PATH_LEN];
	char dev[BOARD_PATH_LEN];
	char path[BOARD_PATH_LEN];
	char node[BOARD_NAME_LEN];
	const char *dot = strrchr(entry, '.');
	bool gpu = known || gpu_node_name(entry) || (dot && gpu_node_name(dot + 1));
	if (!board_path(dir, sizeof(dir), "/sys/class/devfreq/%s", entry) ||
	    !board_path(dev, sizeof(dev), "%s/device", dir) || !sysfs_exists(b->fs, dir)) {
		return;
	}
	board_resolve(b, dir, sizeof(dir));
	board_resolve(b, dev, sizeof(dev));
	if (!gpu && board_path(path, sizeof(path), "%s/of_node/name", dev) &&
	    sysfs_read_str(b->fs, path, node, sizeof(node)) > 0) {
		gpu = gpu_node_name(node);
	}
	if (gpu) {
		use_gpu(b, dir, dev, entry, known);
	}
}

static void
probe_gpu(struct board *b)
{
	for (size_t i = 0; i < sizeof(gpu_known_entries) / sizeof(gpu_known_entries[0]) && !b->gpu.found; i++) {
		try_devfreq_entry(b, gpu_known_entries[i], true);
	}
	struct board_names *l = board_list_names(b, "/sys/class/devfreq");
	for (unsigned i = 0; i < l->count && !b->gpu.found; i++) {
		try_devfreq_entry(b, l->name[i], false);
	}
	free(l);
	/* devfreq class missing or unusual: the directories seen per generation */
	static const char *const known[][3] = {
		{"/sys/devices/57000000.gpu/devfreq/57000000.gpu", "/sys/devices/57000000.gpu", "57000000.gpu"},
		{"/sys/devices/17000000.gp10b/devfreq/17000000.gp10b", "/sys/devices/17000000.gp10b", "17000000.gp10b"},
		{"/sys/devices/17000000.gv11b/devfreq/17000000.gv11b", "/sys/devices/17000000.gv11b", "17000000.gv11b"},
		{"/sys/devices/17000000.ga10b/devfreq/17000000.ga10b", "/sys/devices/17000000.ga10b", "17000000.ga10b"},
		{"/sys/devices/platform/17000000.gpu/devfreq_dev", "/sys/devices/platform/17000000.gpu",
		 "17000000.gpu"},
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && !b->gpu.found; i++) {
		use_gpu(b, known[i][0], known[i][1], known[i][2], true);
	}
}

/* An NVIDIA display controller on PCI: a discrete card, or Thor's GPU (NVIDIA's unified driver). */
static int
visit_pci(const char *entry, void *data)
{
	struct board *b = data;
	char path[BOARD_PATH_LEN];
	char vendor[16], cls[16];
	if (board_path(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", entry) &&
	    sysfs_read_str(b->fs, path, vendor, sizeof(vendor)) > 0 && strcmp(vendor, "0x10de") == 0 &&
	    board_path(path, sizeof(path), "/sys/bus/pci/devices/%s/class", entry) &&
	    sysfs_read_str(b->fs, path, cls, sizeof(cls)) > 0 && strncmp(cls, "0x03", 4) == 0) {
		b->nvidia_pci++;
	}
	return 0;
}

/* Largest number in a space-separated list; false when there is none. */
static bool
largest_number(const char *text, double *out)
{
	bool any = false;
	double best = 0;
	const char *p = text;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\n') {
			p++;
		}
		if (*p < '0' || *p > '9') {
			break;
		}
		char *end;
		unsigned long long v = strtoull(p, &end, 10);
		if (!any || (double)v > best) {
			best = (double)v;
		}
		any = true;
		p = end;
	}
	if (any) {
		*out = best;
	}
	return any;
}

static void
refresh_gpu(struct board *b)
{
	struct gpu *g = &b->gpu;
	char buf[SYSFS_SMALL_MAX + 1];
	double hz;
	if (!g->found) {
		return;
	}
	int64_t v = 0;
	g->hw_max_ok = board_read_str(b, g->avail_path, buf, sizeof(buf)) && largest_number(buf, &hz);
	if (g->hw_max_ok) {
		g->hw_max_mhz = hz * g->mhz_per_unit;
	}
	g->min_ok = board_read_i64(b, g->min_path, &v);
	g->min_mhz = (double)v * g->mhz_per_unit;
}

void
board_sample_gpu(struct board *b, struct metric_set *set)
{
	const struct gpu *g = &b->gpu;
	int64_t v;
	if (!g->found) {
		return;
	}
	if (board_read_i64(b, g->cur_path, &v)) {
		metric_set_put(set, "gpu.freq_mhz", (double)v * g->mhz_per_unit);
	}
	if (board_read_i64(b, g->max_path, &v)) {
		metric_set_put(set, "gpu.max_freq_mhz", (double)v * g->mhz_per_unit);
	}
	if (g->min_ok) {
		metric_set_put(set, "gpu.min_freq_mhz", g->min_mhz);
	}
	if (g->hw_max_ok) {
		metric_set_put(set, "gpu.hw_max_freq_mhz", g->hw_max_mhz);
	}
	if (g->load_path[0] && board_read_i64(b, g->load_path, &v) && v >= 0 && v <= 1000) {
		metric_set_put(set, "gpu.load_pct", (double)v / 10.0);
	}
}

/* ---- CPU ------------------------------------------------------------------- */

/* True when the file at PATH (below the root) may be read by this process. */
static bool
readable(struct board *b, const char *path)
{
	char resolved[BOARD_PATH_LEN * 2];
	char full[BOARD_PATH_LEN * 4];
	if (sysfs_realpath(b->fs, path, resolved, sizeof(resolved)) < 0 ||
	    !board_path(full, sizeof(full), "%s%s", sysfs_root(b->fs), resolved)) {
		return false;
	}
	return access(full, R_OK) == 0;
}

static int
find_policy(struct board *b, unsigned cpu)
{
	char link[BOARD_PATH_LEN];
	char dir[BOARD_PATH_LEN];
	board_path(link, sizeof(link), "/sys/devices/system/cpu/cpu%u/cpufreq", cpu);
	if (sysfs_realpath(b->fs, link, dir, sizeof(dir)) < 0 || !sysfs_exists(b->fs, dir)) {
		return -1;
	}
	for (unsigned i = 0; i < b->policy_count; i++) {
		if (strcmp(b->policies[i].dir, dir) == 0) {
			return (int)i;
		}
	}
	if (b->policy_count == PROCFS_CPU_MAX) {
		return -1;
	}
	struct policy *p = &b->policies[b->policy_count];
	memset(p, 0, sizeof(*p));
	memcpy(p->dir, dir, sizeof(dir));
	if (!board_path(p->cur_path, sizeof(p->cur_path), "%s/scaling_cur_freq", dir) ||
	    !board_path(p->max_path, sizeof(p->max_path), "%s/scaling_max_freq", dir) ||
	    !board_path(p->min_path, sizeof(p->min_path), "%s/scaling_min_freq", dir) ||
	    !board_path(p->hw_max_path, sizeof(p->hw_max_path), "%s/cpuinfo_max_freq", dir) ||
	    !board_path(p->hw_cur_path, sizeof(p->hw_cur_path), "%s/cpuinfo_cur_freq", dir)) {
		return -1;
	}
	/*
	 * cpuinfo_cur_freq is the measured clock (scaling_cur_freq can show the
	 * request while hardware throttles, seen on Thor) but is root-only.
	 */
	if (!readable(b, p->hw_cur_path)) {
		if (sysfs_exists(b->fs, p->hw_cur_path)) {
			b->denied |= BOARD_DENIED_CPU_MEASURED;
		}
		p->hw_cur_path[0] = '\0';
	}
	return (int)b->policy_count++;
}

static int
collect_cpu(const char *name, void *data)
{
	uint64_t *mask = data;
	unsigned n;
	if (board_numbered(name, "cpu", &n) && n < PROCFS_CPU_MAX) {
		*mask |= UINT64_C(1) << n;
	}
	return 0;
}

static void
probe_cpus(struct board *b)
{
	char buf[256];
	uint64_t mask = 0;
	if (sysfs_read_str(b->fs, "/sys/devices/system/cpu/present", buf, sizeof(buf)) <= 0 ||
	    procfs_parse_cpulist(buf, &mask) < 0) {
		mask = 0;
	}
	if (mask == 0) {
		sysfs_list_dir(b->fs, "/sys/devices/system/cpu", collect_cpu, &mask);
	}
	for (unsigned n = 0; n < PROCFS_CPU_MAX; n++) {
		if (!(mask & (UINT64_C(1) << n))) {
			continue;
		}
		struct core *c = &b->cores[b->core_count++];
		c->n = n;
		board_path(c->prefix, sizeof(c->prefix), "cpu.%u", n);
		board_path(c->online_path, sizeof(c->online_path), "/sys/devices/system/cpu/cpu%u/online", n);
		c->has_online_file = sysfs_exists(b->fs, c->online_path);
		c->policy = find_policy(b, n);
	}
}

/* Reads one clock of a policy (kHz) as MHz. */
static bool
read_khz(struct board *b, const char *path, double *mhz)
{
	int64_t khz;
	if (!path[0] || !board_read_i64(b, path, &khz)) {
		return false;
	}
	*mhz = (double)khz / 1000.0;
	return true;
}

static void
refresh_cpus(struct board *b)
{
	for (unsigned i = 0; i < b->policy_count; i++) {
		struct policy *p = &b->policies[i];
		int64_t khz = 0;
		p->hw_max_ok = board_read_i64(b, p->hw_max_path, &khz);
		p->hw_max_mhz = (double)khz / 1000.0;
		/* the floor only moves with jetson_clocks or a mode change */
		p->min_ok = board_read_i64(b, p->min_path, &khz);
		p->min_mhz = (double)khz / 1000.0;
		p->hw_cur_ok = p->hw_cur_path[0] && read_khz(b, p->hw_cur_path, &p->hw_cur_mhz);
		/* the request of the same moment: a stale measurement is never set against a new request */
		double req;
		p->gap = p->hw_cur_ok && read_khz(b, p->cur_path, &req) && p->hw_cur_mhz < req * MEASURED_GAP;
	}
}

static void
sample_cpu_load(struct board *b, struct metric_set *set, const bool *online)
{
	char *text = NULL;
	struct proc_stat cur;
	int n = sysfs_read_file(b->fs, "/proc/stat", STAT_MAX, &text);
	board_note_result(b, n);
	if (n < 0) {
		return;
	}
	int err = procfs_parse_stat(text, &cur);
	free(text);
	if (err < 0) {
		b->parse_errors++;
		return;
	}
	double sum = 0;
	unsigned count = 0;
	for (unsigned i = 0; b->prev_stat_ok && i < b->core_count; i++) {
		const struct core *c = &b->cores[i];
		double pct;
		if (online[i] && procfs_cpu_load(&b->prev_stat.cpu[c->n], &cur.cpu[c->n], &pct)) {
			board_put(set, pct, c->prefix, ".load_pct", NULL);
			sum += pct;
			count++;
		}
	}
	if (count > 0) {
		metric_set_put(set, "cpu.load_pct", sum / count);
	}
	b->prev_stat = cur;
	b->prev_stat_ok = true;
}

/*
 * Online state of each core: one read of the system-wide list instead of
 * one file per core; per-core files only when that list cannot be read.
 * ONLINE[i] is false only for a core known to be off; KNOWN[i] says
 * whether to emit cpu.N.online.
 */
static void
read_online(struct board *b, bool *online, bool *known)
{
	char buf[256];
	uint64_t mask;
	if (b->core_count == 0) {
		return;
	}
	if (board_read_str(b, "/sys/devices/system/cpu/online", buf, sizeof(buf)) &&
	    procfs_parse_cpulist(buf, &mask) == 0) {
		for (unsigned i = 0; i < b->core_count; i++) {
			online[i] = (mask >> b->cores[i].n) & 1;
			known[i] = true;
		}
		return;
	}
	for (unsigned i = 0; i < b->core_count; i++) {
		const struct core *c = &b->cores[i];
		int64_t v = 1; /* no online file (cpu0): always on */
		online[i] = true;
		known[i] = !c->has_online_file || board_read_i64(b, c->online_path, &v);
		if (known[i]) {
			online[i] = v != 0;
		}
	}
}

void
board_sample_cpu(struct board *b, struct metric_set *set)
{
	bool online[PROCFS_CPU_MAX];
	bool known[PROCFS_CPU_MAX];
	read_online(b, online, known);
	for (unsigned i = 0; i < b->policy_count; i++) {
		b->policies[i].wanted = false;
	}
	for (unsigned i = 0; i < b->core_count; i++) {
		const struct core *c = &b->cores[i];
		if (known[i]) {
			board_put(set, online[i] ? 1 : 0, c->prefix, ".online", NULL);
		}
		if (online[i] && c->policy >= 0) {
			b->policies[c->policy].wanted = true;
		}
	}
	for (unsigned i = 0; i < b->policy_count; i++) {
		struct policy *p = &b->policies[i];
		if (!p->wanted) {
			continue;
		}
		p->cur_ok = read_khz(b, p->cur_path, &p->cur_mhz);
		/*
		 * A measured clock well below the requested one is the truth (a
		 * latched throttle); the request goes out next to it, so the
		 * throttle stage can tell.
		 */
		p->req_ok = false;
		if (p->hw_cur_ok && p->gap && p->cur_ok) {
			p->req_mhz = p->cur_mhz;
			p->req_ok = true;
			p->cur_mhz = p->hw_cur_mhz;
		} else if (p->hw_cur_ok && !p->cur_ok) {
			p->cur_mhz = p->hw_cur_mhz;
			p->cur_ok = true;
		}
		p->max_ok = read_khz(b, p->max_path, &p->max_mhz);
	}
	for (unsigned i = 0; i < b->core_count; i++) {
		const struct core *c = &b->cores[i];
		if (!online[i] || c->policy < 0) {
			continue;
		}
		const struct policy *p = &b->policies[c->policy];
		if (p->cur_ok) {
			board_put(set, p->cur_mhz, c->prefix, ".freq_mhz", NULL);
		}
		if (p->req_ok) {
			board_put(set, p->req_mhz, c->prefix, ".requested_freq_mhz", NULL);
		}
		if (p->max_ok) {
			board_put(set, p->max_mhz, c->prefix, ".max_freq_mhz", NULL);
		}
		if (p->min_ok) {
			board_put(set, p->min_mhz, c->prefix, ".min_freq_mhz", NULL);
		}
		if (p->hw_max_ok) {
			board_put(set, p->hw_max_mhz, c->prefix, ".hw_max_freq_mhz", NULL);
		}
	}
	sample_cpu_load(b, set, online);
}

/* ---- EMC ------------------------------------------------------------------- */

static void
probe_emc(struct board *b)
{
	/* debugfs needs root; without it none of these exist for us */
	static const char *const paths[] = {
		"/sys/kernel/debug/bpmp/debug/clk/emc/rate",   /* tegra186/194/234 */
		"/sys/kernel/debug/clk/override.emc/clk_rate", /* tegra210 */
		"/sys/class/devfreq/bwmgr/cur_freq",           /* Thor */
	};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (sysfs_exists(b->fs, paths[i])) {
			board_path(b->emc_path, sizeof(b->emc_path), "%s", paths[i]);
			return;
		}
	}
	/* debugfs is there but closed to us (mode 0700 root): the EMC clock is, too */
	if (sysfs_exists(b->fs, "/sys/kernel/debug") && !readable(b, "/sys/kernel/debug")) {
		b->denied |= BOARD_DENIED_EMC;
	}
}

void
board_sample_emc(struct board *b, struct metric_set *set)
{
	int64_t hz;
	if (b->emc_path[0] && board_read_i64(b, b->emc_path, &hz)) {
		metric_set_put(set, "emc.freq_mhz", (double)hz / 1e6);
	}
}

/* ---- the three together ----------------------------------------------------- */

void
board_probe_clocks(struct board *b)
{
	probe_gpu(b);
	sysfs_list_dir(b->fs, "/sys/bus/pci/devices", visit_pci, b);
	probe_cpus(b);
	probe_emc(b);
}

/*
 * On JetPack 7.2 an Orin's GPU devfreq node can appear after an early-boot
 * service started (jetson_stats PR #889): a Jetson whose GPU was not found
 * looks again with each slow refresh. Elsewhere no GPU is no news.
 */
static void
reprobe_gpu(struct board *b)
{
	if (b->gpu.found || !b->slow_done || (strncmp(b->id.soc, "tegra", 5) != 0 && !b->id.l4t[0])) {
		return;
	}
	probe_gpu(b);
	if (b->gpu.found) {
		log_info("GPU clock found late: devfreq %s", b->gpu.name);
	}
}

void
board_refresh_clocks(struct board *b)
{
	reprobe_gpu(b);
	refresh_gpu(b);
	refresh_cpus(b);
}
