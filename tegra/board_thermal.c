/*
 * Thermal side of the sysfs board source: the thermal zones (temperature
 * and trip points, named like tegrastats names its sensors) and the
 * cooling devices of /sys/class/thermal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "board_priv.h"
#include "tegrastats.h"
#include "throttle.h"

/* What a sensor that is switched off reads (idle CV engines on Orin). */
#define TEMP_OFFLINE_MC (-256000)

static const char *const trip_suffix[TRIP_KIND_COUNT] = {
	[TRIP_PASSIVE] = ".passive_c",
	[TRIP_HOT] = ".hot_c",
	[TRIP_CRITICAL] = ".critical_c",
	[TRIP_ACTIVE] = ".active_c",
};

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
	       (len > 6 && strcmp(type + len - 6, "_tegra") == 0) || strcmp(type, "thermal-fan-est") == 0;
}

/* True when TYPE is a documented placeholder (PMIC), by full or first-part name. */
static bool
zone_is_placeholder(const char *type, const char *norm)
{
	char first[BOARD_NAME_LEN];
	size_t n = strcspn(type, "-_");
	if (tegra_sensor_is_placeholder(norm)) {
		return true;
	}
	return n > 0 && tegra_sensor_name(type, n, first, sizeof(first)) > 0 && tegra_sensor_is_placeholder(first);
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
		if (board_path(z->trip_path[z->trip_count], BOARD_PATH_LEN, "%s/trip_point_%u_temp", dir, k)) {
			z->trip_index[z->trip_count] = k;
			z->trip_kind[z->trip_count++] = kind;
		}
	}
}

static enum trip_role
role_of(enum cooling_kind kind)
{
	switch (kind) {
	case COOLING_FAN:
		return TRIP_ROLE_FAN;
	case COOLING_WARNING:
		return TRIP_ROLE_WARNING;
	case COOLING_CLOCK:
		break;
	}
	return TRIP_ROLE_THROTTLE;
}

/*
 * What each trip drives, from the zone's bindings: cdevK links to a
 * cooling device, cdevK_trip_point names the trip it acts at. A trip
 * takes the strongest role of its devices (a clock over the hot-surface
 * alert over a fan); in a zone with bindings, a trip with none drives
 * nothing. Bindings are fixed by the device tree: read once at open.
 */
static void
probe_zone_bindings(struct board *b, struct zone *z, const char *dir)
{
	struct board_names *l = board_list_names(b, dir);
	for (unsigned i = 0; i < l->count; i++) {
		unsigned k;
		int end = 0;
		int64_t trip;
		char path[BOARD_PATH_LEN];
		char type[BOARD_NAME_LEN];
		/* "cdev3_trip_point": board_numbered wants the number last */
		if (sscanf(l->name[i], "cdev%u_trip_point%n", &k, &end) != 1 || end == 0 || l->name[i][end] != '\0' ||
		    !board_path(path, sizeof(path), "%s/%s", dir, l->name[i]) ||
		    sysfs_read_i64(b->fs, path, &trip) < 0 ||
		    !board_path(path, sizeof(path), "%s/cdev%u/type", dir, k) ||
		    sysfs_read_str(b->fs, path, type, sizeof(type)) <= 0) {
			continue;
		}
		z->bound = true;
		enum trip_role role = role_of(cooling_kind_of(type, strlen(type)));
		for (unsigned t = 0; t < z->trip_count; t++) {
			if ((int64_t)z->trip_index[t] == trip && role > z->trip_role[t]) {
				z->trip_role[t] = role;
			}
		}
	}
	free(l);
	for (unsigned t = 0; z->bound && t < z->trip_count; t++) {
		if (z->trip_role[t] == TRIP_ROLE_UNKNOWN) {
			z->trip_role[t] = TRIP_ROLE_UNBOUND;
		}
	}
}

