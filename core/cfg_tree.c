/*
 * YAML -> located cfg_node tree, through libyaml's event API so that every
 * limit applies while parsing: the parser is dropped at the first alias,
 * anchor, tag, node past CFG_MAX_NODES or level past CFG_MAX_DEPTH, before
 * it reads further. Nothing here recurses, so hostile nesting cannot reach
 * the stack. The only file in the project that includes <yaml.h>.
 */
#include "cfg_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "hash.h"
#include "xalloc.h"

#define ARENA_BLOCK_BYTES (64 * 1024)
#define KEY_MSG_BYTES 40

struct arena_block {
	struct arena_block *next;
	size_t size; /* usable bytes after the header */
	size_t used;
};

struct cfg_tree {
	struct arena_block *blocks;
	const char *file;
	struct cfg_node *root;
};

/* An open map or sequence; its children wait on loader.stack from base on. */
struct frame {
	struct cfg_node *node;
	size_t base;
	size_t map_id;
};

/* Keys seen so far in every map of the document, for duplicate checks. */
struct key_slot {
	size_t map_id;
	const struct cfg_node *key;
};

struct key_set {
	struct key_slot *slots;
	size_t cap; /* a power of two, or 0 */
	size_t used;
};

struct loader {
	struct cfg_tree *tree;
	struct diag_list *diags;
	struct frame frames[CFG_MAX_DEPTH];
	int depth;
	struct cfg_node **stack;
	size_t stack_len;
	size_t stack_cap;
	struct key_set keys;
	size_t nodes;
	size_t next_map_id;
	int documents;
};

static const size_t block_header =
	(sizeof(struct arena_block) + alignof(max_align_t) - 1) / alignof(max_align_t) * alignof(max_align_t);

/* Returns SIZE bytes aligned to ALIGN (a power of two); aborts when out of memory (xalloc.h). */
static void *
arena_alloc(struct cfg_tree *tree, size_t size, size_t align)
{
	struct arena_block *b = tree->blocks;
	if (size > SIZE_MAX / 2) {
		abort_out_of_memory();
	}
	size_t start = b ? (b->used + align - 1) & ~(align - 1) : 0;
	if (!b || start > b->size || b->size - start < size) {
		size_t usable = ARENA_BLOCK_BYTES - block_header;
		if (size > usable) {
			usable = size;
		}
		b = xmalloc(block_header + usable);
		b->next = tree->blocks;
		b->size = usable;
		b->used = 0;
		tree->blocks = b;
		start = 0;
	}
	b->used = start + size;
	return (char *)b + block_header + start;
}

