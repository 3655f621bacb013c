/*
 * The NVML source: a worker thread polls every GPU once an interval and
 * publishes what it read under a mutex; the sampling loop's read() copies
 * the last publication (a few hundred bytes) and never calls NVML, so a
 * slow or hung driver call costs the loop nothing (nvml.h says why).
 *
 * What the worker calls, and how often, follows what a real H200 cost
 * (tests/fixtures/nvml/h200-probe.jsonl): thresholds, maximum clocks and
 * the supported event reasons once (the maximum SM clock costs 1.3 ms a
 * call), the total energy every energy_ms (2.8 ms), the rest every poll
 * (0.3-2 us each). A call that answers NOT_SUPPORTED is never made again
 * (the H200's fan still cost 0.2 ms a call). A GPU whose memory NVML cannot
 * tell (Thor's unified memory) gets no memory utilization: Thor answers 0
 * for it whatever the load, a value that measures nothing. Given a feed
 * (a processes: section), each poll also asks every GPU's compute and
 * graphics processes, for process.NAME.gpu_memory_mb (core/gpu_procs.h).
 */
#include "nvml.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/xalloc.h"
#include "nvml_lib.h"

#define GPUS_MAX 16
#define ENERGY_MS_DEFAULT 10000
#define STOP_WAIT_MS 1000 /* at exit, for a worker inside a call */
#define FIRST_WAIT_MS 250 /* the first sample, for the first poll */
#define WLOG_LINES 24
#define WLOG_TEXT 240
#define PROCS_MAX 4096 /* processes on one GPU, one list: more is left unread */

/* What a GPU gives, one slot each, and its name after "gpu.N." */
enum slot {
	S_LOAD,
	S_MEM_LOAD,
	S_TEMP,
	S_TEMP_SLOWDOWN,
	S_TEMP_SHUTDOWN,
	S_SM,
	S_SM_MAX,
	S_MEM,
	S_MEM_MAX,
	S_POWER,
	S_POWER_LIMIT,
	S_ENERGY,
	S_PSTATE,
	S_FAN,
	S_MEM_USED,
	S_MEM_TOTAL,
	S_EVENTS,
	S_COUNT,
};

static const char *const slot_names[S_COUNT] = {
	[S_LOAD] = "load_pct",
	[S_MEM_LOAD] = "mem.load_pct",
	[S_TEMP] = "temp_c",
	[S_TEMP_SLOWDOWN] = "temp_slowdown_c",
	[S_TEMP_SHUTDOWN] = "temp_shutdown_c",
	[S_SM] = "sm.freq_mhz",
	[S_SM_MAX] = "sm.max_freq_mhz",
	[S_MEM] = "mem.freq_mhz",
	[S_MEM_MAX] = "mem.max_freq_mhz",
	[S_POWER] = "power_mw",
	[S_POWER_LIMIT] = "power_limit_mw",
	[S_ENERGY] = "energy_joules_total",
	[S_PSTATE] = "pstate",
	[S_FAN] = "fan_pct",
	[S_MEM_USED] = "mem.used_mb",
	[S_MEM_TOTAL] = "mem.total_mb",
	[S_EVENTS] = "clocks_event_reasons",
};

/*
 * The event reasons as 0/1 metrics, gpu.N.event.NAME, each the OR of its
 * NVML bits, emitted when the GPU supports one of them. The throttle stage
 * maps them into its reasons (docs/throttling.md).
 */
static const struct {
	const char *name;
	enum nvml_event a, b;
} events[] = {
	{"thermal", NVML_EV_SW_THERMAL, NVML_EV_HW_THERMAL},
	{"power_cap", NVML_EV_SW_POWER_CAP, NVML_EV_SW_POWER_CAP},
	{"power_brake", NVML_EV_HW_POWER_BRAKE, NVML_EV_HW_POWER_BRAKE},
	{"hw_slowdown", NVML_EV_HW_SLOWDOWN, NVML_EV_HW_SLOWDOWN},
	{"idle", NVML_EV_IDLE, NVML_EV_IDLE},
	{"applications", NVML_EV_APPLICATIONS, NVML_EV_APPLICATIONS},
};
#define N_EVENTS (sizeof(events) / sizeof(events[0]))

