/*
 * tegrastats line parser: every real captured line (tests/fixtures/tegrastats)
 * against a table of expected metrics written by hand from the line, lines of
 * the shapes no fixture holds (values made up), and every line cut off at
 * every byte. The grammar's checklist: test_tegrastats_grammar.c; JetPack 7
 * forms, error reports and sensor names: test_tegrastats_errors.c.
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

/* ---- expected-value tables ---- */

struct expect {
	const char *file;
	unsigned index; /* data line of the file, from 0 */
	size_t count;   /* metrics, counted by hand */
	bool stamp;
	int year, month, day, hour, minute, second;
	const struct kv *kv;
};

/* agx_orin_jetpack5 block A: GR3D_FREQ 0%@[0,0], CV0-2 and GPU at -256, two NC rails */
static const struct kv orin_agx_a[] = {
	{ "ram.used_mb", 4321 }, { "ram.total_mb", 62801 },
	{ "swap.used_mb", 19 }, { "swap.total_mb", 31400 }, { "swap.cached_mb", 0 },
	ON(0, 0, 729), ON(1, 0, 729), ON(2, 0, 729), ON(3, 0, 729), ON(4, 0, 729),
	ON(5, 0, 729), ON(6, 0, 729), ON(7, 0, 729), ON(8, 0, 729), ON(9, 0, 729),
	ON(10, 0, 729), ON(11, 0, 729),
	{ "cpu.load_pct", 0 },
	{ "emc.load_pct", 0 }, { "emc.freq_mhz", 2133 },
	{ "gpu.load_pct", 0 }, { "gpu.gpc.0.freq_mhz", 0 }, { "gpu.gpc.1.freq_mhz", 0 },
	{ "gpu.freq_mhz", 0 },
	ENG_MHZ("vic", 729), ENG_MHZ("ape", 174),
	TEMP("cpu", 44.562), TEMP("tboard", 32), TEMP("soc2", 40.093), TEMP("tdiode", 33),
	TEMP("soc0", 41.093), TEMP("tj", 44.343), TEMP("soc1", 41.25),
	RAIL("vdd_gpu_soc", 2340, 2340), RAIL("vdd_cpu_cv", 390, 390),
	RAIL("vin_sys_5v0", 4025, 4025), RAIL("vddq_vdd2_1v8ao", 301, 301),
	END,
};

/* agx_orin_jetpack5 block B, 1st line: GR3D_FREQ x%@f + GR3D2_FREQ, NVJPG1 bare MHz */
static const struct kv orin_agx_b1[] = {
	{ "ram.used_mb", 1205 }, { "ram.total_mb", 30623 },
	{ "swap.used_mb", 0 }, { "swap.total_mb", 15311 }, { "swap.cached_mb", 0 },
	ON(0, 0, 729), ON(1, 0, 729), ON(2, 1, 729), ON(3, 0, 729), ON(4, 0, 729),
	ON(5, 0, 730), ON(6, 0, 730), ON(7, 0, 729), ON(8, 0, 729), ON(9, 0, 729),
	ON(10, 0, 729), ON(11, 0, 729),
	{ "cpu.load_pct", 1.0 / 12 },
	{ "emc.load_pct", 0 }, { "emc.freq_mhz", 204 },
	{ "gpu.load_pct", 0 }, { "gpu.gpc.0.freq_mhz", 114 }, { "gpu.gpc.1.freq_mhz", 114 },
	{ "gpu.freq_mhz", 114 },
	ENG_MHZ("nvjpg1", 729), ENG_MHZ("vic", 729), ENG_MHZ("ape", 233),
	TEMP("cpu", 43.5), TEMP("tdiode", 32.5), TEMP("soc2", 40.062), TEMP("soc0", 40.5),
	TEMP("gpu", 38.156), TEMP("soc1", 39.125),
	RAIL("vdd_gpu_soc", 4788, 4788), RAIL("vdd_cpu_cv", 798, 798),
	RAIL("vin_sys_5v0", 3842, 3842), RAIL("vddq_vdd2_1v8ao", 707, 707),
	END,
};

static const struct kv orin_agx_b2[] = {
	{ "ram.used_mb", 1206 }, { "ram.total_mb", 30623 },
	{ "swap.used_mb", 0 }, { "swap.total_mb", 15311 }, { "swap.cached_mb", 0 },
	ON(0, 1, 732), ON(1, 0, 729), ON(2, 0, 729), ON(3, 0, 729), ON(4, 0, 729),
	ON(5, 0, 729), ON(6, 0, 729), ON(7, 0, 728), ON(8, 0, 728), ON(9, 0, 729),
	ON(10, 0, 730), ON(11, 0, 729),
	{ "cpu.load_pct", 1.0 / 12 },
	{ "emc.load_pct", 0 }, { "emc.freq_mhz", 204 },
	{ "gpu.load_pct", 0 }, { "gpu.gpc.0.freq_mhz", 114 }, { "gpu.gpc.1.freq_mhz", 114 },
	{ "gpu.freq_mhz", 114 },
	ENG_MHZ("nvjpg1", 729), ENG_MHZ("vic", 729), ENG_MHZ("ape", 233),
	TEMP("cpu", 43.906), TEMP("tdiode", 32.75), TEMP("soc2", 40.093), TEMP("soc0", 40.593),
	TEMP("gpu", 38), TEMP("soc1", 39.031),
	RAIL("vdd_gpu_soc", 4788, 4788), RAIL("vdd_cpu_cv", 798, 798),
	RAIL("vin_sys_5v0", 3842, 3842), RAIL("vddq_vdd2_1v8ao", 707, 707),
	END,
};

/* AGX Xavier root: rails GPU/CPU/SOC/CV share names with temperatures; PMIC@100C */
static const struct kv xavier_agx_a1[] = {
	{ "ram.used_mb", 1736 }, { "ram.total_mb", 15827 },
	ON(0, 1, 1160), ON(1, 2, 1161), ON(2, 0, 1189), ON(3, 0, 1189),
	OFF(4), OFF(5), OFF(6), OFF(7),
	{ "cpu.load_pct", 0.75 },
	{ "emc.load_pct", 0 }, { "emc.freq_mhz", 665 },
	{ "gpu.load_pct", 0 }, { "gpu.freq_mhz", 114 },
	ENG_MHZ("ape", 150),
	{ "mts.fg_pct", 0 }, { "mts.bg_pct", 0 },
	TEMP("ao", 29), TEMP("gpu", 30), TEMP("iwlwifi", 34), TEMP("tboard", 30),
	TEMP("tdiode", 33), TEMP("aux", 29), TEMP("cpu", 30), TEMP("thermal", 29.45),
	RAIL("gpu", 466, 466), RAIL("cpu", 466, 466), RAIL("soc", 932, 932), RAIL("cv", 0, 0),
	RAIL("vddrq", 0, 0), RAIL("sys5v", 1854, 1854),
	END,
};

