/*
 * YAML -> located tree loader (core/cfg_tree.c): what it refuses (aliases,
 * tags, duplicate and non-scalar keys, documents, NUL bytes, syntax
 * errors), its limits (depth, nodes, file size: YAML bombs stay cheap),
 * files, and the diagnostics list.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cfg_tree_checks.h"
#include "core/cfg_tree.h"
#include "core/diag.h"

static void
test_refuse_aliases_and_anchors(void **state)
{
	(void)state;
	expect_error("a: &x 1\nb: 2\n", "t.yaml:1:4: aliases and anchors are not allowed");
	expect_error("a: 1\nb: *x\n", "t.yaml:2:4: aliases and anchors are not allowed");
	expect_error("a:\n  - &s [1]\n", "t.yaml:2:5: aliases and anchors are not allowed");
	expect_error("&m {a: 1}\n", "t.yaml:1:1: aliases and anchors are not allowed");
	expect_error("? &k a\n: 1\n", "t.yaml:1:3: aliases and anchors are not allowed");
}

static void
test_refuse_tags(void **state)
{
	(void)state;
	expect_error("a: !!str 1\n", "t.yaml:1:4: tags are not allowed");
	expect_error("a: !custom x\n", "t.yaml:1:4: tags are not allowed");
	expect_error("a: ! x\n", "t.yaml:1:4: tags are not allowed");
	expect_error("x:\n  !!map {}\n", "t.yaml:2:3: tags are not allowed");
	expect_error("- !!seq []\n", "t.yaml:1:3: tags are not allowed");
}

static void
test_refuse_duplicate_keys(void **state)
{
	(void)state;
	expect_error("rule:\n  metric: x\n  for: 5s\n  above: 3\n  for: 10s\n",
		     "t.yaml:5:3: duplicate key 'for' (first at line 3)");
	/* Quoting does not make a different key. */
	expect_error("a: 1\n\"a\": 2\n", "t.yaml:2:1: duplicate key 'a' (first at line 1)");
	expect_error("{x: 1, y: 2, x: 3}\n", "t.yaml:1:14: duplicate key 'x' (first at line 1)");
	expect_error("a:\nb:\na:\n", "t.yaml:3:1: duplicate key 'a' (first at line 1)");
	/* Control characters are masked and long keys cut in the message. */
	expect_error("\"a\\nb\": 1\n\"a\\nb\": 2\n", "t.yaml:2:1: duplicate key 'a?b' (first at line 1)");
	expect_error("abcdefghijklmnopqrstuvwxyz0123456789ABCDEF: 1\n"
		     "abcdefghijklmnopqrstuvwxyz0123456789ABCDEF: 2\n",
		     "t.yaml:2:1: duplicate key 'abcdefghijklmnopqrstuvwxyz0123456789...' (first at line 1)");
	/* A UTF-8 character is never cut in half. */
	expect_error("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9\xc3\xa9\xc3\xa9: 1\n"
		     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9\xc3\xa9\xc3\xa9: 2\n",
		     "t.yaml:2:1: duplicate key 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' (first at line 1)");
	/* The same key in different maps, and equal values, are fine. */
	struct cfg_tree *tree = load_ok("a: {for: 1}\nb: {for: 1}\nc: [{for: 1}, {for: 1}]\nfor: for\n");
	assert_int_equal(cfg_tree_root(tree)->count, 4);
	cfg_tree_destroy(tree);
}

static void
test_many_keys(void **state)
{
	(void)state;
	/* 1,000 keys in one map and 1,000 one-key maps: the key index grows and rehashes. */
	char *yaml = malloc(64 * 1024);
	assert_non_null(yaml);
	size_t len = 0;
	for (int i = 0; i < 1000; i++) {
		len += (size_t)snprintf(yaml + len, 64 * 1024 - len, "k%d: {k%d: %d}\n", i, i, i);
	}
	struct cfg_tree *tree = load_ok(yaml);
	const struct cfg_node *root = cfg_tree_root(tree);
	assert_at(root, CFG_MAP, 1000, 1, 1);
	assert_scalar(cfg_map_get(cfg_map_get(root, "k999"), "k999"), "999", false, 1000, 14);
	assert_scalar(root->keys[500], "k500", false, 501, 1);
	assert_null(cfg_map_get(root, "k1000"));
	cfg_tree_destroy(tree);
	snprintf(yaml + len, 64 * 1024 - len, "k500: again\n");
	expect_error(yaml, "t.yaml:1001:1: duplicate key 'k500' (first at line 501)");
	free(yaml);
}

