/*
 * tegrastats line parser: the grammar's section 10 checklist, what a line
 * must survive, one test per point.
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

/* ---- the grammar's section 10 checklist ---- */

/* 1. optional stamp, month first */
static void
test_check1_stamp(void **state)
{
	(void)state;
	struct tegrastats_info info;
	struct parse_error err;
	parse_ok("11-15-2024 08:38:09 RAM 1/2MB", &info);
	assert_true(info.stamp.present);
	assert_int_equal(info.stamp.month, 11);
	assert_int_equal(info.stamp.day, 15);
	assert_int_equal(info.stamp.year, 2024);
	assert_int_equal(info.stamp.hour, 8);
	assert_int_equal(info.stamp.minute, 38);
	assert_int_equal(info.stamp.second, 9);
	expect_metric("ram.used_mb", 1);

	parse_ok("RAM 1/2MB", &info);
	assert_false(info.stamp.present);

	parse_ok("02-29-2024 00:00:00 RAM 1/2MB", &info); /* leap day */
	assert_int_equal(info.stamp.day, 29);
	parse_ok("12-31-2026 23:59:60 RAM 1/2MB", &info); /* leap second */

	static const char *const bad[] = {
		"13-01-2024 10:00:00 RAM 1/2MB", /* month 13: day-first stamps are rejected */
		"00-10-2024 10:00:00 RAM 1/2MB",
		"02-29-2023 10:00:00 RAM 1/2MB",
		"04-31-2024 10:00:00 RAM 1/2MB",
		"01-00-2024 10:00:00 RAM 1/2MB",
		"01-01-2024 24:00:00 RAM 1/2MB",
		"01-01-2024 10:60:00 RAM 1/2MB",
		"01-01-2024 10:00:61 RAM 1/2MB",
		"1-01-2024 10:00:00 RAM 1/2MB",
		"01-01-24 10:00:00 RAM 1/2MB",
		"01-01-2024 10:00:00RAM 1/2MB",
		"01-01-2024T10:00:00 RAM 1/2MB",
		"2024-01-01 10:00:00 RAM 1/2MB",
		"01-01-2024 10:00:00",
		"01-01-2024 10:00",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &info, &err), -EINVAL);
		assert_int_equal(set.count, 0);
		assert_int_equal(err.column, 1);
	}
}

