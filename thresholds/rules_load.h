/*
 * `rules:` lists (cfg_tree nodes) -> struct rule, in two steps:
 * rules_decode_refs() checks everything one rule can tell by itself (keys,
 * types, ranges, metric names against the catalogue, threshold
 * expressions, warning/critical order, templates); rules_validate() checks
 * what needs every file at once (duplicate names, action names). No libyaml
 * here: only the located tree.
 */
#ifndef TEGRAWATCH_RULES_LOAD_H
#define TEGRAWATCH_RULES_LOAD_H

#include <stddef.h>

#include "core/cfg_tree.h"
#include "core/diag.h"
#include "rules.h"

/* The summary of a rule that has none. */
#define RULE_DEFAULT_SUMMARY "{{rule}}: {{metric}} is {{value}} (threshold {{threshold}})"

/* Where each action name of each rule was written, for rules_validate(). */
struct rule_action_ref {
	size_t rule; /* index in the rule_set */
	enum severity severity;
	size_t index; /* in rule->actions[severity] */
	char *file;
	int line, column;
};

struct rules_refs {
	struct rule_action_ref *items;
	size_t count;
};

/** Frees the references (not the struct itself); NULL is a no-op. */
void rules_refs_free(struct rules_refs *refs);

/**
 * Decodes the `rules:` sequence SEQ of FILE (the name used in messages)
 * and appends the rules to OUT, so included files can add theirs. Every
 * mistake is added to DIAGS; a rule with mistakes may still be appended
 * (so later checks see its name), and then the whole load must be refused.
 * Where action names were written goes into REFS (may be NULL), for
 * rules_validate(). Returns 0, or -EINVAL when anything was reported.
 */
int rules_decode_refs(const struct cfg_node *seq, const char *file, struct rule_set *out, struct rules_refs *refs,
		      struct diag_list *diags);

/**
 * Checks SET as a whole: rule names unique (messages point at the later
 * one and name the first), and every action name bound by a rule (located
 * through REFS, may be NULL) among the ACTION_COUNT names in ACTIONS.
 * Returns 0, or -EINVAL after adding messages to DIAGS.
 */
int rules_validate(const struct rule_set *set, const struct rules_refs *refs, const char *const *actions,
		   size_t action_count, struct diag_list *diags);

#endif
