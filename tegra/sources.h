/*
 * What tegra/ gives the pipeline (core/pipeline.h): the board
 * sources (sysfs through struct board, a recorded tegrastats log, a live
 * tegrastats process, generic hwmon) and the throttle stage.
 */
#ifndef TEGRAWATCH_SOURCES_H
#define TEGRAWATCH_SOURCES_H

#include "core/pipeline.h"
#include "board.h"

/** A source reading BOARD (owned by the source from now on) on every tick. Cannot fail. */
int sysfs_source_create(struct board *board, struct source **out);

/**
 * A source replaying the tegrastats log PATH, one sample per data line
 * ('#' comments and blank lines skipped). SPEED scales the pace: the gaps
 * between line stamps (1 s per line without stamps) are divided by it;
 * 0 replays as fast as possible. Bad lines are reported as PATH:LINE:COL,
 * counted (agent.parse_errors_total) and skipped. With LOOP (NULL: once) it
 * plays the log again from the start at its end, its times going on from
 * the last one (a second after it), so time only moves forward for the
 * rules and the history; LOOP->wrapped is told each time. Returns 0 and
 * *OUT, or -errno.
 */
struct replay_loop {
	void (*wrapped)(void *data, unsigned pass, uint64_t samples); /* PASS ended after SAMPLES; may be NULL */
	void *data;
};
int replay_source_create(const char *path, double speed, const struct replay_loop *loop, struct source **out);

/**
 * A source running `PROGRAM --interval MS` (the tegrastats binary, found
 * in PATH when PROGRAM has no '/') and parsing its lines as they arrive;
 * each tick takes the newest line. The process is restarted with back-off
 * if it dies. Returns 0 and *OUT, or -errno.
 */
int tegrastats_source_create(const char *program, int interval_ms, struct source **out);

/**
 * A source reading the generic hwmon chips of this machine through
 * libsensors (NVMe drives, add-on fan controllers). Only for the real root:
 * libsensors always reads /sys. Returns 0 and *OUT, or -ENOTSUP when built
 * without libsensors, or -errno.
 */
int hwmon_source_create(struct source **out);

/**
 * The throttle stage: explains each sample (S->throttle and the
 * throttle.* metrics) from its metrics and the ones before (throttle.h).
 * LIVE: a board read now, whose OC counts from before the first reading
 * are worth a warning once (a replay's are not). Cannot fail.
 */
struct stage *throttle_stage_create(bool live);

/**
 * The counters stage (after the throttle stage): energy.RAIL.joules_total,
 * throttle.seconds_total and throttle.REASON.seconds_total, integrated over
 * every sample. Cannot fail.
 */
struct stage *counters_stage_create(void);

#endif
