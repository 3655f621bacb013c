/*
 * What `run --demo` tells the person watching it: where to look (the
 * dashboard's address, the MQTT command), then one short line a minute of
 * the recording's time, and when the recording starts again. The samples
 * themselves go to stdout only with --json.
 */
#ifndef TEGRAWATCH_DEMO_H
#define TEGRAWATCH_DEMO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/pipeline.h"

#define DEMO_STATUS_EVERY_MS 60000 /* of the recording's time: every 6 s at --speed 10 */

struct demo_status;

/**
 * A sink writing to OUT (borrowed; stderr when stdout carries JSON Lines):
 * where to look at the first sample, then a status line every
 * DEMO_STATUS_EVERY_MS of sample time (STATUS_LINES false: none, only the
 * notes). MQTT_HOST ("" = no MQTT), MQTT_PORT and MQTT_PREFIX make the
 * subscriber's command. The sink is owned by the agent once added; *SELF stays valid
 * as long as it. Cannot fail.
 */
struct sink *demo_status_create(FILE *out, bool status_lines, const char *mqtt_host, int mqtt_port,
				const char *mqtt_prefix, struct demo_status **self);

/** The dashboard listens on LISTEN (web.listen, or the free port the demo took instead). */
void demo_status_set_dashboard(struct demo_status *d, const char *listen);

/** The replay's loop callback: the recording of SAMPLES samples ended and starts again (pass PASS + 1). */
void demo_status_wrapped(void *data, unsigned pass, uint64_t samples);

#endif
