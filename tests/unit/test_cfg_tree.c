/*
 * YAML -> located tree loader (core/cfg_tree.c): the subset it reads, each
 * node where it stands. What it refuses and its limits, and the diagnostics
 * list: test_cfg_tree_refuse.c.
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
test_block_map(void **state)
{
	(void)state;
	struct cfg_tree *tree = load_ok("name: agent\nport: 8080\n  \nlong key: two words\n");
	const struct cfg_node *root = cfg_tree_root(tree);
	assert_at(root, CFG_MAP, 3, 1, 1);
	assert_null(root->value);
	assert_string_equal(root->file, "t.yaml");
	assert_scalar(root->keys[0], "name", false, 1, 1);
	assert_scalar(root->items[0], "agent", false, 1, 7);
	assert_scalar(root->keys[1], "port", false, 2, 1);
	assert_scalar(root->items[1], "8080", false, 2, 7);
	assert_scalar(root->keys[2], "long key", false, 4, 1);
	assert_scalar(root->items[2], "two words", false, 4, 11);
	assert_string_equal(root->items[2]->file, "t.yaml");
	cfg_tree_destroy(tree);
}

static void
test_block_sequence(void **state)
{
	(void)state;
	struct cfg_tree *tree = load_ok("- a\n-   b\n- - c\n  - d\n");
	const struct cfg_node *root = cfg_tree_root(tree);
	assert_at(root, CFG_SEQ, 3, 1, 1);
	assert_null(root->keys);
	assert_scalar(root->items[0], "a", false, 1, 3);
	assert_scalar(root->items[1], "b", false, 2, 5);
	assert_at(root->items[2], CFG_SEQ, 2, 3, 3);
	assert_scalar(root->items[2]->items[0], "c", false, 3, 5);
	assert_scalar(root->items[2]->items[1], "d", false, 4, 5);
	cfg_tree_destroy(tree);
}

static void
test_nested(void **state)
{
	(void)state;
	const char *yaml = "agent:\n"
			   "  interval_ms: 1000\n"
			   "  sinks:\n"
			   "    - type: jsonl\n"
			   "      path: /var/log/x.jsonl\n"
			   "    - type: mqtt\n"
			   "rules:\n"
			   "- metric: temp.cpu_c\n"
			   "  above: 80\n";
	struct cfg_tree *tree = load_ok(yaml);
	const struct cfg_node *root = cfg_tree_root(tree);
	assert_at(root, CFG_MAP, 2, 1, 1);
	const struct cfg_node *agent = cfg_map_get(root, "agent");
	assert_at(agent, CFG_MAP, 2, 2, 3);
	assert_scalar(cfg_map_get(agent, "interval_ms"), "1000", false, 2, 16);
	const struct cfg_node *sinks = cfg_map_get(agent, "sinks");
	assert_at(sinks, CFG_SEQ, 2, 4, 5);
	assert_at(sinks->items[0], CFG_MAP, 2, 4, 7);
	assert_scalar(sinks->items[0]->keys[1], "path", false, 5, 7);
	assert_scalar(cfg_map_get(sinks->items[0], "path"), "/var/log/x.jsonl", false, 5, 13);
	assert_at(sinks->items[1], CFG_MAP, 1, 6, 7);
	assert_scalar(cfg_map_get(sinks->items[1], "type"), "mqtt", false, 6, 13);
	/* An indentless sequence starts at its first dash. */
	const struct cfg_node *rules = cfg_map_get(root, "rules");
	assert_at(rules, CFG_SEQ, 1, 8, 1);
	assert_at(rules->items[0], CFG_MAP, 2, 8, 3);
	assert_scalar(cfg_map_get(rules->items[0], "above"), "80", false, 9, 10);
	cfg_tree_destroy(tree);
}

static void
test_flow_style(void **state)
{
	(void)state;
	struct cfg_tree *tree = load_ok("{a: [1, 2, {b: c}], \"d\": 'e',\n f: [], g: {}}\n");
	const struct cfg_node *root = cfg_tree_root(tree);
	assert_at(root, CFG_MAP, 4, 1, 1);
	const struct cfg_node *a = cfg_map_get(root, "a");
	assert_at(a, CFG_SEQ, 3, 1, 5);
	assert_scalar(a->items[0], "1", false, 1, 6);
	assert_scalar(a->items[1], "2", false, 1, 9);
	assert_at(a->items[2], CFG_MAP, 1, 1, 12);
	assert_scalar(a->items[2]->keys[0], "b", false, 1, 13);
	assert_scalar(a->items[2]->items[0], "c", false, 1, 16);
	assert_scalar(root->keys[1], "d", true, 1, 21);
	assert_scalar(root->items[1], "e", true, 1, 26);
	assert_at(cfg_map_get(root, "f"), CFG_SEQ, 0, 2, 5);
	assert_null(cfg_map_get(root, "f")->items);
	assert_at(cfg_map_get(root, "g"), CFG_MAP, 0, 2, 12);
	cfg_tree_destroy(tree);
	/* An empty collection as the whole document (found by the fuzzer: UB on a NULL stack). */
	tree = load_ok("[]");
	assert_at(cfg_tree_root(tree), CFG_SEQ, 0, 1, 1);
	assert_null(cfg_tree_root(tree)->items);
	cfg_tree_destroy(tree);
	tree = load_ok("{}");
	assert_at(cfg_tree_root(tree), CFG_MAP, 0, 1, 1);
	cfg_tree_destroy(tree);
	expect_error("[][", "t.yaml:1:3: did not find expected <document start>");
}

