/* tegra/identity.c: nv_tegra_release, L4T -> JetPack, device-tree compatible. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tegra/identity.h"

static void
test_nv_tegra_release(void **state)
{
	(void)state;
	char l4t[24];
	/* first lines as captured on boards (docs: sysfs-facts.md section 1) */
	assert_int_equal(identity_parse_nv_tegra_release(
		"# R32 (release), REVISION: 6.1, GCID: 27863751, BOARD: t186ref, EABI: aarch64, "
		"DATE: Mon Jul 26 19:36:31 UTC 2021\n", l4t, sizeof(l4t)), 0);
	assert_string_equal(l4t, "32.6.1");
	assert_int_equal(identity_parse_nv_tegra_release(
		"# R35 (release), REVISION: 2.1, GCID: 32413640, BOARD: t186ref, EABI: aarch64, "
		"DATE: Tue Jan 24 23:38:33 UTC 2023\n", l4t, sizeof(l4t)), 0);
	assert_string_equal(l4t, "35.2.1");
	/* two spaces in "Aug  1" */
	assert_int_equal(identity_parse_nv_tegra_release(
		"# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, "
		"DATE: Tue Aug  1 19:57:35 UTC 2023\n", l4t, sizeof(l4t)), 0);
	assert_string_equal(l4t, "35.4.1");
	/* R36 files have more lines; only the first counts */
	assert_int_equal(identity_parse_nv_tegra_release(
		"# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, "
		"DATE: Wed Jan  8 01:49:37 UTC 2025\n"
		"# KERNEL_VARIANT: oot\n"
		"TARGET_USERSPACE_LIB_DIR=nvidia\n"
		"TARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n", l4t, sizeof(l4t)), 0);
	assert_string_equal(l4t, "36.4.3");
	assert_int_equal(identity_parse_nv_tegra_release(
		"# R36 (release), REVISION: 4.7, GCID: 42132812, BOARD: generic, EABI: aarch64, "
		"DATE: Thu Sep 18 22:54:44 UTC 2025\n# KERNEL_VARIANT: oot\n", l4t, sizeof(l4t)), 0);
	assert_string_equal(l4t, "36.4.7");
	/*
	 * JetPack 7.2 on Orin (issue 30): R39 stamps its DATE on a 12-hour clock with AM/PM. R39.2.0: the AGX Orin
	 * and Orin Nano environment reports of /tmp/research30.md section 2 (code-index ids 58103012036,
	 * 68618966171); R39.2.1: the Juxi tutorial's community capture from an Orin (id 70947174191), with the
	 * day padded to two places as R39.2.0's "Mon Jun  1" is (a fixture, id 69505927062, writes it so).
	 */
	assert_int_equal(identity_parse_nv_tegra_release(
		"# R39 (release), REVISION: 2.0, GCID: 45755727, BOARD: generic, EABI: aarch64, "
		"DATE: Mon Jun  1 09:28:48 PM UTC 2026\n"
		"# KERNEL_VARIANT: oot\n"
		"TARGET_USERSPACE_LIB_DIR=nvidia\n"
		"TARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n", l4t, sizeof(l4t)), 0);
	assert_string_equal(l4t, "39.2.0");
	assert_int_equal(identity_parse_nv_tegra_release(
		"# R39 (release), REVISION: 2.1, GCID: 46758480, BOARD: generic, EABI: aarch64, "
		"DATE: Fri Aug  7 05:54:22 AM UTC 2026\n", l4t, sizeof(l4t)), 0);
	assert_string_equal(l4t, "39.2.1");
	/* the tutorial's own rendering, one space before the day */
	assert_int_equal(identity_parse_nv_tegra_release(
		"# R39 (release), REVISION: 2.1, GCID: 46758480, BOARD: generic, EABI: aarch64, "
		"DATE: Fri Aug 7 05:54:22 AM UTC 2026", l4t, sizeof(l4t)), 0);
	assert_string_equal(l4t, "39.2.1");
	/* only the two fields that matter */
	assert_int_equal(identity_parse_nv_tegra_release("# R39 (release), REVISION: 2.0", l4t, sizeof(l4t)), 0);
	assert_string_equal(l4t, "39.2.0");
}