/* 2. any order; unknown tokens skipped and counted */
static void
test_check2_order_and_unknown(void **state)
{
	(void)state;
	struct tegrastats_info info;
	/* the 2019 emulator put SWAP after CPU; shuffle everything */
	parse_ok("VDD_IN 100/90 gpu@40C CPU [10%@100,30%@200] APE 25 SWAP 5/10MB (cached 1MB) "
		 "GR3D_FREQ 7%@[300] RAM 1/2MB (lfb 1x4MB) EMC_FREQ 3%@400",
		 &info);
	static const struct kv want[] = {
		RAIL("vdd_in", 100, 90), TEMP("gpu", 40), ON(0, 10, 100), ON(1, 30, 200),
		{ "cpu.load_pct", 20 }, ENG_MHZ("ape", 25),
		{ "swap.used_mb", 5 }, { "swap.total_mb", 10 }, { "swap.cached_mb", 1 },
		{ "gpu.load_pct", 7 }, { "gpu.gpc.0.freq_mhz", 300 }, { "gpu.freq_mhz", 300 },
		{ "ram.used_mb", 1 }, { "ram.total_mb", 2 },
		{ "emc.load_pct", 3 }, { "emc.freq_mhz", 400 },
		END,
	};
	expect_exactly(want, 22, "shuffled");
	assert_int_equal(info.tokens, 8);
	assert_int_equal(info.unknown_tokens, 0);

	/*
	 * Future JetPack 8 tokens that fit the generic shapes are understood,
	 * not skipped: NAME X%@MHz and NAME MHz are engines, NAME@T C a sensor.
	 */
	parse_ok("RAM 1/2MB NVENC2 5%@1000 FOO_BAR 12 XYZ@33C NVDLA2 off DLA9_FREQ @[5,9]",
		 &info);
	static const struct kv future[] = {
		{ "ram.used_mb", 1 }, { "ram.total_mb", 2 },
		ENG_LOAD("nvenc2", 5, 1000), ENG_MHZ("foo_bar", 12), TEMP("xyz", 33),
		ENG_OFF("nvdla2"), ENG_MHZ("dla9", 9),
		END,
	};
	expect_exactly(future, 11, "future tokens");
	assert_int_equal(info.tokens, 6);
	assert_int_equal(info.unknown_tokens, 0);

	/*
	 * Tokens that fit no shape are skipped and counted once each, together
	 * with the following words that cannot start a token: "FAN 2300rpm",
	 * "zram0 12/34", "{x}", "FOO@bar", "@[1,2]".
	 */
	parse_ok("RAM 1/2MB FAN 2300rpm GPU@40C zram0 12/34 APE 25 {x} VDD_IN 1/2 FOO@bar "
		 "@[1,2] VIC off",
		 &info);
	static const struct kv skipped[] = {
		{ "ram.used_mb", 1 }, { "ram.total_mb", 2 }, TEMP("gpu", 40), ENG_MHZ("ape", 25),
		RAIL("vdd_in", 1, 2), ENG_OFF("vic"),
		END,
	};
	expect_exactly(skipped, 8, "unknown tokens");
	assert_int_equal(info.tokens, 5);
	assert_int_equal(info.unknown_tokens, 5);
	expect_absent("engine.fan.on");

	/* an upper-case word whose value is another token: only the word is skipped */
	parse_ok("RAM 1/2MB MODE MAXN VDD_IN 1/2", &info);
	assert_int_equal(info.unknown_tokens, 2);
	expect_metric("power.vdd_in.mw", 1);
	assert_int_equal(set.count, 4);

	/* a line of nothing but unknown tokens is not a tegrastats line */
	struct parse_error err;
	assert_int_equal(parse("FAN 2300rpm zram0 12/34", &info, &err), -EINVAL);
	assert_string_equal(err.msg, "no tegrastats token in line");
	assert_int_equal(set.count, 0);
}

/* 3. CPU list: off entries, any length, per-core clocks, old form */
static void
test_check3_cpu(void **state)
{
	(void)state;
	struct tegrastats_info info;
	parse_ok("CPU [off,off,off]", &info);
	static const struct kv all_off[] = { OFF(0), OFF(1), OFF(2), END };
	expect_exactly(all_off, 3, "all off"); /* no cpu.load_pct without online cores */

	parse_ok("CPU [44%@1421,49%@2031,off,5%@102]", &info);
	static const struct kv mixed[] = {
		ON(0, 44, 1421), ON(1, 49, 2031), OFF(2), ON(3, 5, 102), { "cpu.load_pct", 98 / 3.0 },
		END,
	};
	expect_exactly(mixed, 11, "mixed");

	parse_ok("cpu [2%,5%,off,11%]@1734", &info);
	static const struct kv old[] = {
		ON(0, 2, 1734), ON(1, 5, 1734), OFF(2), ON(3, 11, 1734), { "cpu.load_pct", 6 },
		END,
	};
	expect_exactly(old, 11, "old form");

	/* a percentage without clock (non-root, documented "CPU [X%,Y%]") */
	parse_ok("CPU [7%,9%]", &info);
	static const struct kv noclock[] = {
		{ "cpu.0.online", 1 }, { "cpu.0.load_pct", 7 }, { "cpu.1.online", 1 },
		{ "cpu.1.load_pct", 9 }, { "cpu.load_pct", 8 },
		END,
	};
	expect_exactly(noclock, 5, "no clock");

	/* 14 cores (Thor-sized) */
	parse_ok("CPU [1%@1,1%@1,1%@1,1%@1,1%@1,1%@1,1%@1,1%@1,1%@1,1%@1,1%@1,1%@1,1%@1,3%@1]",
		 &info);
	assert_int_equal(set.count, 14 * 3 + 1);
	expect_metric("cpu.13.load_pct", 3);
	expect_metric("cpu.load_pct", 16 / 14.0);

	/* AGX Xavier's "CPU 466/466" is a rail, not a CPU list */
	parse_ok("CPU 466/466", &info);
	static const struct kv rail[] = { RAIL("cpu", 466, 466), END };
	expect_exactly(rail, 2, "CPU rail");

	struct parse_error err;
	static const char *const bad[] = {
		"CPU []", "CPU [1%@1,]", "CPU [1@1]", "CPU [101%@1]", "CPU [1%@]", "CPU [1%@1,of]",
		"CPU [1%@1]@", "CPU [1%@1]x", "CPU [1%@1, 2%@1]", "CPU [-1%@1]", "cpu [1%]@",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &info, &err), -EINVAL);
		assert_int_equal(err.column, 1);
		assert_int_equal(set.count, 0);
	}
}

