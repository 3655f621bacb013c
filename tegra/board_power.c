/*
 * Power side of the sysfs board source: INA3221 rails (hwmon on JetPack 5+,
 * the ina3221x iio driver on JetPack 4), the soctherm_oc over-current
 * counters and the fans. Found by hwmon `name` and the iio driver
 * directory, never by board model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "board_priv.h"

/*
 * The INA3221 has 3 channels, numbered from 1 by hwmon; in4-in6 are their
 * shunt voltages and in7 (with curr4) their sum, never rails (Thor labels
 * no more than three, issue 22).
 */
#define INA_HWMON_CHANNELS 3
#define INA_IIO_CHANNELS 8
#define OC_MAX_INDEX 8
#define PWM_MAX_INDEX 4

/* An unconnected channel: "NC", also seen spelled with a suffix. */
static bool
label_unconnected(const char *label)
{
	return strcasecmp(label, "NC") == 0 || strncasecmp(label, "NC ", 3) == 0 || strncasecmp(label, "NC_", 3) == 0;
}

/* Adds a rail named after LABEL; returns it with only the prefix set, or NULL. */
static struct rail *
add_rail(struct board *b, const char *label)
{
	char seg[BOARD_PREFIX_LEN];
	if (b->rail_count == BOARD_RAILS_MAX || label_unconnected(label) || strncasecmp(label, "sum of", 6) == 0 ||
	    !board_segment(label, seg, sizeof(seg) - 12)) {
		return NULL;
	}
	struct rail *r = &b->rails[b->rail_count];
	memset(r, 0, sizeof(*r));
	board_path(r->prefix, sizeof(r->prefix), "power.%s", seg);
	for (unsigned i = 0; i < b->rail_count; i++) {
		if (strcmp(b->rails[i].prefix, r->prefix) == 0) {
			/* the same label twice (two chips): number the later one */
			board_path(r->prefix, sizeof(r->prefix), "power.%s_%u", seg, b->rail_count);
			break;
		}
	}
	return r->prefix[0] ? r : NULL;
}

static void
probe_ina_hwmon(struct board *b, const char *dir)
{
	for (unsigned k = 1; k <= INA_HWMON_CHANNELS; k++) {
		char path[BOARD_PATH_LEN];
		char label[BOARD_PREFIX_LEN];
		if (!board_path(path, sizeof(path), "%s/in%u_label", dir, k) ||
		    sysfs_read_str(b->fs, path, label, sizeof(label)) <= 0) {
			continue; /* unlabeled: shunt or sum channels */
		}
		if (!board_path(path, sizeof(path), "%s/curr%u_input", dir, k) || !sysfs_exists(b->fs, path)) {
			continue;
		}
		struct rail *r = add_rail(b, label);
		if (!r || !board_path(r->mv_path, sizeof(r->mv_path), "%s/in%u_input", dir, k) ||
		    !board_path(r->ma_path, sizeof(r->ma_path), "%s", path) ||
		    !board_path(r->crit_path, sizeof(r->crit_path), "%s/curr%u_crit", dir, k) ||
		    !board_path(r->crit_alarm_path, sizeof(r->crit_alarm_path), "%s/curr%u_crit_alarm", dir, k) ||
		    !board_path(r->max_alarm_path, sizeof(r->max_alarm_path), "%s/curr%u_max_alarm", dir, k)) {
			continue;
		}
		if (!sysfs_exists(b->fs, r->crit_alarm_path)) {
			r->crit_alarm_path[0] = '\0';
		}
		if (!sysfs_exists(b->fs, r->max_alarm_path)) {
			r->max_alarm_path[0] = '\0';
		}
		b->rail_count++;
	}
}

/*
 * An INA238 (Thor's whole-board input, VIN: issue 22): one channel, power
 * in microwatts (power1_input), bus voltage in mV (in1_input), current in
 * mA (curr1_input). Named after the chip's label (the hwmon core's `label`,
 * or a channel label), "ina238" without one; which file holds "VIN" on a
 * real Thor is unconfirmed.
 */
static void
probe_ina238(struct board *b, const char *dir)
{
	static const char *const label_files[] = {"label", "power1_label", "in1_label"};
	char path[BOARD_PATH_LEN];
	char label[BOARD_PREFIX_LEN] = "ina238";
	for (size_t i = 0; i < sizeof(label_files) / sizeof(label_files[0]); i++) {
		if (board_path(path, sizeof(path), "%s/%s", dir, label_files[i]) &&
		    sysfs_read_str(b->fs, path, label, sizeof(label)) > 0) {
			break;
		}
	}
	struct rail *r = add_rail(b, label);
	if (!r || !board_path(r->mw_path, sizeof(r->mw_path), "%s/power1_input", dir) ||
	    !sysfs_exists(b->fs, r->mw_path) || !board_path(r->mv_path, sizeof(r->mv_path), "%s/in1_input", dir) ||
	    !board_path(r->ma_path, sizeof(r->ma_path), "%s/curr1_input", dir)) {
		return;
	}
	r->mw_per_unit = 0.001;
	b->rail_count++;
}

