/*
 * Inside the configuration loader, shared by config.c (the main file,
 * sections, environment, validation), config_include.c (reading files,
 * `include:`) and config_actions.c (`actions:`, `notify:`): the state of
 * one load and what each file offers the others. Nothing outside these
 * three files includes it.
 */
#ifndef TEGRAWATCH_CONFIG_PRIV_H
#define TEGRAWATCH_CONFIG_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "core/cfg_tree.h"
#include "core/diag.h"
#include "config.h"
#include "thresholds/rules_load.h"

#define CONFIG_MAX_INCLUDES 64
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Everything one load needs: the config being built and what was read. */
struct loader {
	struct config *cfg;
	struct diag_list *diags;
	size_t diags_before;
	struct cfg_tree **trees;
	size_t tree_count;
	char **files; /* in load order, for sorting messages */
	size_t file_count;
	dev_t *devs;
	ino_t *inos;
	size_t include_count; /* files read: their identities follow the main file's in devs/inos */
	size_t include_tries;
	struct rules_refs refs;
};

/* ---- config.c ---- */

/** NAME is a key of the main file (agent, sources, ..., rules). */
bool config_is_top_key(const char *name);

/** Appends the `rules:` list NODE of FILE to ld->cfg->rules, noting where action names are. */
void loader_decode_rules(struct loader *ld, const struct cfg_node *node, const char *file);

/* ---- config_include.c ---- */

/** Adds PATH to the files messages are sorted by (in load order). */
void loader_note_file(struct loader *ld, const char *path);

/**
 * Reads PATH after checking it is a regular file nobody else may write;
 * the tree is kept in LD until the load ends. Returns 0 with *ST and
 * *OUT, or -errno / -EINVAL after adding a message.
 */
int loader_read_file(struct loader *ld, const char *path, struct stat *st, struct cfg_tree **out);

/** Reads the files that `include:` NODE of the main file MAIN_PATH names and decodes their rules. */
void loader_decode_include(struct loader *ld, const struct cfg_node *node, const char *main_path);

/* ---- config_actions.c ---- */

/** Gives CFG the built-in "log" action and the default notify: binding. */
void config_actions_defaults(struct config *cfg);

/** Frees CFG's actions and notify: lists. */
void config_actions_free(struct config *cfg);

void loader_decode_actions(struct loader *ld, const struct cfg_node *node);

/** Decodes notify: NODE; run after actions:, which it names. */
void loader_decode_notify(struct loader *ld, const struct cfg_node *node);

/** The names of CFG's actions, in order, in one array for the caller to free (not the names). */
const char **config_action_names(const struct config *cfg);

/** Gives rules that bind actions for one severity only the notify: binding for the other. */
void config_fill_rule_actions(struct config *cfg);

#endif
