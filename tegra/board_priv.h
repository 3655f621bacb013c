/*
 * Internals of the sysfs board source, shared by board.c (helpers,
 * memory, the public API), board_thermal.c (zones, cooling devices),
 * board_clocks.c (GPU, CPU, EMC), board_power.c (INA3221 rails,
 * over-current counters, fans) and board_identity.c (identity, nvpmodel).
 * Not a public API.
 *
 * Everything a sample reads is found once at open and kept here with its
 * path already built, so board_sample() only reads files and puts values.
 */
#ifndef TEGRAWATCH_BOARD_PRIV_H
#define TEGRAWATCH_BOARD_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "core/metrics.h"
#include "core/sample.h"
#include "board.h"
#include "nvpmodel.h"
#include "procfs.h"
#include "sysfs.h"

/* Longest path kept; longer sysfs paths are skipped at probe time. */
#define BOARD_PATH_LEN 160
/* Metric name prefixes ("power.vdd_cpu_gpu_cv"), leaving room for a suffix. */
#define BOARD_PREFIX_LEN 48

#define BOARD_ZONES_MAX 64
#define BOARD_TRIPS_MAX 16
#define BOARD_CDEVS_MAX 64
#define BOARD_RAILS_MAX 24
#define BOARD_OCS_MAX 8
#define BOARD_FANS_MAX 8

/*
 * The slow group (trip points, limits, clock floors, hardware maxima, the
 * nvpmodel status) is re-read this often instead of on every sample.
 */
#define BOARD_SLOW_MS 5000

enum trip_kind {
	TRIP_PASSIVE,
	TRIP_HOT,
	TRIP_CRITICAL,
	TRIP_ACTIVE,
	TRIP_KIND_COUNT,
};

/* What a trip drives, from its zone's cdevK bindings (docs/throttling.md). */
enum trip_role {
	TRIP_ROLE_UNKNOWN,  /* the zone shows no bindings: today's rules (passive and hot throttle) */
	TRIP_ROLE_UNBOUND,  /* the zone shows bindings, none to this trip: it drives nothing */
	TRIP_ROLE_FAN,      /* only fans */
	TRIP_ROLE_WARNING,  /* the hot-surface alert (and maybe fans), no clock */
	TRIP_ROLE_THROTTLE, /* at least one device that lowers a clock */
};

struct zone {
	char temp_path[BOARD_PATH_LEN];
	char prefix[BOARD_PREFIX_LEN]; /* "cpu" as in temp.cpu_c / trip.cpu.* */
	bool offline;                  /* last read was the -256 sentinel: re-read with the slow group */
	bool gated;                    /* the last read answered EAGAIN twice: no value now (a state) */
	bool gated_seen;               /* it has been gated since start: zone.PREFIX.gated is emitted */
	unsigned trip_count;
	char trip_path[BOARD_TRIPS_MAX][BOARD_PATH_LEN];
	enum trip_kind trip_kind[BOARD_TRIPS_MAX];
	unsigned trip_index[BOARD_TRIPS_MAX]; /* K of trip_point_K_* */
	enum trip_role trip_role[BOARD_TRIPS_MAX];
	bool bound; /* the zone shows cdevK bindings: trip_role is known */
	/* lowest trip of each kind that the role allows, from the last slow refresh */
	bool trip_ok[TRIP_KIND_COUNT];
	double trip_c[TRIP_KIND_COUNT];
	/* lowest trip bound to the hot-surface alert (trip.PREFIX.hot_surface_c) */
	bool surface_ok;
	double surface_c;
};

struct cdev {
	char cur_path[BOARD_PATH_LEN];
	char max_path[BOARD_PATH_LEN];
	char prefix[BOARD_PREFIX_LEN]; /* "cooling.skin_balanced" */
	bool warning;                  /* a hot-surface alert: thermal.hot_surface, never a throttle */
	bool max_ok;
	double max_state;
};

struct gpu {
	bool found;
	char name[BOARD_PREFIX_LEN]; /* the devfreq entry ("gpu-gpc-0") */
	bool known_name;             /* chosen by the name its generation gives it */
	double mhz_per_unit;         /* 1e-6 (Hz, the devfreq ABI) or 1e-3 (kHz: Thor, per jtop) */
	char cur_path[BOARD_PATH_LEN];
	char max_path[BOARD_PATH_LEN];
	char min_path[BOARD_PATH_LEN];
	char avail_path[BOARD_PATH_LEN];
	char load_path[BOARD_PATH_LEN]; /* "" when no load file was found */
	bool hw_max_ok;
	double hw_max_mhz;
	bool min_ok; /* the floor is in the slow group */
	double min_mhz;
};

