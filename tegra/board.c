/*
 * The board read through sysfs/procfs below a root. board_open() finds
 * what this board has by walking the standard places (thermal class,
 * devfreq class, cpufreq policies, hwmon class, the JetPack 4 iio
 * driver), never by looking the model up in a table, and keeps every path
 * a sample needs. board_sample() then only reads those files.
 *
 * Values that rarely change (trip points, limits, the nvpmodel status) are
 * re-read every BOARD_SLOW_MS instead of on each sample.
 */
#include "board.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "board_priv.h"
#include "tegrastats.h"

#define STAT_MAX (256u * 1024)
#define MEMINFO_MAX (64u * 1024)
#define CONF_MAX (1024u * 1024)
#define RELEASE_MAX (64u * 1024)
#define COMPATIBLE_MAX 4096
#define TEMP_OFFLINE_MC (-256000)

static const char *const trip_suffix[TRIP_KIND_COUNT] = {
	[TRIP_PASSIVE] = ".passive_c",
	[TRIP_HOT] = ".hot_c",
	[TRIP_CRITICAL] = ".critical_c",
	[TRIP_ACTIVE] = ".active_c",
};

/* ---- helpers ------------------------------------------------------------- */

static int64_t
monotonic_ms(void *data)
{
	(void)data;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
	char name[METRIC_NAME_MAX];
	size_t la = strlen(a);
	size_t lb = strlen(b);
	size_t lc = c ? strlen(c) : 0;
	if (la + lb + lc >= sizeof(name)) {
		return;
	}
	memcpy(name, a, la);
	memcpy(name + la, b, lb);
	if (lc) {
		memcpy(name + la + lb, c, lc);
	}
	metric_set_put_n(set, name, la + lb + lc, value);
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

static void
note_result(struct board *b, int err)
{
	if (err >= 0) {
		b->reads_ok++;
	} else if (!b->first_err) {
		b->first_err = err;
	}
}

bool
board_read_i64(struct board *b, const char *path, int64_t *out)
{
	int err = sysfs_read_i64(b->fs, path, out);
	note_result(b, err);
	return err == 0;
}

bool
board_read_str(struct board *b, const char *path, char *buf, size_t size)
{
	int err = sysfs_read_str(b->fs, path, buf, size);
	note_result(b, err);
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

/* "thermal_zone12" with PREFIX "thermal_zone": true and *N = 12. */
static bool
numbered(const char *name, const char *prefix, unsigned *n)
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

/* Directory entries collected for probing (sysfs_list_dir sorts them). */
#define NAMES_MAX 256
#define NAME_LEN 64

struct names {
	unsigned count;
	char name[NAMES_MAX][NAME_LEN];
};

static int
collect_name(const char *name, void *data)
{
	struct names *l = data;
	if (l->count < NAMES_MAX && strlen(name) < NAME_LEN) {
		memcpy(l->name[l->count++], name, strlen(name) + 1);
	}
	return 0;
}

/* Entries of DIR into a new list (empty when DIR cannot be listed); NULL on OOM. */
static struct names *
list_names(struct board *b, const char *dir)
{
	struct names *l = calloc(1, sizeof(*l));
	if (l) {
		sysfs_list_dir(b->fs, dir, collect_name, l);
	}
	return l;
}

/* ---- thermal --------------------------------------------------------------- */

static bool
zone_prefix_used(const struct board *b, const char *prefix)
{
	for (unsigned i = 0; i < b->zone_count; i++) {
		if (strcmp(b->zones[i].prefix, prefix) == 0) {
			return true;
		}
	}
	return false;
}

static bool
is_tegra_zone_type(const char *type)
{
	size_t len = strlen(type);
	return (len > 6 && strcmp(type + len - 6, "-therm") == 0) ||
	       (len > 6 && strcmp(type + len - 6, "_tegra") == 0) ||
	       strcmp(type, "thermal-fan-est") == 0;
}

/* True when TYPE is a documented placeholder (PMIC), by full or first-part name. */
static bool
zone_is_placeholder(const char *type, const char *norm)
{
	char first[NAME_LEN];
	size_t n = strcspn(type, "-_");
	if (tegra_sensor_is_placeholder(norm)) {
		return true;
	}
	return n > 0 && tegra_sensor_name(type, n, first, sizeof(first)) > 0 &&
	       tegra_sensor_is_placeholder(first);
}

static void
probe_zone_trips(struct board *b, struct zone *z, const char *dir)
{
	for (unsigned k = 0; k < 64 && z->trip_count < BOARD_TRIPS_MAX; k++) {
		char path[BOARD_PATH_LEN];
		char type[32];
		if (!board_path(path, sizeof(path), "%s/trip_point_%u_type", dir, k)) {
			return;
		}
		int n = sysfs_read_str(b->fs, path, type, sizeof(type));
		if (n == -ENOENT) {
			return; /* trip points are numbered without gaps */
		}
		if (n <= 0) {
			continue;
		}
		enum trip_kind kind;
		if (strcmp(type, "passive") == 0) {
			kind = TRIP_PASSIVE;
		} else if (strcmp(type, "hot") == 0) {
			kind = TRIP_HOT;
		} else if (strcmp(type, "critical") == 0) {
			kind = TRIP_CRITICAL;
		} else if (strcmp(type, "active") == 0) {
			kind = TRIP_ACTIVE;
		} else {
			continue;
		}
		if (board_path(z->trip_path[z->trip_count], BOARD_PATH_LEN, "%s/trip_point_%u_temp",
			       dir, k)) {
			z->trip_kind[z->trip_count++] = kind;
		}
	}
}

static void
probe_zone(struct board *b, unsigned index)
{
	char dir[BOARD_PATH_LEN];
	char path[BOARD_PATH_LEN];
	char type[NAME_LEN];
	char norm[BOARD_PREFIX_LEN];
	board_path(dir, sizeof(dir), "/sys/class/thermal/thermal_zone%u", index);
	board_resolve(b, dir, sizeof(dir));
	if (!board_path(path, sizeof(path), "%s/type", dir) ||
	    sysfs_read_str(b->fs, path, type, sizeof(type)) <= 0) {
		return;
	}
	if (is_tegra_zone_type(type)) {
		b->jetson_hint = true;
	}
	size_t n = tegra_sensor_name(type, strlen(type), norm, sizeof(norm));
	if (n == 0 || zone_is_placeholder(type, norm) || b->zone_count == b->zone_cap) {
		return;
	}
	struct zone *z = &b->zones[b->zone_count];
	memset(z, 0, sizeof(*z));
	if (zone_prefix_used(b, norm)) {
		/* two zones give the same name: the later one gets its index */
		char dup[BOARD_PREFIX_LEN];
		if (!board_path(dup, sizeof(dup), "%s_%u", norm, index) || zone_prefix_used(b, dup)) {
			return;
		}
		memcpy(norm, dup, strlen(dup) + 1);
	}
	/* "temp." + name + "_c" must be a valid metric name */
	if (strlen(norm) + 7 >= METRIC_NAME_MAX ||
	    !board_path(z->temp_path, sizeof(z->temp_path), "%s/temp", dir)) {
		return;
	}
	memcpy(z->prefix, norm, strlen(norm) + 1);
	probe_zone_trips(b, z, dir);
	b->zone_count++;
}

static void
probe_cdev(struct board *b, unsigned index)
{
	char dir[BOARD_PATH_LEN];
	char path[BOARD_PATH_LEN];
	char type[NAME_LEN];
	char seg[BOARD_PREFIX_LEN];
	board_path(dir, sizeof(dir), "/sys/class/thermal/cooling_device%u", index);
	board_resolve(b, dir, sizeof(dir));
	if (b->cdev_count == b->cdev_cap || !board_path(path, sizeof(path), "%s/type", dir) ||
	    sysfs_read_str(b->fs, path, type, sizeof(type)) <= 0 ||
	    !board_segment(type, seg, sizeof(seg) - 8)) {
		return;
	}
	struct cdev *c = &b->cdevs[b->cdev_count];
	memset(c, 0, sizeof(*c));
	board_path(c->prefix, sizeof(c->prefix), "cooling.%s", seg);
	for (unsigned i = 0; i < b->cdev_count; i++) {
		if (strcmp(b->cdevs[i].prefix, c->prefix) == 0) {
			board_path(c->prefix, sizeof(c->prefix), "cooling.%s_%u", seg, index);
			break;
		}
	}
	if (c->prefix[0] && board_path(c->cur_path, sizeof(c->cur_path), "%s/cur_state", dir) &&
	    board_path(c->max_path, sizeof(c->max_path), "%s/max_state", dir)) {
		b->cdev_count++;
	}
}

static void
probe_thermal(struct board *b)
{
	struct names *l = list_names(b, "/sys/class/thermal");
	if (!l) {
		return;
	}
	/* size the arrays for what is there: each zone holds its trip paths */
	unsigned zones = 0, cdevs = 0, idx;
	for (unsigned i = 0; i < l->count; i++) {
		zones += numbered(l->name[i], "thermal_zone", &idx);
		cdevs += numbered(l->name[i], "cooling_device", &idx);
	}
	b->zone_cap = zones < BOARD_ZONES_MAX ? zones : BOARD_ZONES_MAX;
	b->cdev_cap = cdevs < BOARD_CDEVS_MAX ? cdevs : BOARD_CDEVS_MAX;
	b->zones = calloc(b->zone_cap + 1, sizeof(*b->zones));
	b->cdevs = calloc(b->cdev_cap + 1, sizeof(*b->cdevs));
	if (!b->zones || !b->cdevs) {
		b->zone_cap = b->cdev_cap = 0;
		free(l);
		return;
	}
	for (unsigned i = 0; i < l->count; i++) {
		unsigned n;
		if (numbered(l->name[i], "thermal_zone", &n)) {
			probe_zone(b, n);
		} else if (numbered(l->name[i], "cooling_device", &n)) {
			probe_cdev(b, n);
		}
	}
	free(l);
}

static void
refresh_trips(struct board *b)
{
	for (unsigned i = 0; i < b->zone_count; i++) {
		struct zone *z = &b->zones[i];
		memset(z->trip_ok, 0, sizeof(z->trip_ok));
		for (unsigned t = 0; t < z->trip_count; t++) {
			int64_t mc;
			enum trip_kind k = z->trip_kind[t];
			if (!board_read_i64(b, z->trip_path[t], &mc)) {
				continue;
			}
			double c = (double)mc / 1000.0;
			if (!z->trip_ok[k] || c < z->trip_c[k]) {
				z->trip_ok[k] = true;
				z->trip_c[k] = c;
			}
		}
	}
	for (unsigned i = 0; i < b->cdev_count; i++) {
		int64_t v = 0;
		struct cdev *c = &b->cdevs[i];
		c->max_ok = board_read_i64(b, c->max_path, &v);
		c->max_state = (double)v;
	}
}

/* SLOW: this sample also re-reads the slow group. */
static void
sample_thermal(struct board *b, struct metric_set *set, bool slow)
{
	for (unsigned i = 0; i < b->zone_count; i++) {
		struct zone *z = &b->zones[i];
		int64_t mc;
		/*
		 * A sensor reading the -256 sentinel (idle CV engines on Orin)
		 * stays off for seconds at least: look again with the slow group.
		 */
		if ((!z->offline || slow) && board_read_i64(b, z->temp_path, &mc)) {
			z->offline = mc <= TEMP_OFFLINE_MC;
			if (!z->offline) {
				board_put(set, (double)mc / 1000.0, "temp.", z->prefix, "_c");
			}
		}
		for (unsigned k = 0; k < TRIP_KIND_COUNT; k++) {
			if (z->trip_ok[k]) {
				board_put(set, z->trip_c[k], "trip.", z->prefix, trip_suffix[k]);
			}
		}
	}
	for (unsigned i = 0; i < b->cdev_count; i++) {
		const struct cdev *c = &b->cdevs[i];
		int64_t v;
		if (board_read_i64(b, c->cur_path, &v)) {
			board_put(set, (double)v, c->prefix, ".state", NULL);
		}
		if (c->max_ok) {
			board_put(set, c->max_state, c->prefix, ".max_state", NULL);
		}
	}
}

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

/* Accepts the devfreq device in DIR, with its parent device at DEV. */
static bool
use_gpu(struct board *b, const char *dir, const char *dev)
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
	const char *const loads[] = {NULL, "/sys/devices/gpu.0/load",
				     "/sys/devices/platform/gpu.0/load"};
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
	g->found = true;
	return true;
}

static void
probe_gpu(struct board *b)
{
	struct names *l = list_names(b, "/sys/class/devfreq");
	for (unsigned i = 0; l && i < l->count && !b->gpu.found; i++) {
		char dir[BOARD_PATH_LEN];
		char dev[BOARD_PATH_LEN];
		char path[BOARD_PATH_LEN];
		char node[NAME_LEN];
		const char *entry = l->name[i];
		const char *dot = strrchr(entry, '.');
		bool gpu = gpu_node_name(entry) || (dot && gpu_node_name(dot + 1));
		if (!board_path(dir, sizeof(dir), "/sys/class/devfreq/%s", entry) ||
		    !board_path(dev, sizeof(dev), "%s/device", dir)) {
			continue;
		}
		board_resolve(b, dir, sizeof(dir));
		board_resolve(b, dev, sizeof(dev));
		if (!gpu && board_path(path, sizeof(path), "%s/of_node/name", dev) &&
		    sysfs_read_str(b->fs, path, node, sizeof(node)) > 0) {
			gpu = gpu_node_name(node);
		}
		if (gpu) {
			use_gpu(b, dir, dev);
		}
	}
	free(l);
	/* devfreq class missing or unusual: the directories seen per generation */
	static const char *const known[][2] = {
		{"/sys/devices/57000000.gpu/devfreq/57000000.gpu", "/sys/devices/57000000.gpu"},
		{"/sys/devices/17000000.gp10b/devfreq/17000000.gp10b", "/sys/devices/17000000.gp10b"},
		{"/sys/devices/17000000.gv11b/devfreq/17000000.gv11b", "/sys/devices/17000000.gv11b"},
		{"/sys/devices/17000000.ga10b/devfreq/17000000.ga10b", "/sys/devices/17000000.ga10b"},
		{"/sys/devices/platform/17000000.gpu/devfreq_dev", "/sys/devices/platform/17000000.gpu"},
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && !b->gpu.found; i++) {
		use_gpu(b, known[i][0], known[i][1]);
	}
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
	g->hw_max_ok = board_read_str(b, g->avail_path, buf, sizeof(buf)) &&
		       largest_number(buf, &hz);
	if (g->hw_max_ok) {
		g->hw_max_mhz = hz / 1e6;
	}
	g->min_ok = board_read_i64(b, g->min_path, &v);
	g->min_mhz = (double)v / 1e6;
}

static void
sample_gpu(struct board *b, struct metric_set *set)
{
	const struct gpu *g = &b->gpu;
	int64_t v;
	if (!g->found) {
		return;
	}
	if (board_read_i64(b, g->cur_path, &v)) {
		metric_set_put(set, "gpu.freq_mhz", (double)v / 1e6);
	}
	if (board_read_i64(b, g->max_path, &v)) {
		metric_set_put(set, "gpu.max_freq_mhz", (double)v / 1e6);
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
		p->hw_cur_path[0] = '\0';
	}
	return (int)b->policy_count++;
}

static int
collect_cpu(const char *name, void *data)
{
	uint64_t *mask = data;
	unsigned n;
	if (numbered(name, "cpu", &n) && n < PROCFS_CPU_MAX) {
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
		board_path(c->online_path, sizeof(c->online_path), "/sys/devices/system/cpu/cpu%u/online",
			   n);
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
	}
}

static void
sample_cpu_load(struct board *b, struct metric_set *set, const bool *online)
{
	char *text = NULL;
	struct proc_stat cur;
	int n = sysfs_read_file(b->fs, "/proc/stat", STAT_MAX, &text);
	note_result(b, n);
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

static void
sample_cpu(struct board *b, struct metric_set *set)
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
		/* a measured clock well below the requested one is the truth (a latched throttle) */
		if (p->hw_cur_ok && (!p->cur_ok || p->hw_cur_mhz < p->cur_mhz * 0.9)) {
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

/* ---- memory, EMC ------------------------------------------------------------ */

static void
sample_memory(struct board *b, struct metric_set *set)
{
	char *text = NULL;
	struct meminfo mi;
	int n = sysfs_read_file(b->fs, "/proc/meminfo", MEMINFO_MAX, &text);
	note_result(b, n);
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
			metric_set_put(set, "swap.used_mb",
				       (double)(mi.swap_total_kb - mi.swap_free_kb) / 1024.0);
		}
	}
	if (mi.swap_cached_kb >= 0) {
		metric_set_put(set, "swap.cached_mb", (double)mi.swap_cached_kb / 1024.0);
	}
}

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
}

