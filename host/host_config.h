/*
 * The host: section of the configuration, owned by the host source:
 * memory, pressure, OOM kills, load; file systems; disks; network; probes
 * (docs/configuration.md#host). Pure: decoding and checks, no I/O.
 */
#ifndef TEGRAWATCH_HOST_CONFIG_H
#define TEGRAWATCH_HOST_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "core/cfg_decode.h"
#include "probe_config.h"

#define HOST_FS_INTERVAL_DEFAULT_MS 10000
#define HOST_FS_TREND_DEFAULT_MS (30 * 60 * 1000)

/* host.filesystems: a map; absent = every default (zero fields) */
struct host_fs_config {
	int off;             /* filesystems.enabled: false */
	int64_t interval_ms; /* filesystems.interval, 10 s; 0 = the default (the map absent) */
	int64_t trend_ms;    /* filesystems.trend, 30 min: the window of full_eta_s; 0 = the default */
	char **include;      /* mount point globs: exactly these are watched; NULL = none */
	size_t include_count;
	char **exclude; /* mount point globs never watched, on top of the defaults; NULL = none */
	size_t exclude_count;
};

/* host.network: a map; absent = every default (zero fields) */
struct host_net_config {
	int off;        /* network.enabled: false */
	char **include; /* interface name globs: exactly these are watched; NULL = none */
	size_t include_count;
	char **exclude; /* interface name globs never watched, on top of the defaults; NULL = none */
	size_t exclude_count;
};

struct host_config {
	int enabled; /* host.enabled: true (on the real root only) */
	int disks;   /* host.disks: true: /proc/diskstats and eMMC health */
	struct host_fs_config fs;
	struct host_net_config net;
	struct host_probes probes; /* host.probes: reachability targets (probe_config.h) */
};

/** The key table and checks: globs are mount points ("/", "/data*") or interface names ("eth*"). */
extern const struct cfg_section host_config_section;

/** filesystems.interval as it applies (the default when left out). */
int64_t host_config_fs_interval_ms(const struct host_config *cfg);

/** filesystems.trend as it applies (the default when left out). */
int64_t host_config_fs_trend_ms(const struct host_config *cfg);

#endif