static void
test_quoted_vs_plain(void **state)
{
	(void)state;
	const char *yaml = "a: 1\n"
			   "b: \"1\"\n"
			   "c: '1'\n"
			   "d: true\n"
			   "e: 'it''s'\n"
			   "f: \"tab\\there \\u00e9\"\n"
			   "g: ~\n"
			   "h: |\n"
			   "  1\n"
			   "i: >-\n"
			   "  two\n"
			   "  words\n";
	struct cfg_tree *tree = load_ok(yaml);
	const struct cfg_node *root = cfg_tree_root(tree);
	assert_scalar(cfg_map_get(root, "a"), "1", false, 1, 4);
	assert_scalar(cfg_map_get(root, "b"), "1", true, 2, 4);
	assert_scalar(cfg_map_get(root, "c"), "1", true, 3, 4);
	assert_scalar(cfg_map_get(root, "d"), "true", false, 4, 4);
	assert_scalar(cfg_map_get(root, "e"), "it's", true, 5, 4);
	assert_scalar(cfg_map_get(root, "f"), "tab\there \xc3\xa9", true, 6, 4);
	assert_scalar(cfg_map_get(root, "g"), "~", false, 7, 4);
	/* Block scalars count as quoted: text, never a number. */
	assert_scalar(cfg_map_get(root, "h"), "1\n", true, 8, 4);
	assert_scalar(cfg_map_get(root, "i"), "two words", true, 10, 4);
	cfg_tree_destroy(tree);
}

static void
test_empty_values(void **state)
{
	(void)state;
	struct cfg_tree *tree = load_ok("a:\nb: \"\"\nc: ''\nd: []\ne: {}\nf:\n  -\n  - x\n");
	const struct cfg_node *root = cfg_tree_root(tree);
	assert_at(root, CFG_MAP, 6, 1, 1);
	/* libyaml places an empty value right after the colon. */
	assert_scalar(cfg_map_get(root, "a"), "", false, 1, 3);
	assert_scalar(cfg_map_get(root, "b"), "", true, 2, 4);
	assert_scalar(cfg_map_get(root, "c"), "", true, 3, 4);
	assert_at(cfg_map_get(root, "d"), CFG_SEQ, 0, 4, 4);
	assert_at(cfg_map_get(root, "e"), CFG_MAP, 0, 5, 4);
	const struct cfg_node *f = cfg_map_get(root, "f");
	assert_at(f, CFG_SEQ, 2, 7, 3);
	assert_scalar(f->items[0], "", false, 7, 4);
	assert_scalar(f->items[1], "x", false, 8, 5);
	cfg_tree_destroy(tree);
}

static void
test_multiline_strings(void **state)
{
	(void)state;
	const char *yaml = "plain: one\n"
			   "  two\n"
			   "\n"
			   "  three\n"
			   "dq: \"a\n"
			   "  b\\\n"
			   "  c\"\n"
			   "keep: |+\n"
			   "  x\n"
			   "\n"
			   "strip: |-\n"
			   "  line1\n"
			   "    indented\n"
			   "folded: >\n"
			   "  p\n"
			   "  q\n"
			   "\n"
			   "  r\n"
			   "last: 1\n";
	struct cfg_tree *tree = load_ok(yaml);
	const struct cfg_node *root = cfg_tree_root(tree);
	assert_scalar(cfg_map_get(root, "plain"), "one two\nthree", false, 1, 8);
	assert_scalar(cfg_map_get(root, "dq"), "a bc", true, 5, 5);
	assert_scalar(cfg_map_get(root, "keep"), "x\n\n", true, 8, 7);
	assert_scalar(cfg_map_get(root, "strip"), "line1\n  indented", true, 11, 8);
	assert_scalar(cfg_map_get(root, "folded"), "p q\nr\n", true, 14, 9);
	assert_scalar(cfg_map_get(root, "last"), "1", false, 19, 7);
	cfg_tree_destroy(tree);
}