static char *
arena_strndup(struct cfg_tree *tree, const char *s, size_t len)
{
	char *p = arena_alloc(tree, len + 1, 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void
cfg_tree_destroy(struct cfg_tree *tree)
{
	if (!tree) {
		return;
	}
	struct arena_block *b = tree->blocks;
	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	free(tree);
}

const struct cfg_node *
cfg_tree_root(const struct cfg_tree *tree)
{
	return tree ? tree->root : NULL;
}

const struct cfg_node *
cfg_map_get(const struct cfg_node *map, const char *key)
{
	if (!map || !key || map->type != CFG_MAP) {
		return NULL;
	}
	for (size_t i = 0; i < map->count; i++) {
		if (strcmp(map->keys[i]->value, key) == 0) {
			return map->items[i];
		}
	}
	return NULL;
}

static int
to_int(size_t v)
{
	return v < INT_MAX ? (int)v : INT_MAX;
}

/* Adds "FILE:LINE:COL: message" at libyaml's 0-based MARK. */
static void __attribute__((format(printf, 3, 4)))
report(struct loader *ld, const yaml_mark_t *mark, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_addv(ld->diags, ld->tree->file, to_int(mark->line) + 1, to_int(mark->column) + 1, fmt, ap);
	va_end(ap);
}

static size_t
key_hash(size_t map_id, const char *s)
{
	uint64_t h = fnv1a64(FNV1A64_BASIS ^ (uint64_t)map_id * 0x9E3779B97F4A7C15ULL, s, strlen(s));
	return (size_t)(h ^ (h >> 29));
}

static void
key_set_grow(struct key_set *set)
{
	size_t cap = set->cap ? set->cap * 2 : 64;
	struct key_slot *slots = xcalloc(cap, sizeof(*slots));
	for (size_t i = 0; i < set->cap; i++) {
		const struct key_slot *old = &set->slots[i];
		if (!old->key) {
			continue;
		}
		size_t j = key_hash(old->map_id, old->key->value) & (cap - 1);
		while (slots[j].key) {
			j = (j + 1) & (cap - 1);
		}
		slots[j] = *old;
	}
	free(set->slots);
	set->slots = slots;
	set->cap = cap;
}

/* Adds KEY to map MAP_ID; *DUP is the earlier equal key, or NULL when KEY was added. */
static void
key_set_add(struct key_set *set, size_t map_id, const struct cfg_node *key, const struct cfg_node **dup)
{
	if ((set->used + 1) * 2 > set->cap) {
		key_set_grow(set);
	}
	size_t j = key_hash(map_id, key->value) & (set->cap - 1);
	while (set->slots[j].key) {
		const struct key_slot *s = &set->slots[j];
		if (s->map_id == map_id && strcmp(s->key->value, key->value) == 0) {
			*dup = s->key;
			return;
		}
		j = (j + 1) & (set->cap - 1);
	}
	set->slots[j].map_id = map_id;
	set->slots[j].key = key;
	set->used++;
	*dup = NULL;
}

static void
stack_push(struct loader *ld, struct cfg_node *node)
{
	if (ld->stack_len == ld->stack_cap) {
		size_t cap = ld->stack_cap ? ld->stack_cap * 2 : 64;
		ld->stack = xrealloc(ld->stack, cap, sizeof(*ld->stack));
		ld->stack_cap = cap;
	}
	ld->stack[ld->stack_len++] = node;
}

/* Checks what every node start must satisfy; reports and returns -EINVAL if not. */
static int
check_node_start(struct loader *ld, const yaml_event_t *ev, const yaml_char_t *anchor, const yaml_char_t *tag)
{
	const yaml_mark_t *at = &ev->start_mark;
	if (anchor) {
		report(ld, at, "aliases and anchors are not allowed");
		return -EINVAL;
	}
	if (tag) {
		report(ld, at, "tags are not allowed");
		return -EINVAL;
	}
	if (++ld->nodes > CFG_MAX_NODES) {
		report(ld, at, "more than %d nodes", CFG_MAX_NODES);
		return -EINVAL;
	}
	const struct frame *parent = ld->depth ? &ld->frames[ld->depth - 1] : NULL;
	bool is_key = parent && parent->node->type == CFG_MAP && (ld->stack_len - parent->base) % 2 == 0;
	if (ev->type == YAML_SCALAR_EVENT) {
		if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length)) {
			report(ld, at, "NUL characters are not allowed in strings");
			return -EINVAL;
		}
		return 0;
	}
	if (is_key) {
		report(ld, at, "map keys must be scalars");
		return -EINVAL;
	}
	if (ld->depth == CFG_MAX_DEPTH) {
		report(ld, at, "nesting deeper than %d levels", CFG_MAX_DEPTH);
		return -EINVAL;
	}
	return 0;
}

/* Hangs NODE under the open collection (or makes it the root). */
static int
attach(struct loader *ld, struct cfg_node *node)
{
	if (ld->depth == 0) {
		ld->tree->root = node;
		return 0;
	}
	const struct frame *parent = &ld->frames[ld->depth - 1];
	if (parent->node->type == CFG_MAP && (ld->stack_len - parent->base) % 2 == 0) {
		const struct cfg_node *dup;
		key_set_add(&ld->keys, parent->map_id, node, &dup);
		if (dup) {
			char key[KEY_MSG_BYTES];
			diag_show(node->value, key, sizeof(key));
			diag_add(ld->diags, ld->tree->file, node->line, node->column,
				 "duplicate key '%s' (first at line %d)", key, dup->line);
			return -EINVAL;
		}
	}
	stack_push(ld, node);
	return 0;
}

static int
node_start(struct loader *ld, const yaml_event_t *ev)
{
	const yaml_char_t *anchor;
	const yaml_char_t *tag;
	enum cfg_type type;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		type = CFG_SCALAR;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		type = CFG_SEQ;
		break;
	default:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		type = CFG_MAP;
		break;
	}
	int ret = check_node_start(ld, ev, anchor, tag);
	if (ret < 0) {
		return ret;
	}

	struct cfg_node *node = arena_alloc(ld->tree, sizeof(*node), alignof(struct cfg_node));
	memset(node, 0, sizeof(*node));
	node->type = type;
	node->file = ld->tree->file;
	node->line = to_int(ev->start_mark.line) + 1;
	node->column = to_int(ev->start_mark.column) + 1;
	if (type == CFG_SCALAR) {
		node->value = arena_strndup(ld->tree, (const char *)ev->data.scalar.value, ev->data.scalar.length);
		node->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
	}
	ret = attach(ld, node);
	if (ret < 0 || type == CFG_SCALAR) {
		return ret;
	}
	struct frame *f = &ld->frames[ld->depth++];
	f->node = node;
	f->base = ld->stack_len;
	f->map_id = ld->next_map_id++;
	return 0;
}