/* What one GPU read in one poll: published to the sampling loop. */
struct gpu_values {
	uint32_t have; /* bit per slot */
	bool lost;
	uint64_t supported; /* NVML_EVENT_SUPPORTED, 0 when unknown */
	double v[S_COUNT];
};

struct publication {
	unsigned count;
	int64_t at_ms; /* monotonic end of the poll; 0: none yet */
	uint64_t errors;
	struct gpu_values gpu[GPUS_MAX];
};

/* The worker's own view of a GPU. */
struct gpu_state {
	void *dev;
	char name[96];
	uint32_t unsupported; /* bit per nvml_call: answered NOT_SUPPORTED once, never asked again */
	uint32_t logged;      /* bit per nvml_call: its error was logged */
	bool mem_placeholder; /* no memory info: the memory utilization means nothing */
	int64_t energy_at_ms; /* when the energy was last read; 0 never */
	struct gpu_values val;
};

enum worker_state {
	W_STARTING,
	W_RUNNING,
	W_ENDED
};

/* One message of the worker, waiting for the loop (wlog). */
struct wlog_line {
	enum log_level level;
	char text[WLOG_TEXT];
};

struct nvml_source {
	struct source base;
	struct nvml_options opts;
	struct nvml_lib *lib;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* wakes the worker to stop; tells destroy it ended */
	bool stop;
	enum worker_state state;
	struct publication pub; /* under mu */
	atomic_int in_call;     /* gpu * 64 + call while the worker is inside NVML, else -1 */
	/* the worker's messages for the loop to write, under mu */
	struct wlog_line wlog[WLOG_LINES];
	unsigned wlog_count;
	unsigned long wlog_lost;
	/* the worker's */
	unsigned gpu_count;
	struct gpu_state gpus[GPUS_MAX];
	uint64_t errors;
	/* GPU memory per process, for opts.gpu_feed: the whole answer, one GPU's, NVML's lists */
	struct gpu_procs procs, one_gpu;
	struct nvml_process *answer;
	unsigned answer_room;
	/* the sampling loop's */
	int64_t created_ms;
	bool first_read_done;
	struct publication view;
	struct wlog_line wlog_out[WLOG_LINES];
	bool stale_said;
};

/* ---- the worker ---- */

/*
 * The worker's messages wait for the sampling loop, which writes them
 * (core/log.c belongs to the loop's thread): at most WLOG_LINES between two
 * samples, the rest counted. Each is said once by design, so none is held
 * back by the log's rate limit.
 */
static void wlog(struct nvml_source *ns, enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
wlog(struct nvml_source *ns, enum log_level level, const char *fmt, ...)
{
	char text[WLOG_TEXT];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&ns->mu);
	if (ns->wlog_count < WLOG_LINES) {
		ns->wlog[ns->wlog_count].level = level;
		memcpy(ns->wlog[ns->wlog_count++].text, text, sizeof(text));
	} else {
		ns->wlog_lost++;
	}
	pthread_mutex_unlock(&ns->mu);
}

/* What call C on GPU INDEX answered (R, NVML's RC): a call not supported is never made again; said once each. */
static int
note(struct nvml_source *ns, unsigned index, enum nvml_call c, int r, int rc)
{
	struct gpu_state *g = &ns->gpus[index];
	uint32_t bit = 1u << c;
	if (r == -ENOTSUP) {
		g->unsupported |= bit;
		wlog(ns, LOG_INFO, "nvml: GPU %u (%s): %s is not supported: left out from now on", index, g->name,
		     nvml_call_name(c));
	} else if (r == -ENODEV) {
		if (!g->val.lost) {
			wlog(ns, LOG_WARN,
			     "nvml: GPU %u (%s) is lost (%s: %s): its metrics are left out; a GPU that fell off "
			     "the bus needs a reset or a reboot",
			     index, g->name, nvml_call_name(c), nvml_lib_error(ns->lib, rc));
		}
		g->val.lost = true;
	} else if (r < 0) {
		ns->errors++;
		if (!(g->logged & bit)) {
			g->logged |= bit;
			wlog(ns, LOG_WARN, "nvml: GPU %u (%s): %s: %s (%d)", index, g->name, nvml_call_name(c),
			     nvml_lib_error(ns->lib, rc), rc);
		}
	}
	return r;
}

