/*
 * tegrastats parser, naming part: how sensors, engines and power rails
 * are named in metrics. tegra_sensor_name() is shared with the thermal
 * zones of the sysfs board source, so that "CPU-therm" and tegrastats'
 * "cpu@" both give temp.cpu_c.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "tegrastats_priv.h"

/* ---- engines and rails ---- */

static bool
has_any_prefix(const char *s, size_t len, const char *const *list)
{
	for (; *list; list++) {
		if (text_starts(s, len, *list, strlen(*list))) {
			return true;
		}
	}
	return false;
}

/* Power rails, whose value is never a single number. */
bool
ts_rail_like(const char *s, size_t len)
{
	static const char *const names[] = {"VDD", "VIN", "POM_", NULL};
	return has_any_prefix(s, len, names) || word_is(s, len, LIT("NC")) || word_is(s, len, LIT("GPU")) ||
	       word_is(s, len, LIT("CPU")) || word_is(s, len, LIT("SOC")) || word_is(s, len, LIT("CV")) ||
	       word_is(s, len, LIT("SYS5V"));
}

/* ---- sensors ---- */

size_t
tegra_sensor_name(const char *name, size_t len, char *buf, size_t size)
{
	/* zone types carry these; tegrastats prints the part before them */
	static const struct suffix suffixes[] = {
		SUFFIX("-thermal"), SUFFIX("-therm"), SUFFIX("_tegra"), SUFFIX("-fan-est"), SUFFIX("-die"),
	};
	/* fast path: names as tegrastats prints them ("soc2", "CPU") */
	if (len < size) {
		size_t i = 0;
		for (; i < len; i++) {
			char c = to_lower(name[i]);
			if (!((c >= 'a' && c <= 'z') || text_is_digit(c))) {
				break;
			}
			buf[i] = c;
		}
		if (i == len && len > 0) {
			buf[len] = '\0';
			return len;
		}
	}
	for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
		size_t sl = suffixes[k].len;
		if (len <= sl) {
			continue;
		}
		bool match = true;
		for (size_t i = 0; i < sl; i++) {
			if (to_lower(name[len - sl + i]) != suffixes[k].text[i]) {
				match = false;
				break;
			}
		}
		if (match) {
			len -= sl;
			break;
		}
	}
	if (len == 0 || len >= size) {
		return 0;
	}
	bool usable = false;
	for (size_t i = 0; i < len; i++) {
		char c = to_lower(name[i]);
		if ((c >= 'a' && c <= 'z') || text_is_digit(c)) {
			usable = true;
		} else if (c != '_') {
			c = '_';
		}
		buf[i] = c;
	}
	buf[len] = '\0';
	return usable ? len : 0;
}

bool
tegra_sensor_is_placeholder(const char *normalised)
{
	return normalised[0] == 'p' && normalised[1] == 'm' && normalised[2] == 'i' && normalised[3] == 'c';
}