/* One cpufreq policy: the cores that share a clock. */
struct policy {
	char dir[BOARD_PATH_LEN]; /* resolved, e.g. /sys/devices/system/cpu/cpufreq/policy0 */
	char cur_path[BOARD_PATH_LEN];
	char hw_cur_path[BOARD_PATH_LEN]; /* cpuinfo_cur_freq; "" when not readable */
	char max_path[BOARD_PATH_LEN];
	char min_path[BOARD_PATH_LEN];
	char hw_max_path[BOARD_PATH_LEN];
	bool hw_max_ok;
	double hw_max_mhz;
	bool min_ok; /* slow group */
	double min_mhz;
	/*
	 * cpuinfo_cur_freq, the clock the hardware really runs (scaling_cur_freq
	 * can show the requested one: Thor after an OC event). The tegra194/234
	 * drivers measure it with a busy wait of about 0.5 ms, so it is read with
	 * the slow group only.
	 */
	bool hw_cur_ok;
	double hw_cur_mhz;
	/*
	 * The measured clock was more than 10 % below the requested one read
	 * at the same moment (slow group): a latched hardware throttle (Thor
	 * after an OC event, forum 361188) or one coming and going.
	 */
	bool gap;
	/* per sample */
	bool wanted; /* some core of it is (or may be) online */
	bool cur_ok, max_ok, req_ok;
	double cur_mhz, max_mhz;
	double req_mhz; /* scaling_cur_freq, the request, while cur_mhz is the measured clock below it */
};

struct core {
	unsigned n;
	int policy; /* index into policies, -1 without cpufreq */
	bool has_online_file;
	char online_path[BOARD_PATH_LEN];
	char prefix[16]; /* "cpu.11" */
};

struct rail {
	char prefix[BOARD_PREFIX_LEN]; /* "power.vdd_in" */
	char mv_path[BOARD_PATH_LEN];
	char ma_path[BOARD_PATH_LEN];
	char mw_path[BOARD_PATH_LEN];         /* iio in_powerN_input, INA238 power1_input; "" on INA3221 hwmon */
	double mw_per_unit;                   /* what one unit of mw_path is in mW: 1 (iio), 0.001 (INA238 uW) */
	char crit_path[BOARD_PATH_LEN];       /* "" when there is none (INA238) */
	char crit_alarm_path[BOARD_PATH_LEN]; /* "" when absent */
	char max_alarm_path[BOARD_PATH_LEN];  /* "" when absent */
	bool crit_ok;
	double crit_ma;
};

struct oc_counter {
	char prefix[16]; /* "oc.3" for oc3_event_cnt */
	char events_path[BOARD_PATH_LEN];
	char throt_path[BOARD_PATH_LEN];
	bool throt_ok;
	double throt_en;
};

struct fan_input {
	char path[BOARD_PATH_LEN];
	char name[METRIC_NAME_MAX]; /* "fan.0.pwm" */
};

/* Quantities that exist on the board but this process may not read (root only). */
#define BOARD_DENIED_CPU_MEASURED 0x1u /* cpuinfo_cur_freq */
#define BOARD_DENIED_EMC 0x2u          /* debugfs EMC clock */

struct board {
	struct sysfs *fs;
	struct board_identity id;
	bool jetson_hint; /* Tegra-style zone types seen */
	unsigned denied;  /* BOARD_DENIED_* found at probe */

	int64_t (*now_ms)(void *data);
	void *clock_data;
	bool slow_done;
	int64_t slow_last_ms;

	unsigned zone_count;
	struct zone *zones;
	unsigned zone_cap; /* allocated for the zones found at open */
	unsigned cdev_count;
	struct cdev *cdevs;
	unsigned cdev_cap;

	struct gpu gpu;
	unsigned nvidia_pci; /* NVIDIA display controllers on PCI */

	unsigned core_count;
	struct core cores[PROCFS_CPU_MAX];
	unsigned policy_count;
	struct policy policies[PROCFS_CPU_MAX];
	bool prev_stat_ok;
	struct proc_stat prev_stat;

	char emc_path[BOARD_PATH_LEN]; /* "" when no EMC clock is readable */

	unsigned rail_count;
	struct rail rails[BOARD_RAILS_MAX];
	unsigned oc_count;
	struct oc_counter ocs[BOARD_OCS_MAX];
	unsigned fan_count;
	struct fan_input fans[BOARD_FANS_MAX];
	unsigned fan_pwm_next, fan_rpm_next;

