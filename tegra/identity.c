/*
 * Board identity parsers: /etc/nv_tegra_release, the device-tree
 * compatible list, and the L4T -> JetPack mapping. Pure: no I/O.
 */
#include "identity.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/text.h"

/*
 * L4T release -> JetPack version, exact releases only. No NVIDIA page was
 * read; the entries are cross-read from tables other tools keep:
 *  - jetson_stats (rbonghi), jtop/core/jetson_variables.py: its older table
 *    (R32, R34, R35.1, R35.2.1) was read; newer entries of it are quoted in
 *    the project's sysfs-facts.md (32.6.1, 35.4.1, 36.4.3, 36.4.7, 36.5.0, 39.2.0);
 *  - jetson-containers (dusty-nv), jetson_containers/l4t_version.py, an
 *    extended copy of that table (R32.7.4-6, R35.3.1-35.6.1, R36.x, R38.2.0);
 *    its R35.5/35.6.0, R36.x and R38.2.0 entries match other projects' tables
 *    or a captured `jetson_release` output ("Jetpack 5.1.4 [L4T 35.6.0]").
 * JetPack 7 (issue 22, from public captures of real Thor boards: jtop's
 * `jetson_release` on L4T 38.4.0 named by its user JetPack 7.1, NVIDIA's
 * forum threads): 38.4.0 is 7.1; every 38.2 revision is 7.0, every 39.0 one
 * the 7.2 early access and every other 39.2 one 7.2 (R39.2 also runs on Orin):
 * those go by series, below. Developer previews keep a " DP" suffix, early
 * access an " EA" one; "GA" is dropped. 39.2.1 is named 7.2.1 as JetPack 6's
 * point releases are (issue 30: the R39.2.1 line of the Juxi tutorial's
 * JetPack 7.2.1 page, a community capture from an Orin, and NVIDIA's 7.2.1
 * notes quoted there: "ISO now flashes the Jetson Orin Nano Developer Kit
 * with Super Mode flashing configuration by default"); later 39.2
 * revisions go by the series until a capture names them.
 */
struct jetpack_release {
	const char *l4t;
	const char *jetpack;
};

/* a table laid out by hand */
/* clang-format off */
static const struct jetpack_release jetpack_table[] = {
	/* JetPack 4: L4T R32, Ubuntu 18.04 (Nano, TX1, TX2, Xavier) */
	{"32.1.0", "4.2"},
	{"32.2.0", "4.2.1"},
	{"32.2.1", "4.2.2"},
	{"32.2.3", "4.2.3"},
	{"32.3.1", "4.3"},
	{"32.4.2", "4.4 DP"},
	{"32.4.3", "4.4"},
	{"32.4.4", "4.4.1"},
	{"32.5.0", "4.5"},
	{"32.5.1", "4.5.1"},
	{"32.5.2", "4.5.1"}, /* a fix-up release inside 4.5.1 */
	{"32.6.1", "4.6"},
	{"32.7.1", "4.6.1"},
	{"32.7.2", "4.6.2"},
	{"32.7.3", "4.6.3"},
	{"32.7.4", "4.6.4"},
	{"32.7.5", "4.6.5"},
	{"32.7.6", "4.6.6"},
	/* JetPack 5: R34 developer previews, then R35 (Xavier, Orin) */
	{"34.1.0", "5.0 DP"},
	{"34.1.1", "5.0.1 DP"},
	{"35.1.0", "5.0.2"},
	{"35.2.1", "5.1"},
	{"35.3.1", "5.1.1"},
	{"35.4.1", "5.1.2"},
	{"35.5.0", "5.1.3"},
	{"35.6.0", "5.1.4"},
	{"35.6.1", "5.1.5"},
	/* JetPack 6: R36 (Orin) */
	{"36.2.0", "6.0 DP"},
	{"36.3.0", "6.0"},
	{"36.4.0", "6.1"},
	{"36.4.3", "6.2"},
	{"36.4.4", "6.2.1"},
	{"36.4.7", "6.2.1"}, /* a later update still called 6.2.1 */
	{"36.5.0", "6.2.2"},
	/* JetPack 7: R38 (Thor), R39 (Thor and Orin); the series are below */
	{"38.4.0", "7.1"},
	{"39.2.1", "7.2.1"},
};