static int
call(struct nvml_source *ns, unsigned index, enum nvml_call c, uint64_t v[2])
{
	struct gpu_state *g = &ns->gpus[index];
	if (g->unsupported & (1u << c)) {
		return -ENOTSUP;
	}
	int rc = 0;
	atomic_store(&ns->in_call, (int)(index * 64 + (unsigned)c));
	int r = nvml_lib_read(ns->lib, g->dev, c, v, &rc);
	atomic_store(&ns->in_call, -1);
	return note(ns, index, c, r, rc);
}

/* The processes of KIND on GPU INDEX appended to ns->one_gpu; 0 or -errno as note() says. */
static int
call_processes(struct nvml_source *ns, unsigned index, enum nvml_call kind)
{
	struct gpu_state *g = &ns->gpus[index];
	if (g->unsupported & (1u << kind)) {
		return -ENOTSUP;
	}
	int r, rc = 0;
	unsigned n;
	/* more processes than room: again with room for them (they come and go between the calls) */
	for (int tries = 0;; tries++) {
		n = ns->answer_room;
		atomic_store(&ns->in_call, (int)(index * 64 + (unsigned)kind));
		r = nvml_lib_processes(ns->lib, g->dev, kind, ns->answer, &n, &rc);
		atomic_store(&ns->in_call, -1);
		if (r != -ENOSPC || tries == 2 || ns->answer_room >= PROCS_MAX) {
			break;
		}
		ns->answer_room = n + 16 < PROCS_MAX ? n + 16 : PROCS_MAX;
		ns->answer = xrealloc(ns->answer, ns->answer_room, sizeof(*ns->answer));
	}
	if (r == 0) {
		for (unsigned i = 0; i < n; i++) {
			gpu_procs_add(&ns->one_gpu, (int32_t)ns->answer[i].pid,
				      ns->answer[i].bytes == UINT64_MAX ? GPU_PROC_UNKNOWN : ns->answer[i].bytes);
		}
	}
	return note(ns, index, kind, r == -ENOSPC ? -EIO : r, rc);
}

/*
 * Every process's GPU memory, summed over the GPUs, into ns->procs: true
 * when every GPU still on the bus told it (in one of its two lists at
 * least; a process in both counts once, the larger).
 */
static bool
read_processes(struct nvml_source *ns)
{
	gpu_procs_clear(&ns->procs);
	for (unsigned i = 0; i < ns->gpu_count; i++) {
		if (ns->gpus[i].val.lost) {
			continue; /* its processes lost it too */
		}
		gpu_procs_clear(&ns->one_gpu);
		int c = call_processes(ns, i, NVML_PROCS_COMPUTE);
		int g = ns->gpus[i].val.lost ? c : call_processes(ns, i, NVML_PROCS_GRAPHICS);
		if ((c < 0 && c != -ENOTSUP) || (g < 0 && g != -ENOTSUP) || (c < 0 && g < 0)) {
			return false;
		}
		gpu_procs_merge(&ns->one_gpu, GPU_PROCS_MAX);
		for (size_t k = 0; k < ns->one_gpu.count; k++) {
			gpu_procs_add(&ns->procs, ns->one_gpu.items[k].pid, ns->one_gpu.items[k].bytes);
		}
	}
	gpu_procs_merge(&ns->procs, GPU_PROCS_SUM);
	return true;
}

