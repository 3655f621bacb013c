/*
 * The driven clock (clock_driven.h): a test build's clock source. Waits
 * register while they block so that an advance can wake them; a wake that
 * cannot be delivered at once (the waiter's mutex is busy) is caught by a
 * short real wait (SLICE_MS), so none is ever lost, only late.
 *
 * Three ways it moves: only when told (still: advance), by the waits of the
 * thread that started it (run: the agent's loop jumps to the end of each wait
 * after PACE real ms, so its ticks come on schedule, faster), or with the real
 * clock from where it stands (real: for a clean stop's flushes).
 */
#include "clock_driven.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "clock.h"
#include "clock_source.h"

/* The longest real time a wait blocks before it looks at the driven clock again. */
#define SLICE_MS 5

enum mode {
	STILL, /* moves only on clock_driven_advance() */
	RUN,   /* the starting thread's waits move it (clock_driven_run()) */
	REAL,  /* runs with the real monotonic clock (clock_driven_follow_real()) */
};

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
	bool conds_ready; /* moved and done initialised on the monotonic clock */
	pthread_t owner;  /* the thread that started it: the agent's loop */
	enum mode mode;
	int64_t real_base_ms; /* REAL: the real monotonic time when mono_ms was */
	int64_t run_end_ms;   /* RUN: where it stops (INT64_MAX: never) */
	int64_t pace_ms;      /* RUN: real ms each of the owner's waits lasts */
	bool run_done;
	pthread_cond_t done; /* run_done became true */
	bool pending;        /* RUN: the owner waits for PEND_TARGET_MS ... */
	int64_t pend_target_ms;
	int64_t pend_real_ms; /* ... until this real time */
} dc = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* dc.mu held: the driven monotonic time now. */
static int64_t
now_locked(void)
{
	return dc.mode == REAL ? dc.mono_ms + clock_real_mono_ms() - dc.real_base_ms : dc.mono_ms;
}

/* dc.mu held: mono_ms made current (REAL moves it without anyone writing it). */
static void
settle(void)
{
	if (dc.mode == REAL) {
		int64_t real = clock_real_mono_ms();
		dc.mono_ms += real - dc.real_base_ms;
		dc.real_base_ms = real;
	}
}

/* The driven monotonic time plus *OFFSET (NULL: none), read under the lock. */
static int64_t
read_plus(const int64_t *offset)
{
	pthread_mutex_lock(&dc.mu);
	int64_t t = now_locked() + (offset ? *offset : 0);
	pthread_mutex_unlock(&dc.mu);
	return t;
}

/* dc.mu held: whether the calling thread's waits move the clock now. */
static bool
owner_runs(void)
{
	return dc.mode == RUN && pthread_equal(pthread_self(), dc.owner);
}

/* dc.mu held: a real wait on CV (monotonic) of at most SLICE_MS. */
static void
wait_slice(pthread_cond_t *cv)
{
	int64_t slice = clock_real_mono_ms() + SLICE_MS;
	struct timespec ts = {.tv_sec = slice / 1000, .tv_nsec = (long)(slice % 1000) * 1000000L};
	pthread_cond_timedwait(cv, &dc.mu, &ts);
}

static int64_t
driven_mono_ms(void)
{
	return read_plus(NULL);
}

/* the driven clock moves in whole milliseconds */
static int64_t
driven_mono_us(void)
{
	return read_plus(NULL) * 1000;
}

static int64_t
driven_wall_ms(void)
{
	return read_plus(&dc.wall_offset_ms);
}

static int64_t
driven_wall_us(void)
{
	return read_plus(&dc.wall_offset_ms) * 1000;
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
	settle();
	int64_t until = dc.mono_ms + ms;
	if (dc.auto_advance || owner_runs()) {
		int64_t to = dc.mode == RUN && until > dc.run_end_ms ? dc.run_end_ms : until;
		dc.mono_ms = to > dc.mono_ms ? to : dc.mono_ms;
		wake_all();
	}
	dc.sleepers++;
	while (now_locked() < until) {
		wait_slice(&dc.moved); /* REAL moves with nobody to signal */
	}
	dc.sleepers--;
	pthread_mutex_unlock(&dc.mu);
}

