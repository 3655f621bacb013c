/* The one clock (clock.h): the real clocks, the process-wide source, and wall clock steps. */
#include "clock.h"

#include <errno.h>
#include <time.h>

#include "clock_source.h"

static int64_t
read_ms(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
clock_real_mono_ms(void)
{
	return read_ms(CLOCK_MONOTONIC);
}

static int64_t
read_us(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t
real_mono_us(void)
{
	return read_us(CLOCK_MONOTONIC);
}

static int64_t
real_wall_us(void)
{
	return read_us(CLOCK_REALTIME);
}

static int64_t
real_wall_ms(void)
{
	return read_ms(CLOCK_REALTIME);
}

static int64_t
real_boot_ms(void)
{
	return read_ms(CLOCK_BOOTTIME);
}

static void
real_sleep_ms(int64_t ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

static int
real_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t until_ms)
{
	struct timespec ts = {.tv_sec = until_ms / 1000, .tv_nsec = (long)(until_ms % 1000) * 1000000L};
	return pthread_cond_timedwait(cv, mu, &ts) == ETIMEDOUT ? -ETIMEDOUT : 0;
}

static int64_t
real_poll_ms(int64_t ms)
{
	return ms;
}

const struct clock_source clock_real = {
	.mono_ms = clock_real_mono_ms,
	.mono_us = real_mono_us,
	.wall_ms = real_wall_ms,
	.wall_us = real_wall_us,
	.boot_ms = real_boot_ms,
	.sleep_ms = real_sleep_ms,
	.cond_wait = real_cond_wait,
	.poll_ms = real_poll_ms,
};

const struct clock_source *clock_current = &clock_real;

int64_t
monotonic_ms(void)
{
	return clock_current->mono_ms();
}

int64_t
monotonic_us(void)
{
	return clock_current->mono_us();
}

int64_t
clock_wall_ms(void)
{
	return clock_current->wall_ms();
}

int64_t
clock_wall_us(void)
{
	return clock_current->wall_us();
}

int64_t
clock_boot_ms(void)
{
	return clock_current->boot_ms();
}

void
clock_sleep_ms(int64_t ms)
{
	if (ms > 0) {
		clock_current->sleep_ms(ms);
	}
}

void
clock_cond_init(pthread_cond_t *cv)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
}

int
clock_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t until_ms)
{
	return clock_current->cond_wait(cv, mu, until_ms);
}

int64_t
clock_poll_ms(int64_t ms)
{
	return ms > 0 ? clock_current->poll_ms(ms) : 0;
}

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
