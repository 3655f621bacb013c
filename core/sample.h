/*
 * One sample of the board: metrics plus the throttle state derived from
 * them. This is what sources fill and sinks consume.
 */
#ifndef TEGRAWATCH_SAMPLE_H
#define TEGRAWATCH_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "metrics.h"

struct metrics_text;

enum throttle_reason {
	THROTTLE_THERMAL,     /* zone at/above passive trip, throttle cdev engaged */
	THROTTLE_OVERCURRENT, /* ocN_event_cnt increased (over-current/under-voltage) */
	THROTTLE_RAIL_ALARM,  /* INA3221 crit/max alarm raised */
	THROTTLE_FREQ_CAP,    /* clock below its ceiling under load, no other cause */
	THROTTLE_REASON_COUNT,
};

#define THROTTLE_WHY_MAX 192
#define THROTTLE_CONTEXT_MAX 320
#define THROTTLE_CAUSES_MAX 16

/*
 * One cause of a throttle reason, as data next to the sentence: which
 * zone, counter, rail or clock, what it read and the limit it crossed.
 */
struct throttle_cause {
	enum throttle_reason reason;
	const char *
		kind; /* "trip", "cooling_device", "oc_event", "rail_alarm", "clock_drop", "clock_cap", "clock_latched" */
	char source[48]; /* the zone ("tj"), counter ("oc1"), rail ("vdd_in"), device or clock ("gpu", "cpu3") */
	double value;    /* C, cooling state, event count, mA or MHz */
	double limit; /* the trip (C), max state, the previous count, the alarm limit (mA), the ceiling (MHz); NAN = none */
};

struct throttle_state {
	bool active;
	bool reason[THROTTLE_REASON_COUNT];
	/* one sentence per active reason: which zone, counter or clock */
	char why[THROTTLE_REASON_COUNT][THROTTLE_WHY_MAX];
	/* power-mode ceilings, jetson_clocks: reported, never throttling */
	char context[THROTTLE_CONTEXT_MAX];
	struct throttle_cause causes[THROTTLE_CAUSES_MAX];
	int cause_count;
};

#define POWER_MODE_NAME_MAX 48

/*
 * What was running when an alert fired: the processes that took the most
 * CPU and the most memory at that moment (procs/proc_table.c scans /proc
 * then), so "the board throttled" comes with "while this ran". Put on the
 * sample of the firing tick only, so a recording carries it and its replay
 * fires the same alert with the same processes.
 */
#define TOP_PROCESSES_MAX 5
#define TOP_COMM_MAX 64 /* a kernel worker's name may pass TASK_COMM_LEN's 16 in /proc/PID/stat */

struct top_process {
	int32_t pid;
	char comm[TOP_COMM_MAX]; /* as /proc/PID/stat says it, unescaped */
	double cpu_pct;          /* of one core (100 = one core busy); NAN when unknown */
	double rss_bytes;
};

struct top_processes {
	int cpu_count, memory_count; /* 0 and 0: none taken */
	double cpu_window_s;         /* what cpu_pct covers: the time since the scan before (0: each process's life) */
	struct top_process by_cpu[TOP_PROCESSES_MAX];    /* the most CPU first */
	struct top_process by_memory[TOP_PROCESSES_MAX]; /* the most resident memory first */
};

/*
 * The processes the kernel's OOM killer killed during a tick, as the kernel
 * log names them (host/oom_log.c: "Killed process 4242 (python3)"), read
 * where the agent may read the log: on that tick's sample only, so the
 * oom-kill alert names them ({{oom_killed}}) and a recording carries them.
 */
#define OOM_VICTIMS_MAX 4

struct oom_victim {
	int32_t pid;
	char comm[TOP_COMM_MAX]; /* as the log says it, its \xNN escapes decoded */
};

struct oom_victims {
	int count; /* listed; 0: none seen */
	int more;  /* killed in the same tick beyond the list */
	struct oom_victim list[OOM_VICTIMS_MAX];
};

/* A field added here is added to web/server_render.c's copy_sample() too: it copies all but the set's storage. */
struct sample {
	uint64_t seq;                         /* monotonic per agent run, from 1 */
	int64_t time_ms;                      /* wall clock, ms since the epoch (local stamp for replays) */
	int64_t mono_ms;                      /* durations: CLOCK_MONOTONIC ms (replays: the recording's time) */
	int64_t clock_step_ms;                /* the wall clock stepped by this since the last sample; 0 = no */
	char power_mode[POWER_MODE_NAME_MAX]; /* nvpmodel name, "" if unknown */
	struct metric_set metrics;
	struct throttle_state throttle;
	struct top_processes processes; /* on the tick an alert fired (live, or as recorded); else none */
	struct oom_victims oom_killed;  /* on the tick the kernel log said so (live, or as recorded) */
	/* the loop's sample: its metrics' JSON, formatted once for every sink (metrics_text.h); else NULL */
	struct metrics_text *text;
};

/** Returns the stable lower-case name of R ("thermal", "overcurrent", ...). */
const char *throttle_reason_name(enum throttle_reason r);

/** Resets S to an empty sample (keeps nothing; its text, if it has one, is unsealed). */
void sample_clear(struct sample *s);

/**
 * jetson_clocks from the clocks in MS: 1 when every online CPU core and the
 * GPU have their floor at their ceiling (cpu.N.min_freq_mhz ==
 * cpu.N.max_freq_mhz, gpu.min_freq_mhz == gpu.max_freq_mhz: what
 * jetson_clocks sets), 0 when one does not, -1 when the floors are not known
 * (tegrastats alone). Sets *OFFLINE and *CORES (may be NULL) to the cores
 * listed (cpu.N.online) and those offline.
 */
int sample_jetson_clocks(const struct metric_set *ms, int *cores, int *offline);

/**
 * The board's input power in MS: the first of power.vdd_in.mw (Orin, Xavier
 * NX, TX2), power.pom_5v_in.mw (Nano), power.vin_sys_5v0.mw (AGX Orin) and
 * power.sys5v.mw (AGX Xavier). Writes *MW and, when NAME is not NULL, the
 * rail ("vdd_in"); false when the board shows none.
 */
bool sample_input_power(const struct metric_set *ms, double *mw, const char **name);

#endif