/* 4. EMC_FREQ / GR3D_FREQ in every form, or absent */
static void
test_check4_emc_gr3d(void **state)
{
	(void)state;
	struct tegrastats_info info;
	parse_ok("EMC_FREQ 0% GR3D_FREQ 39%", &info);
	static const struct kv pct[] = { { "emc.load_pct", 0 }, { "gpu.load_pct", 39 }, END };
	expect_exactly(pct, 2, "percent only");

	parse_ok("EMC_FREQ 18%@3199 GR3D_FREQ 0%@76", &info);
	static const struct kv at[] = {
		{ "emc.load_pct", 18 }, { "emc.freq_mhz", 3199 }, { "gpu.load_pct", 0 },
		{ "gpu.freq_mhz", 76 },
		END,
	};
	expect_exactly(at, 4, "x%@f");

	/* the array form must not half-match as "x%" */
	parse_ok("GR3D_FREQ 12%@[1300,900]", &info);
	static const struct kv two[] = {
		{ "gpu.load_pct", 12 }, { "gpu.gpc.0.freq_mhz", 1300 }, { "gpu.gpc.1.freq_mhz", 900 },
		{ "gpu.freq_mhz", 1300 },
		END,
	};
	expect_exactly(two, 4, "two GPCs");

	parse_ok("GR3D_FREQ @[100,1000,10]", &info);
	static const struct kv nopct[] = {
		{ "gpu.gpc.0.freq_mhz", 100 }, { "gpu.gpc.1.freq_mhz", 1000 },
		{ "gpu.gpc.2.freq_mhz", 10 }, { "gpu.freq_mhz", 1000 },
		END,
	};
	expect_exactly(nopct, 4, "no percentage");

	parse_ok("RAM 1/2MB", &info); /* absent: nothing emitted */
	expect_absent("gpu.load_pct");
	expect_absent("emc.load_pct");

	parse_ok("EMC 0%@1600 GR3D 0%@998", &info); /* old names */
	expect_metric("emc.freq_mhz", 1600);
	expect_metric("gpu.freq_mhz", 998);
	assert_int_equal(set.count, 4);

	struct parse_error err;
	static const char *const bad[] = {
		"GR3D_FREQ 0", "GR3D_FREQ 0%@", "GR3D_FREQ 0%@[", "GR3D_FREQ 0%@[1,", "GR3D_FREQ @",
		"GR3D_FREQ 0%@[1]x", "GR3D_FREQ 0%@[]", "GR3D_FREQ 101%", "GR3D_FREQ 0%@100001",
		"EMC_FREQ off", "EMC_FREQ 5", "GR3D_FREQ", "EMC_FREQ",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &info, &err), -EINVAL);
		assert_int_equal(err.column, 1);
	}
}

/* 5. GR3D2_FREQ, also mixed with non-root forms, in any order */
static void
test_check5_gr3d2(void **state)
{
	(void)state;
	struct tegrastats_info info;
	parse_ok("GR3D_FREQ 10%@300 GR3D2_FREQ 55%@600", &info);
	static const struct kv both[] = {
		{ "gpu.load_pct", 10 }, /* GR3D2's 55% does not replace it */
		{ "gpu.gpc.0.freq_mhz", 300 }, { "gpu.gpc.1.freq_mhz", 600 }, { "gpu.freq_mhz", 600 },
		END,
	};
	expect_exactly(both, 4, "GR3D + GR3D2");

	parse_ok("GR3D2_FREQ 55%@600 GR3D_FREQ 10%@300", &info); /* reversed */
	expect_exactly(both, 4, "GR3D2 first");

	parse_ok("GR3D_FREQ 0% GR3D2_FREQ 0%@0", &info);
	static const struct kv nonroot[] = { { "gpu.load_pct", 0 }, { "gpu.gpc.1.freq_mhz", 0 }, END };
	expect_exactly(nonroot, 2, "non-root mix");

	parse_ok("GR3D_FREQ 0%@114 GR3D2_FREQ 0%", &info);
	static const struct kv pct2[] = { { "gpu.load_pct", 0 }, { "gpu.freq_mhz", 114 }, END };
	expect_exactly(pct2, 2, "GR3D2 percentage only");
}