static void
test_refuse_non_scalar_keys(void **state)
{
	(void)state;
	expect_error("? [a, b]\n: 1\n", "t.yaml:1:3: map keys must be scalars");
	expect_error("? {a: b}\n: 1\n", "t.yaml:1:3: map keys must be scalars");
	expect_error("x: {[a]: 1}\n", "t.yaml:1:5: map keys must be scalars");
	expect_error("{a: 1}: x\n", "t.yaml:1:1: map keys must be scalars");
}

static void
test_refuse_documents(void **state)
{
	(void)state;
	expect_error("a: 1\n---\nb: 2\n", "t.yaml:2:1: more than one document is not allowed");
	expect_error("---\na: 1\n...\n---\n", "t.yaml:4:1: more than one document is not allowed");
	expect_error("a: 1\n--- \n", "t.yaml:2:1: more than one document is not allowed");
	/* One explicit document is fine. */
	struct cfg_tree *tree = load_ok("%YAML 1.1\n---\na: 1\n...\n");
	assert_scalar(cfg_map_get(cfg_tree_root(tree), "a"), "1", false, 3, 4);
	cfg_tree_destroy(tree);
}

static void
test_refuse_nul_and_encoding(void **state)
{
	(void)state;
	/* A raw NUL byte: libyaml's reader refuses it; we place it at 2:5. */
	static const char raw_nul[] = "a: 1\nb: x\0y\n";
	expect_error_n(raw_nul, sizeof(raw_nul) - 1, -EINVAL, "t.yaml:2:5: control characters are not allowed");
	/* A NUL written as an escape would cut the C string: refused too. */
	expect_error("a: 1\nb: \"x\\0y\"\n", "t.yaml:2:4: NUL characters are not allowed in strings");
	expect_error("k: \"\\u0000\"\n", "t.yaml:1:4: NUL characters are not allowed in strings");
	/* Invalid UTF-8, even after valid content (the reader decodes ahead). */
	expect_error("a: 1\nb: \xc3\xa9\xff\n", "t.yaml:2:5: invalid leading UTF-8 octet");
	/* libyaml points at the octet after the lead byte; we point at the broken character. */
	expect_error("a: \xc3\n", "t.yaml:1:4: invalid trailing UTF-8 octet");
	expect_error("\xc3\xa9\xe2\x82: 1\n", "t.yaml:1:2: invalid trailing UTF-8 octet");
	expect_error("a: \xe2\x82", "t.yaml:1:4: incomplete UTF-8 octet sequence");
	expect_error("a: 1\r\nb: \x01\n", "t.yaml:2:4: control characters are not allowed");
	/* Line breaks as libyaml counts them: CRLF once, a lone CR, NEL, LS; a BOM takes no column. */
	expect_error("a: 1\r\nb: 2\rc: \xff\n", "t.yaml:3:4: invalid leading UTF-8 octet");
	expect_error("a: 1\xc2\x85" "b: 2\xe2\x80\xa8" "c: \xff", "t.yaml:3:4: invalid leading UTF-8 octet");
	expect_error("\xef\xbb\xbf" "a: \xff", "t.yaml:1:4: invalid leading UTF-8 octet");
	static const char utf16[] = "\xff\xfe" "a\0:\0 \0" "1\0";
	expect_error_n(utf16, sizeof(utf16) - 1, -EINVAL, "t.yaml: only UTF-8 is supported (found a UTF-16 byte order mark)");
}

static void
test_syntax_errors(void **state)
{
	(void)state;
	/* A tab used for indentation: libyaml's own words. */
	expect_error("a:\n\tb: 1\n",
		     "t.yaml:2:1: found character that cannot start any token (while scanning for the next token)");
	/* libyaml 0.2.5 (Debian 12, Ubuntu 24.04) fixed 0.2.2's (Ubuntu 22.04) "violate" */
	expect_error_one_of("a:\n  b: 1\n\tc: 2\n",
			    "t.yaml:3:1: found a tab character that violates indentation "
			    "(while scanning a plain scalar at line 2, column 6)",
			    "t.yaml:3:1: found a tab character that violate indentation "
			    "(while scanning a plain scalar at line 2, column 6)");
	/* Unterminated quotes. */
	expect_error("a: \"abc\nb: 1\n",
		     "t.yaml:3:1: found unexpected end of stream (while scanning a quoted scalar at line 1, column 4)");
	expect_error("a: 'abc\n",
		     "t.yaml:2:1: found unexpected end of stream (while scanning a quoted scalar at line 1, column 4)");
	expect_error("a: [1, 2\n",
		     "t.yaml:2:1: did not find expected ',' or ']' (while parsing a flow sequence at line 1, column 4)");
	expect_error("a: 1\n b: 2\n", "t.yaml:2:3: mapping values are not allowed in this context");
	expect_error("a: 1\n- b\n",
		     "t.yaml:2:1: did not find expected key (while parsing a block mapping at line 1, column 1)");
}