static int
driven_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t until_ms)
{
	struct waiter w = {.cv = cv, .mu = mu};
	pthread_mutex_lock(&dc.mu);
	if (now_locked() >= until_ms) {
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
	bool due = now_locked() >= until_ms;
	pthread_mutex_unlock(&dc.mu);
	return due ? -ETIMEDOUT : 0;
}

/* dc.mu held, RUN, the owner: the real ms its poll-like wait of MS lasts; past PACE_MS it jumps the clock. */
static int64_t
run_poll_ms(int64_t ms)
{
	if (dc.mono_ms >= dc.run_end_ms) {
		/* back after the tick at the end: the run is done, the clock stands still */
		dc.mode = STILL;
		dc.run_done = true;
		dc.pending = false;
		pthread_cond_broadcast(&dc.done);
		return ms < SLICE_MS ? ms : SLICE_MS;
	}
	int64_t target = dc.run_end_ms - dc.mono_ms < ms ? dc.run_end_ms : dc.mono_ms + ms;
	int64_t real = clock_real_mono_ms();
	if (!dc.pending || dc.pend_target_ms != target) {
		/* a new wait: PACE_MS of real time for the fds first (a wake by an fd keeps the deadline) */
		dc.pending = true;
		dc.pend_target_ms = target;
		dc.pend_real_ms = real + dc.pace_ms;
	}
	if (real < dc.pend_real_ms) {
		return dc.pend_real_ms - real;
	}
	dc.mono_ms = target;
	dc.pending = false;
	wake_all();
	return 0;
}

static int64_t
driven_poll_ms(int64_t ms)
{
	pthread_mutex_lock(&dc.mu);
	int64_t r = dc.mode == REAL ? ms : owner_runs() ? run_poll_ms(ms) : ms < SLICE_MS ? ms : SLICE_MS;
	pthread_mutex_unlock(&dc.mu);
	return r;
}

static const struct clock_source driven = {
	.mono_ms = driven_mono_ms,
	.mono_us = driven_mono_us,
	.wall_ms = driven_wall_ms,
	.wall_us = driven_wall_us,
	.boot_ms = driven_boot_ms,
	.sleep_ms = driven_sleep_ms,
	.cond_wait = driven_cond_wait,
	.poll_ms = driven_poll_ms,
};

void
clock_driven_start(int64_t mono_ms, int64_t wall_ms)
{
	pthread_mutex_lock(&dc.mu);
	if (!dc.conds_ready) {
		clock_cond_init(&dc.moved);
		clock_cond_init(&dc.done);
		dc.conds_ready = true;
	}
	dc.mono_ms = mono_ms;
	dc.wall_offset_ms = wall_ms - mono_ms;
	dc.boot_offset_ms = 0;
	dc.auto_advance = false;
	dc.owner = pthread_self();
	dc.mode = STILL;
	dc.pending = false;
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
	settle();
	dc.mono_ms += ms > 0 ? ms : 0;
	wake_all();
	pthread_mutex_unlock(&dc.mu);
}

void
clock_driven_set_wall(int64_t wall_ms)
{
	pthread_mutex_lock(&dc.mu);
	settle();
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

void
clock_driven_run(int64_t for_ms, int64_t pace_ms)
{
	pthread_mutex_lock(&dc.mu);
	settle();
	dc.mode = RUN;
	dc.run_end_ms = for_ms < 0 || for_ms > INT64_MAX - dc.mono_ms ? INT64_MAX : dc.mono_ms + for_ms;
	dc.pace_ms = pace_ms > 0 ? pace_ms : 0;
	dc.run_done = false;
	dc.pending = false;
	pthread_mutex_unlock(&dc.mu);
}

bool
clock_driven_run_wait(int64_t real_ms)
{
	pthread_mutex_lock(&dc.mu);
	int64_t end = clock_real_mono_ms() + real_ms;
	while (!dc.run_done && clock_real_mono_ms() < end) {
		wait_slice(&dc.done);
	}
	bool done = dc.run_done;
	pthread_mutex_unlock(&dc.mu);
	return done;
}

void
clock_driven_pause(void)
{
	pthread_mutex_lock(&dc.mu);
	settle();
	dc.mode = STILL;
	dc.pending = false;
	pthread_mutex_unlock(&dc.mu);
}

void
clock_driven_follow_real(void)
{
	pthread_mutex_lock(&dc.mu);
	settle();
	dc.mode = REAL;
	dc.real_base_ms = clock_real_mono_ms();
	dc.pending = false;
	wake_all();
	pthread_mutex_unlock(&dc.mu);
}