static void
set(struct gpu_values *gv, enum slot s, double value)
{
	gv->v[s] = value;
	gv->have |= 1u << s;
}

/* Reads C into slot S (scaled by K); false when it gave nothing (or the GPU is lost). */
static bool
read_into(struct nvml_source *ns, unsigned index, enum nvml_call c, enum slot s, double k)
{
	uint64_t v[2];
	struct gpu_state *g = &ns->gpus[index];
	if (g->val.lost || call(ns, index, c, v) < 0) {
		return false;
	}
	set(&g->val, s, (double)v[0] * k);
	return true;
}

/* What does not change while the driver runs: read once. */
static void
read_static(struct nvml_source *ns, unsigned index)
{
	struct gpu_state *g = &ns->gpus[index];
	uint64_t v[2];
	read_into(ns, index, NVML_TEMP_SLOWDOWN, S_TEMP_SLOWDOWN, 1);
	read_into(ns, index, NVML_TEMP_SHUTDOWN, S_TEMP_SHUTDOWN, 1);
	read_into(ns, index, NVML_CLOCK_SM_MAX, S_SM_MAX, 1);
	read_into(ns, index, NVML_CLOCK_MEM_MAX, S_MEM_MAX, 1);
	if (!g->val.lost && call(ns, index, NVML_EVENT_SUPPORTED, v) == 0) {
		g->val.supported = v[0];
	}
	if (!g->val.lost && call(ns, index, NVML_MEMORY, v) == -ENOTSUP) {
		g->mem_placeholder = true;
	}
}

static void
poll_gpu(struct nvml_source *ns, unsigned index, int64_t now)
{
	struct gpu_state *g = &ns->gpus[index];
	struct gpu_values *gv = &g->val;
	uint64_t v[2];
	/* the static slots stay; the rest is read again */
	const uint32_t keep =
		1u << S_TEMP_SLOWDOWN | 1u << S_TEMP_SHUTDOWN | 1u << S_SM_MAX | 1u << S_MEM_MAX | 1u << S_ENERGY;
	gv->have &= keep;
	if (gv->lost) {
		gv->have = 0;
		return;
	}
	if (call(ns, index, NVML_UTILIZATION, v) == 0) {
		set(gv, S_LOAD, (double)v[0]);
		if (!g->mem_placeholder) {
			set(gv, S_MEM_LOAD, (double)v[1]);
		}
	}
	read_into(ns, index, NVML_TEMP, S_TEMP, 1);
	read_into(ns, index, NVML_CLOCK_SM, S_SM, 1);
	read_into(ns, index, NVML_CLOCK_MEM, S_MEM, 1);
	read_into(ns, index, NVML_POWER, S_POWER, 1);
	read_into(ns, index, NVML_POWER_LIMIT, S_POWER_LIMIT, 1);
	read_into(ns, index, NVML_EVENT_REASONS, S_EVENTS, 1);
	if (!gv->lost && !g->mem_placeholder && call(ns, index, NVML_MEMORY, v) == 0) {
		set(gv, S_MEM_TOTAL, (double)v[0] / 1048576.0);
		set(gv, S_MEM_USED, (double)v[1] / 1048576.0);
	}
	if (!gv->lost && call(ns, index, NVML_PSTATE, v) == 0 && v[0] <= 15) {
		set(gv, S_PSTATE, (double)v[0]); /* 32 is "unknown" */
	}
	read_into(ns, index, NVML_FAN, S_FAN, 1);
	if (!g->energy_at_ms || now - g->energy_at_ms >= ns->opts.energy_ms) {
		g->energy_at_ms = now;
		if (!read_into(ns, index, NVML_ENERGY, S_ENERGY, 0.001)) {
			gv->have &= ~(1u << S_ENERGY);
		}
	}
	if (gv->lost) {
		gv->have = 0;
	}
}

/* Waits on ns->cv (mu held) until UNTIL_MS on the clock (a driven one in tests wakes it too). */
static void
wait_until(struct nvml_source *ns, int64_t until_ms)
{
	clock_cond_wait(&ns->cv, &ns->mu, until_ms);
}

