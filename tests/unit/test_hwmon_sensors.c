/*
 * tegra/hwmon_sensors.c through the real libsensors. libsensors only reads
 * the real /sys, so the test re-runs this binary with --probe inside a
 * private mount namespace (`unshare --mount`, or with --user
 * --map-root-user when not root) where tests/fixtures/hwmon-generic/ is
 * bind-mounted over /sys/class/hwmon, and compares the printed metrics.
 *
 * The fixture (values invented): hwmon0 nvme with labelled temperatures,
 * hwmon2 acpitz without labels and hwmon5 nct7802 with fans, a voltage and
 * a temperature are reported; hwmon1 ina3221, hwmon3 cpu_thermal and hwmon4
 * pwmfan are read by the board code and must be skipped; hwmon6 and hwmon7
 * are UCSI USB-C power supplies (the name format of laptops quoted by
 * jetson_stats PR #900, unconfirmed on a Jetson: issue 30), negotiated
 * USB-PD values that must be skipped too.
 *
 * When the namespace cannot be set up the test FAILS with the reason: a
 * silent pass would hide that the wrapper was never exercised.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/metrics.h"
#include "tegra/hwmon_sensors.h"

static const char expected[] =
	"fan.nct7802_1.rpm 2450.000\n"
	"fan.nct7802_2.rpm 0.000\n"
	"hwmon.nct7802.in0_mv 3312.000\n"
	"temp.acpitz_temp1_c 27.800\n"
	"temp.nct7802_temp1_c 31.500\n"
	"temp.nvme_composite_c 38.850\n"
	"temp.nvme_sensor_1_c 41.850\n";

/* --probe: print what hwmon_sensors sees on this (namespaced) system. */
static int
probe(void)
{
	static struct metric_set set;
	struct hwmon_sensors *hs = NULL;
	int err = hwmon_sensors_open(&hs);
	if (err < 0) {
		fprintf(stderr, "hwmon_sensors_open: %s\n", strerror(-err));
		return 2;
	}
	struct hwmon_sensors *second = NULL;
	if (hwmon_sensors_open(&second) != -EBUSY) {
		fprintf(stderr, "a second open must give -EBUSY\n");
		return 2;
	}
	metric_set_clear(&set);
	err = hwmon_sensors_sample(hs, &set);
	hwmon_sensors_destroy(hs);
	if (err < 0) {
		fprintf(stderr, "hwmon_sensors_sample: %s\n", strerror(-err));
		return 2;
	}
	metric_set_sort(&set);
	for (size_t i = 0; i < set.count; i++) {
		if (!metric_name_valid(set.items[i].name)) {
			fprintf(stderr, "invalid metric name %s\n", set.items[i].name);
			return 2;
		}
		printf("%s %.3f\n", set.items[i].name, set.items[i].value);
	}
	return 0;
}

static void
test_skip_list(void **state)
{
	(void)state;
	assert_true(hwmon_sensors_chip_skipped("ina3221"));
	assert_true(hwmon_sensors_chip_skipped("soctherm_oc"));
	assert_true(hwmon_sensors_chip_skipped("pwmfan"));
	assert_true(hwmon_sensors_chip_skipped("pwm_fan"));
	assert_true(hwmon_sensors_chip_skipped("pwm-fan"));
	assert_true(hwmon_sensors_chip_skipped("pwm_tach"));
	assert_true(hwmon_sensors_chip_skipped("cpu_thermal"));
	assert_true(hwmon_sensors_chip_skipped("tj-thermal"));
	assert_true(hwmon_sensors_chip_skipped("ucsi-source-psy-USBC000:001"));
	assert_true(hwmon_sensors_chip_skipped("ucsi_source_psy_USBC000:001"));
	assert_false(hwmon_sensors_chip_skipped("nvme"));
	assert_false(hwmon_sensors_chip_skipped("acpitz"));
	assert_false(hwmon_sensors_chip_skipped("coretemp"));
	assert_false(hwmon_sensors_chip_skipped("thermal"));
	assert_false(hwmon_sensors_chip_skipped("ina3221x"));
	assert_false(hwmon_sensors_chip_skipped("ucsi"));
}

static bool
have_program(const char *name)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

static void
test_fixture_in_namespace(void **state)
{
	(void)state;
	if (!have_program("unshare") || !have_program("mount")) {
		fail_msg("cannot test hwmon_sensors: unshare(1) or mount(8) is not installed");
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';

	/* /sys/class/hwmon is missing on machines without any hwmon device */
	static const char script[] =
		"set -e; "
		"if [ -d /sys/class/hwmon ]; then mount --bind \"$1\" /sys/class/hwmon; "
		"else mount -t tmpfs tmpfs /sys/class && mkdir /sys/class/hwmon && "
		"mount --bind \"$1\" /sys/class/hwmon; fi; "
		"exec \"$2\" --probe";
	const char *ns = geteuid() == 0 ? "unshare --mount --propagation private"
					: "unshare --user --map-root-user --mount --propagation private";
	char cmd[2 * PATH_MAX + 512];
	snprintf(cmd, sizeof(cmd), "%s sh -c '%s' sh '%s/hwmon-generic' '%s' 2>&1", ns, script,
		 FIXTURES_DIR, self);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char out[4096];
	size_t len = fread(out, 1, sizeof(out) - 1, p);
	out[len] = '\0';
	int status = pclose(p);
	if (status != 0) {
		fail_msg("cannot test hwmon_sensors: `%s` failed (status %d); mount namespaces "
			 "not permitted here? output:\n%s", ns, status, out);
	}
	assert_string_equal(out, expected);
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
		return probe();
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skip_list),
		cmocka_unit_test(test_fixture_in_namespace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
