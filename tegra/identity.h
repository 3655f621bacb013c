/*
 * Board identity: pure parsers for the device-tree model/compatible strings
 * and /etc/nv_tegra_release, and the L4T -> JetPack mapping.
 */
#ifndef TEGRAWATCH_IDENTITY_H
#define TEGRAWATCH_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/board_info.h"

/**
 * Parses the first line of /etc/nv_tegra_release
 * ("# R36 (release), REVISION: 4.3, GCID: ..."). Writes "36.4.3" into L4T.
 * Returns 0, or -EINVAL when the line has another shape.
 */
int identity_parse_nv_tegra_release(const char *text, char *l4t, size_t size);

/**
 * Maps an L4T release ("32.7.1") to a JetPack version ("4.6.1"). Unknown
 * revisions of a known major fall back to "<jetpack major>.x"
 * (R32 -> 4.x, R34/R35 -> 5.x, R36 -> 6.x, R38/R39 -> 7.x). Returns false
 * when even the major is unknown.
 */
bool identity_jetpack_for_l4t(const char *l4t, char *jetpack, size_t size);

/**
 * Parses a device-tree compatible list (NUL-separated strings, LEN bytes)
 * and writes the SoC ("tegra234") and module part ("p3767-0005") found in
 * it; either may be left "" when absent.
 */
void identity_parse_compatible(const char *list, size_t len, char *soc, size_t soc_size, char *module,
			       size_t module_size);

/**
 * Checks the device-tree serial-number (as read, trailing NULs and
 * whitespace already removed): 1-63 of [A-Za-z0-9._-], not all zeros
 * (an unset serial). Copies it into OUT. Returns 0, or -EINVAL.
 */
int identity_parse_serial(const char *text, char *out, size_t size);

#endif
