/*
 * Reading configuration files and `include:`: the main file and every
 * rule file it includes are read the same way (regular files only, not
 * writable by others), each pattern is expanded relative to the main
 * file, and a file met twice is read once.
 */
#include "config_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cfg_decode.h"
#include "core/readfile.h"
#include "core/xalloc.h"

/* ---- files ---- */

void
loader_note_file(struct loader *ld, const char *path)
{
	ld->files = xrealloc(ld->files, ld->file_count + 1, sizeof(*ld->files));
	ld->files[ld->file_count++] = cfg_strdup(path);
}

/* Regular files only, and only the owner may write: the file can start programs. */
int
loader_read_file(struct loader *ld, const char *path, struct stat *st, struct cfg_tree **out)
{
	/* never blocks: a FIFO here would stop `check`, the start, or the loop during a reload */
	int fd = readfile_open(path, st);
	if (fd == -EINVAL) {
		diag_add(ld->diags, path, 0, 0, "%s, not a regular file: refusing to read it",
			 readfile_kind(st->st_mode));
		return fd;
	}
	if (fd < 0) {
		diag_add(ld->diags, path, 0, 0, "cannot open: %s", strerror(-fd));
		return fd;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		close(fd);
		/* the file can start programs (exec actions): only its owner may change it */
		diag_add(ld->diags, path, 0, 0,
			 "refusing a configuration file that is group- or world-writable (mode %04o): it can run "
			 "programs through exec actions; chmod go-w it",
			 (unsigned)(st->st_mode & 07777));
		return -EINVAL;
	}
	/*
	 * One byte more than allowed is enough for cfg_tree to refuse the size. The buffer starts at the file's
	 * size: 1 MiB for each file, freed, raised glibc's mmap threshold (it follows the largest block freed), so
	 * the large blocks of the start came from the heap, zeroed and resident (issue 34).
	 */
	size_t max = CFG_MAX_FILE_BYTES + 1, len = 0;
	size_t cap = (uint64_t)st->st_size < max ? (size_t)st->st_size + 1 : max;
	char *buf = xrealloc(NULL, cap, 1);
	for (;;) {
		if (len == cap) { /* the file grew since fstat() */
			if (cap == max) {
				break;
			}
			cap = 2 * cap < max ? 2 * cap : max;
			buf = xrealloc(buf, cap, 1);
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			int err = -errno;
			close(fd);
			free(buf);
			diag_add(ld->diags, path, 0, 0, "cannot read: %s", strerror(-err));
			return err;
		}
		if (n == 0) {
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	int r = cfg_tree_load_buffer(path, buf, len, out, ld->diags);
	free(buf);
	if (r == 0) {
		ld->trees = xrealloc(ld->trees, ld->tree_count + 1, sizeof(*ld->trees));
		ld->trees[ld->tree_count++] = *out;
	}
	return r;
}

/* ---- includes ---- */

static bool
has_wildcard(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* DIR/PATTERN with DIR's glob characters escaped; PATTERN alone when absolute or DIR is "". */
static char *
include_pattern(const char *dir, const char *pattern, bool escape)
{
	if (pattern[0] == '/' || dir[0] == '\0') {
		return cfg_strdup(pattern);
	}
	size_t dl = strlen(dir), pl = strlen(pattern);
	char *out = xrealloc(NULL, 2 * dl + pl + 2, 1);
	size_t at = 0;
	for (size_t i = 0; i < dl; i++) {
		if (escape && strchr("*?[]\\", dir[i])) {
			out[at++] = '\\';
		}
		out[at++] = dir[i];
	}
	if (at == 0 || out[at - 1] != '/') {
		out[at++] = '/';
	}
	memcpy(out + at, pattern, pl + 1);
	return out;
}

static void
load_include_file(struct loader *ld, const struct cfg_node *at, const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0) {
		if (st.st_dev == ld->devs[0] && st.st_ino == ld->inos[0]) {
			char shown[CFG_SHOW_MAX];
			cfg_show(path, shown, sizeof(shown));
			diag_add(ld->diags, at->file, at->line, at->column,
				 "include: '%s' is the main configuration file", shown);
			return;
		}
		for (size_t i = 1; i < ld->include_count + 1; i++) {
			if (st.st_dev == ld->devs[i] && st.st_ino == ld->inos[i]) {
				return; /* matched by two patterns: once is enough */
			}
		}
	}
	/* unreadable files count too: a pattern matching thousands of them stays cheap */
	if (ld->include_tries++ == CONFIG_MAX_INCLUDES) {
		diag_add(ld->diags, at->file, at->line, at->column, "include: more than %d files", CONFIG_MAX_INCLUDES);
	}
	if (ld->include_tries > CONFIG_MAX_INCLUDES) {
		return;
	}
	loader_note_file(ld, path);
	struct cfg_tree *tree;
	if (loader_read_file(ld, path, &st, &tree) < 0) {
		return;
	}
	ld->include_count++;
	ld->devs[ld->include_count] = st.st_dev;
	ld->inos[ld->include_count] = st.st_ino;

	const struct cfg_node *root = cfg_tree_root(tree);
	struct cfg_decoder dec = {.diags = ld->diags, .context = "an included file"};
	if (root->type != CFG_MAP) {
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(root, got, sizeof(got));
		cfg_report(&dec, root, "an included file holds only a 'rules:' list, got %s", got);
		return;
	}
	static const char *const include_keys[] = {"rules"};
	for (size_t i = 0; i < root->count; i++) {
		const struct cfg_node *key = root->keys[i];
		if (strcmp(key->value, "rules") == 0) {
			loader_decode_rules(ld, root->items[i], path);
		} else if (strcmp(key->value, "include") == 0) {
			cfg_report(&dec, key, "include: an included file cannot include other files");
		} else {
			if (config_is_top_key(key->value)) {
				cfg_report(&dec, key,
					   "'%s' belongs in the main file; an included file holds only 'rules:'",
					   key->value);
			} else {
				cfg_report_unknown_key(&dec, key, include_keys, 1);
			}
		}
	}
}

static void
include_one(struct loader *ld, const struct cfg_node *pat, const char *dir)
{
	char got[CFG_SHOW_MAX + 8];
	if (pat->type != CFG_SCALAR || cfg_node_is_null(pat) || pat->value[0] == '\0') {
		cfg_describe(pat, got, sizeof(got));
		diag_add(ld->diags, pat->file, pat->line, pat->column,
			 "include: expected a file name or pattern, got %s", got);
		return;
	}
	if (!has_wildcard(pat->value)) {
		char *path = include_pattern(dir, pat->value, false);
		struct stat st;
		if (stat(path, &st) != 0) {
			char shown[CFG_SHOW_MAX];
			cfg_show(pat->value, shown, sizeof(shown));
			diag_add(ld->diags, pat->file, pat->line, pat->column, "include: cannot open '%s': %s", shown,
				 strerror(errno));
		} else {
			load_include_file(ld, pat, path);
		}
		free(path);
		return;
	}
	char *pattern = include_pattern(dir, pat->value, true);
	glob_t g;
	int r = glob(pattern, 0, NULL, &g);
	free(pattern);
	if (r == GLOB_NOMATCH) {
		return; /* an empty rules.d is fine */
	}
	if (r != 0) {
		char shown[CFG_SHOW_MAX];
		cfg_show(pat->value, shown, sizeof(shown));
		diag_add(ld->diags, pat->file, pat->line, pat->column, "include: cannot expand '%s'", shown);
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		load_include_file(ld, pat, g.gl_pathv[i]);
	}
	globfree(&g);
}

void
loader_decode_include(struct loader *ld, const struct cfg_node *node, const char *main_path)
{
	if (cfg_node_is_null(node)) {
		return;
	}
	/* patterns are relative to the main file's directory */
	const char *slash = strrchr(main_path, '/');
	char *dir;
	if (!slash) {
		dir = cfg_strdup("");
	} else if (slash == main_path) {
		dir = cfg_strdup("/");
	} else {
		dir = cfg_strdup(main_path);
		dir[slash - main_path] = '\0';
	}
	if (node->type == CFG_MAP) {
		diag_add(ld->diags, node->file, node->line, node->column,
			 "include: expected a file pattern or a list of them, got a map");
	} else if (node->type == CFG_SCALAR) {
		include_one(ld, node, dir);
	} else {
		for (size_t i = 0; i < node->count; i++) {
			include_one(ld, node->items[i], dir);
		}
	}
	free(dir);
}