/* 6. engines: off, bare MHz, X%@MHz, indexed names, _FREQ suffix */
static void
test_check6_engines(void **state)
{
	(void)state;
	struct tegrastats_info info;
	parse_ok("NVENC 716 NVDEC 40%@115 NVJPG1 off VIC_FREQ 729 PVA0_FREQ off NVDLA1 3%@[800,900] "
		 "OFA 2% APE 174",
		 &info);
	static const struct kv want[] = {
		ENG_MHZ("nvenc", 716), ENG_LOAD("nvdec", 40, 115), ENG_OFF("nvjpg1"),
		ENG_MHZ("vic", 729), ENG_OFF("pva0"), ENG_LOAD("nvdla1", 3, 900),
		{ "engine.ofa.on", 1 }, { "engine.ofa.load_pct", 2 }, ENG_MHZ("ape", 174),
		END,
	};
	expect_exactly(want, 16, "engines");

	struct parse_error err;
	assert_int_equal(parse("NVENC 101%@5", &info, &err), -EINVAL);
	assert_string_equal(err.msg, "value out of range: NVENC");
	assert_int_equal(parse("NVENC 5%@100001", &info, &err), -EINVAL);
}

/* 7. temperatures */
static void
test_check7_temperatures(void **state)
{
	(void)state;
	struct tegrastats_info info;
	parse_ok("CPU@32C GPU@41.5C AO@37.25C thermal@31.35C tj@44.562C cv0@-256C CV1@-256.0C "
		 "PMIC@100C BCPU@-45C iwlwifi@34C Tboard@30C soc1@50C/51.5C X-Y@1C",
		 &info);
	static const struct kv want[] = {
		TEMP("cpu", 32), TEMP("gpu", 41.5), TEMP("ao", 37.25), TEMP("thermal", 31.35),
		TEMP("tj", 44.562), TEMP("bcpu", -45), TEMP("iwlwifi", 34), TEMP("tboard", 30),
		TEMP2("soc1", 50, 51.5), TEMP("x_y", 1),
		END,
	};
	expect_exactly(want, 11, "temperatures");
	assert_int_equal(info.tokens, 13); /* -256 and PMIC are understood, not emitted */
	expect_absent("temp.pmic_c");
	expect_absent("temp.cv0_c");

	/* CPU@ (JetPack 4/5) and cpu@ (JetPack 6/7) are one sensor */
	parse_ok("CPU@40C", &info);
	expect_metric("temp.cpu_c", 40);
	parse_ok("cpu@41C", &info);
	expect_metric("temp.cpu_c", 41);

	parse_ok("AO@-0.0C", &info);
	double zero;
	assert_true(metric_set_get(&set, "temp.ao_c", &zero));
	assert_false(signbit(zero));

	/* decimals are exact to the last printed digit */
	parse_ok("tj@53.968C", &info);
	double got;
	assert_true(metric_set_get(&set, "temp.tj_c", &got));
	assert_true(got == 53.968);

	struct parse_error err;
	static const char *const bad[] = {
		"CPU@", "CPU@44", "CPU@44.C", "CPU@.5C", "CPU@44.5", "CPU@44.5CX", "CPU@4x.5C",
		"CPU@44C/", "CPU@44C/45", "CPU@44C/45C/46C", "CPU@600C", "CPU@-300C", "CPU@--1C",
		"CPU@1234567890123456C",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &info, &err), -EINVAL);
		assert_int_equal(err.column, 1);
	}
}