static void
test_nv_tegra_release_garbage(void **state)
{
	(void)state;
	char l4t[24] = "keep";
	assert_int_equal(identity_parse_nv_tegra_release("", l4t, sizeof(l4t)), -EINVAL);
	assert_int_equal(identity_parse_nv_tegra_release("R32 (release), REVISION: 6.1", l4t, sizeof(l4t)), -EINVAL);
	assert_int_equal(identity_parse_nv_tegra_release("# Rxx (release), REVISION: 6.1", l4t, sizeof(l4t)), -EINVAL);
	assert_int_equal(identity_parse_nv_tegra_release("# R32 (release), REVISION: , GCID: 1", l4t, sizeof(l4t)), -EINVAL);
	assert_int_equal(identity_parse_nv_tegra_release("# R32 (release), REVISION: 6., GCID: 1", l4t, sizeof(l4t)), -EINVAL);
	assert_int_equal(identity_parse_nv_tegra_release("# R32 (release), REVISION: 6.1beta", l4t, sizeof(l4t)), -EINVAL);
	assert_int_equal(identity_parse_nv_tegra_release("# R32 (release) REVISION: 6.1", l4t, sizeof(l4t)), -EINVAL);
	assert_int_equal(identity_parse_nv_tegra_release("# R32 (release, REVISION: 6.1", l4t, sizeof(l4t)), -EINVAL);
	/* the version is on the first line or nowhere */
	assert_int_equal(identity_parse_nv_tegra_release(
		"\n# R36 (release), REVISION: 4.3, GCID: 1\n", l4t, sizeof(l4t)), -EINVAL);
	char tiny[5];
	assert_int_equal(identity_parse_nv_tegra_release("# R36 (release), REVISION: 4.3", tiny, sizeof(tiny)), -ENOSPC);
	assert_string_equal(l4t, "keep");
}

static void
expect_jetpack(const char *l4t, const char *want)
{
	char jp[16] = "";
	assert_true(identity_jetpack_for_l4t(l4t, jp, sizeof(jp)));
	assert_string_equal(jp, want);
}

static void
test_jetpack(void **state)
{
	(void)state;
	/* JetPack 4 */
	expect_jetpack("32.1.0", "4.2");
	expect_jetpack("32.4.4", "4.4.1");
	expect_jetpack("32.6.1", "4.6");
	expect_jetpack("32.7.1", "4.6.1");
	expect_jetpack("32.7.6", "4.6.6");
	/* JetPack 5, including the R34 developer previews */
	expect_jetpack("34.1", "5.0 DP");
	expect_jetpack("34.1.0", "5.0 DP");
	expect_jetpack("34.1.1", "5.0.1 DP");
	expect_jetpack("35.1.0", "5.0.2");
	expect_jetpack("35.2.1", "5.1");
	expect_jetpack("35.4.1", "5.1.2");
	expect_jetpack("35.6.0", "5.1.4");
	/* JetPack 6 */
	expect_jetpack("36.3.0", "6.0");
	expect_jetpack("36.4.0", "6.1");
	expect_jetpack("36.4.3", "6.2");
	expect_jetpack("36.4.4", "6.2.1");
	expect_jetpack("36.4.7", "6.2.1");
	expect_jetpack("36.5.0", "6.2.2");
	expect_jetpack("36.5", "6.2.2");
	/* JetPack 7 (issue 22): 38.2.x = 7.0, 38.4.0 = 7.1, 39.0 = 7.2 EA, 39.2 = 7.2; 39.2.1 = 7.2.1 (issue 30) */
	expect_jetpack("38.2.0", "7.0");
	expect_jetpack("38.2.1", "7.0");
	expect_jetpack("38.2.2", "7.0");
	expect_jetpack("38.4.0", "7.1");
	expect_jetpack("39.0.0", "7.2 EA");
	expect_jetpack("39.0", "7.2 EA");
	expect_jetpack("39.2.0", "7.2");
	expect_jetpack("39.2.1", "7.2.1");
	expect_jetpack("39.2.2", "7.2");
	/* a revision the table does not know falls back to the major */
	expect_jetpack("32.9.9", "4.x");
	expect_jetpack("34.0.1", "5.x");
	expect_jetpack("35.9.0", "5.x");
	expect_jetpack("36.6.0", "6.x");
	expect_jetpack("38.3.0", "7.x");
	expect_jetpack("38.4.1", "7.x");
	expect_jetpack("39.9.1", "7.x");
	expect_jetpack("36", "6.x");

	char jp[16] = "keep";
	assert_false(identity_jetpack_for_l4t("28.2.1", jp, sizeof(jp)));
	assert_false(identity_jetpack_for_l4t("40.0.0", jp, sizeof(jp)));
	assert_false(identity_jetpack_for_l4t("", jp, sizeof(jp)));
	assert_false(identity_jetpack_for_l4t("36.4.x", jp, sizeof(jp)));
	assert_false(identity_jetpack_for_l4t("36..4", jp, sizeof(jp)));
	assert_false(identity_jetpack_for_l4t("36.4.3.1", jp, sizeof(jp)));
	assert_string_equal(jp, "keep");
	char tiny[4];
	assert_false(identity_jetpack_for_l4t("32.7.1", tiny, sizeof(tiny)));
}

