/* The default device id, from the serial number or machine-id (device_id.h). */
#include "device_id.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"
#include "sha256.h"

/* changing it changes every board's id: never */
#define DEVICE_ID_CONTEXT "tegrawatch device id"

int
device_id_parse_machine_id(const char *text, char *out, size_t size)
{
	char id[33];
	bool zeros = true;
	if (size < sizeof(id)) {
		return -EINVAL;
	}
	for (size_t i = 0; i < 32; i++) {
		char c = text[i];
		if (c >= 'A' && c <= 'F') {
			c = (char)(c - 'A' + 'a');
		}
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
			return -EINVAL;
		}
		id[i] = c;
		zeros = zeros && c == '0';
	}
	if (zeros || (text[32] != '\0' && !(text[32] == '\n' && text[33] == '\0'))) {
		return -EINVAL;
	}
	id[32] = '\0';
	memcpy(out, id, sizeof(id));
	return 0;
}

void
device_id_derive(const char *secret, char *out, size_t size)
{
	uint8_t mac[SHA256_BYTES];
	hmac_sha256(secret, strlen(secret), DEVICE_ID_CONTEXT, strlen(DEVICE_ID_CONTEXT), mac);
	char hex[17];
	for (int i = 0; i < 8; i++) {
		snprintf(hex + 2 * i, 3, "%02x", mac[i]);
	}
	snprintf(out, size, "jetson-%s", hex);
}

/* ROOT/etc/machine-id, parsed; -errno or -EINVAL. */
static int
read_machine_id(const char *root, char *out, size_t size)
{
	char path[4096], *text;
	size_t len;
	if (snprintf(path, sizeof(path), "%s/etc/machine-id", root) >= (int)sizeof(path)) {
		return -ENAMETOOLONG;
	}
	int r = readfile_all(path, 64, &text, &len, NULL);
	if (r < 0) {
		return r;
	}
	r = device_id_parse_machine_id(text, out, size);
	free(text);
	return r;
}

void
device_id_default(const char *root, const struct board_identity *id, const char *name, char *out, size_t size,
		  const char **from)
{
	char machine_id[33];
	/*
	 * The serial first: a cloned image carries the machine-id of the one
	 * it was made from, and an image with a read-only /etc makes a new
	 * one at every boot; the serial stays with the module.
	 */
	if (id && id->serial[0]) {
		device_id_derive(id->serial, out, size);
		*from = "serial number";
	} else if (root && read_machine_id(root, machine_id, sizeof(machine_id)) == 0) {
		device_id_derive(machine_id, out, size);
		*from = "machine-id";
	} else {
		snprintf(out, size, "%s", name);
		*from = "board name";
	}
}