static bool
wait_or_stop(struct nvml_source *ns, int64_t until_ms)
{
	pthread_mutex_lock(&ns->mu);
	while (!ns->stop && monotonic_ms() < until_ms) {
		wait_until(ns, until_ms);
	}
	bool stop = ns->stop;
	pthread_mutex_unlock(&ns->mu);
	return stop;
}

static void
publish(struct nvml_source *ns, int64_t at_ms)
{
	pthread_mutex_lock(&ns->mu);
	ns->pub.count = ns->gpu_count;
	ns->pub.at_ms = at_ms;
	ns->pub.errors = ns->errors;
	for (unsigned i = 0; i < ns->gpu_count; i++) {
		ns->pub.gpu[i] = ns->gpus[i].val;
	}
	pthread_cond_broadcast(&ns->cv); /* the first sample may be waiting for it */
	pthread_mutex_unlock(&ns->mu);
}

static bool
start(struct nvml_source *ns)
{
	char why[256];
	unsigned count = 0;
	int64_t t0 = monotonic_ms();
	if (nvml_lib_init(ns->lib, &count, why, sizeof(why)) < 0) {
		wlog(ns, LOG_WARN, "nvml: cannot start NVML (%s): no NVIDIA GPU metrics", why);
		return false;
	}
	char driver[96];
	nvml_lib_driver(ns->lib, driver, sizeof(driver));
	if (count > GPUS_MAX) {
		wlog(ns, LOG_WARN, "nvml: %u GPUs, the first %d are read", count, GPUS_MAX);
		count = GPUS_MAX;
	}
	for (unsigned i = 0; i < count; i++) {
		struct gpu_state *g = &ns->gpus[ns->gpu_count];
		if (nvml_lib_device(ns->lib, i, &g->dev, g->name, sizeof(g->name)) < 0) {
			wlog(ns, LOG_WARN, "nvml: GPU %u: no handle: left out", i);
			memset(g, 0, sizeof(*g));
			g->val.lost = true;
		}
		ns->gpu_count++;
	}
	for (unsigned i = 0; i < ns->gpu_count; i++) {
		if (ns->gpus[i].dev) {
			read_static(ns, i);
			wlog(ns, LOG_INFO, "nvml: GPU %u: %s", i, ns->gpus[i].name);
		}
	}
	wlog(ns, LOG_INFO, "nvml: driver %s, %u GPU%s, started in %lld ms", driver[0] ? driver : "(unknown)",
	     ns->gpu_count, ns->gpu_count == 1 ? "" : "s", (long long)(monotonic_ms() - t0));
	return ns->gpu_count > 0;
}

static void *
worker(void *arg)
{
	struct nvml_source *ns = arg;
	bool ok = start(ns);
	pthread_mutex_lock(&ns->mu);
	ns->state = ok ? W_RUNNING : W_ENDED;
	pthread_mutex_unlock(&ns->mu);
	int64_t next = monotonic_ms();
	while (ok) {
		int64_t now = monotonic_ms();
		for (unsigned i = 0; i < ns->gpu_count; i++) {
			poll_gpu(ns, i, now);
		}
		if (ns->opts.gpu_feed) {
			bool told = read_processes(ns);
			gpu_procs_feed_publish(ns->opts.gpu_feed, told ? &ns->procs : NULL,
					       monotonic_ms() + ns->opts.stale_ms);
		}
		publish(ns, monotonic_ms());
		next += ns->opts.interval_ms;
		if (next < monotonic_ms()) {
			next = monotonic_ms(); /* behind (a slow call): no burst to catch up */
		}
		if (wait_or_stop(ns, next)) {
			break;
		}
	}
	pthread_mutex_lock(&ns->mu);
	ns->state = W_ENDED;
	pthread_cond_broadcast(&ns->cv);
	pthread_mutex_unlock(&ns->mu);
	return NULL;
}