static void
test_comments(void **state)
{
	(void)state;
	const char *yaml = "# header\n"
			   "a: b # trailing\n"
			   "  # indented comment\n"
			   "c: \"# not a comment\"\n"
			   "d: x#y\n"
			   "e: [1, # inside flow\n"
			   "    2]\n";
	struct cfg_tree *tree = load_ok(yaml);
	const struct cfg_node *root = cfg_tree_root(tree);
	assert_at(root, CFG_MAP, 4, 2, 1);
	assert_scalar(cfg_map_get(root, "a"), "b", false, 2, 4);
	assert_scalar(cfg_map_get(root, "c"), "# not a comment", true, 4, 4);
	assert_scalar(cfg_map_get(root, "d"), "x#y", false, 5, 4);
	const struct cfg_node *e = cfg_map_get(root, "e");
	assert_at(e, CFG_SEQ, 2, 6, 4);
	assert_scalar(e->items[1], "2", false, 7, 5);
	cfg_tree_destroy(tree);
}

static void
test_empty_documents(void **state)
{
	(void)state;
	static const char *const empty[] = {"", "# only\n\n  # comments\n", "\n\n", "---\n", "--- # c\n...\n"};
	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		struct cfg_tree *tree = load_ok(empty[i]);
		const struct cfg_node *root = cfg_tree_root(tree);
		assert_non_null(root);
		assert_int_equal(root->type, CFG_MAP);
		assert_int_equal(root->count, 0);
		assert_null(root->value);
		assert_null(cfg_map_get(root, "a"));
		cfg_tree_destroy(tree);
	}
	/* NULL with length 0 is an empty input too. */
	struct cfg_tree *tree = load_ok_n(NULL, 0);
	assert_at(cfg_tree_root(tree), CFG_MAP, 0, 1, 1);
	cfg_tree_destroy(tree);
	/* A root that is a quoted empty string or a word stays a scalar. */
	tree = load_ok("''\n");
	assert_scalar(cfg_tree_root(tree), "", true, 1, 1);
	cfg_tree_destroy(tree);
	tree = load_ok("--- hello\n");
	assert_scalar(cfg_tree_root(tree), "hello", false, 1, 5);
	cfg_tree_destroy(tree);
}

static void
test_bom_and_line_ends(void **state)
{
	(void)state;
	/* A UTF-8 byte order mark is skipped and does not shift columns; CRLF counts once. */
	struct cfg_tree *tree = load_ok("\xef\xbb\xbf" "a: 1\r\nb: 2\r\n");
	const struct cfg_node *root = cfg_tree_root(tree);
	assert_scalar(root->keys[0], "a", false, 1, 1);
	assert_scalar(cfg_map_get(root, "b"), "2", false, 2, 4);
	cfg_tree_destroy(tree);
	/* Columns count characters, not bytes. */
	tree = load_ok("\xc3\xa9t\xc3\xa9: x\n");
	assert_scalar(cfg_map_get(cfg_tree_root(tree), "\xc3\xa9t\xc3\xa9"), "x", false, 1, 6);
	cfg_tree_destroy(tree);
}

static void
test_cfg_map_get(void **state)
{
	(void)state;
	struct cfg_tree *tree = load_ok("a: 1\n\"b c\": [x]\nab: 3\n");
	const struct cfg_node *root = cfg_tree_root(tree);
	assert_scalar(cfg_map_get(root, "a"), "1", false, 1, 4);
	assert_scalar(cfg_map_get(root, "ab"), "3", false, 3, 5);
	assert_at(cfg_map_get(root, "b c"), CFG_SEQ, 1, 2, 8);
	assert_null(cfg_map_get(root, "b"));
	assert_null(cfg_map_get(root, "A"));
	assert_null(cfg_map_get(root, ""));
	assert_null(cfg_map_get(root, NULL));
	assert_null(cfg_map_get(NULL, "a"));
	/* Not a map: a sequence or a scalar gives NULL. */
	assert_null(cfg_map_get(cfg_map_get(root, "b c"), "x"));
	assert_null(cfg_map_get(cfg_map_get(root, "a"), "1"));
	cfg_tree_destroy(tree);
	assert_null(cfg_tree_root(NULL));
	cfg_tree_destroy(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block_map),
		cmocka_unit_test(test_block_sequence),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_flow_style),
		cmocka_unit_test(test_quoted_vs_plain),
		cmocka_unit_test(test_empty_values),
		cmocka_unit_test(test_multiline_strings),
		cmocka_unit_test(test_comments),
		cmocka_unit_test(test_empty_documents),
		cmocka_unit_test(test_bom_and_line_ends),
		cmocka_unit_test(test_cfg_map_get),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