/* Closes the innermost collection: its children move from the stack into the arena. */
static int
node_end(struct loader *ld)
{
	if (ld->depth == 0) {
		diag_add(ld->diags, ld->tree->file, 0, 0, "internal error: unbalanced YAML events");
		return -EINVAL;
	}
	struct frame *f = &ld->frames[--ld->depth];
	struct cfg_node *node = f->node;
	size_t n = ld->stack_len - f->base;
	ld->stack_len = f->base;
	if (n == 0) {
		return 0; /* the stack may still be NULL */
	}
	struct cfg_node **child = ld->stack + f->base;
	if (node->type == CFG_SEQ) {
		node->items = arena_alloc(ld->tree, n * sizeof(*child), alignof(struct cfg_node *));
		memcpy(node->items, child, n * sizeof(*child));
		node->count = n;
		return 0;
	}
	/* libyaml gives every key a value, an empty scalar if need be. */
	if (n % 2) {
		diag_add(ld->diags, ld->tree->file, node->line, node->column, "internal error: key without a value");
		return -EINVAL;
	}
	size_t pairs = n / 2;
	node->keys = arena_alloc(ld->tree, pairs * sizeof(*child), alignof(struct cfg_node *));
	node->items = arena_alloc(ld->tree, pairs * sizeof(*child), alignof(struct cfg_node *));
	for (size_t i = 0; i < pairs; i++) {
		node->keys[i] = child[2 * i];
		node->items[i] = child[2 * i + 1];
	}
	node->count = pairs;
	return 0;
}

/* An empty document (nothing, comments, a bare "---") is an empty map. */
static int
finish_root(struct loader *ld)
{
	struct cfg_node *root = ld->tree->root;
	if (!root) {
		root = arena_alloc(ld->tree, sizeof(*root), alignof(struct cfg_node));
		memset(root, 0, sizeof(*root));
		root->file = ld->tree->file;
		root->line = 1;
		root->column = 1;
		ld->tree->root = root;
	} else if (root->type != CFG_SCALAR || root->quoted || root->value[0] != '\0') {
		return 0;
	}
	root->type = CFG_MAP;
	root->value = NULL;
	root->quoted = false;
	return 0;
}

static int
on_event(struct loader *ld, const yaml_event_t *ev, bool *done)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++ld->documents > 1) {
			report(ld, &ev->start_mark, "more than one document is not allowed");
			return -EINVAL;
		}
		return 0;
	case YAML_ALIAS_EVENT:
		report(ld, &ev->start_mark, "aliases and anchors are not allowed");
		return -EINVAL;
	case YAML_SCALAR_EVENT:
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		return node_start(ld, ev);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return node_end(ld);
	case YAML_STREAM_END_EVENT:
		*done = true;
		return finish_root(ld);
	default:
		return 0;
	}
}

/*
 * Reader errors (bad UTF-8, control characters) carry a byte offset, not a
 * mark: count lines and characters up to it the way libyaml's marks do.
 */
static void
mark_from_offset(const char *buf, size_t len, size_t offset, yaml_mark_t *mark)
{
	const unsigned char *s = (const unsigned char *)buf;
	size_t i = 0;
	if (len >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF) {
		i = 3; /* libyaml skips the byte order mark */
	}
	if (offset > len) {
		offset = len;
	}
	/* For a bad trailing octet libyaml gives its offset: point at the character it breaks. */
	size_t j = offset;
	while (j > 0 && offset - j < 3 && (s[j - 1] & 0xC0) == 0x80) {
		j--;
	}
	if (j > 0 && s[j - 1] >= 0xC0) {
		size_t need = s[j - 1] >= 0xF0 ? 4 : s[j - 1] >= 0xE0 ? 3 : 2;
		if (offset - (j - 1) < need) {
			offset = j - 1;
		}
	}
	mark->line = 0;
	mark->column = 0;
	while (i < offset) {
		size_t brk = 0;
		if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n') {
			brk = 2;
		} else if (s[i] == '\r' || s[i] == '\n') {
			brk = 1;
		} else if (s[i] == 0xC2 && i + 1 < len && s[i + 1] == 0x85) {
			brk = 2; /* NEL */
		} else if (s[i] == 0xE2 && i + 2 < len && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9)) {
			brk = 3; /* LS, PS */
		}
		if (brk) {
			mark->line++;
			mark->column = 0;
			i += brk;
			continue;
		}
		if ((s[i] & 0xC0) != 0x80) {
			mark->column++;
		}
		i++;
	}
}

