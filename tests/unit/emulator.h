/*
 * Time bounds in the unit tests catch a blow-up (quadratic parsing, a wait
 * that should not be there), not a slow machine. Under qemu-user (the arm64
 * run: scripts/test-arm64.sh sets TEGRAWATCH_TEST_EMULATOR) every
 * instruction costs about ten times as much, and so may the bound.
 */
#ifndef TEGRAWATCH_TESTS_EMULATOR_H
#define TEGRAWATCH_TESTS_EMULATOR_H

#include <stdlib.h>

static inline double
emulator_slowdown(void)
{
	return getenv("TEGRAWATCH_TEST_EMULATOR") ? 10.0 : 1.0;
}

#endif
