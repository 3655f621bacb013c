/*
 * Fuzz target for the host parsers (host/procmem.c, host/mounts.c,
 * host/diskstats.c, host/netdev.c, host/boot_state.c, host/icmp_echo.c,
 * host/probe_config.c's host check). The first byte chooses the parser
 * (0x80 set: mounts, disks, eMMC; else 0x40 set: network; else 0x20 set:
 * reboots and probes; else procmem), the rest is its text. Invariants
 * checked on every input:
 *   meminfo:   (tegra/procfs.c, the one parser of it: the board reads it for
 *              both) success only with MemTotal >= 0; every field -1 or a
 *              count, output untouched on failure;
 *   psi:       success only with a whole "some" line; averages 0..100;
 *   loadavg, uptime, zram, vmstat: values finite, counts at most 2^53;
 *   mountinfo: success gives an absolute mount point, a type and a source,
 *              NUL-terminated; its segment is a valid metric segment;
 *   diskstats: a non-empty name; its segment [a-z0-9_]+;
 *   eMMC:      life time 10..110 or -1, pre-EOL 1..3;
 *   net/dev:   a name of 1..15 characters without '/', ':' or blanks; its
 *              segment [a-z0-9_]+ that fits a metric name;
 *   wireless:  a name as above; a level in dBm -255..-1;
 *   link:      0, 1, or -1.
 *   boot id:   success gives 36 characters of the UUID's shape;
 *   boot.state: success gives a valid boot id, times 0..2^53, and formats
 *              back into text that parses to the same state;
 *   ICMP echo: success only for a reply of 8 bytes or more;
 *   probe host: an address kind only where inet_pton agrees.
 * Any violation aborts, which libFuzzer and the replay driver report.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include <arpa/inet.h>

#include "host/boot_state.h"
#include "host/diskstats.h"
#include "host/host_text.h"
#include "host/mounts.h"
#include "host/netdev.h"
#include "host/icmp_echo.h"
#include "host/probe_config.h"
#include "host/procmem.h"
#include "tegra/procfs.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
segment_ok(const char *s)
{
	return s[0] && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(s);
}

static void
fuzz_procmem(uint8_t which, const char *text)
{
	struct meminfo mi = {.mem_total_kb = -7};
	struct procmem_psi psi;
	struct procmem_loadavg la;
	struct procmem_zram z;
	uint64_t kills;
	double up;
	switch (which % 6) {
	case 0:
		if (procfs_parse_meminfo(text, &mi) == 0) {
			CHECK(mi.mem_total_kb >= 0 && mi.mem_available_kb >= -1 && mi.mem_free_kb >= -1);
			CHECK(mi.buffers_kb >= -1 && mi.cached_kb >= -1 && mi.swap_cached_kb >= -1);
			CHECK(mi.swap_total_kb >= -1 && mi.swap_free_kb >= -1);
		} else {
			CHECK(mi.mem_total_kb == -7);
		}
		break;
	case 1:
		if (procmem_parse_psi(text, &psi) == 0) {
			CHECK(psi.some && psi.some_avg10 >= 0 && psi.some_avg10 <= 100);
			CHECK(psi.some_total_us <= HOST_EXACT_MAX);
		}
		break;
	case 2:
		if (procmem_parse_loadavg(text, &la) == 0) {
			CHECK(isfinite(la.avg1) && isfinite(la.avg5) && isfinite(la.avg15) && la.tasks <= HOST_EXACT_MAX);
		}
		break;
	case 3:
		if (procmem_parse_uptime(text, &up) == 0) {
			CHECK(isfinite(up) && up >= 0);
		}
		break;
	case 4:
		if (procmem_parse_zram(text, &z) == 0) {
			CHECK(z.mem_used_total <= HOST_EXACT_MAX);
		}
		break;
	default:
		if (procmem_parse_vmstat_oom(text, &kills) == 0) {
			CHECK(kills <= HOST_EXACT_MAX);
		}
		break;
	}
}

static void
fuzz_blocks(uint8_t which, const char *text, size_t len)
{
	struct mount_entry m;
	struct disk_stat d;
	char seg[MOUNT_SEGMENT_MAX];
	int a, b, eol;
	switch (which % 4) {
	case 0:
		if (mounts_parse_line(text, len, &m) == 0) {
			CHECK(m.mountpoint[0] == '/' && m.fstype[0] && m.source[0]);
			CHECK(memchr(m.mountpoint, '\0', sizeof(m.mountpoint)) != NULL);
			mounts_segment(m.mountpoint, which & 0x10, seg);
			CHECK(segment_ok(seg) && strlen(seg) < MOUNT_SEGMENT_MAX);
			(void)mounts_fstype_network(m.fstype);
			(void)mounts_fstype_pseudo(m.fstype);
		}
		break;
	case 1:
		if (diskstats_parse_line(text, len, &d) == 0) {
			CHECK(d.name[0] != '\0' && d.io_ms <= HOST_EXACT_MAX);
			char ds[DISK_NAME_MAX];
			diskstats_segment(d.name, ds);
			CHECK(segment_ok(ds));
			(void)diskstats_default_device(d.name);
		}
		break;
	case 2:
		if (emmc_parse_life_time(text, &a, &b) == 0) {
			CHECK((a == -1 || (a >= 10 && a <= 110)) && (b == -1 || (b >= 10 && b <= 110)));
		}
		break;
	default:
		if (emmc_parse_pre_eol(text, &eol) == 0) {
			CHECK(eol >= 1 && eol <= 3);
		}
		break;
	}
}

static bool
ifname_ok(const char *name)
{
	size_t n = strlen(name);
	return n >= 1 && n < NETDEV_NAME_MAX && strcspn(name, "/: \t\n") == n;
}

static void
fuzz_network(uint8_t which, const char *text, size_t len)
{
	struct netdev_stat d;
	char name[NETDEV_NAME_MAX], seg[NETDEV_SEGMENT_MAX];
	int dbm, up;
	switch (which % 3) {
	case 0:
		if (netdev_parse_line(text, len, &d) == 0) {
			CHECK(ifname_ok(d.name));
			netdev_segment(d.name, which & 0x10, seg);
			CHECK(segment_ok(seg) && strlen(seg) < NETDEV_SEGMENT_MAX);
			struct netdev_filter none = {0};
			(void)netdev_selected(d.name, &none);
		}
		break;
	case 1:
		if (netdev_parse_wireless(text, len, name, &dbm) == 0) {
			CHECK(ifname_ok(name) && dbm >= -255 && dbm <= -1);
		}
		break;
	default:
		up = netdev_link_up(text, (which >> 4 & 3) - 1);
		CHECK(up >= -1 && up <= 1);
		break;
	}
}

static bool
boot_id_ok(const char *id)
{
	if (strlen(id) != BOOT_ID_LEN) {
		return false;
	}
	for (int i = 0; i < BOOT_ID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash != (id[i] == '-') || (!dash && !strchr("0123456789abcdef", id[i]))) {
			return false;
		}
	}
	return true;
}

/* TEXT is LEN bytes up to its first NUL; RAW_LEN counts them all (an ICMP message holds NULs) */
static void
fuzz_reboots_probes(uint8_t which, const char *text, size_t len, size_t raw_len)
{
	char id[BOOT_ID_LEN + 1];
	struct boot_state st, back;
	int line = 0;
	char why[160], out[BOOT_STATE_MAX];
	uint16_t seq;
	unsigned char addr[16];
	switch (which % 4) {
	case 0:
		if (boot_id_parse(text, id) == 0) {
			CHECK(boot_id_ok(id));
		}
		break;
	case 1:
		if (boot_state_parse(text, &st, &line, why, sizeof(why)) == 0) {
			CHECK(boot_id_ok(st.boot_id) && st.last_seen_ms >= 0 && st.last_seen_ms <= (int64_t)HOST_EXACT_MAX);
			CHECK(st.uptime_ms >= -1 && st.uptime_ms <= (int64_t)HOST_EXACT_MAX);
			CHECK(boot_state_format(&st, out, sizeof(out)) > 0);
			CHECK(boot_state_parse(out, &back, &line, why, sizeof(why)) == 0);
			CHECK(strcmp(st.boot_id, back.boot_id) == 0 && st.last_seen_ms == back.last_seen_ms);
			CHECK(st.uptime_ms == back.uptime_ms && st.stopped == back.stopped);
		} else {
			CHECK(line >= 1 && why[0]);
		}
		break;
	case 2:
		if (icmp_echo_reply_seq(which & 0x10, (const uint8_t *)text, raw_len, &seq) == 0) {
			CHECK(raw_len >= 8);
		}
		break;
	default:
		switch (probe_host_kind(text)) {
		case PROBE_HOST_IPV4:
			CHECK(inet_pton(AF_INET, text, addr) == 1);
			break;
		case PROBE_HOST_IPV6:
			CHECK(inet_pton(AF_INET6, text, addr) == 1);
			break;
		case PROBE_HOST_NAME:
			CHECK(len >= 1 && len <= PROBE_HOST_MAX);
			break;
		default:
			break;
		}
		(void)probe_name_valid(text);
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t text_len; /* the parsers take C text: up to the first NUL */
	char *text = fuzz_text_after_selector(data, size, &text_len);
	if (!text) {
		return 0;
	}
	uint8_t which = data[0];
	if (which & 0x80) {
		fuzz_blocks(which, text, text_len);
	} else if (which & 0x40) {
		fuzz_network(which, text, text_len);
	} else if (which & 0x20) {
		fuzz_reboots_probes(which, text, text_len, size - 1);
	} else {
		fuzz_procmem(which, text);
	}
	free(text);
	return 0;
}