/* ---- the sampling loop's side ---- */

/* Puts gpu.INDEX.SUFFIX = VALUE. */
static void
put(struct metric_set *set, unsigned index, const char *suffix, double value)
{
	char name[METRIC_NAME_MAX];
	int n = snprintf(name, sizeof(name), "gpu.%u.%s", index, suffix);
	if (n > 0 && (size_t)n < sizeof(name)) {
		metric_set_put_n(set, name, (size_t)n, value);
	}
}

static void
put_gpu(struct metric_set *set, unsigned index, const struct gpu_values *gv)
{
	put(set, index, "lost", gv->lost ? 1 : 0);
	if (gv->lost) {
		return;
	}
	for (unsigned s = 0; s < S_COUNT; s++) {
		if (gv->have & (1u << s)) {
			put(set, index, slot_names[s], gv->v[s]);
		}
	}
	if (!(gv->have & (1u << S_EVENTS))) {
		return;
	}
	uint64_t mask = (uint64_t)gv->v[S_EVENTS];
	for (size_t e = 0; e < N_EVENTS; e++) {
		if (nvml_event_in(gv->supported, events[e].a) || nvml_event_in(gv->supported, events[e].b)) {
			char name[32];
			snprintf(name, sizeof(name), "event.%s", events[e].name);
			put(set, index, name,
			    nvml_event_in(mask, events[e].a) || nvml_event_in(mask, events[e].b) ? 1 : 0);
		}
	}
}

static int
nvml_read(struct source *src, struct sample *s)
{
	struct nvml_source *ns = (struct nvml_source *)src;
	pthread_mutex_lock(&ns->mu);
	if (!ns->first_read_done) {
		/*
		 * Once, at start: the first sample waits a little for the first
		 * poll (NVML starts in ~10 ms), so it has the GPUs. Bounded, and
		 * never again: a hung start costs this sample FIRST_WAIT_MS at most.
		 */
		int64_t until = monotonic_ms() +
				(ns->opts.interval_ms / 2 < FIRST_WAIT_MS ? ns->opts.interval_ms / 2 : FIRST_WAIT_MS);
		while (!ns->pub.at_ms && ns->state != W_ENDED && monotonic_ms() < until) {
			wait_until(ns, until);
		}
		ns->first_read_done = true;
	}
	enum worker_state state = ns->state;
	ns->view.count = ns->pub.count;
	ns->view.at_ms = ns->pub.at_ms;
	ns->view.errors = ns->pub.errors;
	memcpy(ns->view.gpu, ns->pub.gpu, ns->pub.count * sizeof(ns->pub.gpu[0]));
	unsigned lines = ns->wlog_count;
	unsigned long lost = ns->wlog_lost;
	if (lines) {
		memcpy(ns->wlog_out, ns->wlog, lines * sizeof(ns->wlog[0]));
	}
	ns->wlog_count = 0;
	ns->wlog_lost = 0;
	pthread_mutex_unlock(&ns->mu);
	for (unsigned i = 0; i < lines; i++) {
		log_event(ns->wlog_out[i].level, "%s", ns->wlog_out[i].text);
	}
	if (lost) {
		log_warn("nvml: %lu more messages of the NVML worker were not shown", lost);
	}

	const struct publication *p = &ns->view;
	/* before the first poll, the time since the start counts: an NVML that hangs in its first call */
	int64_t age = monotonic_ms() - (p->at_ms ? p->at_ms : ns->created_ms);
	bool stale = state != W_ENDED && age > ns->opts.stale_ms;
	metric_set_put(&s->metrics, "agent.nvml_gpus", p->count);
	metric_set_put(&s->metrics, "agent.nvml_errors_total", (double)p->errors);
	metric_set_put(&s->metrics, "agent.nvml_stale", stale ? 1 : 0);
	if (stale && !ns->stale_said) {
		int c = atomic_load(&ns->in_call);
		char where[128] = "between calls";
		if (c >= 0) {
			snprintf(where, sizeof(where), "GPU %d, %s", c / 64, nvml_call_name((enum nvml_call)(c % 64)));
		}
		log_warn("nvml: no answer for %lld ms (%s): GPU metrics are left out until NVML answers",
			 (long long)age, where);
		ns->stale_said = true;
	} else if (!stale && ns->stale_said) {
		log_info("nvml: NVML answers again");
		ns->stale_said = false;
	}
	if (stale || !p->at_ms) {
		return -EAGAIN;
	}
	for (unsigned i = 0; i < p->count; i++) {
		put_gpu(&s->metrics, i, &p->gpu[i]);
	}
	return 0;
}

