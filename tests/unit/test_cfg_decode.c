/* Key tables: renamed keys keep working with a warning; secret files as systemd credentials. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/cfg_decode.h"
#include "core/cfg_tree.h"
#include "core/log.h"

struct obj {
	int64_t interval_ms;
	char *secret;
};

static const struct cfg_key table[] = {
	CFG_DURATION("interval", struct obj, interval_ms, "1s", 0, 10, 3600 * 1000),
	CFG_STRING("secret_file", struct obj, secret, "", CFG_F_SECRET_FILE),
	CFG_RENAMED("period", "interval"),
};
#define NKEYS (sizeof(table) / sizeof(table[0]))

/* Decodes YAML into *O; returns the diagnostics count. */
static size_t
decode(const char *yaml, struct obj *o, char *first, size_t size)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct cfg_tree *tree;
	assert_int_equal(cfg_tree_load_buffer("t.yaml", yaml, strlen(yaml), &tree, &diags), 0);
	memset(o, 0, sizeof(*o));
	cfg_apply_defaults(table, NKEYS, o);
	struct cfg_decoder dec = {.diags = &diags, .context = "test"};
	cfg_decode_map(&dec, cfg_tree_root(tree), table, NKEYS, o, NULL);
	size_t n = diags.count;
	if (n && first) {
		diag_format(&diags.items[0], first, size);
	}
	cfg_tree_destroy(tree);
	diag_list_free(&diags);
	return n;
}

static void
test_renamed_key(void **state)
{
	(void)state;
	struct obj o;
	unsigned long warnings = log_warning_count();
	assert_int_equal(decode("period: 5s\n", &o, NULL, 0), 0);
	assert_int_equal(o.interval_ms, 5000);
	assert_int_equal(log_warning_count() - warnings, 1); /* "'period' is now called 'interval'" */
	cfg_free_strings(table, NKEYS, &o);

	warnings = log_warning_count();
	assert_int_equal(decode("interval: 2s\n", &o, NULL, 0), 0);
	assert_int_equal(o.interval_ms, 2000);
	assert_int_equal(log_warning_count(), warnings);
	cfg_free_strings(table, NKEYS, &o);

	char msg[256];
	assert_int_equal(decode("interval: 2s\nperiod: 3s\n", &o, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "t.yaml:2:1: 'period' is the old name of 'interval': give one of them");
	cfg_free_strings(table, NKEYS, &o);

	/* the old name's value is checked like the new one's */
	assert_int_equal(decode("period: 1ms\n", &o, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "t.yaml:1:9: interval: "));
	cfg_free_strings(table, NKEYS, &o);
}

static void
test_credential(void **state)
{
	(void)state;
	struct obj o;
	char msg[512];
	setenv("CREDENTIALS_DIRECTORY", "/run/credentials/tegrawatch.service", 1);
	assert_int_equal(decode("secret_file: credential:ops.secret\n", &o, NULL, 0), 0);
	assert_string_equal(o.secret, "/run/credentials/tegrawatch.service/ops.secret");
	cfg_free_strings(table, NKEYS, &o);
	assert_int_equal(decode("secret_file: /etc/tegrawatch/ops.secret\n", &o, NULL, 0), 0);
	assert_string_equal(o.secret, "/etc/tegrawatch/ops.secret");
	cfg_free_strings(table, NKEYS, &o);
	assert_int_equal(decode("secret_file: credential:../ops\n", &o, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "t.yaml:1:14: secret_file: credential:../ops: a credential is named without '/'"));
	cfg_free_strings(table, NKEYS, &o);
	assert_int_equal(decode("secret_file: \"credential:\"\n", &o, msg, sizeof(msg)), 1);
	cfg_free_strings(table, NKEYS, &o);
	unsetenv("CREDENTIALS_DIRECTORY");
	assert_int_equal(decode("secret_file: credential:ops.secret\n", &o, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "$CREDENTIALS_DIRECTORY is not set"));
	cfg_free_strings(table, NKEYS, &o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_renamed_key),
		cmocka_unit_test(test_credential),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