static void
sample_emc(struct board *b, struct metric_set *set)
{
	int64_t hz;
	if (b->emc_path[0] && board_read_i64(b, b->emc_path, &hz)) {
		metric_set_put(set, "emc.freq_mhz", (double)hz / 1e6);
	}
}

/* ---- nvpmodel, identity ----------------------------------------------------------- */

static void
probe_nvpmodel(struct board *b)
{
	char *text = NULL;
	/* usually a symlink to a per-SKU file; sysfs follows it below the root */
	if (sysfs_read_file(b->fs, "/etc/nvpmodel.conf", CONF_MAX, &text) < 0) {
		return;
	}
	if (nvpmodel_parse_conf(text, &b->conf) == 0) {
		b->conf_ok = true;
	} else {
		b->parse_errors++;
	}
	free(text);
}

static void
refresh_nvpmodel(struct board *b)
{
	char buf[512];
	int id;
	int n = sysfs_read_str(b->fs, "/var/lib/nvpmodel/status", buf, sizeof(buf));
	note_result(b, n);
	b->mode_ok = false;
	if (n > 0) {
		if (nvpmodel_parse_status(buf, &id) == 0) {
			b->mode_ok = true;
			b->mode_id = id;
		} else {
			b->parse_errors++;
		}
	} else if (n == -ENOENT && b->conf_ok && b->conf.default_id >= 0) {
		/* no mode chosen since flashing: the configured default applies */
		b->mode_ok = true;
		b->mode_id = b->conf.default_id;
	}
}

