/* host.probes: the list, each probe's keys, defaults and checks (probe_config.h). */
#include "probe_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* one probe as the key table decodes it; copied into struct probe_config once checked */
struct item {
	char *name;
	char *host;
	int port;
	int icmp;
	int64_t interval_ms;
	int64_t timeout_ms;
	int window;
};

enum {
	K_NAME,
	K_HOST,
	K_PORT,
	K_ICMP,
	K_INTERVAL,
	K_TIMEOUT,
	K_WINDOW
};

static const struct cfg_key item_keys[] = {
	[K_NAME] = CFG_STRING("name", struct item, name, NULL, CFG_F_REQUIRED | CFG_F_NOT_EMPTY),
	[K_HOST] = CFG_STRING("host", struct item, host, NULL, CFG_F_REQUIRED | CFG_F_NOT_EMPTY),
	[K_PORT] = CFG_INT("port", struct item, port, NULL, 0, 1, 65535),
	[K_ICMP] = CFG_BOOL("icmp", struct item, icmp, "false"),
	[K_INTERVAL] = CFG_DURATION("interval", struct item, interval_ms, "10s", 0, 1000, 3600 * 1000LL),
	[K_TIMEOUT] = CFG_DURATION("timeout", struct item, timeout_ms, "2s", 0, 100, 60 * 1000LL),
	[K_WINDOW] = CFG_INT("window", struct item, window, "6", 0, 1, PROBE_WINDOW_MAX),
};

bool
probe_name_valid(const char *name)
{
	size_t n = strlen(name);
	return n >= 1 && n <= PROBE_NAME_MAX && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/* RFC 1123 host name: labels of 1..63 letters, digits and '-', not at a label's ends; a final '.' allowed */
static bool
dns_name(const char *host)
{
	size_t n = strlen(host);
	if (n == 0 || n > PROBE_HOST_MAX) {
		return false;
	}
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		char c = host[i];
		if (c == '.') {
			if (label == 0 || host[i - 1] == '-') {
				return false;
			}
			label = 0;
			continue;
		}
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  (c == '-' && label > 0);
		if (!ok || ++label > 63) {
			return false;
		}
	}
	return label == 0 ? n > 1 : host[n - 1] != '-';
}

enum probe_host_kind
probe_host_kind(const char *host)
{
	unsigned char addr[16];
	if (inet_pton(AF_INET, host, addr) == 1) {
		return PROBE_HOST_IPV4;
	}
	if (inet_pton(AF_INET6, host, addr) == 1) {
		return PROBE_HOST_IPV6;
	}
	/* all digits and dots but no address (999.1.1.1, 10.1): a mistyped address, not a name */
	if (strspn(host, "0123456789.") == strlen(host)) {
		return PROBE_HOST_BAD;
	}
	return dns_name(host) ? PROBE_HOST_NAME : PROBE_HOST_BAD;
}

static const struct cfg_node *
item_value(const struct cfg_node *map, const char *key)
{
	return map && map->type == CFG_MAP ? cfg_map_get(map, key) : NULL;
}

/* The checks across keys of one decoded item; false after reporting. */
static bool
check_item(struct cfg_decoder *dec, const struct cfg_node *map, const struct item *it, uint64_t present)
{
	bool ok = true;
	char shown[CFG_SHOW_MAX];
	if (it->name && !probe_name_valid(it->name)) {
		cfg_show(it->name, shown, sizeof(shown));
		cfg_report(dec, item_value(map, "name"),
			   "name: '%s' is no probe name: 1 to %d lower-case letters, digits or '_' (it names the "
			   "metrics: probe.NAME.up)",
			   shown, PROBE_NAME_MAX);
		ok = false;
	}
	if (it->host && probe_host_kind(it->host) == PROBE_HOST_BAD) {
		cfg_show(it->host, shown, sizeof(shown));
		cfg_report(dec, item_value(map, "host"),
			   "host: '%s' is no address or host name: an IPv4 address (192.168.1.10), an IPv6 one "
			   "(fd00::10) or a name of letters, digits, '-' and '.' (broker.lan)",
			   shown);
		ok = false;
	}
	bool port = present & (1u << K_PORT), icmp = present & (1u << K_ICMP);
	if (port && icmp && it->icmp) {
		cfg_report(dec, item_value(map, "icmp"),
			   "icmp: true and a port: a probe is a TCP connect (port) or an ICMP echo (icmp: true), "
			   "not both");
		ok = false;
	} else if (!port && icmp && !it->icmp) {
		cfg_report(dec, item_value(map, "icmp"),
			   "icmp: false needs a port: without one the probe is an ICMP echo");
		ok = false;
	}
	if (!(present & (1u << K_TIMEOUT)) && it->timeout_ms > it->interval_ms) {
		return ok; /* the default timeout is at most the interval (decode_item) */
	}
	if (it->timeout_ms > it->interval_ms) {
		char t[32], i[32];
		cfg_format_duration(it->timeout_ms, t, sizeof(t));
		cfg_format_duration(it->interval_ms, i, sizeof(i));
		cfg_report(dec, item_value(map, "timeout"),
			   "timeout: %s is longer than the interval %s: an attempt ends before the next one starts", t,
			   i);
		ok = false;
	}
	return ok;
}

