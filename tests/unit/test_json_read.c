/* core/json_read: numbers as JSON writes them, strings and escapes, and the first mistake's words and place. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/json_read.h"

/* TEXT read as one number: its value (NAN: null or a mistake); *REST what follows it. */
static double
number(const char *text, const char **rest, bool *failed)
{
	struct json_reader r;
	json_reader_init(&r, text);
	double v = json_read_number(&r);
	*rest = r.p;
	*failed = r.failed;
	return v;
}

static void
test_numbers(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		double value;
		const char *rest;
	} good[] = {
		{"0", 0, ""},        {"-0", 0, ""},          {"12", 12, ""},    {" 2.5,", 2.5, ","}, {"-1e3}", -1000, "}"},
		{"1E+2", 100, ""},   {"6.02e-1 ", 0.602, " "}, {"1.5e", 1.5, "e"}, {"0.25]", 0.25, "]"},
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const char *rest;
		bool failed;
		double v = number(good[i].text, &rest, &failed);
		assert_false(failed);
		assert_true(fabs(v - good[i].value) < 1e-12);
		assert_string_equal(rest, good[i].rest);
	}
	/* strtod would take all of these; JSON takes none */
	static const char *const bad[] = {"0x10", "inf", "-Infinity", "nan", "+5", ".5", "1.", "01", "-", "", "x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *rest;
		bool failed;
		assert_true(isnan(number(bad[i], &rest, &failed)));
		assert_true(failed);
	}
	const char *rest;
	bool failed;
	assert_true(isnan(number("null,", &rest, &failed)));
	assert_false(failed);
	assert_string_equal(rest, ",");
}

/* Integers: truncated toward zero; null, a mistake or beyond int64 (an undefined cast) give false, OUT untouched. */
static void
test_int64(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		bool ok;
		int64_t value;
	} cases[] = {
		{"1700000000123", true, INT64_C(1700000000123)},
		{"-2.9", true, -2},
		{"-9223372036854775808", true, INT64_MIN},
		{"9223372036854775807", false, 7}, /* 2^63 as a double: one past the range */
		{"1.74195e+23", false, 7},         /* what the fuzzer found in a recording's time_ms */
		{"-1e19", false, 7},
		{"null", false, 7},
		{"\"12\"", false, 7},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct json_reader r;
		json_reader_init(&r, cases[i].text);
		int64_t v = 7;
		assert_int_equal(json_read_int64(&r, &v), cases[i].ok);
		assert_true(v == cases[i].value);
	}
}

/* A text READ refuses: its words and the byte of its first mistake. */
struct mistake {
	const char *text, *why;
	size_t at;
};

static void
check_mistakes(const struct mistake *m, size_t n, bool (*read)(struct json_reader *r))
{
	for (size_t i = 0; i < n; i++) {
		struct json_reader r;
		json_reader_init(&r, m[i].text);
		assert_false(read(&r));
		assert_true(r.failed);
		if (strcmp(r.why, m[i].why) != 0 || (size_t)(r.at - r.start) != m[i].at) {
			fail_msg("%s: '%s' at %zu, not '%s' at %zu", m[i].text, r.why, (size_t)(r.at - r.start), m[i].why,
				 m[i].at);
		}
	}
}

static bool
read_string(struct json_reader *r)
{
	char out[16];
	return json_read_string(r, out, sizeof(out), NULL);
}

static void
test_strings(void **state)
{
	(void)state;
	struct json_reader r;
	char out[16];
	size_t len;
	json_reader_init(&r, "\"a\\u0062\\u00e9\\n\\\"\"");
	assert_true(json_read_string(&r, out, sizeof(out), &len));
	assert_string_equal(out, "ab\xc3\xa9\n\"");
	assert_int_equal(len, 6);
	/* cut to the room, the length what was kept */
	json_reader_init(&r, "\"abcdef\"");
	assert_true(json_read_string(&r, out, 4, &len));
	assert_string_equal(out, "abc");
	assert_int_equal(len, 3);
	static const struct mistake bad[] = {
		{"\"ab", "a string without its closing quote", 3},
		{"\"a\tb\"", "a control character in a string", 2},
		{"\"a\\qb\"", "a bad escape in a string", 3},
		{"\"\\u12g4\"", "a \\u escape without four hex digits", 5},
		{"\"\\u-123\"", "a \\u escape without four hex digits", 3},
		{"5", "expected a string", 0},
	};
	check_mistakes(bad, sizeof(bad) / sizeof(bad[0]), read_string);
}

static void
skip_member(struct json_reader *r, const char *key, void *data)
{
	(void)data;
	if (strcmp(key, "stop") == 0) { /* the value read, then refused */
		json_read_number(r);
		json_fail(r, "stopped here");
		return;
	}
	json_skip_value(r);
}

static bool
read_object(struct json_reader *r)
{
	return json_each_member(r, skip_member, NULL);
}

static void
test_mistakes(void **state)
{
	(void)state;
	static const struct mistake cases[] = {
		{"{\"a\": 1 \"b\": 2}", "expected ',' or '}'", 8},
		{"{\"a\" 1}", "expected ':'", 5},
		{"{a: 1}", "expected a member's name in quotes", 1},
		{"{\"a\": 1,}", "expected a member's name in quotes", 8},
		{"{\"a\": [1, 2}", "expected ',' or ']'", 11},
		{"{\"a\": tru}", "expected a value", 6},
		{"{\"a\": x}", "expected a value", 6},
		{"{\"a\": {\"b\" 1}}", "expected ':'", 11},
		{"[]", "expected an object", 0},
		{"{\"a\": 1, \"stop\": 2}", "stopped here", 18},
		/* the caller's words replace the reader's ("expected a number"); the place stays the first mistake's */
		{"{\"a\": 1, \"stop\": x}", "stopped here", 17},
	};
	check_mistakes(cases, sizeof(cases) / sizeof(cases[0]), read_object);
	struct json_reader r;
	json_reader_init(&r, " {\"a\": {\"b\": [1, \"x\", null, true, {}]}, \"c\": -2.5e1} tail");
	assert_true(json_each_member(&r, skip_member, NULL));
	assert_false(r.failed);
	assert_null(r.why);
	assert_string_equal(r.p, " tail");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_int64),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_mistakes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