static void
probe_zone(struct board *b, unsigned index)
{
	char dir[BOARD_PATH_LEN];
	char path[BOARD_PATH_LEN];
	char type[BOARD_NAME_LEN];
	char norm[BOARD_PREFIX_LEN];
	board_path(dir, sizeof(dir), "/sys/class/thermal/thermal_zone%u", index);
	board_resolve(b, dir, sizeof(dir));
	if (!board_path(path, sizeof(path), "%s/type", dir) || sysfs_read_str(b->fs, path, type, sizeof(type)) <= 0) {
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
	if (strlen(norm) + 7 >= METRIC_NAME_MAX || !board_path(z->temp_path, sizeof(z->temp_path), "%s/temp", dir)) {
		return;
	}
	memcpy(z->prefix, norm, strlen(norm) + 1);
	probe_zone_trips(b, z, dir);
	probe_zone_bindings(b, z, dir);
	b->zone_count++;
}

static void
probe_cdev(struct board *b, unsigned index)
{
	char dir[BOARD_PATH_LEN];
	char path[BOARD_PATH_LEN];
	char type[BOARD_NAME_LEN];
	char seg[BOARD_PREFIX_LEN];
	board_path(dir, sizeof(dir), "/sys/class/thermal/cooling_device%u", index);
	board_resolve(b, dir, sizeof(dir));
	if (b->cdev_count == b->cdev_cap || !board_path(path, sizeof(path), "%s/type", dir) ||
	    sysfs_read_str(b->fs, path, type, sizeof(type)) <= 0 || !board_segment(type, seg, sizeof(seg) - 8)) {
		return;
	}
	struct cdev *c = &b->cdevs[b->cdev_count];
	memset(c, 0, sizeof(*c));
	board_path(c->prefix, sizeof(c->prefix), "cooling.%s", seg);
	c->warning = cooling_kind_of(type, strlen(type)) == COOLING_WARNING;
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

void
board_probe_thermal(struct board *b)
{
	struct board_names *l = board_list_names(b, "/sys/class/thermal");
	/* size the arrays for what is there: each zone holds its trip paths */
	unsigned zones = 0, cdevs = 0, idx;
	for (unsigned i = 0; i < l->count; i++) {
		zones += board_numbered(l->name[i], "thermal_zone", &idx);
		cdevs += board_numbered(l->name[i], "cooling_device", &idx);
	}
	b->zone_cap = zones < BOARD_ZONES_MAX ? zones : BOARD_ZONES_MAX;
	b->cdev_cap = cdevs < BOARD_CDEVS_MAX ? cdevs : BOARD_CDEVS_MAX;
	b->zones = xcalloc(b->zone_cap + 1, sizeof(*b->zones));
	b->cdevs = xcalloc(b->cdev_cap + 1, sizeof(*b->cdevs));
	for (unsigned i = 0; i < l->count; i++) {
		unsigned n;
		if (board_numbered(l->name[i], "thermal_zone", &n)) {
			probe_zone(b, n);
		} else if (board_numbered(l->name[i], "cooling_device", &n)) {
			probe_cdev(b, n);
		}
	}
	free(l);
}

/*
 * Whether a trip of kind K and role R is reported as trip.PREFIX.KIND_c:
 * a passive or hot one only when it lowers a clock (or nothing says what
 * it drives), so that the throttle stage, headroom and time to throttle
 * measure the distance to a real slowdown. Critical is the shutdown.
 */
static bool
trip_reported(enum trip_kind k, enum trip_role r)
{
	switch (k) {
	case TRIP_PASSIVE:
	case TRIP_HOT:
		return r == TRIP_ROLE_UNKNOWN || r == TRIP_ROLE_THROTTLE;
	case TRIP_ACTIVE:
		return r != TRIP_ROLE_WARNING && r != TRIP_ROLE_THROTTLE;
	case TRIP_CRITICAL:
	case TRIP_KIND_COUNT:
		break;
	}
	return true;
}

size_t
board_trip_bindings(const struct board *b, char *buf, size_t size)
{
	unsigned bound = 0, unbound = 0, surface = 0;
	for (unsigned i = 0; i < b->zone_count; i++) {
		const struct zone *z = &b->zones[i];
		bool slows = false; /* only passive and hot trips are in question */
		for (unsigned t = 0; t < z->trip_count; t++) {
			slows = slows || z->trip_kind[t] == TRIP_PASSIVE || z->trip_kind[t] == TRIP_HOT;
		}
		if (!slows) {
			continue;
		}
		if (z->bound) {
			bound++;
		} else {
			unbound++;
		}
		for (unsigned t = 0; t < z->trip_count; t++) {
			surface += z->trip_role[t] == TRIP_ROLE_WARNING;
		}
	}
	if (size == 0) {
		return bound;
	}
	if (bound + unbound == 0) {
		snprintf(buf, size, "no passive or hot thermal trips");
	} else if (unbound == 0) {
		snprintf(
			buf, size,
			"thermal trips classified by their cooling devices in %u zone%s (%u hot-surface warning trip%s)",
			bound, bound == 1 ? "" : "s", surface, surface == 1 ? "" : "s");
	} else {
		snprintf(
			buf, size,
			"no trip-to-cooling-device bindings readable in %u of %u zones with passive or hot trips: those "
			"count as a throttle",
			unbound, bound + unbound);
	}
	return bound;
}

void
board_refresh_thermal(struct board *b)
{
	for (unsigned i = 0; i < b->zone_count; i++) {
		struct zone *z = &b->zones[i];
		memset(z->trip_ok, 0, sizeof(z->trip_ok));
		z->surface_ok = false;
		for (unsigned t = 0; t < z->trip_count; t++) {
			int64_t mc;
			enum trip_kind k = z->trip_kind[t];
			if (!board_read_i64(b, z->trip_path[t], &mc)) {
				continue;
			}
			double c = (double)mc / 1000.0;
			if (z->trip_role[t] == TRIP_ROLE_WARNING && k != TRIP_CRITICAL) {
				if (!z->surface_ok || c < z->surface_c) {
					z->surface_ok = true;
					z->surface_c = c;
				}
				continue;
			}
			if (!trip_reported(k, z->trip_role[t])) {
				continue;
			}
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

void
board_sample_thermal(struct board *b, struct metric_set *set, bool slow)
{
	for (unsigned i = 0; i < b->zone_count; i++) {
		struct zone *z = &b->zones[i];
		int64_t mc;
		/*
		 * A sensor reading the -256 sentinel (idle CV engines on Orin)
		 * stays off for seconds at least: look again with the slow group.
		 * One whose driver answers EAGAIN (Thor's GPU zone while the GPU
		 * is rail-gated) is in a state, not failing: it is read on every
		 * sample, as the GPU may wake at any time.
		 */
		if (!z->offline || slow) {
			int r = sysfs_read_sensor(b->fs, z->temp_path, &mc);
			board_note_result(b, r == SYSFS_GATED ? 0 : r);
			z->gated = r == SYSFS_GATED;
			z->gated_seen = z->gated_seen || z->gated;
			if (r == 0) {
				z->offline = mc <= TEMP_OFFLINE_MC;
				if (!z->offline) {
					board_put(set, (double)mc / 1000.0, "temp.", z->prefix, "_c");
				}
			}
		}
		if (z->gated_seen) {
			board_put(set, z->gated ? 1 : 0, "zone.", z->prefix, ".gated");
		}
		for (unsigned k = 0; k < TRIP_KIND_COUNT; k++) {
			if (z->trip_ok[k]) {
				board_put(set, z->trip_c[k], "trip.", z->prefix, trip_suffix[k]);
			}
		}
		if (z->surface_ok) {
			board_put(set, z->surface_c, "trip.", z->prefix, ".hot_surface_c");
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
