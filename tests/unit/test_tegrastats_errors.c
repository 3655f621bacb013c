/*
 * tegrastats line parser: JetPack 7 token forms and what a newer JetPack may
 * print instead, error reports (column and message), unknown tokens, limits,
 * and sensor-name normalisation.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tegrastats_lines.h"

/* ---- JetPack 7 token forms, and what a newer JetPack may print instead ---- */

/* a line refused: where and why */
struct err_case {
	const char *line;
	int column;
	const char *msg;
};

static void
test_jp7_forms(void **state)
{
	(void)state;
	struct tegrastats_info info;
	struct parse_error err;

	/* the shapes: current / running average / running maximum */
	parse_ok("VDD_IN 3462mW/3522mW/3582mW VDD_GPU_SOC 5139mW/5139mW/5139mW", &info);
	static const struct kv rails[] = {
		RAIL3("vdd_in", 3462, 3522, 3582), RAIL3("vdd_gpu_soc", 5139, 5139, 5139), END,
	};
	expect_exactly(rails, 6, "three-value rails");
	assert_int_equal(info.tokens, 2);

	/* two-value temperatures: current and maximum; -256 hides that value only */
	parse_ok("cpu@45.375C/45.812C gpu@-256C/47.5C soc0@44C/-256C cv0@-256C/-256C PMIC@50C/50C",
		 &info);
	static const struct kv temps[] = {
		TEMP2("cpu", 45.375, 45.812), { "temp_max.gpu_c", 47.5 }, TEMP("soc0", 44), END,
	};
	expect_exactly(temps, 4, "two-value temperatures");
	assert_int_equal(info.tokens, 5);
	assert_int_equal(info.unknown_tokens, 0);

	/* indexed engines keep their index: never merged with each other or the plain name */
	parse_ok("NVJPG 5%@600 NVJPG0 off NVJPG1 12%@729 NVENC0 23%@998 NVDEC0 off NVDLA0 off "
		 "PVA1_FREQ 704 NVDLA1 55%@1600 PVA0_FREQ off",
		 &info);
	static const struct kv engines[] = {
		ENG_LOAD("nvjpg", 5, 600), ENG_OFF("nvjpg0"), ENG_LOAD("nvjpg1", 12, 729),
		ENG_LOAD("nvenc0", 23, 998), ENG_OFF("nvdec0"), ENG_OFF("nvdla0"),
		ENG_LOAD("nvdla1", 55, 1600), ENG_OFF("pva0"), ENG_MHZ("pva1", 704),
		END,
	};
	expect_exactly(engines, 18, "indexed engines");

	/* GR3D_FREQ @[f,f,f] without a load: test_check4_emc_gr3d and thor_jp7_line */

	/*
	 * A lone "amW" rail: skipped and counted once, the rest of the line
	 * kept; last in the line it is a cut "amW/bmW" (the line's one error),
	 * unless the line already showed lone values.
	 */
	parse_ok("RAM 1/2MB VDD_IN 5139mW VDD_SOC 1200mW/1100mW/1300mW", &info);
	assert_int_equal(info.unknown_tokens, 1);
	assert_int_equal(info.tokens, 2);
	expect_absent("power.vdd_in.mw");
	expect_absent("power.vdd_in.avg_mw");
	expect_absent("power.vdd_in.max_mw");
	expect_metric("power.vdd_soc.mw", 1200);
	assert_int_equal(set.count, 5);
	assert_int_equal(parse("RAM 1/2MB VDD_IN 5139mW", &info, &err), -EINVAL);
	assert_string_equal(err.msg, "value cut off: VDD_IN");
	assert_int_equal(err.column, 11);
	assert_int_equal(set.count, 0);
	parse_ok("RAM 1/2MB VDD_IN 5139mW VDD_SOC 1200mW", &info);
	assert_int_equal(info.unknown_tokens, 2);
	assert_int_equal(set.count, 2);
	expect_absent("power.vdd_soc.mw");

	/*
	 * Malformed JetPack 7 values in the middle of a line: each skipped
	 * and counted once (the value word is not a second unknown token), no
	 * metric of its name.
	 */
	static const char *const mid[] = {
		"RAM 1/2MB VDD_IN 5139mW/ APE 5",
		"RAM 1/2MB VDD_IN 1mW/2mW/3mW/4mW APE 5",
		"RAM 1/2MB VDD_IN 1mW/2mW/3 APE 5",
		"RAM 1/2MB VDD_IN 1mW/2mW/3W APE 5",
		"RAM 1/2MB VDD_IN 1/2/3mW APE 5",
		"RAM 1/2MB VDD_IN 1mW//3mW APE 5",
	};
	for (size_t i = 0; i < sizeof(mid) / sizeof(mid[0]); i++) {
		parse_ok(mid[i], &info);
		if (info.unknown_tokens != 1 || info.tokens != 2 || set.count != 4) {
			fail_msg("\"%s\": %u unknown, %u tokens, %zu metrics", mid[i], info.unknown_tokens,
				 info.tokens, set.count);
		}
		expect_absent("power.vdd_in.mw");
		expect_absent("power.vdd_in.avg_mw");
		expect_absent("power.vdd_in.max_mw");
		expect_metric("engine.ape.freq_mhz", 5);
	}

	/* cut off at the end, or a known token (strict) malformed: the line's one error */
	static const struct err_case bad[] = {
		{ "RAM 1/2MB VDD_IN 5139mW/", 11, "value cut off: VDD_IN" },
		{ "RAM 1/2MB VDD_IN 5139mW/5000mW/", 11, "value cut off: VDD_IN" },
		{ "RAM 1/2MB VDD_IN 5139mW/5000mW/51", 11, "value cut off: VDD_IN" },
		{ "RAM 1/2MB GR3D_FREQ @[1000,", 11, "GR3D_FREQ value cut off" },
		{ "RAM 1/2MB GR3D_FREQ @[1000, APE 5", 11, "bad GR3D_FREQ value" },
		{ "RAM 1/2MB GR3D_FREQ @[1000,1000]x APE 5", 11, "bad GR3D_FREQ value" },
		{ "RAM 1/2MB cpu@45.375C/", 11, "temperature cut off" },
		{ "RAM 1/2MB cpu@45.375C/45.8", 11, "temperature cut off" },
		{ "RAM 1/2MB cpu@45C/46C/47C APE 5", 11, "bad temperature" },
		{ "RAM 1/2MB cpu@45C/600C", 11, "temperature out of range" },
		{ "RAM 1/2MB VDD_IN 1mW/2mW/1000001mW", 11, "value out of range: VDD_IN" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		int r = parse(bad[i].line, &info, &err);
		if (r != -EINVAL || err.column != bad[i].column || strcmp(err.msg, bad[i].msg) != 0) {
			fail_msg("\"%s\": got %d col %d \"%s\", expected col %d \"%s\"", bad[i].line, r,
				 err.column, err.msg, bad[i].column, bad[i].msg);
		}
		assert_int_equal(set.count, 0);
	}

	/*
	 * A triple against the rule (current above maximum): emitted as
	 * printed, not counted (see emit_rail() for why).
	 */
	parse_ok("VDD_IN 3700mW/3522mW/3582mW", &info);
	static const struct kv odd[] = { RAIL3("vdd_in", 3700, 3522, 3582), END };
	expect_exactly(odd, 3, "inconsistent triple");
	assert_int_equal(info.unknown_tokens, 0);
}

/*
 * Every prefix of every real line: either an error with an empty set and a
 * column inside the prefix, or a success whose metrics are all in the full
 * line's parse with the same values. The one exception, documented in
 * tegrastats.h: when the cut splits an integer, that integer reads smaller
 * ("SYS5V 2053/205"), so every value that changed must be exactly the
 * cut-short number (all cores for the old "cpu [..]@17", a GPC clock and
 * gpu.freq_mhz, a rail average, ...).
 */

/* ---- error reports ---- */

static void
test_error_column_and_message(void **state)
{
	(void)state;
	static const struct err_case cases[] = {
		{ "", 1, "empty line" },
		{ " \r\n", 1, "empty line" },
		{ "hello world", 1, "no tegrastats token in line" },
		{ "CPU [1%@1190,0%@11", 1, "unterminated CPU list" },
		{ "RAM 1923/3964MB CPU [1%@1190,0%@11", 17, "unterminated CPU list" },
		{ "RAM 1923/3964MB CPU [1%@1190;0%@11]", 17, "bad CPU list entry" },
		{ "RAM 1923/3964MB (lfb 2x2MB) VDD_IN 4915mW/", 29, "value cut off: VDD_IN" },
		{ "RAM 1923/3964MB GR3D_FREQ 0%@[11", 17, "GR3D_FREQ value cut off" },
		{ "RAM 1923/3964MB GR3D_FREQ 0%@[11 APE 25", 17, "bad GR3D_FREQ value" },
		{ "RAM 1923/3964MB GR3D_FREQ 120%", 17, "GR3D_FREQ value out of range" },
		{ "RAM 1923/", 1, "RAM value cut off" },
		{ "RAM 1923/x SWAP 1/2MB", 1, "bad RAM value" },
		{ "RAM 1/2MB (lfb 2x2MB", 1, "unterminated (lfb ..) group" },
		{ "SWAP 1/2MB (cached 1", 1, "unterminated (cached ..) group" },
		{ "RAM 1/2MB cpu@44.5", 11, "temperature cut off" },
		{ "RAM 1/2MB cpu@4x.5C APE 25", 11, "bad temperature" },
		{ "RAM 1/2MB cpu@501C", 11, "temperature out of range" },
		{ "RAM 1/2MB cpu@ APE 25", 11, "temperature without value" },
		{ "RAM 1/2MB VDD_IN", 11, "value missing (line cut off?): VDD_IN" },
		{ "RAM 1/2MB VDD_IN 12", 11, "value cut off: VDD_IN" },
		{ "RAM 1/2MB MTS fg 1% bg", 11, "MTS token cut off" },
		{ "RAM 1/2MB MTS bg 1% fg 2%", 11, "bad MTS token" },
		{ "RAM 1/2MB EDP limit x", 11, "bad EDP token" },
		{ "13-01-2024 10:00:00 RAM 1/2MB", 1, "timestamp out of range" },
		{ "1-01-2024 10:00:00 RAM 1/2MB", 1, "bad timestamp, expected MM-DD-YYYY HH:MM:SS" },
		{ "  RAM 1/", 3, "RAM value cut off" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tegrastats_info info;
		struct parse_error err;
		memset(&err, 0x55, sizeof(err));
		int r = parse(cases[i].line, &info, &err);
		if (r != -EINVAL || err.column != cases[i].column ||
		    strcmp(err.msg, cases[i].msg) != 0) {
			fail_msg("\"%s\": got %d col %d \"%s\", expected col %d \"%s\"", cases[i].line, r,
				 err.column, err.msg, cases[i].column, cases[i].msg);
		}
		assert_int_equal(err.line, 0);
		assert_int_equal(set.count, 0);
	}
}

/* On error OUT is emptied even when the error comes after good tokens. */
static void
test_error_leaves_set_empty(void **state)
{
	(void)state;
	struct tegrastats_info info = { .tokens = 77, .unknown_tokens = 77 };
	struct parse_error err;
	assert_int_equal(parse("RAM 1/2MB SWAP 3/4MB CPU [1%@2] cpu@40C VDD_IN 1mW/", &info, &err),
			 -EINVAL);
	assert_int_equal(set.count, 0);
	assert_null(metric_set_find(&set, "ram.used_mb"));
	assert_int_equal(info.tokens, 77); /* info untouched on failure */
	assert_int_equal(err.column, 41);
}

/* A NUL byte anywhere in the line is an error at its column: the tokens around it would be lost. */
static void
test_nul_byte_is_an_error(void **state)
{
	(void)state;
	struct tegrastats_info info;
	struct parse_error err;
	static const char torn[] = "RAM 1/2MB SWAP 3/4MB \0\0 CPU [1%@2] GR3D_FREQ 0%@76";
	metric_set_clear(&set);
	assert_int_equal(tegrastats_parse_line(torn, sizeof(torn) - 1, &set, &info, &err), -EINVAL);
	assert_int_equal(err.column, 22);
	assert_string_equal(err.msg, "NUL byte in the line");
	assert_int_equal(set.count, 0);
	static const char inside[] = "RAM 1/2MB CPU [1%@2] GR3D\0_FREQ 0%@76";
	metric_set_clear(&set);
	assert_int_equal(tegrastats_parse_line(inside, sizeof(inside) - 1, &set, &info, &err), -EINVAL);
	assert_int_equal(err.column, 26);
	static const char last[] = "RAM 1/2MB CPU [1%@2]\0";
	metric_set_clear(&set);
	assert_int_equal(tegrastats_parse_line(last, sizeof(last) - 1, &set, &info, &err), -EINVAL);
	assert_int_equal(set.count, 0);
}

/* A record without its newline was cut off, even between two tokens where the rest would parse. */
static void
test_record_needs_its_newline(void **state)
{
	(void)state;
	struct tegrastats_info info;
	struct parse_error err;
	static const char whole[] = "RAM 1/2MB SWAP 3/4MB CPU [1%@2] GR3D_FREQ 0%@76\n";
	metric_set_clear(&set);
	assert_int_equal(tegrastats_parse_record(whole, sizeof(whole) - 1, &set, &info, &err), 0);
	expect_metric("gpu.freq_mhz", 76);
	/* cut between tokens: "RAM 1/2MB SWAP 3/4MB" alone is a valid line, but not the whole one */
	metric_set_clear(&set);
	assert_int_equal(tegrastats_parse_record(whole, 20, &set, &info, &err), -EINVAL);
	assert_int_equal(err.column, 21);
	assert_string_equal(err.msg, "line cut off (no newline at its end)");
	assert_int_equal(set.count, 0);
	metric_set_clear(&set);
	assert_int_equal(tegrastats_parse_record(whole, 0, &set, &info, &err), -EINVAL);
	static const char crlf[] = "RAM 1/2MB CPU [1%@2]\r\n";
	metric_set_clear(&set);
	assert_int_equal(tegrastats_parse_record(crlf, sizeof(crlf) - 1, &set, &info, &err), 0);
}

/* The line need not be NUL-terminated; "\r\n" and trailing blanks go. */
static void
test_length_and_terminators(void **state)
{
	(void)state;
	struct tegrastats_info info;
	struct parse_error err;
	const char text[] = "RAM 1/2MB APE 25XXXX";
	metric_set_clear(&set);
	assert_int_equal(tegrastats_parse_line(text, 16, &set, &info, &err), 0);
	expect_metric("engine.ape.freq_mhz", 25);
	parse_ok("RAM 1/2MB APE 25\r\n", &info);
	expect_metric("engine.ape.freq_mhz", 25);
	parse_ok("RAM 1/2MB\t APE 25  \t", &info);
	expect_metric("engine.ape.freq_mhz", 25);
	/* an embedded NUL is an error for the line (test_nul_byte_is_an_error) */
	const char nul[] = "RAM 1/2MB \0x APE 25";
	metric_set_clear(&set);
	assert_int_equal(tegrastats_parse_line(nul, sizeof(nul) - 1, &set, &info, &err), -EINVAL);
	assert_int_equal(err.column, 11);
}

/* Names that would not fit a metric are skipped as unknown. */
static void
test_long_names(void **state)
{
	(void)state;
	struct tegrastats_info info;
	parse_ok("RAM 1/2MB ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJX 5 "
		 "abcdefghijabcdefghijabcdefghijabcdefghijx@40C ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJ 6 "
		 "APE 1",
		 &info);
	assert_int_equal(info.unknown_tokens, 2);
	expect_metric("engine.abcdefghijabcdefghijabcdefghijabcdefghij.freq_mhz", 6);
	assert_int_equal(set.count, 6);
	for (size_t i = 0; i < set.count; i++) {
		assert_true(metric_name_valid(set.items[i].name));
	}
}

/* Too many metrics for the set is an error, not a silent loss. */
static void
test_set_full(void **state)
{
	(void)state;
	static char line[20000];
	size_t at = 0;
	for (unsigned i = 0; i < 300; i++) {
		at += (size_t)snprintf(line + at, sizeof(line) - at, "E%u 5 ", i);
	}
	struct tegrastats_info info;
	struct parse_error err;
	assert_int_equal(parse(line, &info, &err), -EINVAL);
	assert_string_equal(err.msg, "too many metrics in one line");
	assert_int_equal(set.count, 0);
}

/* ---- sensor names ---- */

static void
expect_sensor(const char *in, const char *want)
{
	char buf[64];
	size_t n = tegra_sensor_name(in, strlen(in), buf, sizeof(buf));
	assert_int_equal(n, strlen(want));
	assert_string_equal(buf, want);
}

static void
test_sensor_name(void **state)
{
	(void)state;
	expect_sensor("CPU-therm", "cpu");
	expect_sensor("cpu-thermal", "cpu");
	expect_sensor("thermal-fan-est", "thermal");
	expect_sensor("Tdiode_tegra", "tdiode");
	expect_sensor("Tboard_tegra", "tboard");
	expect_sensor("PMIC-Die", "pmic");
	expect_sensor("iwlwifi", "iwlwifi");
	expect_sensor("GPU", "gpu");
	expect_sensor("soc0", "soc0");
	expect_sensor("tj-thermal", "tj");
	expect_sensor("AO-therm", "ao");
	expect_sensor("BCPU-therm", "bcpu");
	expect_sensor("cv0-thermal", "cv0");
	expect_sensor("nvme.0 sensor", "nvme_0_sensor");
	expect_sensor("CPU-THERM", "cpu");

	char buf[8];
	/* a suffix that is the whole name stays */
	assert_int_equal(tegra_sensor_name("-therm", 6, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "_therm");
	assert_int_equal(tegra_sensor_name("-", 1, buf, sizeof(buf)), 0);
	assert_int_equal(tegra_sensor_name("", 0, buf, sizeof(buf)), 0);
	assert_int_equal(tegra_sensor_name("--", 2, buf, sizeof(buf)), 0);
	assert_int_equal(tegra_sensor_name("abcdefgh", 8, buf, sizeof(buf)), 0); /* too small */
	assert_int_equal(tegra_sensor_name("abcdefg", 7, buf, sizeof(buf)), 7);
	/* LEN counts, not the NUL */
	assert_int_equal(tegra_sensor_name("GPU-therm and more", 9, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "gpu");

	assert_true(tegra_sensor_is_placeholder("pmic"));
	assert_true(tegra_sensor_is_placeholder("pmic_die"));
	assert_false(tegra_sensor_is_placeholder("cpu"));
	assert_false(tegra_sensor_is_placeholder("pm"));
	assert_false(tegra_sensor_is_placeholder(""));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jp7_forms),
		cmocka_unit_test(test_error_column_and_message),
		cmocka_unit_test(test_error_leaves_set_empty),
		cmocka_unit_test(test_nul_byte_is_an_error),
		cmocka_unit_test(test_record_needs_its_newline),
		cmocka_unit_test(test_length_and_terminators),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_set_full),
		cmocka_unit_test(test_sensor_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