static void
nvml_destroy(struct source *src)
{
	struct nvml_source *ns = (struct nvml_source *)src;
	pthread_mutex_lock(&ns->mu);
	ns->stop = true;
	pthread_cond_broadcast(&ns->cv);
	int64_t until = monotonic_ms() + STOP_WAIT_MS;
	while (ns->state != W_ENDED && monotonic_ms() < until) {
		wait_until(ns, until);
	}
	bool ended = ns->state == W_ENDED;
	pthread_mutex_unlock(&ns->mu);
	if (!ended) {
		/*
		 * The worker is inside a driver call that does not return: it can
		 * neither be joined nor have its library unloaded under it. Leave
		 * both (the process is ending) rather than hang the exit.
		 */
		log_warn("nvml: an NVML call has not returned in %d ms: left running at exit", STOP_WAIT_MS);
		pthread_detach(ns->thread);
		return;
	}
	pthread_join(ns->thread, NULL);
	nvml_lib_close(ns->lib);
	gpu_procs_feed_unref(ns->opts.gpu_feed);
	gpu_procs_free(&ns->procs);
	gpu_procs_free(&ns->one_gpu);
	free(ns->answer);
	pthread_cond_destroy(&ns->cv);
	pthread_mutex_destroy(&ns->mu);
	free(ns);
}

static const struct source_ops nvml_source_ops = {
	.name = "nvml",
	.read = nvml_read,
	.destroy = nvml_destroy,
};

int
nvml_source_create(const struct nvml_options *opts, struct source **out, char *why, size_t why_size)
{
	if (!opts || opts->interval_ms <= 0) {
		return -EINVAL;
	}
	struct nvml_lib *lib;
	int r = nvml_lib_open(opts->library, &lib, why, why_size);
	if (r < 0) {
		return r;
	}
	struct nvml_source *ns = xcalloc(1, sizeof(*ns));
	ns->base.ops = &nvml_source_ops;
	ns->opts = *opts;
	ns->opts.library = NULL; /* not kept: only used above */
	ns->opts.gpu_feed = opts->gpu_feed ? gpu_procs_feed_ref(opts->gpu_feed) : NULL;
	ns->answer_room = 32;
	ns->answer = xcalloc(ns->answer_room, sizeof(*ns->answer));
	if (ns->opts.energy_ms <= 0) {
		ns->opts.energy_ms = ENERGY_MS_DEFAULT;
	}
	if (ns->opts.stale_ms <= 0) {
		ns->opts.stale_ms = 3 * opts->interval_ms + 1000;
	}
	ns->lib = lib;
	ns->created_ms = monotonic_ms();
	atomic_init(&ns->in_call, -1);
	pthread_mutex_init(&ns->mu, NULL);
	clock_cond_init(&ns->cv);
	/* the worker takes no signal: SIGTERM and the others belong to the loop (signalfd) */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&ns->thread, NULL, worker, ns);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		snprintf(why, why_size, "cannot start its thread: %s", strerror(r));
		nvml_lib_close(lib);
		gpu_procs_feed_unref(ns->opts.gpu_feed);
		free(ns->answer);
		pthread_cond_destroy(&ns->cv);
		pthread_mutex_destroy(&ns->mu);
		free(ns);
		return -r;
	}
	*out = &ns->base;
	return 0;
}
