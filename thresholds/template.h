/*
 * Alert text templates: "{{metric}} at {{value}} C" with a fixed set of
 * fields. Pure: parsing and rendering into caller buffers, no allocation.
 */
#ifndef TEGRAWATCH_TEMPLATE_H
#define TEGRAWATCH_TEMPLATE_H

#include <stddef.h>

#include "rules.h"

enum template_field_kind {
	TEMPLATE_METRIC,
	TEMPLATE_VALUE,
	TEMPLATE_THRESHOLD,
	TEMPLATE_BOARD,
	TEMPLATE_SEVERITY,
	TEMPLATE_RULE,
	TEMPLATE_POWER_MODE,
	TEMPLATE_TRANSITION,
	TEMPLATE_THROTTLE,
	TEMPLATE_EXPECTED_POWER_MODE, /* agent.expected_power_mode, resolved */
	TEMPLATE_OOM_KILLED,   /* the processes the OOM killer killed in the sample, as the kernel log names them */
	TEMPLATE_LABEL,        /* labels.KEY */
	TEMPLATE_METRIC_LABEL, /* metric.LABEL: a label of the metric's series, as /metrics writes it */
};

struct template_field {
	enum template_field_kind kind;
	const char *key; /* TEMPLATE_LABEL, TEMPLATE_METRIC_LABEL: the KEY, not NUL-terminated */
	size_t key_len;
};

/**
 * Parses the field that starts at P (which points at "{{"); spaces inside
 * the braces are allowed ("{{ value }}"). Returns the length of the whole
 * "{{...}}" and fills *F, or 0 when it is not a known, closed field.
 */
size_t template_field_parse(const char *p, struct template_field *f);

struct template_ctx {
	const char *metric;
	double value;     /* NAN: the absent words (metric_dict_absent_words) or "n/a"; unix s: a UTC time */
	double threshold; /* NAN prints "n/a" */
	const char *board;
	const char *severity;
	const char *rule;
	const char *power_mode;
	const char *transition;
	const char *throttle;
	const char *expected_power_mode;
	const char *oom_killed; /* "python3 (pid 4242)"; NULL or "": "a process" (the log did not say) */
	const struct alert_label *labels;
	size_t label_count;
};

/** Formats V briefly, as {{value}} does: "96.5", "95", "0.125", "n/a" for NAN (at most 3 decimals). */
void template_format_number(double v, char *buf, size_t size);

/**
 * Renders TMPL into OUT (SIZE > 0, always NUL-terminated; cut at a UTF-8
 * character boundary when it does not fit). An unknown or unclosed field
 * is copied as written; an unknown label renders as "".
 */
void template_render(const char *tmpl, const struct template_ctx *ctx, char *out, size_t size);

#endif
