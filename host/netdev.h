/*
 * Network interfaces: the pure part. A /proc/net/dev line
 * (Documentation/networking/statistics.rst, "procfs"), a /proc/net/wireless
 * line (printed by the kernel's net/wireless/wext-proc.c), the link state
 * from sysfs operstate and carrier (Documentation/ABI/testing/sysfs-class-net),
 * which interfaces are watched, and the metric segment of an interface
 * name. No I/O.
 */
#ifndef TEGRAWATCH_HOST_NETDEV_H
#define TEGRAWATCH_HOST_NETDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NETDEV_NAME_MAX 16 /* IFNAMSIZ: 15 characters and the NUL */
/* a whole name, or its start, '_' and 8 hex digits: "network." + SEGMENT + ".carrier_changes_total" fits 63 bytes */
#define NETDEV_SEGMENT_MAX 25

struct netdev_stat {
	char name[NETDEV_NAME_MAX]; /* "eth0", "wlan0", "br-1a2b", "eth0.100" */
	/* the kernel's 64-bit counters, whole: above 2^53 a double rounds them */
	uint64_t rx_bytes, rx_packets, rx_errors, rx_drop;
	uint64_t tx_bytes, tx_packets, tx_errors, tx_drop;
};

/**
 * Parses one /proc/net/dev line (LEN bytes, no newline needed): the name,
 * ':', then 16 counters. Returns 0, or -EINVAL for the two header lines,
 * a cut or garbled line, a name that is no interface name, or a counter
 * past 2^64 - 1.
 */
int netdev_parse_line(const char *line, size_t len, struct netdev_stat *out);

/**
 * Parses one /proc/net/wireless line (LEN bytes): the name and the signal
 * level in dBm. Returns 0, -ENODATA for an interface whose driver gives
 * no level in dBm (a relative level 0..255, or none), or -EINVAL for the
 * header lines and anything else.
 */
int netdev_parse_wireless(const char *line, size_t len, char name[NETDEV_NAME_MAX], int *level_dbm);

/**
 * The link state from the text of sysfs operstate ("up\n") and carrier
 * (CARRIER: 1, 0, or -1 where it could not be read: the kernel answers
 * EINVAL while the interface is down). 1 for "up", and for "unknown"
 * with carrier 1 (drivers that keep no operstate: tun, some ppp); 0 for
 * every other state; -1 for text that is no operstate.
 */
int netdev_link_up(const char *operstate, int carrier);

/* Which interfaces are watched: globs on the name. */
struct netdev_filter {
	const char *const *include; /* none: every interface but the default exclusions */
	size_t include_count;
	const char *const *exclude; /* always applied */
	size_t exclude_count;
};

/**
 * True when interface NAME is watched under F: with includes, exactly the
 * interfaces an include matches; without, every one but loopback ("lo"),
 * the virtual ones containers and VMs make (veth*, docker*, br-*, virbr*,
 * cni*, flannel*, cali*, vxlan*, kube-*, tunl*, dummy*), traffic shaping's
 * ifb*, and the kernel's fallback tunnel devices (sit0, ip6tnl0, gre0,
 * gretap0, erspan0, ip_vti0, ip6_vti0, ip6gre0). An exclude always wins.
 */
bool netdev_selected(const char *name, const struct netdev_filter *f);

/**
 * The metric segment of interface NAME into BUF (NETDEV_SEGMENT_MAX
 * bytes): lower-cased, every character outside [a-z0-9] as '_' ("br-1a2b":
 * "br_1a2b", "eth0.100": "eth0_100"). With HASHED (a second interface with
 * the segment of an earlier one) it ends in '_' and 8 hex digits of a hash
 * of the name.
 */
void netdev_segment(const char *name, bool hashed, char *buf);

#endif