static void
probe_identity(struct board *b)
{
	struct board_identity *id = &b->id;
	char *text = NULL;
	int n;
	if (sysfs_read_str(b->fs, "/proc/device-tree/model", id->model, sizeof(id->model)) <= 0 &&
	    sysfs_read_str(b->fs, "/sys/firmware/devicetree/base/model", id->model,
			   sizeof(id->model)) <= 0) {
		id->model[0] = '\0';
	}
	n = sysfs_read_file(b->fs, "/proc/device-tree/compatible", COMPATIBLE_MAX, &text);
	if (n < 0) {
		n = sysfs_read_file(b->fs, "/sys/firmware/devicetree/base/compatible", COMPATIBLE_MAX,
				    &text);
	}
	if (n > 0) {
		identity_parse_compatible(text, (size_t)n, id->soc, sizeof(id->soc), id->module,
					  sizeof(id->module));
	}
	free(text);
	text = NULL;
	if (sysfs_read_file(b->fs, "/etc/nv_tegra_release", RELEASE_MAX, &text) >= 0) {
		if (identity_parse_nv_tegra_release(text, id->l4t, sizeof(id->l4t)) == 0) {
			if (!identity_jetpack_for_l4t(id->l4t, id->jetpack, sizeof(id->jetpack))) {
				id->jetpack[0] = '\0';
			}
		} else {
			id->l4t[0] = '\0';
			b->parse_errors++;
		}
		free(text);
	}
}

