/*
 * Template fields and rendering. Alert texts are small and rendered only
 * when a transition happens, so this favours clarity over speed.
 */
#include "template.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/metric_dict.h"
#include "core/sample_json.h"

static const struct {
	const char *name;
	enum template_field_kind kind;
} fields[] = {
	{"metric", TEMPLATE_METRIC},         {"value", TEMPLATE_VALUE},
	{"threshold", TEMPLATE_THRESHOLD},   {"board", TEMPLATE_BOARD},
	{"severity", TEMPLATE_SEVERITY},     {"rule", TEMPLATE_RULE},
	{"power_mode", TEMPLATE_POWER_MODE}, {"transition", TEMPLATE_TRANSITION},
	{"throttle", TEMPLATE_THROTTLE},     {"expected_power_mode", TEMPLATE_EXPECTED_POWER_MODE},
	{"oom_killed", TEMPLATE_OOM_KILLED},
};

static bool
is_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

size_t
template_field_parse(const char *p, struct template_field *f)
{
	const char *start = p;
	const char *name;
	size_t len = 0;

	if (p[0] != '{' || p[1] != '{') {
		return 0;
	}
	p += 2;
	while (*p == ' ') {
		p++;
	}
	name = p;
	while (is_key_char(*p) || *p == '.') {
		p++;
	}
	len = (size_t)(p - name);
	while (*p == ' ') {
		p++;
	}
	if (p[0] != '}' || p[1] != '}' || len == 0) {
		return 0;
	}
	p += 2;

	/* labels.KEY: the rule's labels; metric.LABEL: the metric's own ("process.inference.up": name) */
	size_t prefix = len > 7 && strncmp(name, "labels.", 7) == 0   ? 7
			: len > 7 && strncmp(name, "metric.", 7) == 0 ? 7
								      : 0;
	if (prefix) {
		for (size_t i = prefix; i < len; i++) {
			if (!is_key_char(name[i])) {
				return 0;
			}
		}
		f->kind = name[0] == 'l' ? TEMPLATE_LABEL : TEMPLATE_METRIC_LABEL;
		f->key = name + prefix;
		f->key_len = len - prefix;
		return (size_t)(p - start);
	}
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (strlen(fields[i].name) == len && strncmp(fields[i].name, name, len) == 0) {
			f->kind = fields[i].kind;
			f->key = NULL;
			f->key_len = 0;
			return (size_t)(p - start);
		}
	}
	return 0;
}

void
template_format_number(double v, char *buf, size_t size)
{
	int n;

	if (isnan(v)) {
		snprintf(buf, size, "n/a");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, size, v > 0 ? "inf" : "-inf");
		return;
	}
	if (fabs(v) >= 1e15) {
		snprintf(buf, size, "%.6g", v);
		return;
	}
	n = snprintf(buf, size, "%.3f", v);
	if (n < 0 || (size_t)n >= size) {
		return;
	}
	/* "96.500" -> "96.5", "95.000" -> "95" */
	while (n > 0 && buf[n - 1] == '0') {
		buf[--n] = '\0';
	}
	if (n > 0 && buf[n - 1] == '.') {
		buf[--n] = '\0';
	}
	if (strcmp(buf, "-0") == 0) {
		snprintf(buf, size, "0");
	}
}

struct out {
	char *buf;
	size_t size;
	size_t len;
	bool full;
};

