/*
 * Fuzz target: YAML bytes -> config_load_buffer() (cfg_tree, then the
 * decoders of agent/config.c and thresholds/rules_load.c, then
 * rules_validate()). No file is read and no environment applied. A
 * refused input must come with messages located in the input; an accepted
 * one must satisfy everything the engine and the actions rely on. Crashes,
 * leaks and broken invariants all abort.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"
#include "core/diag.h"
#include "thresholds/rules.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_threshold(const struct threshold *th)
{
	if (!th->set) {
		return;
	}
	CHECK(isfinite(th->offset) && isfinite(th->scale) && th->scale > 0);
	CHECK(!th->has_fallback || isfinite(th->fallback));
	CHECK(th->ref >= REF_NONE && th->ref <= REF_HW_MAX);
}

static void
check_rule(const struct config *cfg, const struct rule *r)
{
	CHECK(r->name && r->name[0] && r->metric && r->metric[0]);
	CHECK(r->summary && r->summary[0]);
	CHECK(rule_template_check(r->summary, NULL));
	CHECK(!r->description || rule_template_check(r->description, NULL));
	CHECK(r->file && strcmp(r->file, "fuzz.yaml") == 0 && r->line >= 1);
	bool threshold_op = r->op == RULE_ABOVE || r->op == RULE_BELOW;
	CHECK(threshold_op || r->op == RULE_CHANGES || r->op == RULE_INCREASES);
	if (threshold_op) {
		CHECK(r->level[SEVERITY_WARNING].set || r->level[SEVERITY_CRITICAL].set);
	} else {
		CHECK(!r->level[SEVERITY_WARNING].set && !r->level[SEVERITY_CRITICAL].set);
		CHECK(r->event_severity == SEVERITY_WARNING || r->event_severity == SEVERITY_CRITICAL);
	}
	check_threshold(&r->level[SEVERITY_WARNING]);
	check_threshold(&r->level[SEVERITY_CRITICAL]);
	CHECK(isfinite(r->clear) && (r->clear_is_value || r->clear >= 0));
	CHECK(r->for_ms >= 0 && r->clear_for_ms >= 0 && r->absent_for_ms >= 0 && r->repeat_ms >= 0);
	CHECK(r->absent_severity == SEVERITY_WARNING || r->absent_severity == SEVERITY_CRITICAL);
	CHECK(r->mode_count <= RULE_MODES_MAX);
	for (size_t i = 0; i < r->mode_count; i++) {
		CHECK(r->modes[i] && r->modes[i][0]);
	}
	for (size_t i = 0; i < r->label_count; i++) {
		CHECK(r->labels[i].key && r->labels[i].value);
	}
	for (int s = SEVERITY_WARNING; s < SEVERITY_COUNT; s++) {
		if (!r->has_actions) {
			CHECK(r->actions[s] == NULL && r->action_count[s] == 0);
			continue;
		}
		/* a rule with actions has a list for every severity, and each name exists */
		CHECK(r->actions[s] != NULL);
		for (size_t i = 0; i < r->action_count[s]; i++) {
			CHECK(config_find_action(cfg, r->actions[s][i]) != NULL);
		}
		CHECK(r->actions[s][r->action_count[s]] == NULL);
	}
	(void)metric_glob_match(r->metric, "temp.gpu_c");
}

static void
check_config(const struct config *cfg)
{
	CHECK(cfg->path && strcmp(cfg->path, "fuzz.yaml") == 0);
	CHECK(cfg->interval_ms >= 10 && cfg->interval_ms <= 3600 * 1000);
	CHECK(cfg->root && cfg->state_file && cfg->tegrastats_program && cfg->tegrastats_program[0]);
	CHECK(cfg->board_name && cfg->board_name[0]);
	CHECK(cfg->action_count >= 1 && strcmp(cfg->actions[0].name, "log") == 0);
	for (size_t i = 0; i < cfg->action_count; i++) {
		const struct action_def *a = &cfg->actions[i];
		CHECK(config_find_action(cfg, a->name) == a);
		if (a->type == ACTION_EXEC) {
			CHECK(a->argv && a->argc >= 1 && a->argv[0][0] && a->argv[a->argc] == NULL);
			CHECK(a->timeout_ms >= 100);
		}
	}
	for (int s = SEVERITY_WARNING; s < SEVERITY_COUNT; s++) {
		for (size_t i = 0; i < cfg->notify_count[s]; i++) {
			CHECK(config_find_action(cfg, cfg->notify[s][i]) != NULL);
		}
	}
	for (size_t i = 0; i < cfg->rules.count; i++) {
		check_rule(cfg, &cfg->rules.rules[i]);
		for (size_t k = 0; k < i && cfg->rules.count < 64; k++) {
			CHECK(strcmp(cfg->rules.rules[i].name, cfg->rules.rules[k].name) != 0);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg = NULL;
	int ret = config_load_buffer("fuzz.yaml", (const char *)data, size, &cfg, &diags);
	if (ret == 0) {
		CHECK(diags.count == 0);
		CHECK(cfg != NULL);
		check_config(cfg);
		config_destroy(cfg);
	} else {
		CHECK(cfg == NULL);
		CHECK(diags.count > 0);
		for (size_t i = 0; i < diags.count; i++) {
			const struct diag *d = &diags.items[i];
			CHECK(strcmp(d->file, "fuzz.yaml") == 0);
			CHECK(d->msg[0] != '\0');
			CHECK(d->line >= 0 && d->column >= 0);
			/* one message, one line: user text is shown with control bytes replaced */
			CHECK(strchr(d->msg, '\n') == NULL);
			char line[1024];
			diag_format(d, line, sizeof(line));
		}
	}
	diag_list_free(&diags);
	return 0;
}
