/*
 * What the configuration loader tests share: a clean environment, files
 * loaded that must be fine or must fail with exactly the expected messages,
 * and a file's lines.
 */
#ifndef TEGRAWATCH_TESTS_CONFIG_CHECKS_H
#define TEGRAWATCH_TESTS_CONFIG_CHECKS_H

#include <stddef.h>

#include "agent/config.h"
#include "helpers.h"
#include "tests/unit/emulator.h"

#define CONFIG_DIR     FIXTURES_DIR "/config"
#define FAST_MS        (100.0 * emulator_slowdown()) /* generous for ASan on a small CI box; loads take well under 5 ms */
#define LINE_MAX_BYTES 1024


/** Overrides from the developer's shell must not leak into the tests: unsets every TEGRAWATCH_*. */
void clear_env(void);

/** cmocka group setup: a clean environment, in tests/fixtures/config (the expectations hold relative paths). */
int setup(void **state);

/** Loads PATH, which must be fine. */
struct config *load_ok(const char *path);

/** Loads PATH, which must fail with exactly the N lines of WANT. */
void load_bad(const char *path, const char *const *want, size_t n);

/** The lines of PATH (without newlines), malloc'd. */
char **read_lines(const char *path, size_t *count);

#endif
