/*
 * Generic hwmon chips (NVMe drives, ACPI zones, add-on fan controllers)
 * read through libsensors. Chips the board code reads itself are skipped:
 * ina3221 rails, soctherm_oc counters, pwmfan/pwm_fan/pwm_tach fans and
 * every "*_thermal"/"*-thermal" chip (thermal zones are read directly),
 * and UCSI's USB-C power supplies ("ucsi-source-psy-*": negotiated USB-PD
 * values, not measurements).
 *
 * libsensors always reads the real /sys, so this is used only when the
 * board root is "/". hwmon_sensors.c is the only file that includes
 * <sensors/sensors.h>; it is built only when HAVE_SENSORS is 1 (config.h),
 * otherwise the inline fallbacks below report -ENOTSUP.
 *
 * Metrics: temp.CHIP_LABEL_c (degrees C), fan.CHIP_N.rpm, hwmon.CHIP.LABEL_mv,
 * where CHIP is the chip prefix ("nvme", "acpitz"; a second chip with the
 * same prefix gets "nvme1", ...) and LABEL the sensor label lower-cased with
 * other characters turned into '_' ("Composite" -> "composite").
 */
#ifndef TEGRAWATCH_HWMON_SENSORS_H
#define TEGRAWATCH_HWMON_SENSORS_H

#include <errno.h>
#include <stdbool.h>

#include "build_config.h"

struct hwmon_sensors;
struct metric_set;

#if HAVE_SENSORS

/**
 * Initialises libsensors (global state: only one may be open at a time,
 * -EBUSY otherwise). Returns 0 and *OUT, or -errno.
 */
int hwmon_sensors_open(struct hwmon_sensors **out);

/** Releases libsensors; NULL is a no-op. */
void hwmon_sensors_destroy(struct hwmon_sensors *hs);

/**
 * Adds the current value of every readable temperature, fan and voltage
 * input of the generic chips to SET. Unreadable inputs are left out.
 * Returns 0, or -ENOSPC when SET filled up.
 */
int hwmon_sensors_sample(struct hwmon_sensors *hs, struct metric_set *set);

/** True for chip names the board code reads itself (see above). */
bool hwmon_sensors_chip_skipped(const char *prefix);

#else

static inline int
hwmon_sensors_open(struct hwmon_sensors **out)
{
	(void)out;
	return -ENOTSUP;
}

static inline void
hwmon_sensors_destroy(struct hwmon_sensors *hs)
{
	(void)hs;
}

static inline int
hwmon_sensors_sample(struct hwmon_sensors *hs, struct metric_set *set)
{
	(void)hs;
	(void)set;
	return -ENOTSUP;
}

#endif

#endif
