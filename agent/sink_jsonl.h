/* JSON Lines sink: one sample per line on a stdio stream (stdout for `run`). */
#ifndef TEGRAWATCH_SINK_JSONL_H
#define TEGRAWATCH_SINK_JSONL_H

#include <stdio.h>

#include "agent/core/pipeline.h"

/** Creates a sink writing to OUT (borrowed). Cannot fail. */
struct sink *jsonl_sink_create(FILE *out);

#endif
