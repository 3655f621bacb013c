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
	if (s->text) {
		metrics_text_unseal(s->text);
	}
}

/* "cpu.N" + SUFFIX into BUF (snprintf costs ~500 instructions a name, and this runs 3 per core a sample). */
static size_t
cpu_name(char *buf, int n, const char *suffix)
{
	char digits[12];
	size_t d = 0;
	do {
		digits[d++] = (char)('0' + n % 10);
		n /= 10;
	} while (n > 0);
	size_t len = 4;
	memcpy(buf, "cpu.", 4);
	while (d > 0) {
		buf[len++] = digits[--d];
	}
	size_t sl = strlen(suffix);
	memcpy(buf + len, suffix, sl + 1);
	return len + sl;
}

int
sample_jetson_clocks(const struct metric_set *ms, int *cores, int *offline)
{
	int listed = 0, off = 0;
	bool pinned = true, any_floor = false;
	for (int n = 0; n < 256; n++) {
		char name[METRIC_NAME_MAX];
		double online, lo, hi;
		cpu_name(name, n, ".online");
		if (!metric_set_get(ms, name, &online)) {
			break;
		}
		listed++;
		if (online < 1) {
			off++;
			continue;
		}
		cpu_name(name, n, ".min_freq_mhz");
		bool have_min = metric_set_get(ms, name, &lo);
		cpu_name(name, n, ".max_freq_mhz");
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
