/*
 * A sample's metrics as JSON members, "name":value,"name":value,
 * formatted once for every output that writes them: JSON Lines, a
 * recording and MQTT's state copy them (whole, or in runs) instead of
 * formatting the same names and numbers again each. The loop's sample
 * carries one (sample->text), sealed once the stages are done, when its
 * metrics no longer change; the first writer formats it. The keys are kept
 * while the set's names stay where they were (metric_set.layout), so a
 * sample formats only its numbers.
 */
#ifndef TEGRAWATCH_METRICS_TEXT_H
#define TEGRAWATCH_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

struct metrics_text;

struct metrics_text *metrics_text_create(void);
void metrics_text_destroy(struct metrics_text *t);

/** The loop, after the stages: the sample's metrics are final until sample_clear() unseals T. */
void metrics_text_seal(struct metrics_text *t);
void metrics_text_unseal(struct metrics_text *t);

/*
 * The members of a set: member I is the text from TEXT + AT[I] to the
 * comma before TEXT + AT[I + 1] (AT[COUNT] is one past the text's end, as
 * if a comma followed the last), so members I to K are TEXT + AT[I], of
 * AT[K + 1] - 1 - AT[I] bytes, commas between them included.
 */
struct metrics_members {
	const char *text;
	const uint32_t *at;
	size_t count;
};

/** Bytes of members FIRST to LAST (inclusive) of M. */
static inline size_t
metrics_members_len(const struct metrics_members *m, size_t first, size_t last)
{
	return m->at[last + 1] - 1 - m->at[first];
}

/**
 * The members of SET (the sealed sample's metrics) into *OUT, formatted by
 * the first call after the seal, each as json_key() and json_number()
 * write it: false when T is NULL or not sealed, and the caller writes
 * them itself.
 */
bool metrics_text_get(struct metrics_text *t, const struct metric_set *set, struct metrics_members *out);

#endif
