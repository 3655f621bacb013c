/* Wall clock steps seen against the monotonic clock (clock.h). */
#include "clock.h"

int64_t
clock_watch_step(struct clock_watch *w, int64_t wall_ms, int64_t mono_ms)
{
	int64_t offset = wall_ms - mono_ms;
	int64_t step = 0;

	if (w->have) {
		int64_t d = offset - w->offset_ms;
		int64_t ran = mono_ms > w->mono_ms ? mono_ms - w->mono_ms : 0;
		int64_t slew = CLOCK_STEP_MIN_MS + ran / 2000;
		if (d >= slew || d <= -slew) {
			step = d;
		}
	}
	w->have = true;
	w->offset_ms = offset;
	w->mono_ms = mono_ms;
	return step;
}