/* ---- public API ------------------------------------------------------------- */

int
board_open(const char *root, struct board **out)
{
	if (!root || !out) {
		return -EINVAL;
	}
	struct board *b = calloc(1, sizeof(*b));
	if (!b) {
		return -ENOMEM;
	}
	int err = sysfs_create(root, &b->fs);
	if (err < 0) {
		free(b);
		return err;
	}
	b->now_ms = monotonic_ms;
	probe_identity(b);
	probe_thermal(b);
	probe_gpu(b);
	probe_cpus(b);
	probe_emc(b);
	board_probe_power(b);
	probe_nvpmodel(b);
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
	b->now_ms = now_ms ? now_ms : monotonic_ms;
	b->clock_data = now_ms ? data : NULL;
	sysfs_set_clock(b->fs, now_ms, data);
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
	return strncmp(b->id.soc, "tegra", 5) == 0 || b->id.l4t[0] != '\0' || b->gpu.found ||
	       b->jetson_hint;
}

static void
refresh_slow(struct board *b)
{
	refresh_trips(b);
	refresh_gpu(b);
	refresh_cpus(b);
	board_refresh_power(b);
	refresh_nvpmodel(b);
}

int
board_sample(struct board *b, struct sample *s)
{
	struct metric_set *set = &s->metrics;
	int64_t now = b->now_ms(b->clock_data);
	bool slow = !b->slow_done || now - b->slow_last_ms >= BOARD_SLOW_MS;
	b->reads_ok = 0;
	b->first_err = 0;
	if (slow) {
		refresh_slow(b);
		b->slow_done = true;
		b->slow_last_ms = now;
	}
	sample_thermal(b, set, slow);
	sample_gpu(b, set);
	sample_cpu(b, set);
	sample_memory(b, set);
	sample_emc(b, set);
	board_sample_power(b, set);
	if (b->mode_ok) {
		const struct nvpmodel_mode *mode = b->conf_ok ? nvpmodel_find(&b->conf, b->mode_id) : NULL;
		metric_set_put(set, "nvpmodel.id", b->mode_id);
		if (mode) {
			snprintf(s->power_mode, sizeof(s->power_mode), "%s", mode->name);
		}
	}
	if (b->reads_ok == 0) {
		return b->first_err ? b->first_err : -ENODATA;
	}
	return 0;
}

uint64_t
board_read_errors(const struct board *b)
{
	return sysfs_error_count(b->fs) + b->parse_errors;
}
