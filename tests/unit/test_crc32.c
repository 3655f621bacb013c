/* CRC-32/IEEE against published check values and a bit-by-bit reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/crc32.h"

static void
test_check_values(void **state)
{
	(void)state;
	assert_int_equal(crc32_ieee(NULL, 0), 0x00000000u);
	assert_int_equal(crc32_ieee("123456789", 9), 0xCBF43926u);
	assert_int_equal(crc32_ieee("a", 1), 0xE8B7BE43u);
	const char *fox = "The quick brown fox jumps over the lazy dog";
	assert_int_equal(crc32_ieee(fox, strlen(fox)), 0x414FA339u);
	const uint8_t zeros[4] = {0};
	assert_int_equal(crc32_ieee(zeros, sizeof(zeros)), 0x2144DF1Cu);
}

static void
test_chained_updates(void **state)
{
	(void)state;
	const char *s = "123456789";
	for (size_t cut = 0; cut <= 9; cut++) {
		uint32_t crc = crc32_ieee(s, cut);
		assert_int_equal(crc32_ieee_update(crc, s + cut, 9 - cut), 0xCBF43926u);
	}
	assert_int_equal(crc32_ieee_update(0xCBF43926u, NULL, 0), 0xCBF43926u);
}

/* The slow definition: one bit at a time, reflected polynomial. */
static uint32_t
crc_bitwise(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++) {
			crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
		}
	}
	return ~crc;
}

static void
test_matches_bitwise(void **state)
{
	(void)state;
	uint8_t buf[1024];
	uint32_t x = 0x12345678u;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	/* Every single byte value (covers the whole table), then random lengths. */
	for (unsigned v = 0; v < 256; v++) {
		uint8_t b = (uint8_t)v;
		assert_int_equal(crc32_ieee(&b, 1), crc_bitwise(&b, 1));
	}
	for (size_t len = 0; len <= sizeof(buf); len += 37) {
		assert_int_equal(crc32_ieee(buf, len), crc_bitwise(buf, len));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_values),
		cmocka_unit_test(test_chained_updates),
		cmocka_unit_test(test_matches_bitwise),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
