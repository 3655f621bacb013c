/* The commands (one file each) and what they share. Each returns the exit status (exit_codes.h). */
#ifndef TEGRAWATCH_COMMANDS_H
#define TEGRAWATCH_COMMANDS_H

#include <stdbool.h>

int cmd_parse(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_replay(int argc, char **argv);

/**
 * Loads PATH (or the default file when it exists, else the defaults with
 * the environment overrides) for run/replay, prints every mistake and
 * applies agent.log_level unless -v/-q said otherwise. Returns 0 and *OUT,
 * or EX_CONFIG.
 */
struct config;
int load_config_or_default(const char *path, struct config **out);

#endif