static int
report_parser_error(struct loader *ld, const yaml_parser_t *parser, const char *buf, size_t len)
{
	const char *problem = parser->problem ? parser->problem : "invalid YAML";
	yaml_mark_t mark = parser->problem_mark;
	switch (parser->error) {
	case YAML_MEMORY_ERROR:
		abort_out_of_memory(); /* libyaml ran out: the one convention (xalloc.h) */
	case YAML_READER_ERROR:
		mark_from_offset(buf, len, parser->problem_offset, &mark);
		report(ld, &mark, "%s", problem);
		return -EINVAL;
	case YAML_SCANNER_ERROR:
	case YAML_PARSER_ERROR:
		break;
	default:
		diag_add(ld->diags, ld->tree->file, 0, 0, "%s", problem);
		return -EINVAL;
	}
	const yaml_mark_t *ctx = &parser->context_mark;
	if (!parser->context) {
		report(ld, &mark, "%s", problem);
	} else if (ctx->line == mark.line && ctx->column == mark.column) {
		report(ld, &mark, "%s (%s)", problem, parser->context);
	} else {
		report(ld, &mark, "%s (%s at line %d, column %d)", problem, parser->context, to_int(ctx->line) + 1,
		       to_int(ctx->column) + 1);
	}
	return -EINVAL;
}

static int
parse(struct loader *ld, const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	if (len >= 2 && ((s[0] == 0xFF && s[1] == 0xFE) || (s[0] == 0xFE && s[1] == 0xFF))) {
		diag_add(ld->diags, ld->tree->file, 0, 0, "only UTF-8 is supported (found a UTF-16 byte order mark)");
		return -EINVAL;
	}
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser)) {
		abort_out_of_memory(); /* libyaml ran out: the one convention (xalloc.h) */
	}
	yaml_parser_set_input_string(&parser, s, len);
	int ret = 0;
	bool done = false;
	while (!done && ret == 0) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			ret = report_parser_error(ld, &parser, buf, len);
			break;
		}
		ret = on_event(ld, &ev, &done);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return ret;
}

int
cfg_tree_load_buffer(const char *name, const char *buf, size_t len, struct cfg_tree **out, struct diag_list *diags)
{
	if (!name) {
		name = "";
	}
	if (len > CFG_MAX_FILE_BYTES) {
		diag_add(diags, name, 0, 0, "file is larger than %d MiB", CFG_MAX_FILE_BYTES / (1024 * 1024));
		return -EINVAL;
	}
	struct cfg_tree *tree = xcalloc(1, sizeof(*tree));
	tree->file = arena_strndup(tree, name, strlen(name));
	struct loader ld = {.tree = tree, .diags = diags};
	int ret = parse(&ld, buf ? buf : "", buf ? len : 0);
	free(ld.stack);
	free(ld.keys.slots);
	if (ret < 0) {
		cfg_tree_destroy(tree);
		return ret;
	}
	*out = tree;
	return 0;
}

/* Reads at most CFG_MAX_FILE_BYTES + 1 bytes: one more is enough to refuse. */
static int
read_capped(int fd, char **buf_out, size_t *len_out)
{
	size_t cap = CFG_MAX_FILE_BYTES + 1;
	char *buf = xmalloc(cap);
	size_t len = 0;
	while (len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			int err = -errno;
			free(buf);
			return err;
		}
		if (n == 0) {
			break;
		}
		len += (size_t)n;
	}
	*buf_out = buf;
	*len_out = len;
	return 0;
}

int
cfg_tree_load_file(const char *path, struct cfg_tree **out, struct diag_list *diags)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int err = -errno;
		diag_add(diags, path, 0, 0, "cannot open: %s", strerror(-err));
		return err;
	}
	char *buf = NULL;
	size_t len = 0;
	int ret = read_capped(fd, &buf, &len);
	close(fd);
	if (ret < 0) {
		diag_add(diags, path, 0, 0, "cannot read: %s", strerror(-ret));
		return ret;
	}
	ret = cfg_tree_load_buffer(path, buf, len, out, diags);
	free(buf);
	return ret;
}