static bool
name_taken(const struct probe_config *items, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(items[i].name, name) == 0) {
			return true;
		}
	}
	return false;
}

/* One list item into *OUT; false after reporting. */
static bool
decode_item(struct cfg_decoder *dec, const struct cfg_node *map, size_t index, struct probe_config *out)
{
	struct item it = {0};
	uint64_t present = 0;
	char context[64];
	snprintf(context, sizeof(context), "host.probes[%zu]", index);
	struct cfg_decoder sub = {dec->diags, context, dec->user};
	size_t before = dec->diags->count;
	cfg_apply_defaults(item_keys, N_OF(item_keys), &it);
	if (map && cfg_node_is_null(map)) {
		cfg_report(dec, map, "%s: expected a map {name, host, port}, got nothing", context);
		return false;
	}
	cfg_decode_map(&sub, map, item_keys, N_OF(item_keys), &it, &present);
	bool ok = dec->diags->count == before && check_item(dec, map, &it, present);
	if (ok) {
		memset(out, 0, sizeof(*out));
		memcpy(out->name, it.name, strlen(it.name) + 1);
		memcpy(out->host, it.host, strlen(it.host) + 1);
		out->port = (present & (1u << K_PORT)) ? it.port : 0;
		out->interval_ms = it.interval_ms;
		/* the default 2 s, but never longer than a shorter interval */
		out->timeout_ms = it.timeout_ms > it.interval_ms ? it.interval_ms : it.timeout_ms;
		out->window = it.window;
	}
	cfg_free_strings(item_keys, N_OF(item_keys), &it);
	return ok;
}

int
probe_config_decode(struct cfg_decoder *dec, const struct cfg_node *node, struct host_probes *out)
{
	probe_config_free(out);
	if (cfg_node_is_null(node)) {
		return 0; /* "probes:" with nothing under it: none */
	}
	if (node->type != CFG_SEQ) {
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(node, got, sizeof(got));
		cfg_report(dec, node, "probes: expected a list of {name, host, port}, got %s", got);
		return -EINVAL;
	}
	if (node->count > PROBE_MAX) {
		cfg_report(dec, node->items[PROBE_MAX], "probes: at most %d probes", PROBE_MAX);
		return -EINVAL;
	}
	struct probe_config *items = xcalloc(node->count ? node->count : 1, sizeof(*items));
	bool ok = true;
	size_t n = 0;
	for (size_t i = 0; i < node->count; i++) {
		if (!decode_item(dec, node->items[i], i, &items[n])) {
			ok = false;
			continue;
		}
		if (name_taken(items, n, items[n].name)) {
			cfg_report(dec, item_value(node->items[i], "name"),
				   "name: a probe named '%s' is given above: each name once", items[n].name);
			ok = false;
			continue;
		}
		n++;
	}
	if (!ok) {
		free(items);
		return -EINVAL;
	}
	if (!n) {
		free(items);
		items = NULL;
	}
	out->items = items;
	out->count = n;
	return 0;
}

void
probe_config_free(struct host_probes *p)
{
	free(p->items);
	p->items = NULL;
	p->count = 0;
}

bool
probe_config_equal(const struct host_probes *a, const struct host_probes *b)
{
	if (a->count != b->count) {
		return false;
	}
	for (size_t i = 0; i < a->count; i++) {
		const struct probe_config *x = &a->items[i], *y = &b->items[i];
		if (strcmp(x->name, y->name) != 0 || strcmp(x->host, y->host) != 0 || x->port != y->port ||
		    x->interval_ms != y->interval_ms || x->timeout_ms != y->timeout_ms || x->window != y->window) {
			return false;
		}
	}
	return true;
}
