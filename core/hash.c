/* FNV-1a, 64 bits; see hash.h. Out of line: inlined into the sysfs lookups, the loop cost one more instruction a byte. */
#include "hash.h"

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
