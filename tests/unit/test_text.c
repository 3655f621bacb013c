/* core/text.h (digits, prefixes, suffixes) and core/hash.h (FNV-1a 64) against known values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digits),
		cmocka_unit_test(test_prefix_suffix),
		cmocka_unit_test(test_fnv1a64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