/* 8. rails: bare, mW, three values, duplicated NC, names shared with sensors */
static void
test_check8_rails(void **state)
{
	(void)state;
	struct tegrastats_info info;
	parse_ok("POM_5V_IN 1750/1628 VDD_IN 2763mW/2846mW VDD_GPU_SOC 5139mW/5000mW/5180mW "
		 "NC 0mW/0mW NC 0mW/0mW NC 0mW/0mW/0mW GPU 466/466 GPU@30C",
		 &info);
	static const struct kv want[] = {
		RAIL("pom_5v_in", 1750, 1628), RAIL("vdd_in", 2763, 2846),
		RAIL3("vdd_gpu_soc", 5139, 5000, 5180), RAIL("gpu", 466, 466), TEMP("gpu", 30),
		END,
	};
	expect_exactly(want, 10, "rails");
	assert_int_equal(info.tokens, 8);
	expect_absent("power.nc.mw");

	struct parse_error err;
	static const char *const bad[] = {
		"VDD_IN 1mW/2", "VDD_IN 1/2mW", "VDD_IN 1mW/2mW/3mW/4mW", "VDD_IN 1/", "VDD_IN 1mW",
		"VDD_IN 1mW/2mW/", "VDD_IN 1000001/1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &info, &err), -EINVAL);
		assert_int_equal(err.column, 1);
		assert_int_equal(set.count, 0);
	}
	/* mid-line, a malformed rail value is an unknown token, not a cut */
	parse_ok("VDD_IN 1mW/2 RAM 1/2MB", &info);
	assert_int_equal(info.unknown_tokens, 1);
	assert_int_equal(set.count, 2);
}

/* 9. missing sections are not errors */
static void
test_check9_missing_sections(void **state)
{
	(void)state;
	struct tegrastats_info info;
	parse_ok("RAM 1/2MB", &info);
	assert_int_equal(set.count, 2);
	parse_ok("CPU [1%@2]", &info);
	assert_int_equal(set.count, 4);
	parse_ok("cpu@40C", &info);
	assert_int_equal(set.count, 1);
	/* a wrapped paste's tail is still readable */
	parse_ok("VDD_CPU_GPU_CV 449mW/449mW VDD_SOC 1431mW/1431mW", &info);
	assert_int_equal(set.count, 4);
}

/* 10. lfb units; IRAM "kB(lfb" glued */
static void
test_check10_memory_units(void **state)
{
	(void)state;
	struct tegrastats_info info;
	parse_ok("RAM 4722/7844MB (lfb 1x512kB) IRAM 0/252kB(lfb 252kB) SWAP 1/2MB(cached 0MB)",
		 &info);
	static const struct kv want[] = {
		{ "ram.used_mb", 4722 }, { "ram.total_mb", 7844 }, { "iram.used_kb", 0 },
		{ "iram.total_kb", 252 }, { "swap.used_mb", 1 }, { "swap.total_mb", 2 },
		{ "swap.cached_mb", 0 },
		END,
	};
	expect_exactly(want, 7, "units");
	parse_ok("RAM 2/4GB IRAM 1024/2048B", &info);
	expect_metric("ram.used_mb", 2048);
	expect_metric("ram.total_mb", 4096);
	expect_metric("iram.used_kb", 1);
	expect_metric("iram.total_kb", 2);

	struct parse_error err;
	static const char *const bad[] = {
		"RAM 1/2", "RAM 1/2M", "RAM 1/2MX", "RAM 1/2MB (lfb", "RAM 1/2MB (lfb 2x2MB",
		"RAM 1/2MB (lfb 2x2", "RAM 1/2MB (lfb x2MB)", "RAM 1/2MB (cached 1MB)",
		"SWAP 1/2MB (lfb 1MB)", "RAM 1/2MB (lfb 1TB)", "RAM /2MB", "RAM 1MB", "RAM",
		"IRAM 0/252kB(lfb", "RAM 1/2MB (lfb 2x2MB)x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &info, &err), -EINVAL);
		assert_int_equal(err.column, 1);
	}
}

/* 11. totals change between releases: nothing is checked against a board */
static void
test_check11_totals_free(void **state)
{
	(void)state;
	struct tegrastats_info info;
	parse_ok("RAM 3168/7771MB", &info);
	expect_metric("ram.total_mb", 7771);
	parse_ok("RAM 3168/6851MB", &info);
	expect_metric("ram.total_mb", 6851);
	/* used above total is printed data, not a parse error */
	parse_ok("SWAP 5/4MB", &info);
	expect_metric("swap.used_mb", 5);
}