static void
probe_oc(struct board *b, const char *dir)
{
	for (unsigned k = 1; k <= OC_MAX_INDEX && b->oc_count < BOARD_OCS_MAX; k++) {
		struct oc_counter *o = &b->ocs[b->oc_count];
		memset(o, 0, sizeof(*o));
		board_path(o->prefix, sizeof(o->prefix), "oc.%u", k);
		if (board_path(o->events_path, sizeof(o->events_path), "%s/oc%u_event_cnt", dir, k) &&
		    sysfs_exists(b->fs, o->events_path) &&
		    board_path(o->throt_path, sizeof(o->throt_path), "%s/oc%u_throt_en", dir, k)) {
			b->oc_count++;
		}
	}
}

/* Adds the fan input at PATH if it exists; RPM selects the name. */
static bool
add_fan(struct board *b, const char *path, bool rpm)
{
	if (b->fan_count == BOARD_FANS_MAX || !sysfs_exists(b->fs, path)) {
		return false;
	}
	struct fan_input *f = &b->fans[b->fan_count];
	unsigned *next = rpm ? &b->fan_rpm_next : &b->fan_pwm_next;
	if (!board_path(f->path, sizeof(f->path), "%s", path) ||
	    !board_path(f->name, sizeof(f->name), "fan.%u.%s", *next, rpm ? "rpm" : "pwm")) {
		return false;
	}
	(*next)++;
	b->fan_count++;
	return true;
}

static void
probe_fan_hwmon(struct board *b, const char *dir, const char *name)
{
	char path[BOARD_PATH_LEN];
	if (strcmp(name, "pwmfan") == 0 || strcmp(name, "pwm-fan") == 0 || strcmp(name, "pwm_fan") == 0) {
		for (unsigned k = 1; k <= PWM_MAX_INDEX; k++) {
			if (board_path(path, sizeof(path), "%s/pwm%u", dir, k)) {
				add_fan(b, path, false);
			}
		}
		return;
	}
	/* pwm_tach: "rpm", or the standard fan1_input */
	if (!(board_path(path, sizeof(path), "%s/rpm", dir) && add_fan(b, path, true)) &&
	    board_path(path, sizeof(path), "%s/fan1_input", dir)) {
		add_fan(b, path, true);
	}
}

static int
visit_hwmon(const char *entry, void *data)
{
	struct board *b = data;
	char dir[BOARD_PATH_LEN];
	char path[BOARD_PATH_LEN];
	char name[64];
	if (strncmp(entry, "hwmon", 5) != 0 || !board_path(dir, sizeof(dir), "/sys/class/hwmon/%s", entry)) {
		return 0;
	}
	board_resolve(b, dir, sizeof(dir));
	if (!board_path(path, sizeof(path), "%s/name", dir) || sysfs_read_str(b->fs, path, name, sizeof(name)) <= 0) {
		return 0;
	}
	if (strcmp(name, "ina3221") == 0) {
		probe_ina_hwmon(b, dir);
	} else if (strcmp(name, "ina238") == 0) {
		probe_ina238(b, dir);
	} else if (strcmp(name, "soctherm_oc") == 0) {
		probe_oc(b, dir);
	} else if (strcmp(name, "pwmfan") == 0 || strcmp(name, "pwm-fan") == 0 || strcmp(name, "pwm_fan") == 0 ||
		   strcmp(name, "pwm_tach") == 0) {
		probe_fan_hwmon(b, dir, name);
	}
	return 0;
}

static void
probe_iio_device(struct board *b, const char *dir)
{
	for (unsigned n = 0; n < INA_IIO_CHANNELS; n++) {
		char path[BOARD_PATH_LEN];
		char label[BOARD_PREFIX_LEN];
		if (!board_path(path, sizeof(path), "%s/rail_name_%u", dir, n) ||
		    sysfs_read_str(b->fs, path, label, sizeof(label)) <= 0) {
			continue;
		}
		struct rail *r = add_rail(b, label);
		if (!r || !board_path(r->mw_path, sizeof(r->mw_path), "%s/in_power%u_input", dir, n) ||
		    !board_path(r->mv_path, sizeof(r->mv_path), "%s/in_voltage%u_input", dir, n) ||
		    !board_path(r->ma_path, sizeof(r->ma_path), "%s/in_current%u_input", dir, n) ||
		    !board_path(r->crit_path, sizeof(r->crit_path), "%s/crit_current_limit_%u", dir, n)) {
			continue;
		}
		r->mw_per_unit = 1;
		b->rail_count++;
	}
}

struct iio_walk {
	struct board *b;
	const char *chip_dir;
};

