/*
 * JSON Lines sink: one sample per line on a file descriptor (stdout for
 * `run`). A reader that stops reading never stops the agent: on a pipe or
 * a socket the writes do not block, and a line the reader cannot take now
 * is dropped and counted (agent.json_lines_dropped_total), never torn.
 * Only a replay as fast as possible waits for its reader.
 */
#ifndef TEGRAWATCH_SINK_JSONL_H
#define TEGRAWATCH_SINK_JSONL_H

#include <stdbool.h>

#include "core/pipeline.h"

/**
 * Creates a sink writing to FD (borrowed). BLOCKING: wait for the reader
 * instead of dropping lines, for runs with no clock to keep (a replay as
 * fast as possible, where the reader sets the pace). Cannot fail.
 */
struct sink *jsonl_sink_create(int fd, bool blocking);

/**
 * Whether `run` writes JSON Lines by default (agent.json_lines: auto): yes
 * to a terminal, a pipe or a file, no when FD is the journal (JOURNAL_STREAM
 * names it: a service's stdout would fill the journal with every sample).
 */
bool jsonl_wanted_on(int fd);

#endif
