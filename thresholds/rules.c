/*
 * Rule helpers: names, freeing, metric globs and template checks. The
 * decoding of YAML into rules lives in rules_load.c; this file is pure.
 */
#include "rules.h"

#include <stdlib.h>
#include <string.h>

#include "template.h"

static void
free_strv(char **v, size_t n)
{
	if (!v) {
		return;
	}
	for (size_t i = 0; i < n; i++) {
		free(v[i]);
	}
	free(v);
}

static void
rule_finish(struct rule *r)
{
	free(r->name);
	free(r->metric);
	for (size_t i = 0; i < r->mode_count && i < RULE_MODES_MAX; i++) {
		free(r->modes[i]);
	}
	for (size_t i = 0; i < r->label_count; i++) {
		free(r->labels[i].key);
		free(r->labels[i].value);
	}
	free(r->labels);
	free(r->summary);
	free(r->description);
	for (int s = 0; s < SEVERITY_COUNT; s++) {
		free_strv(r->actions[s], r->action_count[s]);
	}
	free(r->file);
}

void
rule_set_free(struct rule_set *set)
{
	if (!set) {
		return;
	}
	for (size_t i = 0; i < set->count; i++) {
		rule_finish(&set->rules[i]);
	}
	free(set->rules);
	set->rules = NULL;
	set->count = 0;
}

bool
rule_template_check(const char *tmpl, size_t *bad_offset)
{
	const char *p = tmpl;

	while ((p = strstr(p, "{{")) != NULL) {
		struct template_field f;
		size_t used = template_field_parse(p, &f);

		if (used == 0) {
			if (bad_offset) {
				*bad_offset = (size_t)(p - tmpl);
			}
			return false;
		}
		p += used;
	}
	return true;
}

bool
rule_mode_is_id(const char *mode)
{
	if (!*mode) {
		return false;
	}
	for (; *mode; mode++) {
		if (*mode < '0' || *mode > '9') {
			return false;
		}
	}
	return true;
}
