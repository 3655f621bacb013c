/*
 * The driven clock (clock_driven.h): a test build's clock source. Waits
 * register while they block so that an advance can wake them; a wake that
 * cannot be delivered at once (the waiter's mutex is busy) is caught by a
 * short real wait (SLICE_MS), so none is ever lost, only late.
 */
#include "clock_driven.h"

#include <errno.h>
#include <stddef.h>
#include <time.h>

#include "clock.h"
#include "clock_source.h"

/* The longest real time a wait blocks before it looks at the driven clock again. */
#define SLICE_MS 5

struct waiter {
	pthread_cond_t *cv; /* NULL: a sleep, woken through the clock's own condition */
	pthread_mutex_t *mu;
	struct waiter *next;
};

/* One per process, as the clock it stands for. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t moved; /* sleeps wait on it */
	int64_t mono_ms;
	int64_t wall_offset_ms; /* wall - monotonic */
	int64_t boot_offset_ms; /* boot - monotonic */
	bool auto_advance;
	int sleepers;
	struct waiter *waiters;
} dc = {.mu = PTHREAD_MUTEX_INITIALIZER, .moved = PTHREAD_COND_INITIALIZER};

/* The driven monotonic time plus *OFFSET (NULL: none), read under the lock. */
static int64_t
read_plus(const int64_t *offset)
{
	pthread_mutex_lock(&dc.mu);
	int64_t t = dc.mono_ms + (offset ? *offset : 0);
	pthread_mutex_unlock(&dc.mu);
	return t;
}

static int64_t
driven_mono_ms(void)
{
	return read_plus(NULL);
}

static int64_t
driven_wall_ms(void)
{
	return read_plus(&dc.wall_offset_ms);
}

static int64_t
driven_boot_ms(void)
{
	return read_plus(&dc.boot_offset_ms);
}

/* dc.mu held: the time moved; wake whoever waits on it. */
static void
wake_all(void)
{
	pthread_cond_broadcast(&dc.moved);
	for (struct waiter *w = dc.waiters; w; w = w->next) {
		/* a waiter holds its mutex until it blocks: free means it waits (else its slice ends the wait) */
		if (pthread_mutex_trylock(w->mu) == 0) {
			pthread_cond_broadcast(w->cv);
			pthread_mutex_unlock(w->mu);
		}
	}
}

static void
driven_sleep_ms(int64_t ms)
{
	pthread_mutex_lock(&dc.mu);
	int64_t until = dc.mono_ms + ms;
	if (dc.auto_advance) {
		dc.mono_ms = until;
		wake_all();
	}
	dc.sleepers++;
	while (dc.mono_ms < until) {
		pthread_cond_wait(&dc.moved, &dc.mu);
	}
	dc.sleepers--;
	pthread_mutex_unlock(&dc.mu);
}

static int
driven_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t until_ms)
{
	struct waiter w = {.cv = cv, .mu = mu};
	pthread_mutex_lock(&dc.mu);
	if (dc.mono_ms >= until_ms) {
		pthread_mutex_unlock(&dc.mu);
		return -ETIMEDOUT;
	}
	w.next = dc.waiters;
	dc.waiters = &w;
	pthread_mutex_unlock(&dc.mu);

	/* CV waits on the real monotonic clock (clock_cond_init) */
	int64_t slice = clock_real_mono_ms() + SLICE_MS;
	struct timespec ts = {.tv_sec = slice / 1000, .tv_nsec = (long)(slice % 1000) * 1000000L};
	pthread_cond_timedwait(cv, mu, &ts);

	pthread_mutex_lock(&dc.mu);
	for (struct waiter **p = &dc.waiters; *p; p = &(*p)->next) {
		if (*p == &w) {
			*p = w.next;
			break;
		}
	}
	bool due = dc.mono_ms >= until_ms;
	pthread_mutex_unlock(&dc.mu);
	return due ? -ETIMEDOUT : 0;
}

static int64_t
driven_poll_ms(int64_t ms)
{
	return ms < SLICE_MS ? ms : SLICE_MS;
}

static const struct clock_source driven = {
	.mono_ms = driven_mono_ms,
	.wall_ms = driven_wall_ms,
	.boot_ms = driven_boot_ms,
	.sleep_ms = driven_sleep_ms,
	.cond_wait = driven_cond_wait,
	.poll_ms = driven_poll_ms,
};

void
clock_driven_start(int64_t mono_ms, int64_t wall_ms)
{
	pthread_mutex_lock(&dc.mu);
	dc.mono_ms = mono_ms;
	dc.wall_offset_ms = wall_ms - mono_ms;
	dc.boot_offset_ms = 0;
	dc.auto_advance = false;
	pthread_mutex_unlock(&dc.mu);
	clock_current = &driven;
}

void
clock_driven_stop(void)
{
	clock_current = &clock_real;
}

void
clock_driven_advance(int64_t ms)
{
	pthread_mutex_lock(&dc.mu);
	dc.mono_ms += ms > 0 ? ms : 0;
	wake_all();
	pthread_mutex_unlock(&dc.mu);
}

void
clock_driven_set_wall(int64_t wall_ms)
{
	pthread_mutex_lock(&dc.mu);
	dc.wall_offset_ms = wall_ms - dc.mono_ms;
	wake_all();
	pthread_mutex_unlock(&dc.mu);
}

void
clock_driven_auto_advance(bool on)
{
	pthread_mutex_lock(&dc.mu);
	dc.auto_advance = on;
	pthread_mutex_unlock(&dc.mu);
}

int
clock_driven_waiters(void)
{
	pthread_mutex_lock(&dc.mu);
	int n = dc.sleepers;
	for (struct waiter *w = dc.waiters; w; w = w->next) {
		n++;
	}
	pthread_mutex_unlock(&dc.mu);
	return n;
}
