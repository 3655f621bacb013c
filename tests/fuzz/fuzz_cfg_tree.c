/*
 * Fuzz target: YAML bytes -> cfg_tree_load_buffer(). A loaded tree is walked
 * (without recursion) and every promise of core/cfg_tree.h is checked; a
 * refused input must come with located messages. Crashes, leaks and broken
 * invariants all abort.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cfg_tree.h"
#include "core/diag.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
cmp_key(const void *a, const void *b)
{
	const struct cfg_node *const *ka = a;
	const struct cfg_node *const *kb = b;
	return strcmp((*ka)->value, (*kb)->value);
}

/* Child positions never come before their parent's or their previous sibling's. */
static void
check_not_before(const struct cfg_node *later, const struct cfg_node *earlier)
{
	CHECK(later->line > earlier->line || (later->line == earlier->line && later->column >= earlier->column));
}

static void
check_map(const struct cfg_node *n)
{
	CHECK(n->value == NULL);
	CHECK((n->count == 0) == (n->keys == NULL));
	CHECK((n->count == 0) == (n->items == NULL));
	for (size_t i = 0; i < n->count; i++) {
		CHECK(n->keys[i] && n->items[i]);
		CHECK(n->keys[i]->type == CFG_SCALAR);
		check_not_before(n->keys[i], n);
		check_not_before(n->items[i], n->keys[i]);
		if (i > 0) {
			check_not_before(n->keys[i], n->items[i - 1]);
		}
		CHECK(cfg_map_get(n, n->keys[i]->value) == n->items[i]);
	}
	if (n->count < 2) {
		return;
	}
	/* Keys are unique: sort a copy and compare neighbours. */
	const struct cfg_node **keys = malloc(n->count * sizeof(*keys));
	CHECK(keys != NULL);
	memcpy(keys, n->keys, n->count * sizeof(*keys));
	qsort(keys, n->count, sizeof(*keys), cmp_key);
	for (size_t i = 1; i < n->count; i++) {
		CHECK(strcmp(keys[i - 1]->value, keys[i]->value) != 0);
	}
	free(keys);
}

struct walk {
	const struct cfg_node *node;
	int depth; /* open maps/sequences around NODE */
};

static void
check_tree(const struct cfg_tree *tree)
{
	const struct cfg_node *root = cfg_tree_root(tree);
	CHECK(root != NULL);
	CHECK(root->file != NULL && strcmp(root->file, "fuzz.yaml") == 0);
	/* Nesting is at most CFG_MAX_DEPTH, so the pending list stays bounded per level. */
	size_t cap = 64, len = 0, nodes = 0;
	struct walk *stack = malloc(cap * sizeof(*stack));
	CHECK(stack != NULL);
	stack[len++] = (struct walk){root, 0};
	while (len > 0) {
		struct walk w = stack[--len];
		const struct cfg_node *n = w.node;
		nodes++;
		CHECK(nodes <= CFG_MAX_NODES);
		CHECK(n->file == root->file);
		CHECK(n->line >= 1 && n->column >= 1);
		if (n->type == CFG_SCALAR) {
			CHECK(n->value != NULL);
			CHECK(n->count == 0 && n->keys == NULL && n->items == NULL);
			(void)strlen(n->value);
			continue;
		}
		CHECK(n->type == CFG_MAP || n->type == CFG_SEQ);
		CHECK(!n->quoted);
		CHECK(w.depth + 1 <= CFG_MAX_DEPTH);
		if (n->type == CFG_MAP) {
			check_map(n);
		} else {
			CHECK(n->value == NULL && n->keys == NULL);
			CHECK((n->count == 0) == (n->items == NULL));
			for (size_t i = 0; i < n->count; i++) {
				CHECK(n->items[i] != NULL);
				check_not_before(n->items[i], i ? n->items[i - 1] : n);
			}
		}
		CHECK(cfg_map_get(n, "") == NULL || n->type == CFG_MAP);
		size_t more = n->type == CFG_MAP ? 2 * n->count : n->count;
		if (len + more > cap) {
			while (len + more > cap) {
				cap *= 2;
			}
			stack = realloc(stack, cap * sizeof(*stack));
			CHECK(stack != NULL);
		}
		for (size_t i = 0; i < n->count; i++) {
			if (n->type == CFG_MAP) {
				stack[len++] = (struct walk){n->keys[i], w.depth + 1};
			}
			stack[len++] = (struct walk){n->items[i], w.depth + 1};
		}
	}
	free(stack);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct cfg_tree *tree = NULL;
	int ret = cfg_tree_load_buffer("fuzz.yaml", (const char *)data, size, &tree, &diags);
	if (ret == 0) {
		CHECK(tree != NULL);
		CHECK(diags.count == 0);
		check_tree(tree);
		cfg_tree_destroy(tree);
	} else {
		CHECK(ret < 0);
		CHECK(tree == NULL);
		CHECK(diags.count == 1);
		const struct diag *d = &diags.items[0];
		CHECK(strcmp(d->file, "fuzz.yaml") == 0);
		CHECK(d->msg[0] != '\0');
		CHECK(d->line >= 0 && d->column >= 0);
		CHECK(d->line > 0 || d->column == 0);
		char buf[256];
		diag_format(d, buf, sizeof(buf));
		CHECK(strncmp(buf, "fuzz.yaml:", 10) == 0);
	}
	diag_list_free(&diags);
	return 0;
}
