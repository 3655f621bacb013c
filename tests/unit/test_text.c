/* core/text.h (digits, prefixes, suffixes), core/hash.h (FNV-1a 64, the word hash) and core/base64.h against known values. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/base64.h"
#include "core/hash.h"
#include "core/text.h"

static void
test_digits(void **state)
{
	(void)state;
	for (int c = 0; c < 256; c++) {
		assert_int_equal(text_is_digit((char)c), c >= '0' && c <= '9');
	}
}

static void
test_prefix_suffix(void **state)
{
	(void)state;
	assert_true(text_has_prefix("temp.tj_c", "temp."));
	assert_true(text_has_prefix("temp.", "temp."));
	assert_true(text_has_prefix("x", ""));
	assert_false(text_has_prefix("temp", "temp."));
	assert_false(text_has_prefix("tamp.tj_c", "temp."));
	assert_true(text_has_suffix("temp.tj_c", "_c"));
	assert_true(text_has_suffix("_c", "_c"));
	assert_false(text_has_suffix("c", "_c"));
	assert_false(text_has_suffix("temp.tj_f", "_c"));
	/* the counted forms look at LEN bytes only, not at a NUL */
	const char *s = "GR3D_FREQ 99%";
	assert_true(TEXT_STARTS_LIT(s, 9, "GR3D_FREQ"));
	assert_false(TEXT_STARTS_LIT(s, 8, "GR3D_FREQ"));
	assert_true(TEXT_ENDS_LIT(s, 9, "FREQ"));
	assert_false(TEXT_ENDS_LIT(s, strlen(s), "FREQ"));
	assert_true(text_ends(s, 0, "", 0));
}

static void
test_fnv1a64(void **state)
{
	(void)state;
	/* the published FNV-1a 64 test vectors */
	assert_true(fnv1a64_str("") == 0xcbf29ce484222325ull);
	assert_true(fnv1a64_str("a") == 0xaf63dc4c8601ec8cull);
	assert_true(fnv1a64_str("foobar") == 0x85944171f73967e8ull);
	/* chained over parts is the same as over the whole */
	uint64_t h = fnv1a64(FNV1A64_BASIS, "foo", 3);
	assert_true(fnv1a64(h, "bar", 3) == fnv1a64_str("foobar"));
	/* bytes above 0x7f hash as unsigned */
	assert_true(fnv1a64(FNV1A64_BASIS, "\xff", 1) == ((FNV1A64_BASIS ^ 0xffu) * FNV1A64_PRIME));
}

static uint64_t
hw(const char *s)
{
	return hash_words(s, strlen(s));
}

/* The table hash of the metric set and the kept board files: every byte and the length count, and paths spread. */
static void
test_hash_words(void **state)
{
	(void)state;
	assert_true(hw("abcdefgh") != hw("abcdefgi"));
	assert_true(hw("abcdefghX") != hw("abcdefghY")); /* the tail past 8 bytes */
	assert_true(hw("ab") != hw("ba"));
	assert_true(hw("") != hw("\x01"));
	assert_true(hw("/sys/class/thermal/thermal_zone1/temp") ==
		    hw("/sys/class/thermal/thermal_zone1/temp"));
	/* 1,000 paths that differ in a digit or two, in 4,096 slots: about 115 collisions if random */
	static unsigned char slots[4096];
	int collisions = 0;
	for (int i = 0; i < 1000; i++) {
		char path[96];
		snprintf(path, sizeof(path), "/sys/devices/virtual/thermal/thermal_zone%d/temp", i);
		collisions += slots[hw(path) & 4095]++ > 0;
	}
	assert_true(collisions < 160);
}

static void
test_base64_strict(void **state)
{
	(void)state;
	unsigned char out[16];
	size_t n;
	assert_int_equal(base64_decode("", 0, out, sizeof(out), &n, false), 0);
	assert_int_equal(n, 0);
	assert_int_equal(base64_decode("YWJj", 4, out, sizeof(out), &n, false), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(out, "abc", 3);
	assert_int_equal(base64_decode("YWI=", 4, out, sizeof(out), &n, false), 0);
	assert_int_equal(n, 2);
	assert_int_equal(base64_decode("YQ==", 4, out, sizeof(out), &n, false), 0);
	assert_int_equal(n, 1);
	assert_int_equal(base64_decode("+/+/", 4, out, sizeof(out), &n, false), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(out, "\xfb\xff\xbf", 3);
	const char *bad[] = {"YWJ", "YQ=", "Y===", "YQ=a", "=QQQ", "YQ==YWJj", "YW J", "YW\nJ", "YWJj=", "YQ-_", "YR==", "YWK="};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(base64_decode(bad[i], strlen(bad[i]), out, sizeof(out), &n, false), -EINVAL);
	}
	assert_int_equal(base64_decode("YWJjYWJj", 8, out, 5, &n, false), -EINVAL); /* no room */
}

static void
test_base64_loose_and_encode(void **state)
{
	(void)state;
	unsigned char out[16];
	size_t n;
	/* padding optional, the unused bits of the last character ignored */
	assert_int_equal(base64_decode("YWI", 3, out, sizeof(out), &n, true), 0);
	assert_int_equal(n, 2);
	assert_memory_equal(out, "ab", 2);
	assert_int_equal(base64_decode("YR==", 4, out, sizeof(out), &n, true), 0);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 'a');
	assert_int_equal(base64_decode("YWJj", 4, out, sizeof(out), &n, true), 0);
	assert_int_equal(n, 3);
	const char *bad[] = {"Y", "YWJjY", "YQ=", "Y Q", "YQ-_"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(base64_decode(bad[i], strlen(bad[i]), out, sizeof(out), &n, true), -EINVAL);
	}
	/* RFC 4648 section 10 */
	const char *vec[][2] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},
				{"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
	char enc[BASE64_LEN(6) + 1];
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		assert_int_equal(base64_encode(vec[i][0], strlen(vec[i][0]), enc), strlen(vec[i][1]));
		assert_string_equal(enc, vec[i][1]);
		assert_int_equal(base64_decode(enc, strlen(enc), out, sizeof(out), &n, false), 0);
		assert_int_equal(n, strlen(vec[i][0]));
		assert_memory_equal(out, vec[i][0], n);
	}
	assert_int_equal(base64_value('+'), 62);
	assert_int_equal(base64_value('='), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digits),
		cmocka_unit_test(test_prefix_suffix),
		cmocka_unit_test(test_fnv1a64),
		cmocka_unit_test(test_hash_words),
		cmocka_unit_test(test_base64_strict),
		cmocka_unit_test(test_base64_loose_and_encode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
