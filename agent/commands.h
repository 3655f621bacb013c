/* Subcommands implemented outside main.c. Each returns the exit status. */
#ifndef TEGRAWATCH_COMMANDS_H
#define TEGRAWATCH_COMMANDS_H

#include <stdbool.h>

int cmd_check(int argc, char **argv);
int cmd_replay(int argc, char **argv);

/** Loads -c FILE (or the default file when it exists) for run/replay; prints errors. */
struct config;
int load_config_or_default(const char *path, bool required, struct config **out);

#endif