/* 12. cut-off lines: the brief's examples */
static void
test_check12_cut_examples(void **state)
{
	(void)state;
	struct tegrastats_info info;
	struct parse_error err;
	static const char *const cut[] = {
		"RAM 1733/15827MB (lfb 3283x4MB) CPU [1%@1190,0%@11",
		"RAM 3503/7337MB VDD_IN 4915mW/",
		"RAM 3503/7337MB GR3D_FREQ 0%@[11",
		"RAM 1923/",
		"RAM 1923/3964MB (lfb 2x2MB) SWAP",
		"RAM 1923/3964MB VDD_IN 4915",
		"RAM 1923/3964MB NC 0",
		"RAM 1923/3964MB MTS fg 1% bg",
		"RAM 1923/3964MB EDP limit",
		"RAM 1923/3964MB NVDEC of",
		"RAM 1923/3964MB GPU@41.",
	};
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		assert_int_equal(parse(cut[i], &info, &err), -EINVAL);
		assert_int_equal(set.count, 0);
		assert_true(err.column >= 1);
	}
	/* well formed although the paste was cut: nothing can tell */
	parse_ok("RAM 1/2MB SYS5V 2053/205", &info);
	expect_metric("power.sys5v.avg_mw", 205);
	/* a last bare number is an engine clock only for engine names */
	parse_ok("RAM 1/2MB APE 15", &info);
	expect_metric("engine.ape.freq_mhz", 15);
	parse_ok("RAM 1/2MB FAN 45", &info);
	assert_int_equal(set.count, 2);
	assert_int_equal(info.unknown_tokens, 1);
	parse_ok("RAM 1/2MB FAN 45 APE 15", &info); /* not last: an engine */
	expect_metric("engine.fan.freq_mhz", 45);
	/* "NVDEC 40" may be "NVDEC 40%@115" cut: skipped, never 40 MHz */
	parse_ok("RAM 1/2MB NVDEC 40", &info);
	assert_int_equal(set.count, 2);
	assert_int_equal(info.unknown_tokens, 1);
	expect_absent("engine.nvdec.freq_mhz");

	/* after a JetPack 7 a/b/c rail, a last a/b is a cut a/b/c */
	assert_int_equal(parse("VDD_CPU_CV 1mW/2mW/3mW VDD_GPU_SOC 5120mW/4990mW", &info, &err),
			 -EINVAL);
	assert_string_equal(err.msg, "value cut off: VDD_GPU_SOC");
	assert_int_equal(err.column, 24);
	assert_int_equal(set.count, 0);
	/* two-value temperatures alone say nothing about the rails: a/b is current/average */
	parse_ok("cpu@51C/52C VDD_GPU_SOC 5120mW/4990mW", &info);
	expect_metric("power.vdd_gpu_soc.mw", 5120);
	expect_metric("power.vdd_gpu_soc.avg_mw", 4990);
	expect_absent("power.vdd_gpu_soc.max_mw");
	parse_ok("cpu@51C VDD_GPU_SOC 5120mW/4990mW", &info); /* JetPack 5/6 shape */
	expect_metric("power.vdd_gpu_soc.avg_mw", 4990);
	parse_ok("VDD_CPU_CV 1mW/2mW/3mW VDD_GPU_SOC 5120mW/4990mW APE 1", &info); /* not last */
	expect_metric("power.vdd_gpu_soc.avg_mw", 4990);
	expect_absent("power.vdd_gpu_soc.max_mw");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check1_stamp),
		cmocka_unit_test(test_check2_order_and_unknown),
		cmocka_unit_test(test_check3_cpu),
		cmocka_unit_test(test_check4_emc_gr3d),
		cmocka_unit_test(test_check5_gr3d2),
		cmocka_unit_test(test_check6_engines),
		cmocka_unit_test(test_check7_temperatures),
		cmocka_unit_test(test_check8_rails),
		cmocka_unit_test(test_check9_missing_sections),
		cmocka_unit_test(test_check10_memory_units),
		cmocka_unit_test(test_check11_totals_free),
		cmocka_unit_test(test_check12_cut_examples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
