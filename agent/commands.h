/* The commands, one file each; what they share is in setup.h. Each returns the exit status (exit_codes.h). */
#ifndef TEGRAWATCH_COMMANDS_H
#define TEGRAWATCH_COMMANDS_H

int cmd_parse(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_top(int argc, char **argv);

#endif
