/*
 * The cmdline: watches of the processes: section: a process's command
 * line against a POSIX extended regex. The only user of <regex.h>. Pure:
 * no I/O.
 */
#ifndef TEGRAWATCH_PROCS_PROC_MATCH_H
#define TEGRAWATCH_PROCS_PROC_MATCH_H

#include <stdbool.h>
#include <stddef.h>

struct proc_matcher;

/**
 * Checks the regex TEXT (REG_EXTENDED). Returns 0, or -EINVAL with the
 * library's reason in ERR.
 */
int proc_regex_check(const char *text, char *err, size_t size);

/** A matcher of command lines against TEXT (checked before: NULL when it does not compile). */
struct proc_matcher *proc_matcher_create(const char *regex);

void proc_matcher_destroy(struct proc_matcher *m);

/** True when the command line LINE (proc_cmdline_text()) matches. */
bool proc_matcher_test(const struct proc_matcher *m, const char *line);

#endif
