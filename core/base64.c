/* Base64, RFC 4648; see base64.h. */
#include "base64.h"

#include <errno.h>
#include <stdint.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int
base64_value(char c)
{
	if (c >= 'A' && c <= 'Z') {
		return c - 'A';
	}
	if (c >= 'a' && c <= 'z') {
		return c - 'a' + 26;
	}
	if (c >= '0' && c <= '9') {
		return c - '0' + 52;
	}
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

size_t
base64_encode(const void *in, size_t len, char *out)
{
	const unsigned char *p = in;
	size_t n = 0;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t q = (uint32_t)p[i] << 16;
		if (i + 1 < len) {
			q |= (uint32_t)p[i + 1] << 8;
		}
		if (i + 2 < len) {
			q |= p[i + 2];
		}
		out[n++] = alphabet[q >> 18];
		out[n++] = alphabet[(q >> 12) & 63];
		out[n++] = i + 1 < len ? alphabet[(q >> 6) & 63] : '=';
		out[n++] = i + 2 < len ? alphabet[q & 63] : '=';
	}
	out[n] = '\0';
	return n;
}

int
base64_decode(const char *in, size_t in_len, unsigned char *out, size_t out_cap, size_t *out_len, bool loose)
{
	size_t pad = 0;
	while (pad < 2 && in_len > pad && in[in_len - 1 - pad] == '=') {
		pad++;
	}
	size_t chars = in_len - pad;
	/* padded text comes in whole quantums; so does strict text; 1 character is no whole byte */
	if (((pad || !loose) && in_len % 4 != 0) || chars % 4 == 1) {
		return -EINVAL;
	}
	if (chars / 4 * 3 + (chars % 4 ? chars % 4 - 1 : 0) > out_cap) {
		return -EINVAL;
	}
	uint32_t bits = 0;
	unsigned nbits = 0;
	size_t n = 0;
	for (size_t i = 0; i < chars; i++) {
		int v = base64_value(in[i]);
		if (v < 0) {
			return -EINVAL;
		}
		bits = (bits << 6 | (uint32_t)v) & 0xffff;
		nbits += 6;
		if (nbits >= 8) {
			nbits -= 8;
			out[n++] = (unsigned char)(bits >> nbits);
		}
	}
	if (!loose && (bits & ((1u << nbits) - 1))) {
		return -EINVAL; /* bits past the data: one text has one encoding */
	}
	*out_len = n;
	return 0;
}