static void
expect_compatible(const char *list, size_t len, const char *soc, const char *module)
{
	char s[32] = "x";
	char m[32] = "x";
	identity_parse_compatible(list, len, s, sizeof(s), m, sizeof(m));
	assert_string_equal(s, soc);
	assert_string_equal(m, module);
}

static void
test_compatible(void **state)
{
	(void)state;
	/* Orin Nano devkit: carrier+module, module, SoC */
	static const char orin_nano[] =
		"nvidia,p3768-0000+p3767-0005\0nvidia,p3767-0005\0nvidia,tegra234\0";
	expect_compatible(orin_nano, sizeof(orin_nano) - 1, "tegra234", "p3767-0005");
	/* the same without the final NUL, and the two-entry form jtop's fixture uses */
	expect_compatible(orin_nano, sizeof(orin_nano) - 2, "tegra234", "p3767-0005");
	static const char short_form[] = "nvidia,p3767-0005\0nvidia,tegra234";
	expect_compatible(short_form, sizeof(short_form) - 1, "tegra234", "p3767-0005");
	/* only the joined form: the module is the part after '+' */
	static const char joined[] = "nvidia,p3449-0000-b00+p3448-0002\0nvidia,jetson-nano\0nvidia,tegra210\0";
	expect_compatible(joined, sizeof(joined) - 1, "tegra210", "p3448-0002");
	/* AGX Orin devkit: p3737 carrier + p3701 module */
	static const char agx[] = "nvidia,p3737-0000+p3701-0005\0nvidia,p3701-0005\0nvidia,tegra234\0";
	expect_compatible(agx, sizeof(agx) - 1, "tegra234", "p3701-0005");
	/* not a Jetson */
	static const char pi[] = "raspberrypi,5-model-b\0brcm,bcm2712\0";
	expect_compatible(pi, sizeof(pi) - 1, "", "");
	expect_compatible("", 0, "", "");
	expect_compatible(NULL, 0, "", "");
	/* near misses */
	static const char near[] = "nvidia,tegra\0nvidia,tegra234x\0nvidia,p376-0005\0nvidia,p3767-00a5\0";
	expect_compatible(near, sizeof(near) - 1, "", "");

	/* a buffer too small leaves the field empty rather than cut */
	char s[5] = "x";
	char m[8] = "x";
	identity_parse_compatible(orin_nano, sizeof(orin_nano) - 1, s, sizeof(s), m, sizeof(m));
	assert_string_equal(s, "");
	assert_string_equal(m, "");
}

static void
test_serial(void **state)
{
	(void)state;
	char out[64] = "untouched";
	assert_int_equal(identity_parse_serial("1422019012345", out, sizeof(out)), 0);
	assert_string_equal(out, "1422019012345");
	assert_int_equal(identity_parse_serial("TQ-1a2B_3.4", out, sizeof(out)), 0);
	assert_string_equal(out, "TQ-1a2B_3.4");
	/* never programmed, empty, odd bytes, too long: refused, OUT untouched */
	strcpy(out, "untouched");
	assert_int_equal(identity_parse_serial("0000000000000", out, sizeof(out)), -EINVAL);
	assert_int_equal(identity_parse_serial("0", out, sizeof(out)), -EINVAL);
	assert_int_equal(identity_parse_serial("", out, sizeof(out)), -EINVAL);
	assert_int_equal(identity_parse_serial("14 22", out, sizeof(out)), -EINVAL);
	assert_int_equal(identity_parse_serial("14\xff" "22", out, sizeof(out)), -EINVAL);
	assert_int_equal(identity_parse_serial("1234567890123456789012345678901234567890123456789012345678901234", out,
						sizeof(out)),
			 -EINVAL);
	assert_int_equal(identity_parse_serial("123456", out, 4), -EINVAL);
	assert_string_equal(out, "untouched");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nv_tegra_release),
		cmocka_unit_test(test_nv_tegra_release_garbage),
		cmocka_unit_test(test_jetpack),
		cmocka_unit_test(test_compatible),
		cmocka_unit_test(test_serial),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
