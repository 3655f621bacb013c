/* What the YAML tree loader tests share (see cfg_tree_checks.h). */
#include "cfg_tree_checks.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/diag.h"


struct cfg_tree *
load_ok_n(const char *yaml, size_t len)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct cfg_tree *tree = NULL;
	int ret = cfg_tree_load_buffer("t.yaml", yaml, len, &tree, &diags);
	if (ret != 0 || diags.count != 0) {
		diag_list_print(&diags, stderr);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(diags.count, 0);
	assert_non_null(tree);
	diag_list_free(&diags);
	return tree;
}

struct cfg_tree *
load_ok(const char *yaml)
{
	return load_ok_n(yaml, strlen(yaml));
}

void
expect_error_n(const char *yaml, size_t len, int want_ret, const char *expect)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct cfg_tree *tree = (struct cfg_tree *)&diags; /* must stay untouched */
	int ret = cfg_tree_load_buffer("t.yaml", yaml, len, &tree, &diags);
	assert_int_equal(ret, want_ret);
	assert_ptr_equal(tree, (struct cfg_tree *)&diags);
	assert_int_equal(diags.count, 1);
	char buf[512];
	diag_format(&diags.items[0], buf, sizeof(buf));
	assert_string_equal(buf, expect);
	diag_list_free(&diags);
}

void
expect_error(const char *yaml, const char *expect)
{
	expect_error_n(yaml, strlen(yaml), -EINVAL, expect);
}

void
expect_error_one_of(const char *yaml, const char *expect, const char *or_expect)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct cfg_tree *tree = (struct cfg_tree *)&diags; /* must stay untouched */
	assert_int_equal(cfg_tree_load_buffer("t.yaml", yaml, strlen(yaml), &tree, &diags), -EINVAL);
	assert_ptr_equal(tree, (struct cfg_tree *)&diags);
	assert_int_equal(diags.count, 1);
	char buf[512];
	diag_format(&diags.items[0], buf, sizeof(buf));
	if (strcmp(buf, expect) != 0) {
		assert_string_equal(buf, or_expect);
	}
	diag_list_free(&diags);
}

void
assert_scalar(const struct cfg_node *n, const char *value, bool quoted, int line, int column)
{
	assert_non_null(n);
	assert_int_equal(n->type, CFG_SCALAR);
	assert_string_equal(n->value, value);
	assert_int_equal(n->quoted, quoted);
	assert_int_equal(n->line, line);
	assert_int_equal(n->column, column);
}

void
assert_at(const struct cfg_node *n, enum cfg_type type, size_t count, int line, int column)
{
	assert_non_null(n);
	assert_int_equal(n->type, type);
	assert_int_equal(n->count, count);
	assert_int_equal(n->line, line);
	assert_int_equal(n->column, column);
}
