/* The host: section: key table, defaults and checks. */
#include "host_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* filesystems.enabled into host_fs_config.off: the bool's words, inverted */
static const char *const enabled_names[] = {"true", "false", "yes", "no", "on", "off", NULL};
static const int off_values[] = {0, 1, 0, 1, 0, 1};

/* a list of globs: mount points (each starts with '/') or interface names (never '/', ':' or a blank) */
static int
decode_globs(struct cfg_decoder *dec, const struct cfg_node *node, const char *key, bool interfaces, char ***list,
	     size_t *count)
{
	char **l;
	size_t n;
	if (cfg_decode_string_list(dec, node, key, interfaces ? "an interface name or glob" : "a mount point or glob",
				   &l, &n) < 0) {
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		bool bad = interfaces ? l[i][0] == '\0' || strcspn(l[i], "/: \t\n") != strlen(l[i]) : l[i][0] != '/';
		if (bad) {
			char shown[CFG_SHOW_MAX];
			cfg_show(l[i], shown, sizeof(shown));
			if (interfaces) {
				cfg_report(dec, node,
					   "host.network.%s: '%s' is no interface name: a glob of one holds no '/', "
					   "':' or blank (\"eth0\", \"wlan*\", \"eth0.100\")",
					   key, shown);
			} else {
				cfg_report(dec, node,
					   "host.filesystems.%s: '%s' is no mount point: a glob of one starts with '/' "
					   "(\"/\", \"/data\", \"/media/*\")",
					   key, shown);
			}
			cfg_free_string_list(l);
			return -EINVAL;
		}
	}
	cfg_free_string_list(*list);
	*list = n ? l : NULL;
	*count = n;
	if (!n) {
		cfg_free_string_list(l);
	}
	return 0;
}

static int
decode_include(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct host_fs_config *fs = obj;
	return decode_globs(dec, node, "include", false, &fs->include, &fs->include_count);
}

static int
decode_exclude(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct host_fs_config *fs = obj;
	return decode_globs(dec, node, "exclude", false, &fs->exclude, &fs->exclude_count);
}

static int
decode_net_include(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct host_net_config *net = obj;
	return decode_globs(dec, node, "include", true, &net->include, &net->include_count);
}

static int
decode_net_exclude(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct host_net_config *net = obj;
	return decode_globs(dec, node, "exclude", true, &net->exclude, &net->exclude_count);
}

static const struct cfg_key fs_keys[] = {
	CFG_CHOICE("enabled", struct host_fs_config, off, "true", 0, enabled_names, off_values),
	CFG_DURATION("interval", struct host_fs_config, interval_ms, "10s", 0, 1000, 24 * 3600 * 1000LL),
	CFG_DURATION("trend", struct host_fs_config, trend_ms, "30m", 0, 60 * 1000, 24 * 3600 * 1000LL),
	CFG_CUSTOM("include", decode_include),
	CFG_CUSTOM("exclude", decode_exclude),
};

static const struct cfg_key net_keys[] = {
	CFG_CHOICE("enabled", struct host_net_config, off, "true", 0, enabled_names, off_values),
	CFG_CUSTOM("include", decode_net_include),
	CFG_CUSTOM("exclude", decode_net_exclude),
};

static void
fs_release(void *obj)
{
	struct host_config *cfg = obj;
	cfg_free_string_list(cfg->fs.include);
	cfg_free_string_list(cfg->fs.exclude);
	memset(&cfg->fs, 0, sizeof(cfg->fs));
}

static bool
list_equal(char *const *x, char *const *y)
{
	for (; x && y && *x && *y; x++, y++) {
		if (strcmp(*x, *y) != 0) {
			return false;
		}
	}
	return (!x || !*x) && (!y || !*y);
}

static bool
fs_equal(const void *a, const void *b)
{
	const struct host_fs_config *x = &((const struct host_config *)a)->fs;
	const struct host_fs_config *y = &((const struct host_config *)b)->fs;
	return x->off == y->off && x->interval_ms == y->interval_ms && x->trend_ms == y->trend_ms &&
	       list_equal(x->include, y->include) && list_equal(x->exclude, y->exclude);
}

/* host.filesystems: its own map, defaults applied when it is there */
static int
decode_filesystems(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct host_config *cfg = obj;
	fs_release(cfg);
	cfg_apply_defaults(fs_keys, N_OF(fs_keys), &cfg->fs);
	struct cfg_decoder sub = {dec->diags, "host.filesystems", dec->user};
	return cfg_decode_map(&sub, node, fs_keys, N_OF(fs_keys), &cfg->fs, NULL);
}

static void
net_release(void *obj)
{
	struct host_config *cfg = obj;
	cfg_free_string_list(cfg->net.include);
	cfg_free_string_list(cfg->net.exclude);
	memset(&cfg->net, 0, sizeof(cfg->net));
}

static bool
net_equal(const void *a, const void *b)
{
	const struct host_net_config *x = &((const struct host_config *)a)->net;
	const struct host_net_config *y = &((const struct host_config *)b)->net;
	return x->off == y->off && list_equal(x->include, y->include) && list_equal(x->exclude, y->exclude);
}

/* host.network: its own map, defaults applied when it is there */
static int
decode_network(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct host_config *cfg = obj;
	net_release(cfg);
	cfg_apply_defaults(net_keys, N_OF(net_keys), &cfg->net);
	struct cfg_decoder sub = {dec->diags, "host.network", dec->user};
	return cfg_decode_map(&sub, node, net_keys, N_OF(net_keys), &cfg->net, NULL);
}

static int
decode_probes(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	return probe_config_decode(dec, node, &((struct host_config *)obj)->probes);
}

static bool
probes_equal(const void *a, const void *b)
{
	return probe_config_equal(&((const struct host_config *)a)->probes, &((const struct host_config *)b)->probes);
}

static void
probes_release(void *obj)
{
	probe_config_free(&((struct host_config *)obj)->probes);
}

static const struct cfg_key host_keys[] = {
	CFG_BOOL("enabled", struct host_config, enabled, "true"),
	CFG_BOOL("disks", struct host_config, disks, "true"),
	{.name = "filesystems",
	 .kind = CFG_K_CUSTOM,
	 .decode = decode_filesystems,
	 .equal = fs_equal,
	 .release = fs_release},
	{.name = "network", .kind = CFG_K_CUSTOM, .decode = decode_network, .equal = net_equal, .release = net_release},
	{.name = "probes",
	 .kind = CFG_K_CUSTOM,
	 .decode = decode_probes,
	 .equal = probes_equal,
	 .release = probes_release},
};

int64_t
host_config_fs_interval_ms(const struct host_config *cfg)
{
	return cfg->fs.interval_ms > 0 ? cfg->fs.interval_ms : HOST_FS_INTERVAL_DEFAULT_MS;
}

int64_t
host_config_fs_trend_ms(const struct host_config *cfg)
{
	return cfg->fs.trend_ms > 0 ? cfg->fs.trend_ms : HOST_FS_TREND_DEFAULT_MS;
}

const struct cfg_section host_config_section = {
	.name = "host",
	.keys = host_keys,
	.key_count = N_OF(host_keys),
	.validate = NULL,
};