/* L4T major.minor -> JetPack for every revision of that series. */
static const struct {
	int major, minor;
	const char *jetpack;
} jetpack_series[] = {
	{38, 2, "7.0"},
	{39, 0, "7.2 EA"},
	{39, 2, "7.2"},
};
/* clang-format on */

/* JetPack major for each L4T major, for revisions the table does not list. */
static const struct {
	int l4t_major;
	const char *jetpack;
} jetpack_majors[] = {
	{32, "4.x"}, {34, "5.x"}, {35, "5.x"}, {36, "6.x"}, {38, "7.x"}, {39, "7.x"},
};

static bool
copy_str(char *dst, size_t size, const char *src, size_t len)
{
	if (len + 1 > size) {
		return false;
	}
	memcpy(dst, src, len);
	dst[len] = '\0';
	return true;
}

/* Skips spaces and tabs. */
static const char *
skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t') {
		p++;
	}
	return p;
}

int
identity_parse_nv_tegra_release(const char *text, char *l4t, size_t size)
{
	if (!text || !l4t) {
		return -EINVAL;
	}
	/* "# R36 (release), REVISION: 4.3, GCID: ..., DATE: Wed Jan  8 ..." */
	const char *p = skip_blank(text);
	if (*p != '#') {
		return -EINVAL;
	}
	p = skip_blank(p + 1);
	if (*p != 'R') {
		return -EINVAL;
	}
	p++;
	const char *major = p;
	while (text_is_digit(*p)) {
		p++;
	}
	size_t major_len = (size_t)(p - major);
	if (major_len == 0 || major_len > 4) {
		return -EINVAL;
	}
	p = skip_blank(p);
	if (*p == '(') {
		/* "(release)"; the word is not checked */
		while (*p && *p != ')' && *p != '\n') {
			p++;
		}
		if (*p != ')') {
			return -EINVAL;
		}
		p = skip_blank(p + 1);
	}
	if (*p != ',') {
		return -EINVAL;
	}
	p = skip_blank(p + 1);
	if (strncmp(p, "REVISION:", 9) != 0) {
		return -EINVAL;
	}
	p = skip_blank(p + 9);
	const char *rev = p;
	bool digit_last = false;
	while (text_is_digit(*p) || (*p == '.' && digit_last)) {
		digit_last = text_is_digit(*p);
		p++;
	}
	size_t rev_len = (size_t)(p - rev);
	if (rev_len == 0 || !digit_last) {
		return -EINVAL;
	}
	p = skip_blank(p);
	if (*p != ',' && *p != '\n' && *p != '\r' && *p != '\0') {
		return -EINVAL;
	}
	if (major_len + 1 + rev_len + 1 > size) {
		return -ENOSPC;
	}
	memcpy(l4t, major, major_len);
	l4t[major_len] = '.';
	memcpy(l4t + major_len + 1, rev, rev_len);
	l4t[major_len + 1 + rev_len] = '\0';
	return 0;
}

/*
 * Splits "32.7.1" into up to three numbers; missing parts are 0, so "34.1"
 * matches "34.1.0". False for anything but 1-3 dot-separated numbers.
 */
static bool
split_version(const char *s, long v[3])
{
	int n = 0;
	v[0] = v[1] = v[2] = 0;
	for (;;) {
		if (n == 3 || !text_is_digit(*s)) {
			return false;
		}
		long x = 0;
		for (; text_is_digit(*s); s++) {
			if (x > 100000) {
				return false;
			}
			x = x * 10 + (*s - '0');
		}
		v[n++] = x;
		if (*s == '\0') {
			return true;
		}
		if (*s != '.') {
			return false;
		}
		s++;
	}
}

