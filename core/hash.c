/* FNV-1a, 64 bits; see hash.h. Out of line: inlined into the sysfs lookups, the loop cost one more instruction a byte. */
#include "hash.h"

#include <string.h>

uint64_t
fnv1a64(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= FNV1A64_PRIME;
	}
	return h;
}

uint64_t
fnv1a64_str(const char *s)
{
	uint64_t h = FNV1A64_BASIS;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= FNV1A64_PRIME;
	}
	return h;
}

uint64_t
hash_words_str(const char *s)
{
	const uint64_t m = 0x9e3779b97f4a7c15ull; /* 2^64 / golden ratio: every bit of a word reaches the top */
	size_t len = strlen(s);
	uint64_t h = FNV1A64_BASIS, w;
	size_t k = 0;
	for (; k + 8 <= len; k += 8) {
		memcpy(&w, s + k, 8);
		h = (h ^ w) * m;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s + k, len - k);
	h = (h ^ w) * m;
	h = (h ^ (h >> 29) ^ len) * m; /* the length last: a tail of zero bytes still counts */
	return h ^ (h >> 29);
}
