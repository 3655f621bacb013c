/* What the MQTT payload tests share (see mqtt_checks.h). */
#include "mqtt_checks.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static struct nvpmodel_conf modes = {
	.mode_count = 2,
	.default_id = 1,
	.modes = {{.id = 0, .name = "MAXN"}, {.id = 1, .name = "15W"}},
};

struct agent_info
mqtt_checks_info(void)
{
	struct agent_info info = {.modes = &modes, .version = "0.1.0", .interval_ms = 1000};
	snprintf(info.identity.model, sizeof(info.identity.model), "NVIDIA Jetson AGX Orin");
	snprintf(info.identity.soc, sizeof(info.identity.soc), "tegra234");
	snprintf(info.identity.module, sizeof(info.identity.module), "p3701-0005");
	snprintf(info.identity.l4t, sizeof(info.identity.l4t), "36.4.3");
	snprintf(info.identity.jetpack, sizeof(info.identity.jetpack), "6.2");
	return info;
}

int
mqtt_checks_utc(void **state)
{
	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	return 0;
}
