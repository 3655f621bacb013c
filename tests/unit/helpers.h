/*
 * What several unit tests share: temporary directories and copies of
 * fixture trees, files written and read whole, samples and rules built by
 * hand. Each helper asserts with cmocka: one that fails fails its test.
 */
#ifndef TEGRAWATCH_TESTS_HELPERS_H
#define TEGRAWATCH_TESTS_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/sample.h"
#include "thresholds/rules.h"

/* ---- time ---- */

/**
 * The CPU time this thread has used, in ms. The "fast" bounds of in-memory work (parsing, loading regular files)
 * catch a blow-up such as quadratic parsing with it, and a loaded machine does not move it. A bound that must
 * catch a blocking wait (a FIFO read) stays on the wall clock: blocking costs no CPU.
 */
double th_cpu_ms(void);

/* ---- directories and files ---- */

/** A new empty directory /tmp/tw-TAG.XXXXXX (malloc'd path: th_rmtree() frees it). */
char *th_tmpdir(const char *tag);

/** A temporary copy of the tree at SRC: links stay links, modes are kept (th_rmtree() it). */
char *th_copytree(const char *src, const char *tag);

/** Removes the tree at DIR (files, links, directories) and frees DIR. */
void th_rmtree(char *dir);

/** DIR "/" REL in BUF (REL may start with '/'); returns BUF. */
const char *th_join(char *buf, size_t size, const char *dir, const char *rel);

/** Writes LEN bytes of DATA to PATH, created or truncated, with MODE. */
void th_write_bytes(const char *path, const void *data, size_t len, mode_t mode);

/** Writes TEXT to PATH, created or truncated, mode 0644. */
void th_write_text(const char *path, const char *text);

/** Writes TEXT to DIR/REL, created or truncated, mode 0644. */
void th_write_at(const char *dir, const char *rel, const char *text);

/** The whole file at PATH, NUL-terminated, malloc'd; its length in *LEN when LEN is not NULL. */
char *th_read_file(const char *path, size_t *len);

/* ---- samples ---- */

/** A zeroed, cleared sample: free() it. */
struct sample *th_sample_new(void);

/** Clears S and stamps it: wall clock TIME_MS, monotonic clock MONO_MS. */
void th_sample_at(struct sample *s, int64_t time_ms, int64_t mono_ms);

/** Puts metric NAME = VALUE into S. */
void th_put(struct sample *s, const char *name, double value);

/* ---- rules ---- */

/** A rule set of N zeroed rules: th_rule_set_free() it. */
struct rule_set *th_rule_set_new(size_t n);

void th_rule_set_free(struct rule_set *set);

/** Rule I of SET: NAME on METRIC with OP, warning events, every level's scale 1 and none set. */
struct rule *th_rule_init(struct rule_set *set, size_t i, const char *name, const char *metric, enum rule_op op);

/** Sets level S of R to the fixed threshold V. */
void th_level(struct rule *r, enum severity s, double v);

#endif
