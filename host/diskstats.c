/*
 * Block devices (see diskstats.h). A /proc/diskstats line (iostats.rst):
 *   179 0 mmcblk0 6403 1921 551410 3932 1640 1952 54296 6132 0 7900 10232 ...
 * major, minor, name, then 1 reads completed, 2 reads merged, 3 sectors
 * read, 4 ms reading, 5 writes completed, 6 writes merged, 7 sectors
 * written, 8 ms writing, 9 I/Os in flight, 10 ms doing I/O, 11 weighted
 * ms; 4.18 adds four discard fields, 5.5 two flush fields. Sectors are
 * 512-byte units whatever the device's own sector size (iostats.rst,
 * and the block layer's SECTOR_SHIFT).
 */
#include "diskstats.h"

#include <errno.h>
#include <string.h>

#include "host_text.h"

int
diskstats_parse_line(const char *line, size_t len, struct disk_stat *out)
{
	char buf[512];
	if (len >= sizeof(buf)) {
		return -EINVAL;
	}
	memcpy(buf, line, len);
	buf[len] = '\0';
	const char *p = buf;
	uint64_t major, minor, v[10];
	if (!host_read_u64(&p, &major) || !host_read_u64(&p, &minor)) {
		return -EINVAL;
	}
	host_skip_blanks(&p);
	size_t n = strcspn(p, " \t\n");
	if (n == 0 || n >= sizeof(out->name)) {
		return -EINVAL;
	}
	memcpy(out->name, p, n);
	out->name[n] = '\0';
	p += n;
	for (size_t i = 0; i < 10; i++) {
		if (!host_read_u64(&p, &v[i])) {
			return -EINVAL;
		}
	}
	out->reads = v[0];
	out->sectors_read = v[2];
	out->writes = v[4];
	out->sectors_written = v[6];
	out->io_ms = v[9];
	return 0;
}

/* NAME is PREFIX followed by digits only (PREFIX "loop": "loop0") */
static bool
prefix_digits(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(name, prefix, n) != 0 || name[n] == '\0') {
		return false;
	}
	return strspn(name + n, "0123456789") == strlen(name + n);
}

/* "p" and digits after a device of the form LETTERS DIGITS (n DIGITS): nvme0n1p1, mmcblk0p1 */
static bool
numbered_partition(const char *name)
{
	const char *p = strrchr(name, 'p');
	return p && p > name && p[-1] >= '0' && p[-1] <= '9' && p[1] && strspn(p + 1, "0123456789") == strlen(p + 1);
}

bool
diskstats_default_device(const char *name)
{
	static const char *const virtual_devices[] = {"loop", "ram", "zram", "fd"};
	for (size_t i = 0; i < sizeof(virtual_devices) / sizeof(virtual_devices[0]); i++) {
		if (prefix_digits(name, virtual_devices[i])) {
			return false;
		}
	}
	if (strncmp(name, "mmcblk", 6) == 0 && (strstr(name, "boot") || strstr(name, "rpmb"))) {
		return false; /* the eMMC's boot and RPMB hardware partitions */
	}
	if (numbered_partition(name)) {
		return false;
	}
	/* sda1, vdb2, hda1, xvda1: letters after sd/vd/hd/xvd, then digits */
	static const char *const letter_disks[] = {"sd", "vd", "hd", "xvd"};
	for (size_t i = 0; i < sizeof(letter_disks) / sizeof(letter_disks[0]); i++) {
		size_t n = strlen(letter_disks[i]);
		if (strncmp(name, letter_disks[i], n) == 0) {
			size_t letters = strspn(name + n, "abcdefghijklmnopqrstuvwxyz");
			return !(letters > 0 && name[n + letters] != '\0');
		}
	}
	return true;
}

void
diskstats_segment(const char *name, char *buf)
{
	size_t n = 0;
	for (; name[n] && n + 1 < DISK_NAME_MAX; n++) {
		char c = name[n];
		if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
		}
		buf[n] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '_';
	}
	buf[n] = '\0';
}

int
emmc_parse_life_time(const char *text, int *a_pct, int *b_pct)
{
	const char *p = text;
	uint64_t a, b;
	if (!host_read_hex(&p, &a) || !host_read_hex(&p, &b) || !host_at_end(p) || a > 0x0B || b > 0x0B) {
		return -EINVAL;
	}
	*a_pct = a ? (int)a * 10 : -1;
	*b_pct = b ? (int)b * 10 : -1;
	return 0;
}

int
emmc_parse_pre_eol(const char *text, int *level)
{
	const char *p = text;
	uint64_t v;
	if (!host_read_hex(&p, &v) || !host_at_end(p) || v < 1 || v > 3) {
		return -EINVAL;
	}
	*level = (int)v;
	return 0;
}
