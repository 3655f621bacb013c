/* Standard Webhooks signing with libcrypto: HMAC() one-shot, EVP base64 (no API deprecated in OpenSSL 3.0). */
#include "webhook_sign.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/xalloc.h"

int
webhook_key_parse(const char *secret, struct webhook_key *key)
{
	if (!webhook_secret_syntax_ok(secret)) {
		return -EINVAL;
	}
	/* EVP_DecodeBlock wants whole quads: pad unpadded text, then count the padding back out. */
	const char *b = secret + 6;
	size_t len = strlen(b);
	size_t padded = (len + 3) / 4 * 4;
	unsigned char in[(WEBHOOK_SECRET_MAX_BYTES + 2) / 3 * 4 + 4];
	unsigned char out[sizeof(in) / 4 * 3];
	if (padded >= sizeof(in)) {
		return -EINVAL;
	}
	memcpy(in, b, len);
	memset(in + len, '=', padded - len);
	size_t pad = 0;
	while (pad < 2 && in[padded - 1 - pad] == '=') {
		pad++;
	}
	int n = EVP_DecodeBlock(out, in, (int)padded);
	int r = 0;
	if (n < 0 || (size_t)n < pad || (size_t)n - pad > sizeof(key->bytes)) {
		r = -EINVAL;
	} else {
		memcpy(key->bytes, out, (size_t)n - pad);
		key->len = (size_t)n - pad;
	}
	OPENSSL_cleanse(in, sizeof(in));
	OPENSSL_cleanse(out, sizeof(out));
	return r;
}

void
webhook_key_wipe(struct webhook_key *key)
{
	OPENSSL_cleanse(key, sizeof(*key));
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
	/* HMAC() is one-shot: the signed content is laid out once, contiguous */
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
	int r = 0;
	for (size_t i = 0; i < nkeys && r == 0; i++) {
		unsigned char mac[EVP_MAX_MD_SIZE];
		unsigned int mac_len = 0;
		if (!HMAC(EVP_sha256(), keys[i].bytes, (int)keys[i].len, msg, (size_t)plen + len, mac, &mac_len)) {
			r = -EINVAL;
			break;
		}
		if (i > 0) {
			buf[at++] = ' ';
		}
		memcpy(buf + at, "v1,", 3);
		at += 3;
		/* 32 bytes encode to 44 characters and a NUL: room checked above */
		at += (size_t)EVP_EncodeBlock((unsigned char *)buf + at, mac, (int)mac_len);
		OPENSSL_cleanse(mac, sizeof(mac));
	}
	buf[at] = '\0';
	free(msg);
	return r;
}