static int
visit_iio_device(const char *entry, void *data)
{
	struct iio_walk *w = data;
	char dir[BOARD_PATH_LEN];
	if (strncmp(entry, "iio:device", 10) == 0 && board_path(dir, sizeof(dir), "%s/%s", w->chip_dir, entry)) {
		probe_iio_device(w->b, dir);
	}
	return 0;
}

/* "6-0040": an I2C client (bus-address), not bind/unbind/uevent/module. */
static bool
i2c_client_name(const char *s)
{
	size_t bus = strspn(s, "0123456789");
	return bus > 0 && s[bus] == '-' && strlen(s + bus + 1) == 4 && strspn(s + bus + 1, "0123456789abcdef") == 4;
}

static int
visit_iio_chip(const char *entry, void *data)
{
	struct iio_walk *w = data;
	char dir[BOARD_PATH_LEN];
	if (!i2c_client_name(entry) || !board_path(dir, sizeof(dir), "/sys/bus/i2c/drivers/ina3221x/%s", entry)) {
		return 0;
	}
	board_resolve(w->b, dir, sizeof(dir));
	struct iio_walk inner = {.b = w->b, .chip_dir = dir};
	sysfs_list_dir(w->b->fs, dir, visit_iio_device, &inner);
	return 0;
}

void
board_probe_power(struct board *b)
{
	/* JetPack 4 fan first, so it is fan 0 as on those boards */
	add_fan(b, "/sys/devices/pwm-fan/target_pwm", false);
	add_fan(b, "/sys/devices/pwm-fan/rpm_measured", true);

	sysfs_list_dir(b->fs, "/sys/class/hwmon", visit_hwmon, b);

	struct iio_walk iio = {.b = b};
	sysfs_list_dir(b->fs, "/sys/bus/i2c/drivers/ina3221x", visit_iio_chip, &iio);
}

void
board_refresh_power(struct board *b)
{
	for (unsigned i = 0; i < b->rail_count; i++) {
		struct rail *r = &b->rails[i];
		int64_t ma = 0;
		r->crit_ok = r->crit_path[0] && board_read_i64(b, r->crit_path, &ma);
		r->crit_ma = (double)ma;
	}
	for (unsigned i = 0; i < b->oc_count; i++) {
		struct oc_counter *o = &b->ocs[i];
		int64_t v = 0;
		o->throt_ok = board_read_i64(b, o->throt_path, &v);
		o->throt_en = v != 0 ? 1 : 0;
	}
}

static void
sample_rail(struct board *b, struct metric_set *set, const struct rail *r)
{
	int64_t mv, ma, mw, v;
	bool mv_ok = board_read_i64(b, r->mv_path, &mv);
	bool ma_ok = board_read_i64(b, r->ma_path, &ma);
	if (r->mw_path[0]) {
		/* iio (mW) and the INA238 (uW) report power themselves */
		if (board_read_i64(b, r->mw_path, &mw)) {
			board_put(set, (double)mw * r->mw_per_unit, r->prefix, ".mw", NULL);
		}
	} else if (mv_ok && ma_ok) {
		board_put(set, (double)mv * (double)ma / 1000.0, r->prefix, ".mw", NULL);
	}
	if (mv_ok) {
		board_put(set, (double)mv, r->prefix, ".mv", NULL);
	}
	if (ma_ok) {
		board_put(set, (double)ma, r->prefix, ".ma", NULL);
	}
	if (r->crit_ok) {
		board_put(set, r->crit_ma, r->prefix, ".crit_ma", NULL);
	}
	if (r->crit_alarm_path[0] && board_read_i64(b, r->crit_alarm_path, &v)) {
		board_put(set, v != 0 ? 1 : 0, r->prefix, ".crit_alarm", NULL);
	}
	if (r->max_alarm_path[0] && board_read_i64(b, r->max_alarm_path, &v)) {
		board_put(set, v != 0 ? 1 : 0, r->prefix, ".max_alarm", NULL);
	}
}

void
board_sample_power(struct board *b, struct metric_set *set)
{
	for (unsigned i = 0; i < b->rail_count; i++) {
		sample_rail(b, set, &b->rails[i]);
	}
	for (unsigned i = 0; i < b->oc_count; i++) {
		const struct oc_counter *o = &b->ocs[i];
		int64_t v;
		if (board_read_i64(b, o->events_path, &v) && v >= 0) {
			board_put(set, (double)v, o->prefix, ".events", NULL);
		}
		if (o->throt_ok) {
			board_put(set, o->throt_en, o->prefix, ".throttle_enabled", NULL);
		}
	}
	for (unsigned i = 0; i < b->fan_count; i++) {
		int64_t v;
		if (board_read_i64(b, b->fans[i].path, &v) && v >= 0) {
			metric_set_put(set, b->fans[i].name, (double)v);
		}
	}
}
