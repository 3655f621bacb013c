/*
 * A report of a run: what happened on the board over a recording, built
 * one sample and one alert event at a time (pure code, no I/O), then
 * written as JSON, a terminal summary or an HTML page (docs/report.md).
 *
 * Each sample stands for the time until the next one (left rectangles):
 * its power is integrated over that interval, its power mode and throttle
 * state are counted for it. The last sample stands for the mean interval;
 * an interval over REPORT_GAP_MS (a pause in the recording) counts as the
 * last normal one.
 */
#ifndef TEGRAWATCH_REPORT_H
#define TEGRAWATCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/alert.h"
#include "core/board_info.h"
#include "core/json.h"
#include "core/metric_dict.h"
#include "core/sample.h"
#include "report_stats.h"

#define REPORT_GAP_MS 60000
#define REPORT_RAILS_MAX 16
#define REPORT_EPISODES_MAX 10000
#define REPORT_ALERTS_MAX 10000
#define REPORT_PHASE_NAME_MAX 64
#define REPORT_PREDICT_S 300        /* a throttle predicted within this long counts as a warning (the shipped rule's) */
#define REPORT_PREDICT_GAP_MS 30000 /* a forecast missing this long ends a warning (a load step refits) */

/* A phase from --phases: times are absolute (ms since the epoch) or, when RELATIVE, seconds from the first sample. */
struct report_phase_def {
	char name[REPORT_PHASE_NAME_MAX];
	bool relative;
	double start_s, end_s; /* relative */
	int64_t start_ms, end_ms;
	int64_t mono_start_ms, mono_end_ms; /* relative: on the samples' mono_ms, which no clock step moves */
};

/* start_ms is end_ms minus the time that really passed (mono_ms): a clock step inside moves it, not the length */
struct report_episode {
	int64_t start_ms, end_ms;
	int64_t mono_start_ms;
	uint64_t samples;
	double predicted_s; /* how long a throttle_eta.*_s had been under 5 min when it began; -1: not predicted */
	bool reason[THROTTLE_REASON_COUNT];
	char why[THROTTLE_REASON_COUNT][THROTTLE_WHY_MAX]; /* the first explanation of each reason */
};

struct report_alert {
	int64_t at_ms;
	char rule[64];
	char metric[METRIC_NAME_MAX];
	enum alert_transition transition;
	enum severity severity;
	double value, threshold;
	char summary[160];
	struct top_processes processes; /* what ran as it fired (counts 0: not taken) */
};

struct report_energy {
	char rail[METRIC_NAME_MAX];
	double joules;
};

/* Statistics and energy over a span of the run (the whole run, or a phase). */
struct report_span {
	uint64_t samples;
	double seconds;          /* the intervals its samples stand for */
	double throttle_seconds; /* of them, throttled */
	double reason_seconds[THROTTLE_REASON_COUNT];
	struct stats stats;
	struct report_energy energy[REPORT_RAILS_MAX];
	size_t rails;
	int64_t first_ms, last_ms;
};

struct report_mode {
	char name[POWER_MODE_NAME_MAX];
	double seconds;
};

struct report_recommendation {
	char id[32];
	char text[512];
	char *evidence; /* a JSON object */
};

/* Seconds the run spent in the conditions the advice looks for (report_advice.c). */
struct report_signals {
	double loaded_s;      /* GPU or CPU at >= 50 % */
	double gpu_ceiling_s; /* GPU at its power-mode ceiling, below the hardware maximum, under >= 90 % load */
	double cpu_ceiling_s; /* a CPU core likewise */
	double gpu_ceiling_mhz, gpu_hw_max_mhz, cpu_ceiling_mhz, cpu_hw_max_mhz;
	double cpu_bound_s;   /* CPU >= 90 % while the GPU is <= 20 % */
	double swap_growth_s; /* under load with swap 64 MB or more above its level at the start */
	double swap_start_mb, swap_max_loaded_mb, ram_max_pct_loaded;
	bool swap_start_known;
};