/* AGX Xavier non-root: EMC_FREQ/GR3D_FREQ percentage only, no APE/MTS */
static const struct kv xavier_agx_a2[] = {
	{ "ram.used_mb", 1733 }, { "ram.total_mb", 15827 },
	ON(0, 1, 1190), ON(1, 0, 1190), ON(2, 0, 1190), ON(3, 0, 1190),
	OFF(4), OFF(5), OFF(6), OFF(7),
	{ "cpu.load_pct", 0.25 },
	{ "emc.load_pct", 0 },
	{ "gpu.load_pct", 4 },
	TEMP("ao", 25.5), TEMP("gpu", 26.5), TEMP("iwlwifi", 32), TEMP("tboard", 27),
	TEMP("tdiode", 29.75), TEMP("aux", 25.5), TEMP("cpu", 26.5), TEMP("thermal", 26.1),
	RAIL("gpu", 621, 621), RAIL("cpu", 465, 465), RAIL("soc", 1397, 1397), RAIL("cv", 0, 0),
	RAIL("vddrq", 0, 0), RAIL("sys5v", 2053, 2053),
	END,
};

/* AGX Xavier 32GB non-root R32.6.1: no rails at all */
static const struct kv xavier_agx_c1[] = {
	{ "ram.used_mb", 3149 }, { "ram.total_mb", 31920 },
	{ "swap.used_mb", 0 }, { "swap.total_mb", 15960 }, { "swap.cached_mb", 0 },
	ON(0, 57, 2188), ON(1, 56, 2188), ON(2, 57, 2188), ON(3, 63, 2188),
	OFF(4), OFF(5), OFF(6), OFF(7),
	{ "cpu.load_pct", (57 + 56 + 57 + 63) / 4.0 },
	{ "emc.load_pct", 0 },
	{ "gpu.load_pct", 39 },
	TEMP("ao", 35), TEMP("gpu", 35), TEMP("tdiode", 37.75), TEMP("aux", 34.5),
	TEMP("cpu", 37.5), TEMP("thermal", 35.55), TEMP("tboard", 35),
	END,
};

static const struct kv xavier_agx_c2[] = {
	{ "ram.used_mb", 3153 }, { "ram.total_mb", 31920 },
	{ "swap.used_mb", 0 }, { "swap.total_mb", 15960 }, { "swap.cached_mb", 0 },
	ON(0, 49, 2188), ON(1, 71, 2188), ON(2, 48, 2188), ON(3, 50, 2188),
	OFF(4), OFF(5), OFF(6), OFF(7),
	{ "cpu.load_pct", (49 + 71 + 48 + 50) / 4.0 },
	{ "emc.load_pct", 0 },
	{ "gpu.load_pct", 42 },
	TEMP("ao", 34.5), TEMP("gpu", 35), TEMP("tdiode", 37.75), TEMP("aux", 34.5),
	TEMP("cpu", 37.5), TEMP("thermal", 35.55), TEMP("tboard", 35),
	END,
};

/* Nano: IRAM glued "(lfb ..)", POM_5V_* bare rails */
static const struct kv nano_a[] = {
	{ "ram.used_mb", 1923 }, { "ram.total_mb", 3964 },
	{ "swap.used_mb", 191 }, { "swap.total_mb", 1982 }, { "swap.cached_mb", 6 },
	{ "iram.used_kb", 0 }, { "iram.total_kb", 252 },
	ON(0, 5, 1224), ON(1, 4, 1224), ON(2, 3, 1224), ON(3, 6, 1224),
	{ "cpu.load_pct", 4.5 },
	{ "emc.load_pct", 0 }, { "emc.freq_mhz", 1600 },
	{ "gpu.load_pct", 0 }, { "gpu.freq_mhz", 76 },
	ENG_MHZ("ape", 25),
	TEMP("pll", 37), TEMP("cpu", 40), TEMP("gpu", 40), TEMP("ao", 45), TEMP("thermal", 40),
	RAIL("pom_5v_in", 1750, 1628), RAIL("pom_5v_gpu", 0, 0), RAIL("pom_5v_cpu", 366, 406),
	END,
};

static const struct kv nano_b[] = {
	{ "ram.used_mb", 1409 }, { "ram.total_mb", 3964 },
	{ "swap.used_mb", 0 }, { "swap.total_mb", 1982 }, { "swap.cached_mb", 0 },
	{ "iram.used_kb", 0 }, { "iram.total_kb", 252 },
	ON(0, 22, 518), ON(1, 67, 518), OFF(2), OFF(3),
	{ "cpu.load_pct", 44.5 },
	{ "emc.load_pct", 0 }, { "emc.freq_mhz", 1600 },
	{ "gpu.load_pct", 0 }, { "gpu.freq_mhz", 76 },
	ENG_MHZ("ape", 25),
	TEMP("pll", 28.5), TEMP("cpu", 32), TEMP("gpu", 30.5), TEMP("ao", 39.5),
	TEMP("thermal", 31.25),
	RAIL("pom_5v_in", 2003, 2003), RAIL("pom_5v_gpu", 0, 0), RAIL("pom_5v_cpu", 320, 320),
	END,
};

/* 8GB Orin JP5: GR3D_FREQ 0%@305 + GR3D2_FREQ 0%@0 -> gpc.0 305, gpc.1 0, max 305 */
static const struct kv orin_8gb[] = {
	{ "ram.used_mb", 3503 }, { "ram.total_mb", 7337 },
	{ "swap.used_mb", 430 }, { "swap.total_mb", 3668 }, { "swap.cached_mb", 1 },
	ON(0, 11, 729), ON(1, 13, 729), ON(2, 9, 729), ON(3, 18, 729), OFF(4), OFF(5),
	{ "cpu.load_pct", 12.75 },
	{ "emc.load_pct", 0 }, { "emc.freq_mhz", 2133 },
	{ "gpu.load_pct", 0 }, { "gpu.gpc.0.freq_mhz", 305 }, { "gpu.gpc.1.freq_mhz", 0 },
	{ "gpu.freq_mhz", 305 },
	ENG_MHZ("vic", 115), ENG_MHZ("ape", 174),
	TEMP("cv0", 42.718), TEMP("cpu", 44.093), TEMP("soc2", 42.625), TEMP("soc0", 43.281),
	TEMP("cv1", 42.25), TEMP("gpu", 41.343), TEMP("tj", 46.968), TEMP("soc1", 46.968),
	TEMP("cv2", 42.875),
	RAIL("vdd_in", 4915, 4915), RAIL("vdd_cpu_gpu_cv", 449, 449), RAIL("vdd_soc", 1431, 1431),
	END,
};