/* Builds PREFIX x N followed by SUFFIX x N into a new string. */
static char *
repeat(const char *prefix, const char *middle, const char *suffix, size_t n)
{
	size_t lp = strlen(prefix), lm = strlen(middle), ls = strlen(suffix);
	char *s = malloc(n * (lp + ls) + lm + 1);
	assert_non_null(s);
	char *p = s;
	for (size_t i = 0; i < n; i++, p += lp) {
		memcpy(p, prefix, lp);
	}
	memcpy(p, middle, lm);
	p += lm;
	for (size_t i = 0; i < n; i++, p += ls) {
		memcpy(p, suffix, ls);
	}
	*p = '\0';
	return s;
}

static void
test_depth_limit(void **state)
{
	(void)state;
	/* 32 levels load; the 33rd is refused at its first character. */
	char *ok = repeat("[", "x", "]", CFG_MAX_DEPTH);
	struct cfg_tree *tree = load_ok(ok);
	const struct cfg_node *n = cfg_tree_root(tree);
	for (int i = 1; i < CFG_MAX_DEPTH; i++) {
		assert_at(n, CFG_SEQ, 1, 1, i);
		n = n->items[0];
	}
	assert_at(n, CFG_SEQ, 1, 1, CFG_MAX_DEPTH);
	assert_scalar(n->items[0], "x", false, 1, CFG_MAX_DEPTH + 1);
	cfg_tree_destroy(tree);
	free(ok);
	char *bad = repeat("[", "x", "]", CFG_MAX_DEPTH + 1);
	expect_error(bad, "t.yaml:1:33: nesting deeper than 32 levels");
	free(bad);
}

/* Expects YAML to be refused with EXPECT in under FAST_MS; returns the time taken. */
static double
expect_fast_error(const char *yaml, const char *expect)
{
	double t0 = th_cpu_ms();
	expect_error(yaml, expect);
	double ms = th_cpu_ms() - t0;
	print_message("    %-48s %.3f ms\n", expect, ms);
	assert_true(ms < FAST_MS);
	return ms;
}

static void
test_deep_nesting_10000(void **state)
{
	(void)state;
	enum { DEEP = 10000 };
	char *flow_seq = repeat("[", "", "]", DEEP);
	expect_fast_error(flow_seq, "t.yaml:1:33: nesting deeper than 32 levels");
	free(flow_seq);
	/* Unclosed too: the limit hits long before libyaml would see the end. */
	char *open_seq = repeat("[", "", "", DEEP);
	expect_fast_error(open_seq, "t.yaml:1:33: nesting deeper than 32 levels");
	free(open_seq);
	char *flow_map = repeat("{a: ", "1", "}", DEEP);
	expect_fast_error(flow_map, "t.yaml:1:129: nesting deeper than 32 levels");
	free(flow_map);
	/* Block sequences nest on one line: "- - - ... x". */
	char *block_seq = repeat("- ", "x\n", "", DEEP);
	expect_fast_error(block_seq, "t.yaml:1:65: nesting deeper than 32 levels");
	free(block_seq);
	/* Block maps, one more space per level ("a:\n a:\n  a:..."): 1,000 levels fit in 1 MiB. */
	size_t levels = 1000;
	size_t size = levels * (levels + 1) / 2 + 3 * levels + 2;
	char *block_map = malloc(size);
	assert_non_null(block_map);
	char *p = block_map;
	for (size_t i = 0; i < levels; i++) {
		memset(p, ' ', i);
		p += i;
		memcpy(p, "a:\n", 3);
		p += 3;
	}
	*p = '\0';
	assert_true((size_t)(p - block_map) < size);
	expect_fast_error(block_map, "t.yaml:33:33: nesting deeper than 32 levels");
	free(block_map);
}