/* The thermal resistance of one power mode over the run (report_cooling.c). */
struct report_cooling {
	char mode[POWER_MODE_NAME_MAX];
	double sum; /* of thermal.resistance_now_c_per_w */
	uint64_t samples;
	bool have_avg, have_baseline; /* the last recorded slow average, baseline and rise */
	double avg, baseline, rise_pct;
};

#define REPORT_WORK_NAMES 32

/* Units and input energy of one work name over a scope: "" the whole run, a power mode or a phase (report_work.c). */
struct report_work_sum {
	char name[METRIC_NAME_MAX];
	char scope[REPORT_PHASE_NAME_MAX];
	char mode[POWER_MODE_NAME_MAX]; /* the power mode last credited: whose idle power "above idle" takes off */
	double units, joules, seconds;
};

/* The input energy while no work was reported, per power mode. */
struct report_idle {
	char mode[POWER_MODE_NAME_MAX];
	double joules, seconds;
};

/* The previous sample, as far as the work section needs it. */
struct report_work_prev {
	bool valid;
	int64_t mono_ms, time_ms, worked_ms;
	double mw;
	char mode[POWER_MODE_NAME_MAX];
	char name[REPORT_WORK_NAMES][METRIC_NAME_MAX];
	double count[REPORT_WORK_NAMES];
	size_t names;
};

/* The least, the most and the last value of a metric over the run; SEEN false: never in it. */
struct report_range {
	bool seen;
	double min, max, last;
};

#define REPORT_HOST_MAX 64 /* file systems, and interfaces, followed: more are left out */

/* A watched file system over the run (filesystem.MOUNT.*). */
struct report_host_fs {
	char mount[METRIC_NAME_MAX]; /* its metric segment: "root", "var_lib_docker" */
	struct report_range used_pct, avail_mb;
	double soonest_full_s; /* the least full_eta_s seen; NAN: it never filled */
	bool readonly;         /* read-only in some sample */
};

/* A watched network interface's link over the run (network.IF.up). */
struct report_host_link {
	char name[METRIC_NAME_MAX];
	uint64_t downs; /* up, then down in the next sample that has it */
	double down_s;  /* from each sample that saw it down to the next sample */
	double last;    /* 1 up, 0 down, at its last sample */
	int64_t last_mono_ms;
};

/* What the host source saw over the run (report_host.c): memory, OOM kills, file systems, links. */
struct report_host {
	struct report_range available_mb; /* ram.available_mb */
	bool oom_seen;
	double oom_last, oom_kills; /* kills during the run: the counter's increases (a reboot starts it at 0) */
	struct report_host_fs *fs;
	size_t fs_count;
	struct report_host_link *links;
	size_t link_count;
	const struct metric_def *def[5]; /* the patterns it reads, found once */
};

struct report_series;
struct criteria;
struct criterion_result;

struct report {
	struct report_span all;
	struct report_phase_def *phase_defs;
	struct report_span *phases;
	size_t phase_count;
	struct board_identity board;
	bool board_known;
	/* the previous sample, waiting for the next one to know its interval */
	struct pending {
		bool valid;
		int64_t time_ms;
		int64_t mono_ms; /* intervals come from it */
		char mode[POWER_MODE_NAME_MAX];
		bool throttled;
		bool reason[THROTTLE_REASON_COUNT];
		double rail_mw[REPORT_RAILS_MAX];
		char rail[REPORT_RAILS_MAX][METRIC_NAME_MAX];
		size_t rails;
		unsigned signals; /* SIG_* bits (report.c) */
	} pending;
	int64_t last_dt_ms;
	double credited_ms; /* the sum of the intervals counted so far */
	uint64_t gaps;
	struct report_mode *modes;
	size_t mode_count;
	struct report_episode *episodes;
	size_t episode_count;
	uint64_t episodes_dropped;
	bool in_episode;
	/* a run of samples where some zone's throttle_eta.*_s was under REPORT_PREDICT_S (report.c) */
	bool warning;
	int64_t warn_since_mono_ms, warn_last_mono_ms;
	struct report_cooling *cooling;
	size_t cooling_count;
	struct report_work_sum *work;
	size_t work_count;
	struct report_idle *idle;
	size_t idle_count;
	struct report_work_prev work_prev;
	struct report_host host;
	/* --criteria: set by the caller after report_finish(), for the outputs (criteria.h) */
	const struct criteria *criteria;
	const struct criterion_result *criteria_results;
	struct report_alert *alerts;
	size_t alert_count;
	uint64_t alerts_dropped;
	struct report_signals sig;
	struct report_recommendation *recs;
	size_t rec_count;
	struct report_series *series; /* NULL unless asked for (the HTML page) */
	bool finished;
	struct metric_dict_cache *dict;         /* the samples' dictionary entries, kept while their names stay */
	const struct metric_def *rail_def;      /* power.RAIL.mw: the rails whose energy is added up */
	const struct metric_def *gpu_power_def; /* gpu.N.power_mw: an NVML GPU's, the rail "gpuN" */
};

