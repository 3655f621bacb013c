/* core/dynlib: the first soname that loads, every symbol or none, and a reason that names what failed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/dynlib.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static double (*cos_fn)(double);
static double (*sqrt_fn)(double);
static void (*missing_fn)(void);

static void
test_loads_and_resolves(void **state)
{
	(void)state;
	static const char *const names[] = {"libm.so.6", NULL};
	const struct dynlib_symbol symbols[] = {
		{"cos", (void **)&cos_fn},
		{"sqrt", (void **)&sqrt_fn},
	};
	struct dynlib *lib = NULL;
	char why[128] = "untouched";
	assert_int_equal(dynlib_open(names, symbols, COUNT(symbols), &lib, why, sizeof(why)), 0);
	assert_non_null(lib);
	assert_string_equal(dynlib_name(lib), "libm.so.6");
	assert_true(cos_fn(0.0) == 1.0);
	assert_true(sqrt_fn(16.0) == 4.0);
	assert_non_null(dynlib_find(lib, "sin"));
	assert_null(dynlib_find(lib, "tegrawatch_no_such_symbol"));
	dynlib_close(lib);
	dynlib_close(NULL);
}

static void
test_first_that_loads(void **state)
{
	(void)state;
	static const char *const names[] = {"libtegrawatch-absent.so.9", "libm.so.6", "libc.so.6", NULL};
	const struct dynlib_symbol symbols[] = {{"cos", (void **)&cos_fn}};
	struct dynlib *lib = NULL;
	char why[256];
	assert_int_equal(dynlib_open(names, symbols, COUNT(symbols), &lib, why, sizeof(why)), 0);
	assert_string_equal(dynlib_name(lib), "libm.so.6");
	dynlib_close(lib);
}

static void
test_missing_symbol_fails_whole(void **state)
{
	(void)state;
	static const char *const names[] = {"libm.so.6", NULL};
	/* cos comes first and is found: its slot must stay as it was all the same */
	const struct dynlib_symbol symbols[] = {
		{"cos", (void **)&cos_fn},
		{"tegrawatch_no_such_symbol", (void **)&missing_fn},
	};
	double (*const cos_before)(double) = (double (*)(double))(uintptr_t)0x1234;
	void (*const missing_before)(void) = (void (*)(void))(uintptr_t)0x5678;
	cos_fn = cos_before;
	missing_fn = missing_before;
	struct dynlib *lib = (struct dynlib *)(uintptr_t)0x9abc;
	char why[128];
	assert_int_equal(dynlib_open(names, symbols, COUNT(symbols), &lib, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "libm.so.6 has no tegrawatch_no_such_symbol");
	assert_true(cos_fn == cos_before);
	assert_true(missing_fn == missing_before);
	assert_true(lib == (struct dynlib *)(uintptr_t)0x9abc);
}

static void
test_missing_library_names_every_try(void **state)
{
	(void)state;
	static const char *const names[] = {"libtegrawatch-absent.so.9", "libtegrawatch-absent.so.8", NULL};
	const struct dynlib_symbol symbols[] = {{"cos", (void **)&cos_fn}};
	struct dynlib *lib = NULL;
	char why[512];
	assert_int_equal(dynlib_open(names, symbols, COUNT(symbols), &lib, why, sizeof(why)), -ENOENT);
	assert_null(lib);
	const char *first = strstr(why, "libtegrawatch-absent.so.9");
	const char *second = strstr(why, "; libtegrawatch-absent.so.8");
	assert_non_null(first);
	assert_non_null(second);
	assert_true(first < second);

	/* a short buffer gets the start of the reason, NUL-terminated */
	char short_why[12];
	assert_int_equal(dynlib_open(names, symbols, COUNT(symbols), &lib, short_why, sizeof(short_why)), -ENOENT);
	assert_string_equal(short_why, "libtegrawat");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads_and_resolves),
		cmocka_unit_test(test_first_that_loads),
		cmocka_unit_test(test_missing_symbol_fails_whole),
		cmocka_unit_test(test_missing_library_names_every_try),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