/* Orin Nano JP6 root: engines "off", GR3D_FREQ x%@[f], lower-case sensors */
static const struct kv orin_nano_a[] = {
	{ "ram.used_mb", 6185 }, { "ram.total_mb", 7620 },
	{ "swap.used_mb", 851 }, { "swap.total_mb", 3810 }, { "swap.cached_mb", 1 },
	ON(0, 15, 729), ON(1, 11, 729), ON(2, 14, 729), ON(3, 13, 729), ON(4, 11, 729),
	ON(5, 8, 729),
	{ "cpu.load_pct", 12 },
	{ "emc.load_pct", 43 }, { "emc.freq_mhz", 2133 },
	{ "gpu.load_pct", 63 }, { "gpu.gpc.0.freq_mhz", 621 }, { "gpu.freq_mhz", 621 },
	ENG_OFF("nvdec"), ENG_OFF("nvjpg"), ENG_OFF("nvjpg1"), ENG_OFF("vic"), ENG_OFF("ofa"),
	ENG_MHZ("ape", 200),
	TEMP("cpu", 53.968), TEMP("soc2", 52.437), TEMP("soc0", 50.75), TEMP("gpu", 53.343),
	TEMP("tj", 53.968), TEMP("soc1", 51.656),
	RAIL("vdd_in", 12479, 12479), RAIL("vdd_cpu_gpu_cv", 4667, 4667),
	RAIL("vdd_soc", 2817, 2817),
	END,
};

/* Orin Nano JP6 non-root: no EMC_FREQ at all, GR3D_FREQ percentage only */
static const struct kv orin_nano_b[] = {
	{ "ram.used_mb", 3452 }, { "ram.total_mb", 7620 },
	{ "swap.used_mb", 1518 }, { "swap.total_mb", 16384 }, { "swap.cached_mb", 174 },
	ON(0, 1, 1420), ON(1, 2, 1420), ON(2, 0, 1420), ON(3, 2, 1420), ON(4, 2, 729),
	ON(5, 1, 729),
	{ "cpu.load_pct", 8 / 6.0 },
	{ "gpu.load_pct", 0 },
	TEMP("cpu", 50.031), TEMP("soc2", 49.031), TEMP("soc0", 50), TEMP("gpu", 49.031),
	TEMP("tj", 50.25), TEMP("soc1", 50.25),
	RAIL("vdd_in", 4824, 4824), RAIL("vdd_cpu_gpu_cv", 518, 518), RAIL("vdd_soc", 1475, 1475),
	END,
};

static const struct kv orin_nano_c[] = {
	{ "ram.used_mb", 1488 }, { "ram.total_mb", 7620 },
	{ "swap.used_mb", 253 }, { "swap.total_mb", 12002 }, { "swap.cached_mb", 2 },
	ON(0, 0, 1036), ON(1, 0, 1036), ON(2, 1, 1036), ON(3, 1, 1036), ON(4, 0, 729),
	ON(5, 0, 729),
	{ "cpu.load_pct", 2 / 6.0 },
	{ "gpu.load_pct", 0 },
	TEMP("cpu", 47.875), TEMP("soc2", 46.75), TEMP("soc0", 47.281), TEMP("gpu", 50.218),
	TEMP("tj", 50.218), TEMP("soc1", 48.281),
	RAIL("vdd_in", 4654, 4654), RAIL("vdd_cpu_gpu_cv", 560, 560), RAIL("vdd_soc", 1484, 1484),
	END,
};

/*
 * Orin NX 16GB non-root: "GR3D_FREQ 0% GR3D2_FREQ 0%@0". GPC 1 is known (0),
 * GPC 0 is not, so no gpu.freq_mhz: its max would be a guess.
 */
static const struct kv orin_nx16[] = {
	{ "ram.used_mb", 998 }, { "ram.total_mb", 15389 },
	{ "swap.used_mb", 0 }, { "swap.total_mb", 7694 }, { "swap.cached_mb", 0 },
	ON(0, 4, 883), ON(1, 0, 883), ON(2, 1, 883), ON(3, 0, 883), ON(4, 0, 729),
	ON(5, 0, 729), ON(6, 0, 729), ON(7, 0, 729),
	{ "cpu.load_pct", 5 / 8.0 },
	{ "emc.load_pct", 0 },
	{ "gpu.load_pct", 0 }, { "gpu.gpc.1.freq_mhz", 0 },
	TEMP("cv0", 54.156), TEMP("cpu", 56.843), TEMP("soc2", 54.906), TEMP("soc0", 56.031),
	TEMP("cv1", 54.093), TEMP("gpu", 54.375), TEMP("tj", 57.468), TEMP("soc1", 57.468),
	TEMP("cv2", 54.281),
	END,
};

/* TX1 old format: "cpu [..]@f", EMC, GR3D, AVP, MSENC, EDP limit */
static const struct kv tx1[] = {
	{ "ram.used_mb", 1104 }, { "ram.total_mb", 3995 },
	ON(0, 2, 1734), ON(1, 5, 1734), ON(2, 8, 1734), ON(3, 11, 1734),
	{ "cpu.load_pct", 6.5 },
	{ "emc.load_pct", 0 }, { "emc.freq_mhz", 1600 },
	ENG_LOAD("avp", 1, 115), ENG_MHZ("nvdec", 192), ENG_MHZ("msenc", 192),
	{ "gpu.load_pct", 0 }, { "gpu.freq_mhz", 998 },
	{ "cpu.edp_limit_mhz", 1734 },
	END,
};

/* TX2 JP3: Denver + A57 clocks differ per core, MTS, PMIC@100C */
static const struct kv tx2_jp3_1[] = {
	{ "ram.used_mb", 1685 }, { "ram.total_mb", 7854 },
	{ "swap.used_mb", 278 }, { "swap.total_mb", 8192 }, { "swap.cached_mb", 23 },
	ON(0, 0, 1303), ON(1, 0, 345), ON(2, 0, 345), ON(3, 0, 1419), ON(4, 0, 1420),
	ON(5, 0, 1421),
	{ "cpu.load_pct", 0 },
	{ "emc.load_pct", 0 }, { "emc.freq_mhz", 1866 },
	{ "gpu.load_pct", 0 }, { "gpu.freq_mhz", 140 },
	ENG_MHZ("ape", 150),
	{ "mts.fg_pct", 1 }, { "mts.bg_pct", 8 },
	TEMP("bcpu", 41), TEMP("mcpu", 41), TEMP("gpu", 39), TEMP("pll", 41), TEMP("tboard", 37),
	TEMP("tdiode", 37.25), TEMP("thermal", 39.9),
	RAIL("vdd_in", 1931, 1931), RAIL("vdd_cpu", 231, 231), RAIL("vdd_gpu", 154, 154),
	RAIL("vdd_soc", 385, 385), RAIL("vdd_wifi", 38, 38), RAIL("vdd_ddr", 326, 326),
	END,
};

