/*
 * Key tables: renamed keys keep working with a warning; secret files as
 * systemd credentials. The headers: decoder (core/cfg_headers.h) that the
 * webhook actions and the fleet sinks share: a good map, each mistake.
 */
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
#include "core/cfg_headers.h"
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

static const struct cfg_reserved_header reserved[] = {
	{"Content-Type", "the body's own"},
	{"host", NULL},
};
#define NRESERVED (sizeof(reserved) / sizeof(reserved[0]))

struct decoded {
	char **lines;
	size_t count;
	size_t messages;
	char first[256]; /* the first message, FILE:LINE:COL: text */
};

/* Decodes the YAML map TEXT into *D (which may hold lines already). Returns the decoder's result. */
static int
decode_headers(const char *text, struct decoded *d)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct cfg_tree *tree;
	assert_int_equal(cfg_tree_load_buffer("h.yaml", text, strlen(text), &tree, &diags), 0);
	struct cfg_decoder dec = {.diags = &diags, .context = "test"};
	int r = cfg_decode_headers(&dec, cfg_tree_root(tree), reserved, NRESERVED, &d->lines, &d->count);
	d->messages = diags.count;
	d->first[0] = '\0';
	if (diags.count) {
		diag_format(&diags.items[0], d->first, sizeof(d->first));
	}
	cfg_tree_destroy(tree);
	diag_list_free(&diags);
	return r;
}

static void
test_headers_good_map(void **state)
{
	(void)state;
	struct decoded d = {0};
	assert_int_equal(decode_headers("X-Scope-OrgID: board-fleet-7\nX-Api-Key: \"k e\\ty\"\nX-Empty: ''\n", &d), 0);
	assert_int_equal(d.messages, 0);
	assert_int_equal(d.count, 3);
	assert_string_equal(d.lines[0], "X-Scope-OrgID: board-fleet-7");
	assert_string_equal(d.lines[1], "X-Api-Key: k e\ty"); /* a tab is a value's character */
	assert_string_equal(d.lines[2], "X-Empty: ");
	assert_null(d.lines[3]);
	assert_true(cfg_headers_has(d.lines, d.count, "x-scope-orgid"));
	assert_false(cfg_headers_has(d.lines, d.count, "X-Scope"));

	char **copy = cfg_headers_copy(d.lines, d.count);
	assert_true(cfg_headers_equal(copy, d.count, d.lines, d.count));
	assert_false(cfg_headers_equal(copy, 2, d.lines, d.count));
	assert_null(cfg_headers_copy(NULL, 0));

	/* a second map replaces the first; an empty one leaves none */
	assert_int_equal(decode_headers("X-Other: 1\n", &d), 0);
	assert_int_equal(d.count, 1);
	assert_false(cfg_headers_equal(copy, 3, d.lines, d.count));
	assert_int_equal(decode_headers("{}\n", &d), 0);
	assert_int_equal(d.count, 0);
	assert_null(d.lines);
	cfg_headers_free(copy, 3);
}

/* Decodes TEXT, expects it refused with WANT as the first of N messages, and *D unchanged. */
static void
expect_refused(const char *text, size_t n, const char *want)
{
	struct decoded d = {0};
	assert_int_equal(decode_headers("X-Kept: yes\n", &d), 0);
	assert_int_equal(decode_headers(text, &d), -EINVAL);
	assert_int_equal(d.messages, n);
	assert_string_equal(d.first, want);
	assert_int_equal(d.count, 1); /* what was there stays */
	assert_string_equal(d.lines[0], "X-Kept: yes");
	cfg_headers_free(d.lines, d.count);
}

static void
test_headers_mistakes(void **state)
{
	(void)state;
	expect_refused("[a, b]\n", 1, "h.yaml:1:1: headers: expected a map of header names to values, got a list");
	expect_refused("X-Ok: 1\nBad Name: x\n", 1,
		       "h.yaml:2:1: headers: 'Bad Name' is not a header name (letters, digits and !#$%&'*+-.^_`|~)");
	expect_refused("'X-Tenant:': x\n", 1,
		       "h.yaml:1:1: headers: 'X-Tenant:' is not a header name (letters, digits and !#$%&'*+-.^_`|~)");
	expect_refused("'': x\n", 1,
		       "h.yaml:1:1: headers: '' is not a header name (letters, digits and !#$%&'*+-.^_`|~)");
	/* the value never appears in the message: it may be a secret */
	expect_refused("X-Key: \"s3cret\\r\\nEvil: 1\"\n", 1,
		       "h.yaml:1:8: headers: 'X-Key': the value holds a line break or control character");
	expect_refused("X-Key: \"a\\nb\"\n", 1,
		       "h.yaml:1:8: headers: 'X-Key': the value holds a line break or control character");
	expect_refused("X-Key: \"a\\x7fb\"\n", 1, /* NUL never gets here: the tree refuses it */
		       "h.yaml:1:8: headers: 'X-Key': the value holds a line break or control character");
	expect_refused("X-Key: {a: 1}\n", 1, "h.yaml:1:8: headers: 'X-Key': expected a text value, got a map");
	expect_refused("X-Key:\n", 1, "h.yaml:1:7: headers: 'X-Key': expected a text value, got nothing");
	/* reserved names, any case, with the module's reason when it gives one */
	expect_refused("content-TYPE: text/plain\n", 1,
		       "h.yaml:1:1: headers: 'content-TYPE' is set by tegrawatch itself: the body's own");
	expect_refused("Host: x\n", 1, "h.yaml:1:1: headers: 'Host' is set by tegrawatch itself");
	/* every mistake of one map is reported */
	expect_refused("Host: x\nBad Name: y\nX-A: \"\\r\"\n", 3,
		       "h.yaml:1:1: headers: 'Host' is set by tegrawatch itself");
}

static void
test_headers_too_many(void **state)
{
	(void)state;
	char text[CFG_HEADERS_MAX * 16 + 32];
	size_t at = 0;
	for (int i = 0; i < CFG_HEADERS_MAX; i++) {
		at += (size_t)snprintf(text + at, sizeof(text) - at, "X-H%d: %d\n", i, i);
	}
	struct decoded d = {0};
	assert_int_equal(decode_headers(text, &d), 0);
	assert_int_equal(d.count, CFG_HEADERS_MAX);
	cfg_headers_free(d.lines, d.count);
	snprintf(text + at, sizeof(text) - at, "X-One-More: x\n");
	d = (struct decoded){0};
	assert_int_equal(decode_headers(text, &d), -EINVAL);
	assert_string_equal(d.first, "h.yaml:1:1: headers: at most 32 headers, got 33");
	assert_null(d.lines);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_renamed_key),
		cmocka_unit_test(test_credential),
		cmocka_unit_test(test_headers_good_map),
		cmocka_unit_test(test_headers_mistakes),
		cmocka_unit_test(test_headers_too_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
