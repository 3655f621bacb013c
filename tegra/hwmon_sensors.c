/*
 * The libsensors wrapper: the only file that includes <sensors/sensors.h>.
 * See hwmon_sensors.h for what is read and how metrics are named.
 */
#include "hwmon_sensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sensors/sensors.h>

#include "core/metrics.h"
#include "core/text.h"
#include "core/xalloc.h"

#define NAME_PART_MAX 40
#define PREFIXES_MAX 64

struct hwmon_sensors {
	int unused;
};

/* libsensors keeps global state, so at most one handle is open. */
static bool sensors_open;

int
hwmon_sensors_open(struct hwmon_sensors **out)
{
	if (!out) {
		return -EINVAL;
	}
	if (sensors_open) {
		return -EBUSY;
	}
	struct hwmon_sensors *hs = xcalloc(1, sizeof(*hs));
	/* NULL: the default configuration (/etc/sensors3.conf, sensors.d) */
	int err = sensors_init(NULL);
	if (err != 0) {
		free(hs);
		return -EIO;
	}
	sensors_open = true;
	*out = hs;
	return 0;
}

void
hwmon_sensors_destroy(struct hwmon_sensors *hs)
{
	if (!hs) {
		return;
	}
	sensors_cleanup();
	sensors_open = false;
	free(hs);
}

bool
hwmon_sensors_chip_skipped(const char *prefix)
{
	static const char *const board_chips[] = {
		"ina3221", "soctherm_oc", "pwmfan", "pwm_fan", "pwm-fan", "pwm_tach",
	};
	for (size_t i = 0; i < sizeof(board_chips) / sizeof(board_chips[0]); i++) {
		if (strcmp(prefix, board_chips[i]) == 0) {
			return true;
		}
	}
	/*
	 * UCSI's USB-C power supplies (ucsi-source-psy-USBC000:001, or with
	 * '_' where the kernel cleans hwmon names) show the negotiated USB-PD
	 * contract, not a measurement: jetson_stats PR #900 skips them too.
	 */
	if (strncmp(prefix, "ucsi-", 5) == 0 || strncmp(prefix, "ucsi_", 5) == 0) {
		return true;
	}
	return text_has_suffix(prefix, "_thermal") || text_has_suffix(prefix, "-thermal");
}

/*
 * Lower-cases S into OUT, turning runs of other characters into one '_'
 * and dropping them at both ends ("Package id 0" -> "package_id_0").
 * Returns false when nothing is left.
 */
static bool
sanitize(const char *s, char *out, size_t size)
{
	size_t n = 0;
	bool pending = false;
	for (; *s && n + 1 < size; s++) {
		char c = *s;
		if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
		}
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum) {
			pending = n > 0;
			continue;
		}
		if (pending && n + 2 < size) {
			out[n++] = '_';
		}
		pending = false;
		out[n++] = c;
	}
	out[n] = '\0';
	return n > 0;
}

/* The number in a feature name: "fan2" -> "2". */
static const char *
feature_index(const char *name)
{
	while (*name && (*name < '0' || *name > '9')) {
		name++;
	}
	return *name ? name : NULL;
}

static bool
read_input(const sensors_chip_name *chip, const sensors_feature *feat, sensors_subfeature_type type, double *value)
{
	const sensors_subfeature *sub = sensors_get_subfeature(chip, feat, type);
	if (!sub || !(sub->flags & SENSORS_MODE_R)) {
		return false;
	}
	return sensors_get_value(chip, sub->number, value) == 0;
}

static int
put(struct metric_set *set, double value, const char *kind, const char *chip, const char *label)
{
	int err;
	if (strcmp(kind, "temp") == 0) {
		err = metric_set_putf(set, value, "temp.%s_%s_c", chip, label);
	} else if (strcmp(kind, "fan") == 0) {
		err = metric_set_putf(set, value, "fan.%s_%s.rpm", chip, label);
	} else {
		err = metric_set_putf(set, value, "hwmon.%s.%s_mv", chip, label);
	}
	/* a name too long for the set is dropped, not an error */
	return err == -ENOSPC ? err : 0;
}

static int
sample_chip(const sensors_chip_name *chip, const char *chip_part, struct metric_set *set)
{
	const sensors_feature *feat;
	int fnr = 0;
	while ((feat = sensors_get_features(chip, &fnr)) != NULL) {
		const char *kind;
		sensors_subfeature_type type;
		double scale = 1.0;
		switch (feat->type) {
		case SENSORS_FEATURE_TEMP:
			kind = "temp";
			type = SENSORS_SUBFEATURE_TEMP_INPUT;
			break;
		case SENSORS_FEATURE_FAN:
			kind = "fan";
			type = SENSORS_SUBFEATURE_FAN_INPUT;
			break;
		case SENSORS_FEATURE_IN:
			kind = "in";
			type = SENSORS_SUBFEATURE_IN_INPUT;
			scale = 1000.0; /* libsensors gives volts */
			break;
		default:
			continue;
		}
		double value;
		if (!read_input(chip, feat, type, &value)) {
			continue;
		}
		char label[NAME_PART_MAX];
		if (type == SENSORS_SUBFEATURE_FAN_INPUT) {
			const char *idx = feature_index(feat->name);
			if (!idx || !sanitize(idx, label, sizeof(label))) {
				continue;
			}
		} else {
			char *raw = sensors_get_label(chip, feat);
			bool ok = raw && sanitize(raw, label, sizeof(label));
			free(raw);
			if (!ok) {
				continue;
			}
		}
		int err = put(set, value * scale, kind, chip_part, label);
		if (err < 0) {
			return err;
		}
	}
	return 0;
}

int
hwmon_sensors_sample(struct hwmon_sensors *hs, struct metric_set *set)
{
	if (!hs || !set) {
		return -EINVAL;
	}
	/* prefixes seen so far, to number a second chip of the same kind */
	const char *seen[PREFIXES_MAX];
	size_t seen_count = 0;
	const sensors_chip_name *chip;
	int nr = 0;
	while ((chip = sensors_get_detected_chips(NULL, &nr)) != NULL) {
		if (!chip->prefix || hwmon_sensors_chip_skipped(chip->prefix)) {
			continue;
		}
		char base[NAME_PART_MAX];
		if (!sanitize(chip->prefix, base, sizeof(base))) {
			continue;
		}
		unsigned same = 0;
		for (size_t i = 0; i < seen_count; i++) {
			if (strcmp(seen[i], chip->prefix) == 0) {
				same++;
			}
		}
		if (seen_count < PREFIXES_MAX) {
			seen[seen_count++] = chip->prefix;
		}
		char part[NAME_PART_MAX + 12];
		if (same == 0) {
			snprintf(part, sizeof(part), "%s", base);
		} else {
			snprintf(part, sizeof(part), "%s%u", base, same);
		}
		int err = sample_chip(chip, part, set);
		if (err < 0) {
			return err;
		}
	}
	return 0;
}