static void
test_billion_laughs(void **state)
{
	(void)state;
	struct diag_list diags;
	diag_list_init(&diags);
	struct cfg_tree *tree = NULL;
	double t0 = th_cpu_ms();
	int ret = cfg_tree_load_file(FIXTURES_DIR "/yaml/billion_laughs.yaml", &tree, &diags);
	double ms = th_cpu_ms() - t0;
	print_message("    billion laughs refused in %.3f ms\n", ms);
	assert_int_equal(ret, -EINVAL);
	assert_null(tree);
	assert_int_equal(diags.count, 1);
	assert_string_equal(diags.items[0].file, FIXTURES_DIR "/yaml/billion_laughs.yaml");
	assert_int_equal(diags.items[0].line, 4);
	assert_int_equal(diags.items[0].column, 4);
	assert_string_equal(diags.items[0].msg, "aliases and anchors are not allowed");
	assert_true(ms < FAST_MS);
	diag_list_free(&diags);
}

static void
test_node_limit(void **state)
{
	(void)state;
	/* "[0,0,...]": the sequence plus its items are the nodes. */
	size_t items = CFG_MAX_NODES - 1;
	char *yaml = malloc(2 * (items + 1) + 2);
	assert_non_null(yaml);
	yaml[0] = '[';
	for (size_t i = 0; i < items; i++) {
		yaml[1 + 2 * i] = '0';
		yaml[2 + 2 * i] = ',';
	}
	yaml[2 * items] = ']';
	yaml[2 * items + 1] = '\0';
	struct cfg_tree *tree = load_ok(yaml);
	assert_at(cfg_tree_root(tree), CFG_SEQ, items, 1, 1);
	cfg_tree_destroy(tree);
	/* One more item: the 100,001st node is refused where it starts. */
	yaml[2 * items] = ',';
	yaml[2 * items + 1] = '1';
	yaml[2 * items + 2] = ']';
	yaml[2 * items + 3] = '\0';
	expect_error(yaml, "t.yaml:1:200000: more than 100000 nodes");
	free(yaml);
}

/* Writes LEN bytes of BUF to a new temporary file; returns its path (to free). */
static char *
write_temp(const char *buf, size_t len)
{
	char *path = strdup("/tmp/test_cfg_tree.XXXXXX");
	assert_non_null(path);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);
		assert_true(n > 0);
		done += (size_t)n;
	}
	close(fd);
	return path;
}

static void
test_file_size_limit(void **state)
{
	(void)state;
	size_t len = 2 * 1024 * 1024;
	char *big = malloc(len + 1);
	assert_non_null(big);
	big[0] = '#';
	memset(big + 1, 'x', len - 1);
	big[len] = '\0';
	char *path = write_temp(big, len);

	struct diag_list diags;
	diag_list_init(&diags);
	struct cfg_tree *tree = NULL;
	assert_int_equal(cfg_tree_load_file(path, &tree, &diags), -EINVAL);
	assert_null(tree);
	assert_int_equal(diags.count, 1);
	char want[128], got[128];
	snprintf(want, sizeof(want), "%s: file is larger than 1 MiB", path);
	diag_format(&diags.items[0], got, sizeof(got));
	assert_string_equal(got, want);
	diag_list_free(&diags);
	unlink(path);
	free(path);

	/* The limit itself: exactly 1 MiB (a long comment) loads, one byte more does not. */
	tree = load_ok_n(big, CFG_MAX_FILE_BYTES);
	assert_at(cfg_tree_root(tree), CFG_MAP, 0, 1, 1);
	cfg_tree_destroy(tree);
	expect_error_n(big, CFG_MAX_FILE_BYTES + 1, -EINVAL, "t.yaml: file is larger than 1 MiB");
	free(big);
}

static void
test_load_file(void **state)
{
	(void)state;
	static const char yaml[] = "interval_ms: 500\nsinks: [jsonl]\n";
	char *path = write_temp(yaml, sizeof(yaml) - 1);
	struct diag_list diags;
	diag_list_init(&diags);
	struct cfg_tree *tree = NULL;
	assert_int_equal(cfg_tree_load_file(path, &tree, &diags), 0);
	assert_int_equal(diags.count, 0);
	const struct cfg_node *root = cfg_tree_root(tree);
	assert_string_equal(root->file, path);
	assert_scalar(cfg_map_get(root, "interval_ms"), "500", false, 1, 14);
	assert_string_equal(cfg_map_get(root, "sinks")->file, path);
	cfg_tree_destroy(tree);
	unlink(path);
	free(path);

	tree = NULL;
	assert_int_equal(cfg_tree_load_file("/nonexistent/tegrawatch.yaml", &tree, &diags), -ENOENT);
	assert_null(tree);
	assert_int_equal(cfg_tree_load_file("/tmp", &tree, &diags), -EISDIR);
	assert_int_equal(diags.count, 2);
	char buf[128];
	diag_format(&diags.items[0], buf, sizeof(buf));
	assert_string_equal(buf, "/nonexistent/tegrawatch.yaml: cannot open: No such file or directory");
	diag_format(&diags.items[1], buf, sizeof(buf));
	assert_string_equal(buf, "/tmp: cannot read: Is a directory");
	diag_list_free(&diags);
}

