/*
 * Identity and power mode of the sysfs board source: the model, SoC and
 * L4T release read once at open, the nvpmodel modes from
 * /etc/nvpmodel.conf, the current mode (slow group) and whether the clocks
 * run that mode's ceilings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board_priv.h"
#include "core/log.h"
#include "identity.h"
#include "nvpmodel.h"

#define CONF_MAX (1024u * 1024)
#define RELEASE_MAX (64u * 1024)
#define COMPATIBLE_MAX 4096

/* ---- identity ---------------------------------------------------------------- */

void
board_probe_identity(struct board *b)
{
	struct board_identity *id = &b->id;
	char *text = NULL;
	int n;
	if (sysfs_read_str(b->fs, "/proc/device-tree/model", id->model, sizeof(id->model)) <= 0 &&
	    sysfs_read_str(b->fs, "/sys/firmware/devicetree/base/model", id->model, sizeof(id->model)) <= 0) {
		id->model[0] = '\0';
	}
	n = sysfs_read_file(b->fs, "/proc/device-tree/compatible", COMPATIBLE_MAX, &text);
	if (n < 0) {
		n = sysfs_read_file(b->fs, "/sys/firmware/devicetree/base/compatible", COMPATIBLE_MAX, &text);
	}
	if (n > 0) {
		identity_parse_compatible(text, (size_t)n, id->soc, sizeof(id->soc), id->module, sizeof(id->module));
	}
	free(text);
	text = NULL;
	/* where jtop reads it; which generations fill it in is unconfirmed, so an odd value is left out */
	char serial[128];
	if ((sysfs_read_str(b->fs, "/proc/device-tree/serial-number", serial, sizeof(serial)) > 0 ||
	     sysfs_read_str(b->fs, "/sys/firmware/devicetree/base/serial-number", serial, sizeof(serial)) > 0) &&
	    identity_parse_serial(serial, id->serial, sizeof(id->serial)) < 0) {
		id->serial[0] = '\0';
	}
	if (sysfs_read_file(b->fs, "/etc/nv_tegra_release", RELEASE_MAX, &text) >= 0) {
		if (identity_parse_nv_tegra_release(text, id->l4t, sizeof(id->l4t)) == 0) {
			if (!identity_jetpack_for_l4t(id->l4t, id->jetpack, sizeof(id->jetpack))) {
				id->jetpack[0] = '\0';
			}
		} else {
			id->l4t[0] = '\0';
			b->parse_errors++;
		}
		free(text);
	}
}

/* ---- nvpmodel ---------------------------------------------------------------- */

void
board_probe_nvpmodel(struct board *b)
{
	char *text = NULL;
	/* usually a symlink to a per-SKU file; sysfs follows it below the root */
	if (sysfs_read_file(b->fs, "/etc/nvpmodel.conf", CONF_MAX, &text) < 0) {
		return;
	}
	if (nvpmodel_parse_conf(text, &b->conf) == 0) {
		b->conf_ok = true;
	} else {
		b->parse_errors++;
	}
	free(text);
}

void
board_refresh_nvpmodel(struct board *b)
{
	char buf[512];
	int id;
	int n = sysfs_read_str(b->fs, "/var/lib/nvpmodel/status", buf, sizeof(buf));
	board_note_result(b, n);
	b->mode_ok = false;
	if (n > 0) {
		if (nvpmodel_parse_status(buf, &id) == 0) {
			b->mode_ok = true;
			b->mode_id = id;
		} else {
			b->parse_errors++;
		}
	} else if (n == -ENOENT && b->conf_ok && b->conf.default_id >= 0) {
		/* no mode chosen since flashing: the configured default applies */
		b->mode_ok = true;
		b->mode_id = b->conf.default_id;
	}
}

/* The ceilings the clocks run under: this sample's GPU ceiling and the online CPU policies'. */
static struct nvpmodel_clocks
clocks_now(const struct board *b, const struct metric_set *set)
{
	struct nvpmodel_clocks c = {0};
	c.gpu_ok = metric_set_get(set, "gpu.max_freq_mhz", &c.gpu_max_mhz);
	c.gpu_hw_ok = b->gpu.found && b->gpu.hw_max_ok;
	c.gpu_hw_max_mhz = b->gpu.hw_max_mhz;
	c.gpu_mhz_per_unit = b->gpu.mhz_per_unit;
	for (unsigned i = 0; i < b->policy_count; i++) {
		const struct policy *p = &b->policies[i];
		if (p->wanted && p->max_ok && (!c.cpu_ok || p->max_mhz > c.cpu_max_mhz)) {
			c.cpu_ok = true;
			c.cpu_max_mhz = p->max_mhz;
		}
		if (p->wanted && p->hw_max_ok && (!c.cpu_hw_ok || p->hw_max_mhz > c.cpu_hw_max_mhz)) {
			c.cpu_hw_ok = true;
			c.cpu_hw_max_mhz = p->hw_max_mhz;
		}
	}
	return c;
}

/*
 * nvpmodel failing at boot can leave its status naming one mode while the
 * clocks run another's ceilings (unconfirmed by a capture: issue 30). The
 * status is re-read with the slow group only, so a mode switched by hand
 * shows new clocks next to the old status until then: two checks in a row
 * (a slow refresh apart) must disagree before it is reported.
 */
static void
check_clocks(struct board *b, struct sample *s)
{
	struct nvpmodel_clocks now = clocks_now(b, &s->metrics);
	struct nvpmodel_verdict v;
	if (!b->conf_ok || nvpmodel_check_clocks(&b->conf, b->mode_id, &now, &v) < 0) {
		return; /* cannot tell now: the last verdict stands */
	}
	if (!v.mismatch) {
		if (b->mismatch_now) {
			log_info("nvpmodel: the clocks' ceilings agree with power mode id %d again", b->mode_id);
		}
		b->mismatch_checks = 0;
		b->mismatch_now = false;
		return;
	}
	if (++b->mismatch_checks == 2) {
		log_warn("%s", v.why);
		b->mismatch_now = true;
		b->mismatch_seen = true;
	}
}

void
board_sample_nvpmodel(struct board *b, struct sample *s, bool slow)
{
	if (!b->mode_ok) {
		return;
	}
	const struct nvpmodel_mode *mode = b->conf_ok ? nvpmodel_find(&b->conf, b->mode_id) : NULL;
	metric_set_put(&s->metrics, "nvpmodel.id", b->mode_id);
	if (mode) {
		snprintf(s->power_mode, sizeof(s->power_mode), "%s", mode->name);
	}
	if (slow) {
		check_clocks(b, s);
	}
	if (b->mismatch_seen) {
		metric_set_put(&s->metrics, "nvpmodel.mismatch", b->mismatch_now);
	}
}
