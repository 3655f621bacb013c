/*
 * Fuzz target for the board's own text parsers, the files a Jetson (or a
 * damaged root) hands the sysfs source: tegra/procfs.c (/proc/stat, CPU
 * range lists), tegra/nvpmodel.c (/etc/nvpmodel.conf, the status file) and
 * tegra/identity.c (/etc/nv_tegra_release, the device tree's compatible
 * list and serial number). /proc/meminfo's parser is fuzz_host's case 0.
 * The first byte picks the parser, the rest is its text. Invariants:
 *   stat:      success only with a cpuN line; busy <= total for each core
 *              present; cpu_count at most PROCFS_CPU_MAX; the output
 *              untouched on failure;
 *   cpulist:   success sets a bit only when the text has a number;
 *              untouched on failure;
 *   conf:      success has 1..NVPMODEL_MODES_MAX modes with NUL-terminated
 *              names, cores_online -1 or more, the default -1 or more;
 *   status:    success gives an id 0 or more;
 *   release:   success gives "R.M[.P]": digits and dots, NUL-terminated;
 *   compatible: both outputs NUL-terminated within their sizes (the input
 *              is the exact bytes, NULs and all, not terminated);
 *   serial:    success gives 1-63 of [A-Za-z0-9._-], not all zeros.
 * Any violation aborts, which libFuzzer and the replay driver report.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tegra/identity.h"
#include "tegra/nvpmodel.h"
#include "tegra/procfs.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static void
fuzz_stat(const char *text)
{
	static struct proc_stat st; /* 1.6 KiB: off the stack */
	memset(&st, 0x5a, sizeof(st));
	if (procfs_parse_stat(text, &st) == 0) {
		CHECK(st.cpu_count >= 1 && st.cpu_count <= PROCFS_CPU_MAX);
		bool any = false;
		for (unsigned i = 0; i < st.cpu_count; i++) {
			any = any || st.cpu[i].present;
			CHECK(!st.cpu[i].present || st.cpu[i].busy <= st.cpu[i].total);
		}
		CHECK(any);
	} else {
		const unsigned char *b = (const unsigned char *)&st;
		for (size_t i = 0; i < sizeof(st); i++) {
			CHECK(b[i] == 0x5a);
		}
	}
}

static void
fuzz_cpulist(const char *text)
{
	uint64_t mask = 0xdeadbeefcafef00dull;
	if (procfs_parse_cpulist(text, &mask) == 0) {
		/* a CPU is listed only by a number in the text */
		CHECK(mask == 0 || strpbrk(text, "0123456789") != NULL);
	} else {
		CHECK(mask == 0xdeadbeefcafef00dull);
	}
}

static void
fuzz_conf(const char *text)
{
	static struct nvpmodel_conf conf;
	if (nvpmodel_parse_conf(text, &conf) != 0) {
		return;
	}
	CHECK(conf.mode_count >= 1 && conf.mode_count <= NVPMODEL_MODES_MAX);
	CHECK(conf.default_id >= -1);
	for (int i = 0; i < conf.mode_count; i++) {
		const struct nvpmodel_mode *m = &conf.modes[i];
		CHECK(terminated(m->name, sizeof(m->name)));
		CHECK(m->cores_online >= -1);
	}
}

static void
fuzz_release(const char *text)
{
	char l4t[32];
	memset(l4t, 'x', sizeof(l4t));
	if (identity_parse_nv_tegra_release(text, l4t, sizeof(l4t)) == 0) {
		CHECK(terminated(l4t, sizeof(l4t)) && l4t[0] >= '0' && l4t[0] <= '9');
		CHECK(strspn(l4t, "0123456789.") == strlen(l4t));
	}
}

static void
fuzz_serial(const char *text)
{
	char serial[64];
	if (identity_parse_serial(text, serial, sizeof(serial)) == 0) {
		size_t len = strnlen(serial, sizeof(serial));
		CHECK(len >= 1 && len <= 63);
		CHECK(strspn(serial, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == len);
		CHECK(strspn(serial, "0") != len);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text_after_selector(data, size, NULL);
	if (!text) {
		return 0;
	}
	uint8_t which = data[0];
	size_t len = size - 1;
	switch (which % 7) {
	case 0:
		fuzz_stat(text);
		break;
	case 1:
		fuzz_cpulist(text);
		break;
	case 2:
		fuzz_conf(text);
		break;
	case 3: {
		int id = -7;
		if (nvpmodel_parse_status(text, &id) == 0) {
			CHECK(id >= 0);
		}
		break;
	}
	case 4:
		fuzz_release(text);
		break;
	case 5: {
		/* the exact bytes: a compatible list is NUL-separated and need not end in one */
		char *exact = malloc(len ? len : 1);
		char soc[32], module[32];
		if (exact) {
			memcpy(exact, data + 1, len);
			identity_parse_compatible(exact, len, soc, sizeof(soc), module, sizeof(module));
			CHECK(terminated(soc, sizeof(soc)) && terminated(module, sizeof(module)));
			free(exact);
		}
		break;
	}
	default:
		fuzz_serial(text);
		break;
	}
	free(text);
	return 0;
}
