/*
 * The catalogue of canonical metric names (docs/metrics.md) as patterns,
 * so rules can be checked against it: a rule whose metric (or glob) can
 * match no metric is a typo. The patterns are those of the metric
 * dictionary (core/metric_dict.h) that the rules stage sees, written as in
 * the docs, with upper-case placeholders: N = digits, NAME/SENSOR/RAIL/TYPE
 * = one segment of [a-z0-9_]. Pure: no I/O.
 */
#ifndef TEGRAWATCH_CATALOG_H
#define TEGRAWATCH_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

/**
 * True when some metric matched by the rule glob GLOB ('*' = any run of
 * characters, '.' included; no '*' = an exact name) is in the catalogue.
 */
bool catalog_glob_known(const char *glob);

/**
 * For an unknown exact NAME: writes into BUF the catalogue name closest to
 * it (at most 2 characters added or removed, placeholders filled from NAME where they
 * match) and returns true; false when nothing is that close.
 */
bool catalog_suggest(const char *name, char *buf, size_t size);

/** True when the catalogue pattern PATTERN matches the metric NAME. */
bool catalog_pattern_match(const char *pattern, const char *name);

#endif
