/* The commands (one file each) and what they share. Each returns the exit status (exit_codes.h). */
#ifndef TEGRAWATCH_COMMANDS_H
#define TEGRAWATCH_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>

int cmd_parse(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_report(int argc, char **argv);

/**
 * Loads PATH (or the default file when it exists, else the defaults with
 * the environment overrides) for run/replay, prints every mistake and
 * applies agent.log_level unless -v/-q said otherwise. Returns 0 and *OUT,
 * or EX_CONFIG.
 */
struct config;
int load_config_or_default(const char *path, struct config **out);

/**
 * The sink of `run --record PATH` (cmd_report.c): every sample to PATH,
 * rotated past MAX_BYTES (0 = never), the board's identity (the live one,
 * or below ROOT) in its header. Returns 0 and *OUT, or EX_IOERR after
 * saying why.
 */
struct sink;
int record_sink_for_run(const char *path, uint64_t max_bytes, const char *root, bool replay, struct sink **out);

#endif