	bool conf_ok;
	struct nvpmodel_conf conf;
	bool mode_ok;
	int mode_id;
	/* the status against the clocks' ceilings, checked with each slow refresh (nvpmodel.mismatch) */
	unsigned mismatch_checks; /* checks in a row that disagreed */
	bool mismatch_now;        /* two did: reported */
	bool mismatch_seen;       /* reported since start: nvpmodel.mismatch is emitted from then on */

	bool memory_shares;    /* board_set_memory_shares() */
	uint64_t parse_errors; /* text that read fine but did not parse */
	/* per sample */
	unsigned reads_ok;
	int first_err;
};

/* Thermal zones and cooling devices (board_thermal.c) */

/** Finds the zones (with their trip points) and cooling devices. */
void board_probe_thermal(struct board *b);

/** Re-reads the trip points and the cooling devices' maxima (slow group). */
void board_refresh_thermal(struct board *b);

/**
 * Reads temperatures and cooling states into SET. SLOW: this sample also
 * re-reads the slow group, so zones that read "off" are tried again.
 */
void board_sample_thermal(struct board *b, struct metric_set *set, bool slow);

/* GPU, CPU and EMC clocks (board_clocks.c) */

/** Finds the GPU devfreq device, the CPU cores with their cpufreq policies and the EMC clock. */
void board_probe_clocks(struct board *b);

/** Re-reads the GPU and CPU floors and hardware maxima (slow group); looks again for a GPU not found yet. */
void board_refresh_clocks(struct board *b);

/** Reads the GPU clock, limits and load into SET. */
void board_sample_gpu(struct board *b, struct metric_set *set);

/** Reads the cores' online state, clocks, limits and loads into SET. */
void board_sample_cpu(struct board *b, struct metric_set *set);

/** Reads the EMC clock into SET when it is readable. */
void board_sample_emc(struct board *b, struct metric_set *set);

/* Identity and power modes (board_identity.c) */

/** Reads model, SoC, module, L4T and JetPack into B->id. */
void board_probe_identity(struct board *b);

/** Reads the power modes of /etc/nvpmodel.conf. */
void board_probe_nvpmodel(struct board *b);

/** Re-reads the current power mode (slow group). */
void board_refresh_nvpmodel(struct board *b);

/**
 * Puts nvpmodel.id into S and names S->power_mode; with SLOW, checks the
 * mode against the clocks' ceilings in S (nvpmodel.mismatch).
 */
void board_sample_nvpmodel(struct board *b, struct sample *s, bool slow);

/* Probes rails, OC counters and fans (board_power.c). */
void board_probe_power(struct board *b);

/* Re-reads the rail limits and OC enables (slow group). */
void board_refresh_power(struct board *b);

/* Reads rails, OC counters and fans into SET. */
void board_sample_power(struct board *b, struct metric_set *set);

/* Shared helpers (board.c) */

/* Directory entries collected for probing (sysfs_list_dir sorts them). */
#define BOARD_NAMES_MAX 256
#define BOARD_NAME_LEN 64

struct board_names {
	unsigned count;
	char name[BOARD_NAMES_MAX][BOARD_NAME_LEN];
};

/** The entries of DIR in a new list (empty when DIR cannot be listed); free() it. */
struct board_names *board_list_names(struct board *b, const char *dir);

/** "thermal_zone12" with PREFIX "thermal_zone": true and *N = 12. */
bool board_numbered(const char *name, const char *prefix, unsigned *n);

/** Counts the outcome of one read (0 or more, or -errno) for board_sample()'s result. */
static inline void
board_note_result(struct board *b, int err)
{
	if (err >= 0) {
		b->reads_ok++;
	} else if (!b->first_err) {
		b->first_err = err;
	}
}

/** Reads PATH as an integer; counts the outcome in B for board_sample()'s result. */
bool board_read_i64(struct board *b, const char *path, int64_t *out);

/** Reads PATH as a string (see sysfs_read_str); counts the outcome. */
bool board_read_str(struct board *b, const char *path, char *buf, size_t size);

/** Puts the metric named A + B + C (C may be NULL) = VALUE; names that do not fit are dropped. */
void board_put(struct metric_set *set, double value, const char *a, const char *b, const char *c);

/**
 * Replaces PATH by its symlink-free form when it resolves and fits: class
 * links are walked once at open instead of on every read.
 */
void board_resolve(struct board *b, char *path, size_t size);

/** snprintf into BUF; false when it did not fit. */
bool board_path(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/**
 * Writes a metric name segment for TEXT into BUF: lower-case, characters
 * outside [a-z0-9] turned into '_'. False when nothing usable is left.
 */
bool board_segment(const char *text, char *buf, size_t size);

#endif