static const struct kv tx2_jp3_2[] = {
	{ "ram.used_mb", 1685 }, { "ram.total_mb", 7854 },
	{ "swap.used_mb", 278 }, { "swap.total_mb", 8192 }, { "swap.cached_mb", 23 },
	ON(0, 4, 346), ON(1, 0, 344), ON(2, 0, 345), ON(3, 1, 345), ON(4, 0, 345),
	ON(5, 2, 345),
	{ "cpu.load_pct", 7 / 6.0 },
	{ "emc.load_pct", 16 }, { "emc.freq_mhz", 102 },
	{ "gpu.load_pct", 0 }, { "gpu.freq_mhz", 140 },
	ENG_MHZ("ape", 150),
	{ "mts.fg_pct", 0 }, { "mts.bg_pct", 0 },
	TEMP("bcpu", 41), TEMP("mcpu", 41), TEMP("gpu", 39), TEMP("pll", 41), TEMP("tboard", 37),
	TEMP("tdiode", 37.25), TEMP("thermal", 39.9),
	RAIL("vdd_in", 1776, 1853), RAIL("vdd_cpu", 231, 231), RAIL("vdd_gpu", 154, 154),
	RAIL("vdd_soc", 386, 385), RAIL("vdd_wifi", 38, 38), RAIL("vdd_ddr", 250, 288),
	END,
};

static const struct kv tx2_jp3_3[] = {
	{ "ram.used_mb", 1685 }, { "ram.total_mb", 7854 },
	{ "swap.used_mb", 278 }, { "swap.total_mb", 8192 }, { "swap.cached_mb", 23 },
	ON(0, 4, 345), ON(1, 0, 345), ON(2, 0, 345), ON(3, 2, 345), ON(4, 2, 346),
	ON(5, 3, 345),
	{ "cpu.load_pct", 11 / 6.0 },
	{ "emc.load_pct", 16 }, { "emc.freq_mhz", 102 },
	{ "gpu.load_pct", 0 }, { "gpu.freq_mhz", 140 },
	ENG_MHZ("ape", 150),
	{ "mts.fg_pct", 0 }, { "mts.bg_pct", 0 },
	TEMP("bcpu", 40.5), TEMP("mcpu", 40.5), TEMP("gpu", 39), TEMP("pll", 40.5),
	TEMP("tboard", 37), TEMP("tdiode", 37.25), TEMP("thermal", 40.2),
	RAIL("vdd_in", 1738, 1815), RAIL("vdd_cpu", 231, 231), RAIL("vdd_gpu", 154, 154),
	RAIL("vdd_soc", 386, 385), RAIL("vdd_wifi", 38, 38), RAIL("vdd_ddr", 250, 275),
	END,
};

/* TX2 JP4 non-root: no SWAP, VDD_SYS_* rails */
static const struct kv tx2_jp4_a[] = {
	{ "ram.used_mb", 2020 }, { "ram.total_mb", 7852 },
	ON(0, 9, 345), ON(1, 21, 345), ON(2, 25, 345), ON(3, 3, 345), ON(4, 1, 345),
	ON(5, 1, 345),
	{ "cpu.load_pct", 10 },
	{ "emc.load_pct", 0 },
	{ "gpu.load_pct", 0 },
	TEMP("pll", 42.5), TEMP("mcpu", 42.5), TEMP("tboard", 40), TEMP("gpu", 41),
	TEMP("bcpu", 42.5), TEMP("thermal", 41.9), TEMP("tdiode", 41.25),
	RAIL("vdd_sys_gpu", 153, 158), RAIL("vdd_sys_soc", 536, 547),
	RAIL("vdd_4v0_wifi", 633, 527), RAIL("vdd_in", 3140, 3208),
	RAIL("vdd_sys_cpu", 536, 590), RAIL("vdd_sys_ddr", 557, 601),
	END,
};

/* TX2 4GB/NX JP4.6 non-root: Denver cores off, no rails */
#define TX2_NX(name, l0, l3, l4, l5)                                                 \
	static const struct kv name[] = {                                            \
		{ "ram.used_mb", 1689 }, { "ram.total_mb", 3825 },                    \
		{ "swap.used_mb", 0 }, { "swap.total_mb", 1913 }, { "swap.cached_mb", 0 }, \
		ON(0, l0, 345), OFF(1), OFF(2), ON(3, l3, 345), ON(4, l4, 345),        \
		ON(5, l5, 345),                                                        \
		{ "cpu.load_pct", (l0 + l3 + l4 + l5) / 4.0 },                         \
		{ "emc.load_pct", 0 },                                                 \
		{ "gpu.load_pct", 0 },                                                 \
		TEMP("pll", 50.5), TEMP("mcpu", 50.5), TEMP("gpu", 50), TEMP("bcpu", 50.5), \
		TEMP("thermal", 50.3),                                                 \
		END,                                                                   \
	}
TX2_NX(tx2_nx_1, 3, 0, 1, 1);
TX2_NX(tx2_nx_2, 2, 1, 1, 0);
TX2_NX(tx2_nx_3, 2, 0, 0, 0);
TX2_NX(tx2_nx_4, 2, 0, 2, 0);
TX2_NX(tx2_nx_5, 2, 0, 1, 0);
TX2_NX(tx2_nx_6, 2, 2, 1, 1);

/* Xavier NX JP4: bare-integer rails */
static const struct kv xavier_nx_jp4[] = {
	{ "ram.used_mb", 5246 }, { "ram.total_mb", 7771 },
	{ "swap.used_mb", 983 }, { "swap.total_mb", 20269 }, { "swap.cached_mb", 280 },
	ON(0, 47, 1420), ON(1, 23, 1420), ON(2, 32, 1420), ON(3, 22, 1420), ON(4, 31, 1420),
	ON(5, 96, 1420),
	{ "cpu.load_pct", (47 + 23 + 32 + 22 + 31 + 96) / 6.0 },
	{ "emc.load_pct", 2 }, { "emc.freq_mhz", 1600 },
	{ "gpu.load_pct", 0 }, { "gpu.freq_mhz", 1109 },
	ENG_MHZ("ape", 150),
	{ "mts.fg_pct", 1 }, { "mts.bg_pct", 9 },
	TEMP("ao", 29), TEMP("gpu", 31.5), TEMP("aux", 30), TEMP("cpu", 33.5),
	TEMP("thermal", 31.35),
	RAIL("vdd_in", 6140, 5510), RAIL("vdd_cpu_gpu_cv", 2706, 2119), RAIL("vdd_soc", 1074, 1051),
	END,
};

/* Xavier NX JP5: stamp, GR3D_FREQ x%@[f] with one GPC, mW rails */
static const struct kv xavier_nx_jp5_a[] = {
	{ "ram.used_mb", 3168 }, { "ram.total_mb", 6851 },
	{ "swap.used_mb", 161 }, { "swap.total_mb", 3426 }, { "swap.cached_mb", 0 },
	ON(0, 23, 1397), ON(1, 17, 1192), ON(2, 16, 1190), ON(3, 13, 1190), ON(4, 23, 1190),
	ON(5, 10, 1190),
	{ "cpu.load_pct", 17 },
	{ "emc.load_pct", 2 }, { "emc.freq_mhz", 204 },
	{ "gpu.load_pct", 0 }, { "gpu.gpc.0.freq_mhz", 114 }, { "gpu.freq_mhz", 114 },
	ENG_MHZ("vic", 115), ENG_MHZ("ape", 150),
	TEMP("aux", 45), TEMP("cpu", 46.5), TEMP("thermal", 45.6), TEMP("ao", 45), TEMP("gpu", 45.5),
	RAIL("vdd_in", 2763, 2846), RAIL("vdd_cpu_gpu_cv", 650, 670), RAIL("vdd_soc", 650, 711),
	END,
};

