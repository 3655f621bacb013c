/* Sample helpers and the throttle reason names. */
#include "sample.h"

#include <string.h>

#include "metrics_text.h"

const char *
throttle_reason_name(enum throttle_reason r)
{
	static const char *const names[THROTTLE_REASON_COUNT] = {
		[THROTTLE_THERMAL] = "thermal",
		[THROTTLE_OVERCURRENT] = "overcurrent",
		[THROTTLE_RAIL_ALARM] = "rail_alarm",
		[THROTTLE_FREQ_CAP] = "freq_cap",
	};
	return (unsigned)r < THROTTLE_REASON_COUNT ? names[r] : "unknown";
}

void
sample_clear(struct sample *s)
{
	s->seq = 0;
	s->time_ms = 0;
	s->mono_ms = 0;
	s->clock_step_ms = 0;
	s->power_mode[0] = '\0';
	metric_set_clear(&s->metrics);
	memset(&s->throttle, 0, sizeof(s->throttle));
	s->processes.cpu_count = s->processes.memory_count = 0;
	s->oom_killed.count = s->oom_killed.more = 0;
	if (s->text) {
		metrics_text_unseal(s->text);
	}
}

int
sample_jetson_clocks(const struct metric_set *ms, int *cores, int *offline)
{
	int listed = 0, off = 0;
	bool pinned = true, any_floor = false;
	for (int n = 0; n < 256; n++) {
		char name[METRIC_NAME_MAX];
		double online, lo, hi;
		metric_name_num(name, "cpu.", n, ".online");
		if (!metric_set_get(ms, name, &online)) {
			break;
		}
		listed++;
		if (online < 1) {
			off++;
			continue;
		}
		metric_name_num(name, "cpu.", n, ".min_freq_mhz");
		bool have_min = metric_set_get(ms, name, &lo);
		metric_name_num(name, "cpu.", n, ".max_freq_mhz");
		if (have_min && metric_set_get(ms, name, &hi)) {
			any_floor = true;
			pinned = pinned && lo == hi;
		}
	}
	if (cores) {
		*cores = listed;
	}
	if (offline) {
		*offline = off;
	}
	double glo, ghi;
	if (!any_floor || !metric_set_get(ms, "gpu.min_freq_mhz", &glo) ||
	    !metric_set_get(ms, "gpu.max_freq_mhz", &ghi)) {
		return -1;
	}
	return pinned && glo == ghi ? 1 : 0;
}

bool
sample_input_power(const struct metric_set *ms, double *mw, const char **name)
{
	static const char *const rails[][2] = {
		{"power.vdd_in.mw", "vdd_in"},
		{"power.pom_5v_in.mw", "pom_5v_in"},
		{"power.vin_sys_5v0.mw", "vin_sys_5v0"},
		{"power.sys5v.mw", "sys5v"},
	};
	for (size_t i = 0; i < sizeof(rails) / sizeof(rails[0]); i++) {
		if (metric_set_get(ms, rails[i][0], mw)) {
			if (name) {
				*name = rails[i][1];
			}
			return true;
		}
	}
	return false;
}