static void
test_no_name(void **state)
{
	(void)state;
	/* Without a name, nodes carry "" and messages start at the line. */
	struct diag_list diags;
	diag_list_init(&diags);
	struct cfg_tree *tree = NULL;
	assert_int_equal(cfg_tree_load_buffer(NULL, "a: 1\n", 5, &tree, &diags), 0);
	assert_string_equal(cfg_tree_root(tree)->file, "");
	assert_string_equal(cfg_map_get(cfg_tree_root(tree), "a")->file, "");
	cfg_tree_destroy(tree);
	tree = NULL;
	assert_int_equal(cfg_tree_load_buffer(NULL, "a: *b\n", 6, &tree, &diags), -EINVAL);
	assert_null(tree);
	assert_int_equal(diags.count, 1);
	char buf[128];
	diag_format(&diags.items[0], buf, sizeof(buf));
	assert_string_equal(buf, "1:4: aliases and anchors are not allowed");
	diag_list_free(&diags);
}

static void
test_diag_format(void **state)
{
	(void)state;
	struct diag_list list;
	diag_list_init(&list);
	diag_add(&list, "a.yaml", 3, 7, "bad value %d", 42);
	diag_add(&list, "a.yaml", 3, 0, "whole line");
	diag_add(&list, "a.yaml", 0, 9, "whole file");
	diag_add(&list, NULL, 2, 5, "no file");
	diag_add(&list, "", 0, 0, "%s", "bare");
	diag_add(&list, "b.yaml", -1, -1, "negative");
	assert_int_equal(list.count, 6);
	char buf[64];
	diag_format(&list.items[0], buf, sizeof(buf));
	assert_string_equal(buf, "a.yaml:3:7: bad value 42");
	diag_format(&list.items[1], buf, sizeof(buf));
	assert_string_equal(buf, "a.yaml:3: whole line");
	diag_format(&list.items[2], buf, sizeof(buf));
	assert_string_equal(buf, "a.yaml: whole file");
	assert_int_equal(list.items[2].column, 0);
	diag_format(&list.items[3], buf, sizeof(buf));
	assert_string_equal(buf, "2:5: no file");
	diag_format(&list.items[4], buf, sizeof(buf));
	assert_string_equal(buf, "bare");
	diag_format(&list.items[5], buf, sizeof(buf));
	assert_string_equal(buf, "b.yaml: negative");
	/* Truncation keeps the string terminated. */
	diag_format(&list.items[0], buf, 10);
	assert_string_equal(buf, "a.yaml:3:");

	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	assert_non_null(out);
	diag_list_print(&list, out);
	fclose(out);
	assert_string_equal(text, "a.yaml:3:7: bad value 42\n"
				  "a.yaml:3: whole line\n"
				  "a.yaml: whole file\n"
				  "2:5: no file\n"
				  "bare\n"
				  "b.yaml: negative\n");
	free(text);

	/* Many messages grow the list; a long message is kept whole. */
	char long_msg[600];
	memset(long_msg, 'm', sizeof(long_msg) - 1);
	long_msg[sizeof(long_msg) - 1] = '\0';
	for (int i = 0; i < 20; i++) {
		diag_add(&list, "c.yaml", i + 1, 1, "%s", long_msg);
	}
	assert_int_equal(list.count, 26);
	assert_int_equal(strlen(list.items[25].msg), sizeof(long_msg) - 1);
	assert_int_equal(list.items[25].line, 20);
	diag_list_free(&list);
	assert_int_equal(list.count, 0);
	assert_null(list.items);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refuse_aliases_and_anchors),
		cmocka_unit_test(test_refuse_tags),
		cmocka_unit_test(test_refuse_duplicate_keys),
		cmocka_unit_test(test_many_keys),
		cmocka_unit_test(test_refuse_non_scalar_keys),
		cmocka_unit_test(test_refuse_documents),
		cmocka_unit_test(test_refuse_nul_and_encoding),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_deep_nesting_10000),
		cmocka_unit_test(test_billion_laughs),
		cmocka_unit_test(test_node_limit),
		cmocka_unit_test(test_file_size_limit),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_no_name),
		cmocka_unit_test(test_diag_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