static const struct kv xavier_nx_jp5_b[] = {
	{ "ram.used_mb", 2690 }, { "ram.total_mb", 6854 },
	{ "swap.used_mb", 479 }, { "swap.total_mb", 3427 }, { "swap.cached_mb", 3 },
	ON(0, 3, 1904), ON(1, 7, 1906), ON(2, 1, 1905), ON(3, 0, 1907), OFF(4), OFF(5),
	{ "cpu.load_pct", 2.75 },
	{ "emc.load_pct", 0 }, { "emc.freq_mhz", 1600 },
	{ "gpu.load_pct", 0 }, { "gpu.gpc.0.freq_mhz", 510 }, { "gpu.freq_mhz", 510 },
	ENG_MHZ("vic", 601), ENG_MHZ("ape", 150),
	TEMP("aux", 39), TEMP("cpu", 39.5), TEMP("ao", 37.5), TEMP("gpu", 37.5),
	RAIL("vdd_in", 5079, 5079), RAIL("vdd_cpu_gpu_cv", 696, 696), RAIL("vdd_soc", 1104, 1104),
	END,
};

#define NOSTAMP false, 0, 0, 0, 0, 0, 0

static const struct expect real_lines[] = {
	{ "agx_orin_jetpack5_l4t_r34_r35.txt", 0, 67, true, 2025, 4, 11, 10, 36, 27, orin_agx_a },
	{ "agx_orin_jetpack5_l4t_r34_r35.txt", 1, 68, true, 2023, 10, 16, 10, 59, 22, orin_agx_b1 },
	{ "agx_orin_jetpack5_l4t_r34_r35.txt", 2, 68, true, 2023, 10, 16, 10, 59, 23, orin_agx_b2 },
	{ "agx_xavier_jetpack4_l4t_r31_r32.txt", 0, 47, NOSTAMP, xavier_agx_a1 },
	{ "agx_xavier_jetpack4_l4t_r31_r32.txt", 1, 41, NOSTAMP, xavier_agx_a2 },
	{ "agx_xavier_jetpack4_l4t_r31_r32.txt", 2, 31, NOSTAMP, xavier_agx_c1 },
	{ "agx_xavier_jetpack4_l4t_r31_r32.txt", 3, 31, NOSTAMP, xavier_agx_c2 },
	{ "nano_jetpack4_l4t_r32.txt", 0, 37, NOSTAMP, nano_a },
	{ "nano_jetpack4_l4t_r32.txt", 1, 33, NOSTAMP, nano_b },
	{ "orin_8gb_jetpack5_l4t_r35.txt", 0, 45, true, 2024, 1, 24, 9, 17, 9, orin_8gb },
	{ "orin_nano_jetpack6_l4t_r36.txt", 0, 48, true, 2024, 11, 15, 8, 38, 9, orin_nano_a },
	{ "orin_nano_jetpack6_l4t_r36.txt", 1, 37, true, 2025, 6, 18, 11, 25, 24, orin_nano_b },
	{ "orin_nano_jetpack6_l4t_r36.txt", 2, 37, true, 2026, 9, 17, 2, 10, 3, orin_nano_c },
	{ "orin_nx_16gb_jetpack5_l4t_r35.txt", 0, 42, true, 2026, 8, 21, 15, 11, 33, orin_nx16 },
	{ "tx1_l4t_r24_old_format.txt", 0, 27, NOSTAMP, tx1 },
	{ "tx2_jetpack3_l4t_r28.txt", 0, 51, NOSTAMP, tx2_jp3_1 },
	{ "tx2_jetpack3_l4t_r28.txt", 1, 51, NOSTAMP, tx2_jp3_2 },
	{ "tx2_jetpack3_l4t_r28.txt", 2, 51, NOSTAMP, tx2_jp3_3 },
	{ "tx2_jetpack4_l4t_r32.txt", 0, 42, NOSTAMP, tx2_jp4_a },
	{ "tx2_jetpack4_l4t_r32.txt", 1, 27, NOSTAMP, tx2_nx_1 },
	{ "tx2_jetpack4_l4t_r32.txt", 2, 27, NOSTAMP, tx2_nx_2 },
	{ "tx2_jetpack4_l4t_r32.txt", 3, 27, NOSTAMP, tx2_nx_3 },
	{ "tx2_jetpack4_l4t_r32.txt", 4, 27, NOSTAMP, tx2_nx_4 },
	{ "tx2_jetpack4_l4t_r32.txt", 5, 27, NOSTAMP, tx2_nx_5 },
	{ "tx2_jetpack4_l4t_r32.txt", 6, 27, NOSTAMP, tx2_nx_6 },
	{ "xavier_nx_jetpack4_l4t_r32.txt", 0, 43, NOSTAMP, xavier_nx_jp4 },
	{ "xavier_nx_jetpack5_l4t_r35.txt", 0, 44, true, 2024, 7, 9, 13, 31, 31, xavier_nx_jp5_a },
	{ "xavier_nx_jetpack5_l4t_r35.txt", 1, 39, NOSTAMP, xavier_nx_jp5_b },
};

#define N_REAL (sizeof(real_lines) / sizeof(real_lines[0]))

/* ---- every real line ---- */

static void
test_real_lines(void **state)
{
	(void)state;
	static struct data_lines lines;
	const char *loaded = NULL;
	size_t checked = 0;
	for (size_t i = 0; i < N_REAL; i++) {
		const struct expect *e = &real_lines[i];
		if (!loaded || strcmp(loaded, e->file) != 0) {
			/* the table covers every data line of the file, in order */
			read_data_lines(e->file, &lines);
			size_t in_table = 0;
			for (size_t k = 0; k < N_REAL; k++) {
				in_table += strcmp(real_lines[k].file, e->file) == 0;
			}
			assert_int_equal(lines.count, in_table);
			loaded = e->file;
		}
		assert_true(e->index < lines.count);
		const char *line = lines.text[e->index];
		struct tegrastats_info info;
		parse_ok(line, &info);
		expect_exactly(e->kv, e->count, line);
		assert_int_equal(info.unknown_tokens, 0);
		assert_true(info.tokens > 0);
		assert_int_equal(info.stamp.present, e->stamp);
		if (e->stamp) {
			assert_int_equal(info.stamp.year, e->year);
			assert_int_equal(info.stamp.month, e->month);
			assert_int_equal(info.stamp.day, e->day);
			assert_int_equal(info.stamp.hour, e->hour);
			assert_int_equal(info.stamp.minute, e->minute);
			assert_int_equal(info.stamp.second, e->second);
		}
		checked++;
	}
	/* 11 fixture files, 28 data lines */
	assert_int_equal(checked, 28);
}

