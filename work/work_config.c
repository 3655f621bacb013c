/* The work: section (work.h): the StatsD listener's loopback address. */
#include <errno.h>
#include <stddef.h>

#include "work_priv.h"

static const struct cfg_key work_keys[] = {
	CFG_STRING("listen", struct work_config, listen, "", 0),
};

static int
work_validate(const void *obj, const struct cfg_place *place, struct diag_list *diags)
{
	const struct work_config *cfg = obj;
	struct sockaddr_storage addr;
	socklen_t len;
	if (cfg->listen[0] && work_parse_listen(cfg->listen, &addr, &len) < 0) {
		cfg_report_key(
			diags, place, "listen",
			"work.listen: expected a loopback HOST:PORT (127.0.0.1:9475, localhost:9475, [::1]:9475), "
			"got '%s': work reports from other machines are not taken",
			cfg->listen);
		return -EINVAL;
	}
	return 0;
}

const struct cfg_section work_config_section = {
	.name = "work",
	.keys = work_keys,
	.key_count = sizeof(work_keys) / sizeof(work_keys[0]),
	.validate = work_validate,
};
