/*
 * The board's stable device id: what MQTT topics, Home Assistant unique
 * ids, the MQTT client id, alert events and webhooks call the board, when
 * mqtt.device_id does not name it. Computed once at start (docs/mqtt.md,
 * "Device id").
 */
#ifndef TEGRAWATCH_DEVICE_ID_H
#define TEGRAWATCH_DEVICE_ID_H

#include <stddef.h>

#include "board_info.h"

#define DEVICE_ID_MAX 64

/**
 * Parses /etc/machine-id text: 32 hex digits, then nothing or a newline,
 * not all zeros. Writes them lower-case into OUT (SIZE >= 33). Returns 0,
 * or -EINVAL ("uninitialized" during first boot, an empty file, garbage).
 */
int device_id_parse_machine_id(const char *text, char *out, size_t size);

/**
 * "jetson-" and the first 16 hex digits of HMAC-SHA256 keyed with SECRET
 * (a serial number or a machine id) over "tegrawatch device id": stable
 * for one machine, the same in every tegrawatch, and SECRET cannot be
 * read back from it (as systemd asks of ids made from machine-id).
 */
void device_id_derive(const char *secret, char *out, size_t size);

/**
 * The default device id: derived from the board's serial number (ID, may
 * be NULL) when readable, else from ROOT/etc/machine-id ("" = the real
 * root; NULL = none is read), else NAME as it is. *FROM says which:
 * "serial number", "machine-id", "board name".
 */
void device_id_default(const char *root, const struct board_identity *id, const char *name, char *out, size_t size,
		       const char **from);

#endif
