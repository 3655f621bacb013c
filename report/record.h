/*
 * Recordings (`run --record FILE`): every sample the agent saw, one JSON
 * object per line (JSON Lines), after one header line. docs/report.md
 * documents the format:
 *
 *   {"tegrawatch_recording": 1, "version": "0.1.0", "board": {...} | null}
 *   {"seq", "ts", "time_ms", "power_mode", "metrics", "throttle"}   (sample_json.h)
 *   ...
 *
 * Rotated by size: FILE becomes FILE.1 (one previous file kept) and a new
 * FILE starts with its own header. A FILE left by an earlier run is
 * rotated the same way at start, so a restart keeps the previous run.
 */
#ifndef TEGRAWATCH_RECORD_H
#define TEGRAWATCH_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/board_info.h"
#include "core/pipeline.h"

#define RECORD_FORMAT_VERSION 1

/**
 * A sink writing every sample to PATH, rotated when it would pass
 * MAX_BYTES (0 = never). INFO's identity and version (copied) go into
 * each file's header. Returns 0 and *OUT, or -errno (PATH cannot be
 * created).
 */
int record_sink_create(const char *path, uint64_t max_bytes, const struct agent_info *info, struct sink **out);

/**
 * What PATH holds, judged by its first data line (blank and '#' lines
 * skipped): 1 a recording (it starts with '{'), 0 anything else (a
 * tegrastats log), or -errno.
 */
int record_file_detect(const char *path);

/**
 * A source replaying the recording PATH as fast as possible (the report):
 * each sample line gives the sample's time, power mode, metrics and
 * throttle state; header lines (one per rotated file, so `cat FILE.1 FILE`
 * reads too) set the board. Bad lines are reported as PATH:LINE and counted
 * (agent.parse_errors_total). Returns 0 and *OUT, or -errno.
 */
int record_source_create(const char *path, struct source **out);

/** The board of the recording's first header line, read once at create: true when it names one. */
bool record_source_board(const struct source *src, struct board_identity *out);

/**
 * Parses one sample line of a recording into S (its metrics put into
 * S->metrics). Returns 1 for a sample, 0 for a header line (*ID and
 * *ID_KNOWN set), or -EINVAL with *COLUMN (1-based) set.
 */
int record_parse_line(const char *line, struct sample *s, struct board_identity *id, bool *id_known, int *column);

#endif
