/*
 * What the YAML tree loader tests share: a buffer loaded that must be fine,
 * or refused with exactly one message, and a node checked where it is.
 */
#ifndef TEGRAWATCH_TESTS_CFG_TREE_CHECKS_H
#define TEGRAWATCH_TESTS_CFG_TREE_CHECKS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/cfg_tree.h"
#include "helpers.h"
#include "tests/unit/emulator.h"

/* Generous for a 2-core CI box under ASan; the loader itself takes well under 1 ms. */
#define FAST_MS (100.0 * emulator_slowdown())


/** LEN bytes of YAML, which must load without a message. */
struct cfg_tree *load_ok_n(const char *yaml, size_t len);
struct cfg_tree *load_ok(const char *yaml);

/** Loads LEN bytes that must be refused (WANT_RET) with exactly one message, EXPECT. */
void expect_error_n(const char *yaml, size_t len, int want_ret, const char *expect);

/** expect_error_n() of a string, refused with -EINVAL. */
void expect_error(const char *yaml, const char *expect);

/** expect_error() where libyaml's own words differ between its versions: the message is EXPECT or OR_EXPECT. */
void expect_error_one_of(const char *yaml, const char *expect, const char *or_expect);

/** N is a scalar VALUE (QUOTED or not) at LINE:COLUMN. */
void assert_scalar(const struct cfg_node *n, const char *value, bool quoted, int line, int column);

/** N is of TYPE with COUNT children at LINE:COLUMN. */
void assert_at(const struct cfg_node *n, enum cfg_type type, size_t count, int line, int column);

#endif