static void
put(struct out *o, const char *s, size_t n)
{
	if (o->full) {
		return;
	}
	if (n > o->size - 1 - o->len) {
		n = o->size - 1 - o->len;
		/* do not leave half a UTF-8 character behind */
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) {
			n--;
		}
		o->full = true;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void
puts_str(struct out *o, const char *s)
{
	put(o, s ? s : "", s ? strlen(s) : 0);
}

/*
 * The label F names of METRIC's series as /metrics writes it: the
 * placeholder's text, or the real text a source said for it
 * (core/metric_attrs.h: a process's name as written, a mount point's
 * path); "" when the series has no such label.
 */
static void
put_metric_label(struct out *o, const struct template_field *f, const char *metric)
{
	struct metric_series s;
	if (!metric || !metric_dict_series(metric, &s)) {
		return;
	}
	for (size_t i = 0; i < s.label_count; i++) {
		if (strlen(s.label_names[i]) == f->key_len && strncmp(s.label_names[i], f->key, f->key_len) == 0) {
			puts_str(o, s.label_values[i]);
			return;
		}
	}
}

/* A timestamp (unit "unix s": when the previous boot was last seen) reads as a time, not as 1764345600. */
static bool
is_timestamp(const char *metric, double v)
{
	const struct metric_def *d = metric ? metric_dict_find(metric) : NULL;
	return d && strcmp(d->unit, "unix s") == 0 && isfinite(v) && v >= 0 && v < 1e13;
}

static void
put_field(struct out *o, const struct template_field *f, const struct template_ctx *ctx)
{
	char num[48];

	switch (f->kind) {
	case TEMPLATE_METRIC:
		puts_str(o, ctx->metric);
		break;
	case TEMPLATE_VALUE:
		if (isnan(ctx->value) && metric_dict_absent_words(ctx->metric)) {
			puts_str(o, metric_dict_absent_words(ctx->metric));
			break;
		}
		if (is_timestamp(ctx->metric, ctx->value)) {
			rfc3339_utc((int64_t)(ctx->value * 1000.0), num, sizeof(num));
		} else {
			template_format_number(ctx->value, num, sizeof(num));
		}
		puts_str(o, num);
		break;
	case TEMPLATE_THRESHOLD:
		template_format_number(ctx->threshold, num, sizeof(num));
		puts_str(o, num);
		break;
	case TEMPLATE_BOARD:
		puts_str(o, ctx->board);
		break;
	case TEMPLATE_SEVERITY:
		puts_str(o, ctx->severity);
		break;
	case TEMPLATE_RULE:
		puts_str(o, ctx->rule);
		break;
	case TEMPLATE_POWER_MODE:
		puts_str(o, ctx->power_mode);
		break;
	case TEMPLATE_TRANSITION:
		puts_str(o, ctx->transition);
		break;
	case TEMPLATE_THROTTLE:
		puts_str(o, ctx->throttle);
		break;
	case TEMPLATE_OOM_KILLED:
		puts_str(o, ctx->oom_killed && ctx->oom_killed[0] ? ctx->oom_killed : "a process");
		break;
	case TEMPLATE_EXPECTED_POWER_MODE:
		puts_str(o, ctx->expected_power_mode);
		break;
	case TEMPLATE_METRIC_LABEL:
		put_metric_label(o, f, ctx->metric);
		break;
	case TEMPLATE_LABEL:
		for (size_t i = 0; i < ctx->label_count; i++) {
			const char *k = ctx->labels[i].key;
			if (k && f->key && strlen(k) == f->key_len && strncmp(k, f->key, f->key_len) == 0) {
				puts_str(o, ctx->labels[i].value);
				break;
			}
		}
		break;
	}
}

void
template_render(const char *tmpl, const struct template_ctx *ctx, char *out, size_t size)
{
	struct out o = {.buf = out, .size = size, .len = 0, .full = false};
	const char *p = tmpl ? tmpl : "";

	out[0] = '\0';
	while (*p && !o.full) {
		const char *open = strstr(p, "{{");
		struct template_field f;
		size_t used;

		if (!open) {
			puts_str(&o, p);
			break;
		}
		put(&o, p, (size_t)(open - p));
		used = template_field_parse(open, &f);
		if (used == 0) {
			/* not a field: keep the braces as written and go on */
			put(&o, open, 2);
			p = open + 2;
			continue;
		}
		put_field(&o, &f, ctx);
		p = open + used;
	}
}
