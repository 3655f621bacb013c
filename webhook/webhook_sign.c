/* Standard Webhooks signing: core's HMAC-SHA256 and base64 (no library). */
#include "webhook_sign.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base64.h"
#include "core/sha256.h"
#include "core/xalloc.h"

int
webhook_key_parse(const char *secret, struct webhook_key *key)
{
	if (!webhook_secret_syntax_ok(secret)) {
		return -EINVAL;
	}
	const char *b = secret + 6;
	unsigned char bytes[sizeof(key->bytes)];
	size_t n;
	int r = base64_decode(b, strlen(b), bytes, sizeof(bytes), &n, true);
	if (r == 0) {
		memcpy(key->bytes, bytes, n);
		key->len = n;
	}
	explicit_bzero(bytes, sizeof(bytes));
	return r;
}

void
webhook_key_wipe(struct webhook_key *key)
{
	explicit_bzero(key, sizeof(*key));
}

int
webhook_sign(const struct webhook_key *keys, size_t nkeys, const char *id, int64_t timestamp_s, const void *body,
	     size_t len, char *buf, size_t size)
{
	if (nkeys == 0 || strchr(id, '.')) {
		return -EINVAL;
	}
	if (size < nkeys * 48) {
		return -ENOSPC;
	}
	/* the signed content, laid out once: "ID.TIMESTAMP.BODY" */
	char prefix[160];
	int plen = snprintf(prefix, sizeof(prefix), "%s.%" PRId64 ".", id, timestamp_s);
	if (plen < 0 || (size_t)plen >= sizeof(prefix)) {
		return -EINVAL;
	}
	unsigned char *msg = xmalloc((size_t)plen + len);
	memcpy(msg, prefix, (size_t)plen);
	if (len) {
		memcpy(msg + plen, body, len);
	}
	size_t at = 0;
	for (size_t i = 0; i < nkeys; i++) {
		uint8_t mac[SHA256_BYTES];
		hmac_sha256(keys[i].bytes, keys[i].len, msg, (size_t)plen + len, mac);
		if (i > 0) {
			buf[at++] = ' ';
		}
		memcpy(buf + at, "v1,", 3);
		at += 3;
		/* 32 bytes encode to 44 characters and a NUL: room checked above */
		at += base64_encode(mac, sizeof(mac), buf + at);
		explicit_bzero(mac, sizeof(mac));
	}
	buf[at] = '\0';
	free(msg);
	return 0;
}
