/*
 * Network interfaces (see netdev.h).
 *
 * /proc/net/dev (Documentation/networking/statistics.rst, "procfs"; the
 * line is printed by dev_seq_printf_stats() in net/core/net-procfs.c):
 *   Inter-|   Receive                                                |  Transmit
 *    face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
 *     eth0: 1215645    2751    0    0    0     0          0         0  1782404    4324    0    0    0     0       0          0
 * The name is right-aligned and ends at ':' (dev_valid_name() refuses ':',
 * '/' and white space in a name); old kernels wrote no blank after ':'.
 * "drop" is rx_dropped + rx_missed_errors, "errs" rx_errors.
 *
 * /proc/net/wireless (wireless_seq_printf_stats() in net/wireless/wext-proc.c):
 *   Inter-| sta-|   Quality        |   Discarded packets               | Missed | WE
 *    face | tus | link level noise |  nwid  crypt   frag  retry   misc | beacon | 22
 *    wlan0: 0000   70.  -39.  -256        0      0      0      0      0        0
 * status in hex, then link quality, level and noise, each followed by '.'
 * when updated since the last read, or a blank. A driver that reports dBm
 * (IW_QUAL_DBM, every cfg80211 driver) prints the level as a negative
 * number; a relative level is 0..255.
 *
 * operstate (sysfs-class-net, RFC 2863): unknown, notpresent, down,
 * lowerlayerdown, testing, dormant, up.
 */
#include "netdev.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/hash.h"
#include "host_text.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* copies the interface name that ends at ':' at *P into NAME and moves *P past the ':' */
static bool
read_name(const char **p, char name[NETDEV_NAME_MAX])
{
	host_skip_blanks(p);
	const char *colon = strchr(*p, ':');
	if (!colon) {
		return false;
	}
	size_t n = (size_t)(colon - *p);
	if (n == 0 || n >= NETDEV_NAME_MAX || strcspn(*p, " \t\n/") < n || strncmp(*p, ".:", 2) == 0 ||
	    strncmp(*p, "..:", 3) == 0) {
		return false; /* the kernel's dev_valid_name() refuses these too */
	}
	memcpy(name, *p, n);
	name[n] = '\0';
	*p = colon + 1;
	return true;
}

/* LINE of LEN bytes as a C string in BUF; false when it does not fit */
static bool
copy_line(const char *line, size_t len, char *buf, size_t size)
{
	if (len >= size) {
		return false;
	}
	memcpy(buf, line, len);
	buf[len] = '\0';
	return true;
}

int
netdev_parse_line(const char *line, size_t len, struct netdev_stat *out)
{
	char buf[512]; /* 16 counters of at most 20 digits and their blanks */
	const char *p = buf;
	uint64_t v[16];
	if (!copy_line(line, len, buf, sizeof(buf)) || !read_name(&p, out->name)) {
		return -EINVAL;
	}
	for (size_t i = 0; i < N_OF(v); i++) {
		if (!host_read_counter(&p, &v[i])) {
			return -EINVAL;
		}
	}
	if (!host_at_end(p)) {
		return -EINVAL;
	}
	out->rx_bytes = v[0];
	out->rx_packets = v[1];
	out->rx_errors = v[2];
	out->rx_drop = v[3];
	out->tx_bytes = v[8];
	out->tx_packets = v[9];
	out->tx_errors = v[10];
	out->tx_drop = v[11];
	return 0;
}

/* a signed decimal whole number at *P (after blanks), -2^31..2^31 */
static bool
read_int(const char **p, long *out)
{
	host_skip_blanks(p);
	bool minus = **p == '-';
	const char *s = *p + minus;
	uint64_t v;
	if (*s == '+' || !host_read_u64(&s, &v) || v > (UINT64_C(1) << 31)) {
		return false;
	}
	*out = minus ? -(long)v : (long)v;
	*p = s;
	return true;
}

int
netdev_parse_wireless(const char *line, size_t len, char name[NETDEV_NAME_MAX], int *level_dbm)
{
	char buf[256];
	const char *p = buf;
	long link, level;
	if (!copy_line(line, len, buf, sizeof(buf)) || !read_name(&p, name)) {
		return -EINVAL;
	}
	/* status: 4 hex digits without "0x" */
	host_skip_blanks(&p);
	size_t hex = strspn(p, "0123456789abcdefABCDEF");
	if (hex == 0 || hex > 8) {
		return -EINVAL;
	}
	p += hex;
	if (!read_int(&p, &link)) {
		return -EINVAL;
	}
	p += *p == '.';
	if (!read_int(&p, &level)) {
		return -EINVAL;
	}
	p += *p == '.';
	if (*p != ' ' && *p != '\t' && *p != '\0' && *p != '\n') {
		return -EINVAL;
	}
	/* dBm: negative, and above -256 (0 - 0x100: no level at all) */
	if (level >= 0 || level <= -256) {
		return -ENODATA;
	}
	*level_dbm = (int)level;
	return 0;
}

int
netdev_link_up(const char *operstate, int carrier)
{
	static const char *const down[] = {"notpresent", "down", "lowerlayerdown", "testing", "dormant"};
	size_t n = strcspn(operstate, "\n");
	if (!host_at_end(operstate + n)) {
		return -1;
	}
	if (n == 2 && strncmp(operstate, "up", 2) == 0) {
		return 1;
	}
	if (n == 7 && strncmp(operstate, "unknown", 7) == 0) {
		return carrier == 1 ? 1 : 0;
	}
	for (size_t i = 0; i < N_OF(down); i++) {
		if (strlen(down[i]) == n && strncmp(operstate, down[i], n) == 0) {
			return 0;
		}
	}
	return -1;
}

bool
netdev_selected(const char *name, const struct netdev_filter *f)
{
	/*
	 * Loopback; what container runtimes, CNI plugins, libvirt and tunnels make;
	 * ifb (traffic shaping's copies of another interface's packets: counted
	 * twice); and the fallback devices a tunnel module makes as it loads (always
	 * down, never carrying traffic: a dozen idle series on every such board), by
	 * their fixed names (net/ipv4/ip_gre.c, ip_vti.c, net/ipv6/sit.c,
	 * ip6_tunnel.c, ip6_gre.c, ip6_vti.c).
	 */
	static const char *const virtual_names[] = {"lo",       "veth*",    "docker*", "br-*",   "virbr*",  "cni*",
						    "flannel*", "cali*",    "vxlan*",  "kube-*", "tunl*",   "dummy*",
						    "ifb*",     "sit0",     "ip6tnl0", "gre0",   "gretap0", "erspan0",
						    "ip_vti0",  "ip6_vti0", "ip6gre0"};
	if (host_glob_any(name, f->exclude, f->exclude_count)) {
		return false;
	}
	if (f->include_count > 0) {
		return host_glob_any(name, f->include, f->include_count);
	}
	return !host_glob_any(name, virtual_names, N_OF(virtual_names));
}

void
netdev_segment(const char *name, bool hashed, char *buf)
{
	size_t n = 0;
	for (; n < NETDEV_NAME_MAX - 1 && name[n]; n++) {
		char c = name[n];
		if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
		}
		buf[n] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '_';
	}
	if (hashed || n == 0) {
		snprintf(buf + n, NETDEV_SEGMENT_MAX - n, "%s%08" PRIx32, n ? "_" : "", (uint32_t)fnv1a64_str(name));
		return;
	}
	buf[n] = '\0';
}