/* Every fixture file is in the table (a new file must get expectations). */
static void
test_fixture_files_all_covered(void **state)
{
	(void)state;
	static const char *const files[] = {
		"agx_orin_jetpack5_l4t_r34_r35.txt", "agx_xavier_jetpack4_l4t_r31_r32.txt",
		"nano_jetpack4_l4t_r32.txt", "orin_8gb_jetpack5_l4t_r35.txt",
		"orin_nano_jetpack6_l4t_r36.txt", "orin_nx_16gb_jetpack5_l4t_r35.txt",
		"tx1_l4t_r24_old_format.txt", "tx2_jetpack3_l4t_r28.txt",
		"tx2_jetpack4_l4t_r32.txt", "xavier_nx_jetpack4_l4t_r32.txt",
		"xavier_nx_jetpack5_l4t_r35.txt",
	};
	static struct data_lines lines;
	size_t total = 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		read_data_lines(files[i], &lines);
		total += lines.count;
	}
	assert_int_equal(total, N_REAL);
}

/* ---- lines of the held-back shapes, values made up ---- */

/* AGX Orin JetPack 7.2 shape: two-value temps, three-value rails, indexed engines */
static const char jp7_line[] =
	"03-02-2026 17:45:10 RAM 18211/62817MB (lfb 3x2MB) "
	"CPU [11%@1728,3%@1728,0%@1728,9%@1728,40%@2201,2%@2201,1%@2201,0%@2201,"
	"5%@729,6%@729,7%@729,8%@729] EMC_FREQ 7%@3199 GR3D_FREQ 12%@[1300,1300] "
	"NVENC0 off NVDEC0 off NVJPG0 off NVJPG1 off VIC off OFA off NVDLA0 off NVDLA1 off "
	"PVA0_FREQ off APE 174 cpu@51.5C/51.5C soc2@47.25C/47.3C soc0@48.0C/48.0C "
	"gpu@46.875C/46.875C VDD_GPU_SOC 5120mW/4990mW/5310mW VDD_CPU_CV 3300mW/3210mW/3420mW "
	"VIN_SYS_5V0 5480mW/5470mW/5530mW";

static const struct kv jp7_expect[] = {
	{ "ram.used_mb", 18211 }, { "ram.total_mb", 62817 },
	ON(0, 11, 1728), ON(1, 3, 1728), ON(2, 0, 1728), ON(3, 9, 1728), ON(4, 40, 2201),
	ON(5, 2, 2201), ON(6, 1, 2201), ON(7, 0, 2201), ON(8, 5, 729), ON(9, 6, 729),
	ON(10, 7, 729), ON(11, 8, 729),
	{ "cpu.load_pct", 92 / 12.0 },
	{ "emc.load_pct", 7 }, { "emc.freq_mhz", 3199 },
	{ "gpu.load_pct", 12 }, { "gpu.gpc.0.freq_mhz", 1300 }, { "gpu.gpc.1.freq_mhz", 1300 },
	{ "gpu.freq_mhz", 1300 },
	ENG_OFF("nvenc0"), ENG_OFF("nvdec0"), ENG_OFF("nvjpg0"), ENG_OFF("nvjpg1"), ENG_OFF("vic"),
	ENG_OFF("ofa"), ENG_OFF("nvdla0"), ENG_OFF("nvdla1"), ENG_OFF("pva0"),
	ENG_MHZ("ape", 174),
	/* current, then the highest so far */
	TEMP2("cpu", 51.5, 51.5), TEMP2("soc2", 47.25, 47.3), TEMP2("soc0", 48.0, 48.0),
	TEMP2("gpu", 46.875, 46.875),
	/* current, average, maximum */
	RAIL3("vdd_gpu_soc", 5120, 4990, 5310), RAIL3("vdd_cpu_cv", 3300, 3210, 3420),
	RAIL3("vin_sys_5v0", 5480, 5470, 5530),
	END,
};

/* Orin NX 8GB JetPack 6.2 shape (root): NVENC/NVDEC busy, NVDLA0, PVA0_FREQ, cv temps */
static const char nx8_jp62_line[] =
	"12-31-2025 23:59:59 RAM 5120/7620MB (lfb 12x4MB) SWAP 100/3810MB (cached 9MB) "
	"CPU [30%@1510,25%@1510,off,off,12%@1510,18%@1510] EMC_FREQ 21%@3199 "
	"GR3D_FREQ 47%@[918] NVENC 3%@499 NVDEC 22%@601 NVJPG off NVJPG1 off VIC 9%@345 "
	"OFA off NVDLA0 off PVA0_FREQ off APE 174 cv0@55.25C cpu@57.093C soc2@54.5C "
	"soc0@55C cv1@54.75C gpu@56.218C tj@57.093C soc1@55.812C cv2@54.062C "
	"VDD_IN 11230mW/9810mW VDD_CPU_GPU_CV 4120mW/3390mW VDD_SOC 2870mW/2650mW";

static const struct kv nx8_jp62_expect[] = {
	{ "ram.used_mb", 5120 }, { "ram.total_mb", 7620 },
	{ "swap.used_mb", 100 }, { "swap.total_mb", 3810 }, { "swap.cached_mb", 9 },
	ON(0, 30, 1510), ON(1, 25, 1510), OFF(2), OFF(3), ON(4, 12, 1510), ON(5, 18, 1510),
	{ "cpu.load_pct", 85 / 4.0 },
	{ "emc.load_pct", 21 }, { "emc.freq_mhz", 3199 },
	{ "gpu.load_pct", 47 }, { "gpu.gpc.0.freq_mhz", 918 }, { "gpu.freq_mhz", 918 },
	ENG_LOAD("nvenc", 3, 499), ENG_LOAD("nvdec", 22, 601), ENG_OFF("nvjpg"), ENG_OFF("nvjpg1"),
	ENG_LOAD("vic", 9, 345), ENG_OFF("ofa"), ENG_OFF("nvdla0"), ENG_OFF("pva0"),
	ENG_MHZ("ape", 174),
	TEMP("cv0", 55.25), TEMP("cpu", 57.093), TEMP("soc2", 54.5), TEMP("soc0", 55),
	TEMP("cv1", 54.75), TEMP("gpu", 56.218), TEMP("tj", 57.093), TEMP("soc1", 55.812),
	TEMP("cv2", 54.062),
	RAIL("vdd_in", 11230, 9810), RAIL("vdd_cpu_gpu_cv", 4120, 3390), RAIL("vdd_soc", 2870, 2650),
	END,
};

