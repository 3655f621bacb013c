/*
 * What the spool tests share: a directory for the file (tmpfs when there is
 * one), spools opened in memory or on the file, numbered records pushed and
 * checked, statistics, and a child process for what must not run in the
 * test's own (a crash, a file size limit).
 */
#ifndef TEGRAWATCH_TESTS_SPOOL_CHECKS_H
#define TEGRAWATCH_TESTS_SPOOL_CHECKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "core/spool.h"

/* the test's directory and its spool file (setup_dir) */
extern char test_dir[256];
extern char spool_path[300];

/** cmocka setup and teardown: a fresh directory for the spool file, removed after. */
int setup_dir(void **state);
int teardown_dir(void **state);

struct spool *open_mem(size_t max_records);
struct spool *open_file(size_t max_records, uint64_t max_file_bytes);
void push_text(struct spool *sp, const char *topic, const char *payload);

/** Payload "p<N>" on topic "tw/dev/state". */
void push_numbered(struct spool *sp, unsigned n);

/** The next record is number ID, as push_numbered() made it. */
void expect_next(struct spool *sp, uint64_t id);

struct spool_stats stats(const struct spool *sp);

/** Runs FN in a child process, which must exit 0. */
void run_child(void (*fn)(void));

#define CHILD_CHECK(cond)                                                                                      \
	do {                                                                                                   \
		if (!(cond)) {                                                                                 \
			fprintf(stderr, "child check failed: %s (line %d)\n", #cond, __LINE__);                \
			_exit(1);                                                                              \
		}                                                                                              \
	} while (0)

#endif
