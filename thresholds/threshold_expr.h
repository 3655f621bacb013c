/*
 * Threshold values of a rule, as written after `warning:` and `critical:`:
 * a plain number or "REFERENCE [* N] [+ N | - N] [or N]", where the
 * reference is a value the board reports (passive_trip, ceiling...),
 * and the checks that read them. Used by rules_load.c only.
 */
#ifndef TEGRAWATCH_THRESHOLD_EXPR_H
#define TEGRAWATCH_THRESHOLD_EXPR_H

#include <stddef.h>

#include "core/cfg_decode.h"
#include "rules.h"

/**
 * Decodes NODE, the value of KEY ("warning" or "critical"), into *TH.
 * Returns 0, or -EINVAL after reporting the mistake through DEC (then *TH
 * is left alone).
 */
int threshold_decode(struct cfg_decoder *dec, const struct cfg_node *node, const char *key, struct threshold *th);

/**
 * Reports (at NODE, the value of KEY) a reference in TH that METRIC does
 * not have: trip points belong to temp.*_c metrics, ceiling and hw_max to
 * *.freq_mhz ones.
 */
void threshold_check_ref(struct cfg_decoder *dec, const struct cfg_node *node, const char *key,
			 const struct threshold *th, const char *metric);

/**
 * Reports (at AT) R's warning threshold when it is not reached before its
 * critical one (below it for op above, above it for op below), as far as
 * the expressions can tell before the board's values are known.
 */
void threshold_check_order(struct cfg_decoder *dec, const struct cfg_node *at, const struct rule *r);

#endif