/* JP6 non-root with "GR3D_FREQ x%@f" (no brackets, no EMC) */
static const char jp6_plain_gr3d_line[] =
	"09-17-2026 02:11:40 RAM 2044/7620MB (lfb 90x4MB) SWAP 253/12002MB (cached 2MB) "
	"CPU [40%@1728,35%@1728,33%@1728,38%@1728,20%@1728,10%@1728] GR3D_FREQ 62%@612 "
	"cpu@55.5C soc2@52C soc0@53.125C gpu@58.5C tj@58.5C soc1@53.875C "
	"VDD_IN 9800mW/7200mW VDD_CPU_GPU_CV 3900mW/2400mW VDD_SOC 1700mW/1600mW";

static const struct kv jp6_plain_gr3d_expect[] = {
	{ "ram.used_mb", 2044 }, { "ram.total_mb", 7620 },
	{ "swap.used_mb", 253 }, { "swap.total_mb", 12002 }, { "swap.cached_mb", 2 },
	ON(0, 40, 1728), ON(1, 35, 1728), ON(2, 33, 1728), ON(3, 38, 1728), ON(4, 20, 1728),
	ON(5, 10, 1728),
	{ "cpu.load_pct", 176 / 6.0 },
	{ "gpu.load_pct", 62 }, { "gpu.freq_mhz", 612 },
	TEMP("cpu", 55.5), TEMP("soc2", 52), TEMP("soc0", 53.125), TEMP("gpu", 58.5),
	TEMP("tj", 58.5), TEMP("soc1", 53.875),
	RAIL("vdd_in", 9800, 7200), RAIL("vdd_cpu_gpu_cv", 3900, 2400), RAIL("vdd_soc", 1700, 1600),
	END,
};

/* AGX Orin JP5.1 shape: GR3D_FREQ 0%@0 GR3D2_FREQ 0%@0, GPU@-256C, Tboard/Tdiode/tj */
static const char orin_jp51_line[] =
	"04-23-2023 12:00:01 RAM 2950/62795MB (lfb 14000x4MB) SWAP 0/31398MB (cached 0MB) "
	"CPU [2%@2201,0%@2201,1%@2201,0%@2201,0%@2201,3%@2201,0%@2201,0%@2201,0%@2201,"
	"0%@2201,0%@2201,6%@2201] EMC_FREQ 1%@3199 GR3D_FREQ 0%@0 GR3D2_FREQ 0%@0 "
	"VIC_FREQ 729 APE 174 CV0@-256C CPU@40.25C Tboard@30C SOC2@36.5C Tdiode@31.5C "
	"SOC0@37C CV1@-256C GPU@-256C tj@40.25C SOC1@36.75C CV2@-256C "
	"VDD_GPU_SOC 3180mW/3180mW VDD_CPU_CV 795mW/795mW VIN_SYS_5V0 4420mW/4420mW NC 0mW/0mW "
	"VDDQ_VDD2_1V8AO 402mW/402mW NC 0mW/0mW";

static const struct kv orin_jp51_expect[] = {
	{ "ram.used_mb", 2950 }, { "ram.total_mb", 62795 },
	{ "swap.used_mb", 0 }, { "swap.total_mb", 31398 }, { "swap.cached_mb", 0 },
	ON(0, 2, 2201), ON(1, 0, 2201), ON(2, 1, 2201), ON(3, 0, 2201), ON(4, 0, 2201),
	ON(5, 3, 2201), ON(6, 0, 2201), ON(7, 0, 2201), ON(8, 0, 2201), ON(9, 0, 2201),
	ON(10, 0, 2201), ON(11, 6, 2201),
	{ "cpu.load_pct", 1 },
	{ "emc.load_pct", 1 }, { "emc.freq_mhz", 3199 },
	{ "gpu.load_pct", 0 }, { "gpu.gpc.0.freq_mhz", 0 }, { "gpu.gpc.1.freq_mhz", 0 },
	{ "gpu.freq_mhz", 0 },
	ENG_MHZ("vic", 729), ENG_MHZ("ape", 174),
	TEMP("cpu", 40.25), TEMP("tboard", 30), TEMP("soc2", 36.5), TEMP("tdiode", 31.5),
	TEMP("soc0", 37), TEMP("tj", 40.25), TEMP("soc1", 36.75),
	RAIL("vdd_gpu_soc", 3180, 3180), RAIL("vdd_cpu_cv", 795, 795),
	RAIL("vin_sys_5v0", 4420, 4420), RAIL("vddq_vdd2_1v8ao", 402, 402),
	END,
};

/* TX2 root JP4 shape (PMIC@50C, VDD_SYS_* rails, MTS) */
static const char tx2_root_line[] =
	"RAM 3100/7859MB (lfb 700x4MB) SWAP 0/3929MB (cached 0MB) "
	"CPU [12%@2035,off,off,10%@2035,9%@2035,15%@2035] EMC_FREQ 5%@1866 GR3D_FREQ 20%@1300 "
	"APE 150 MTS fg 2% bg 3% PLL@45C MCPU@45C PMIC@50C Tboard@41C GPU@43.5C BCPU@45C "
	"thermal@44.1C Tdiode@43.75C VDD_SYS_GPU 610/580 VDD_SYS_SOC 920/900 "
	"VDD_4V0_WIFI 0/0 VDD_IN 4200/4100 VDD_SYS_CPU 760/700 VDD_SYS_DDR 880/870";

static const struct kv tx2_root_expect[] = {
	{ "ram.used_mb", 3100 }, { "ram.total_mb", 7859 },
	{ "swap.used_mb", 0 }, { "swap.total_mb", 3929 }, { "swap.cached_mb", 0 },
	ON(0, 12, 2035), OFF(1), OFF(2), ON(3, 10, 2035), ON(4, 9, 2035), ON(5, 15, 2035),
	{ "cpu.load_pct", 11.5 },
	{ "emc.load_pct", 5 }, { "emc.freq_mhz", 1866 },
	{ "gpu.load_pct", 20 }, { "gpu.freq_mhz", 1300 },
	ENG_MHZ("ape", 150),
	{ "mts.fg_pct", 2 }, { "mts.bg_pct", 3 },
	TEMP("pll", 45), TEMP("mcpu", 45), TEMP("tboard", 41), TEMP("gpu", 43.5), TEMP("bcpu", 45),
	TEMP("thermal", 44.1), TEMP("tdiode", 43.75),
	RAIL("vdd_sys_gpu", 610, 580), RAIL("vdd_sys_soc", 920, 900), RAIL("vdd_4v0_wifi", 0, 0),
	RAIL("vdd_in", 4200, 4100), RAIL("vdd_sys_cpu", 760, 700), RAIL("vdd_sys_ddr", 880, 870),
	END,
};

/* Thor-style line (jetson_stats synthetic): GR3D_FREQ @[f,f,f] without percentage */
static const char thor_line[] =
	"RAM 4000/125000MB (lfb 2x512kB) CPU [1%@2601,2%@2601] EMC_FREQ 4%@4266 "
	"GR3D_FREQ @[1575,1575,1400] APE 150";

