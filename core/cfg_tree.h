/*
 * Configuration as a small tree of maps, sequences and scalars, each node
 * with the file, line and column it came from. cfg_tree.c is the
 * only file that includes <yaml.h>; everything else reads this tree.
 *
 * Choices made by the loader:
 * - Nesting: a map or sequence inside CFG_MAX_DEPTH open maps/sequences is
 *   refused at its first character; scalars do not count as a level.
 * - Tags are refused, the standard "!!str" too: quote a value instead.
 * - quoted is true for '...' and "..." scalars and also for block scalars
 *   (| and >): all of them are text, never a number, bool or null.
 * - Scalars holding a NUL ("\0" escapes) are refused, so value is always
 *   a plain C string.
 * - Keys compare as text: a: and "a": in one map are duplicates.
 * - The input must be UTF-8 (a UTF-8 byte order mark is skipped); a UTF-16
 *   byte order mark is refused.
 * - Loading stops at the first problem: one message per failed load.
 * - A document that holds nothing (empty file, only comments, a bare
 *   "---") gives an empty map root.
 * Every node, string and array lives in one arena owned by the tree.
 */
#ifndef TEGRAWATCH_CFG_TREE_H
#define TEGRAWATCH_CFG_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

#define CFG_MAX_DEPTH 32
#define CFG_MAX_FILE_BYTES (1024 * 1024)
#define CFG_MAX_NODES 100000

enum cfg_type {
	CFG_SCALAR,
	CFG_MAP,
	CFG_SEQ,
};

struct cfg_node {
	enum cfg_type type;
	const char *file;        /* owned by the tree */
	int line;                /* 1-based */
	int column;              /* 1-based */
	char *value;             /* CFG_SCALAR: the text ("" for an empty value); NULL otherwise */
	bool quoted;             /* CFG_SCALAR: written in quotes, so never a number/bool/null */
	size_t count;            /* CFG_MAP: pairs; CFG_SEQ: items */
	struct cfg_node **keys;  /* CFG_MAP: scalar key nodes */
	struct cfg_node **items; /* CFG_MAP: values; CFG_SEQ: items (arrays NULL when count is 0) */
};

struct cfg_tree;

/**
 * Loads one YAML document from PATH. Refuses files over CFG_MAX_FILE_BYTES,
 * aliases and anchors, nesting deeper than CFG_MAX_DEPTH, more than
 * CFG_MAX_NODES nodes, duplicate keys in a map, non-scalar keys, tags and
 * more than one document. Returns 0 and *OUT, or -errno (-EINVAL for
 * invalid input, oversized files included) after adding a located message
 * to DIAGS.
 */
int cfg_tree_load_file(const char *path, struct cfg_tree **out, struct diag_list *diags);

/**
 * As cfg_tree_load_file() for LEN bytes of BUF (no NUL terminator needed;
 * NULL with LEN 0 is an empty document); NAME is used in messages and nodes.
 */
int cfg_tree_load_buffer(const char *name, const char *buf, size_t len, struct cfg_tree **out, struct diag_list *diags);

/** Frees TREE; NULL is a no-op. */
void cfg_tree_destroy(struct cfg_tree *tree);

/** The root node (a map, a sequence or a scalar; an empty document gives an empty map). */
const struct cfg_node *cfg_tree_root(const struct cfg_tree *tree);

/** The value of KEY in MAP, or NULL (also when MAP is not a map). */
const struct cfg_node *cfg_map_get(const struct cfg_node *map, const char *key);

#endif