bool
identity_jetpack_for_l4t(const char *l4t, char *jetpack, size_t size)
{
	long want[3];
	if (!l4t || !jetpack || !split_version(l4t, want)) {
		return false;
	}
	const char *found = NULL;
	for (size_t i = 0; i < sizeof(jetpack_table) / sizeof(jetpack_table[0]) && !found; i++) {
		long have[3];
		if (split_version(jetpack_table[i].l4t, have) && have[0] == want[0] && have[1] == want[1] &&
		    have[2] == want[2]) {
			found = jetpack_table[i].jetpack;
		}
	}
	for (size_t i = 0; i < sizeof(jetpack_series) / sizeof(jetpack_series[0]) && !found; i++) {
		if (jetpack_series[i].major == want[0] && jetpack_series[i].minor == want[1]) {
			found = jetpack_series[i].jetpack;
		}
	}
	for (size_t i = 0; i < sizeof(jetpack_majors) / sizeof(jetpack_majors[0]) && !found; i++) {
		if (jetpack_majors[i].l4t_major == want[0]) {
			found = jetpack_majors[i].jetpack;
		}
	}
	if (!found) {
		return false;
	}
	return copy_str(jetpack, size, found, strlen(found));
}

/* "tegra234": "tegra" and at least one digit, nothing else. */
static bool
is_soc(const char *s, size_t len)
{
	if (len < 6 || strncmp(s, "tegra", 5) != 0) {
		return false;
	}
	for (size_t i = 5; i < len; i++) {
		if (!text_is_digit(s[i])) {
			return false;
		}
	}
	return true;
}

/* Length of a "pNNNN-NNNN" part number at S (followed by end, '-' or '+'), or 0. */
static size_t
part_number_len(const char *s, size_t len)
{
	if (len < 10 || s[0] != 'p' || s[5] != '-') {
		return 0;
	}
	for (size_t i = 1; i < 10; i++) {
		if (i != 5 && !text_is_digit(s[i])) {
			return 0;
		}
	}
	if (len > 10 && s[10] != '-' && s[10] != '+') {
		return 0;
	}
	return 10;
}

void
identity_parse_compatible(const char *list, size_t len, char *soc, size_t soc_size, char *module, size_t module_size)
{
	const char *soc_s = NULL;
	size_t soc_len = 0;
	const char *mod_s = NULL;    /* a standalone "vendor,pNNNN-NNNN" entry */
	const char *joined_s = NULL; /* module after '+' in "carrier+module" */
	size_t pos = 0;

	while (list && pos < len) {
		const char *entry = list + pos;
		size_t elen = strnlen(entry, len - pos);
		pos += elen + 1;
		/* drop the vendor: "nvidia,tegra234" -> "tegra234" */
		const char *comma = memchr(entry, ',', elen);
		const char *name = comma ? comma + 1 : entry;
		size_t nlen = elen - (size_t)(name - entry);
		if (!soc_s && is_soc(name, nlen)) {
			soc_s = name;
			soc_len = nlen;
			continue;
		}
		const char *plus = NULL;
		for (size_t i = 0; i < nlen; i++) {
			if (name[i] == '+') {
				plus = name + i;
			}
		}
		if (!plus) {
			if (!mod_s && part_number_len(name, nlen)) {
				mod_s = name;
			}
		} else if (!joined_s) {
			size_t rest = nlen - (size_t)(plus + 1 - name);
			if (part_number_len(plus + 1, rest)) {
				joined_s = plus + 1;
			}
		}
	}
	if (!mod_s) {
		mod_s = joined_s;
	}
	if (soc && soc_size > 0) {
		soc[0] = '\0';
		if (soc_s && !copy_str(soc, soc_size, soc_s, soc_len)) {
			soc[0] = '\0';
		}
	}
	if (module && module_size > 0) {
		module[0] = '\0';
		if (mod_s && !copy_str(module, module_size, mod_s, 10)) {
			module[0] = '\0';
		}
	}
}

int
identity_parse_serial(const char *text, char *out, size_t size)
{
	size_t len = strlen(text);
	if (len == 0 || len >= size || len >= 64) {
		return -EINVAL;
	}
	bool zeros = true;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
			  c == '_' || c == '-';
		if (!ok) {
			return -EINVAL;
		}
		zeros = zeros && c == '0';
	}
	if (zeros) {
		return -EINVAL; /* a module whose serial was never programmed */
	}
	memcpy(out, text, len + 1);
	return 0;
}