static const struct kv thor_expect[] = {
	{ "ram.used_mb", 4000 }, { "ram.total_mb", 125000 },
	ON(0, 1, 2601), ON(1, 2, 2601),
	{ "cpu.load_pct", 1.5 },
	{ "emc.load_pct", 4 }, { "emc.freq_mhz", 4266 },
	{ "gpu.gpc.0.freq_mhz", 1575 }, { "gpu.gpc.1.freq_mhz", 1575 },
	{ "gpu.gpc.2.freq_mhz", 1400 }, { "gpu.freq_mhz", 1575 },
	ENG_MHZ("ape", 150),
	END,
};

/*
 * Thor JetPack 7 shape, the forms of the issue: GR3D_FREQ without a load,
 * indexed engines busy and off, two-value temperatures, three-value rails
 * (values made up: current <= maximum, the average between)
 */
static const char thor_jp7_line[] =
	"05-15-2026 09:12:44 RAM 21034/125772MB (lfb 40x4MB) "
	"CPU [12%@2601,8%@2601,off,3%@2601] EMC_FREQ 9%@4266 GR3D_FREQ @[1575,1575,1400] "
	"NVENC0 23%@998 NVENC1 off NVDEC0 41%@1075 NVJPG0 off NVJPG1 12%@729 PVA0_FREQ 704 "
	"NVDLA0 off cpu@45.375C/45.812C gpu@44.5C/46.25C tj@46.1C/47.9C "
	"VDD_IN 3462mW/3522mW/3582mW VDD_GPU 1210mW/1105mW/1290mW VDD_CPU_SOC_MSS 980mW/960mW/1010mW";

static const struct kv thor_jp7_expect[] = {
	{ "ram.used_mb", 21034 }, { "ram.total_mb", 125772 },
	ON(0, 12, 2601), ON(1, 8, 2601), OFF(2), ON(3, 3, 2601),
	{ "cpu.load_pct", 23 / 3.0 },
	{ "emc.load_pct", 9 }, { "emc.freq_mhz", 4266 },
	{ "gpu.gpc.0.freq_mhz", 1575 }, { "gpu.gpc.1.freq_mhz", 1575 },
	{ "gpu.gpc.2.freq_mhz", 1400 }, { "gpu.freq_mhz", 1575 },
	ENG_LOAD("nvenc0", 23, 998), ENG_OFF("nvenc1"), ENG_LOAD("nvdec0", 41, 1075),
	ENG_OFF("nvjpg0"), ENG_LOAD("nvjpg1", 12, 729), ENG_MHZ("pva0", 704), ENG_OFF("nvdla0"),
	TEMP2("cpu", 45.375, 45.812), TEMP2("gpu", 44.5, 46.25), TEMP2("tj", 46.1, 47.9),
	RAIL3("vdd_in", 3462, 3522, 3582), RAIL3("vdd_gpu", 1210, 1105, 1290),
	RAIL3("vdd_cpu_soc_mss", 980, 960, 1010),
	END,
};

struct made_up {
	const char *line;
	size_t count;
	const struct kv *kv;
};

static void
test_held_back_shapes(void **state)
{
	(void)state;
	static const struct made_up cases[] = {
		{ jp7_line, 73, jp7_expect },
		{ nx8_jp62_line, 56, nx8_jp62_expect },
		{ jp6_plain_gr3d_line, 38, jp6_plain_gr3d_expect },
		{ orin_jp51_line, 67, orin_jp51_expect },
		{ tx2_root_line, 47, tx2_root_expect },
		{ thor_line, 17, thor_expect },
		{ thor_jp7_line, 48, thor_jp7_expect },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tegrastats_info info;
		parse_ok(cases[i].line, &info);
		expect_exactly(cases[i].kv, cases[i].count, cases[i].line);
		assert_int_equal(info.unknown_tokens, 0);
	}
}

static void
check_prefixes(const char *line, unsigned *n_err, unsigned *n_ok)
{
	size_t len = strlen(line);
	struct tegrastats_info info;
	struct parse_error err;
	metric_set_clear(&full_set);
	assert_int_equal(tegrastats_parse_line(line, len, &full_set, &info, &err), 0);
	for (size_t k = 0; k < len; k++) {
		memset(&err, 0, sizeof(err));
		metric_set_clear(&set);
		/* parse a heap copy of exactly k bytes so ASan sees any over-read */
		char *copy = malloc(k ? k : 1);
		assert_non_null(copy);
		memcpy(copy, line, k);
		int r = tegrastats_parse_line(copy, k, &set, &info, &err);
		free(copy);
		if (r != 0) {
			assert_int_equal(r, -EINVAL);
			assert_int_equal(set.count, 0);
			assert_true(err.column >= 1 && (size_t)err.column <= k + 1);
			assert_true(err.msg[0] != '\0');
			(*n_err)++;
			continue;
		}
		(*n_ok)++;
		bool splits_number = k > 0 && line[k - 1] >= '0' && line[k - 1] <= '9' &&
				     line[k] >= '0' && line[k] <= '9';
		double cut_number = 0, scale = 1;
		for (size_t j = k; splits_number && j > 0 && line[j - 1] >= '0' && line[j - 1] <= '9';
		     j--) {
			cut_number += (line[j - 1] - '0') * scale;
			scale *= 10;
		}
		for (size_t i = 0; i < set.count; i++) {
			double want;
			if (!metric_set_get(&full_set, set.items[i].name, &want)) {
				fail_msg("prefix of %zu bytes invents %s\nline: %s", k,
					 set.items[i].name, line);
			}
			double got = set.items[i].value;
			if (got != want && !(splits_number && got == cut_number)) {
				fail_msg("prefix of %zu bytes: %s = %g, full line %g\nline: %s", k,
					 set.items[i].name, got, want, line);
			}
		}
	}
}

static void
test_cut_every_prefix(void **state)
{
	(void)state;
	static struct data_lines lines;
	const char *loaded = NULL;
	unsigned n_err = 0, n_ok = 0;
	for (size_t i = 0; i < N_REAL; i++) {
		if (!loaded || strcmp(loaded, real_lines[i].file) != 0) {
			read_data_lines(real_lines[i].file, &lines);
			loaded = real_lines[i].file;
		}
		check_prefixes(lines.text[real_lines[i].index], &n_err, &n_ok);
	}
	check_prefixes(jp7_line, &n_err, &n_ok);
	check_prefixes(thor_jp7_line, &n_err, &n_ok);
	check_prefixes(nx8_jp62_line, &n_err, &n_ok);
	check_prefixes(orin_jp51_line, &n_err, &n_ok);
	/* most cuts land inside a token and must be refused */
	print_message("prefixes: %u refused, %u accepted\n", n_err, n_ok);
	assert_true(n_err > 4 * n_ok);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_lines),
		cmocka_unit_test(test_fixture_files_all_covered),
		cmocka_unit_test(test_held_back_shapes),
		cmocka_unit_test(test_cut_every_prefix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
