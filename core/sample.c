/* Sample helpers and the throttle reason names. */
#include "sample.h"

#include <string.h>

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
}