/** Starts an empty report; PHASES (copied) split the statistics; SERIES keeps chart series for the HTML page. */
void report_init(struct report *r, const struct report_phase_def *phases, size_t phase_count, bool series);
void report_free(struct report *r);

/** The board's identity, when known (a fixture root, a recording's header). */
void report_set_board(struct report *r, const struct board_identity *id);

/** Adds one finished sample (samples come in time order). */
void report_add_sample(struct report *r, const struct sample *s);

/** Adds one alert event (restored ones are ignored). */
void report_add_alert(struct report *r, const struct alert_event *ev);

/** Closes the last interval and episode, computes percentiles and the recommendations. Once. */
void report_finish(struct report *r);

/** Mean interval between samples in seconds (1 with fewer than two samples). */
double report_interval_s(const struct report *r);

/** Whether NAME is reported (the agent's own counters, agent.*, are not: they describe the agent, not the board). */
bool report_metric_wanted(const char *name);

/** Writes the report as one JSON object (docs/report.md). After report_finish(). */
void report_to_json(const struct report *r, struct json *j);

/**
 * Parses a phases CSV (report_phases.c): lines "start,end,name", '#'
 * comments, blank lines and a header line skipped. Times as the recording
 * has them (YYYY-MM-DDTHH:MM:SS local, with Z for UTC, or the tegrastats
 * MM-DD-YYYY HH:MM:SS) or seconds from the first sample. A sample belongs
 * to a phase when start <= its time < end. Returns 0 with *OUT (free()) and
 * *COUNT, or -EINVAL with the first mistake as "LINE: what" in ERR.
 */
int report_phases_parse(const char *text, struct report_phase_def **out, size_t *count, char *err, size_t err_size);

/* report_cooling.c: the thermal resistance per power mode. */
void report_cooling_add(struct report *r, const struct sample *s);
void report_cooling_json(const struct report *r, struct json *j);
void report_cooling_text(const struct report *r, FILE *out);

/* report_work.c: joules per unit of work per run, power mode and phase. */
void report_work_add(struct report *r, const struct sample *s);
void report_work_json(const struct report *r, struct json *j);
void report_work_text(const struct report *r, FILE *out);
/** J per unit and J above idle per unit (NAN without an idle period) of W; false without units. */
bool report_work_figures(const struct report *r, const struct report_work_sum *w, double *j_per_unit, double *above);

/** NAME's figures over the whole run, or NULL. */
const struct report_work_sum *report_work_run(const struct report *r, const char *name);

/* report_host.c: memory, OOM kills, file systems and links over the run; nothing written when none was recorded. */
void report_host_add(struct report *r, const struct sample *s);
bool report_host_seen(const struct report *r);
void report_host_json(const struct report *r, struct json *j);
void report_host_text(const struct report *r, FILE *out);
void report_host_free(struct report *r);

/** Whether a sample at WALL_MS / MONO_MS is inside phase D (report.c). */
bool report_in_phase(const struct report_phase_def *d, int64_t wall_ms, int64_t mono_ms);

/* report_advice.c: fills r->recs from the finished statistics. */
void report_advise(struct report *r);

#endif
