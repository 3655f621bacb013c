/* Prometheus text exposition of a sample (see prom_format.h). */
#include "prom_format.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/metric_dict.h"
#include "core/numfmt.h"
#include "core/xalloc.h"

/*
 * Every name, family, label and scale comes from the metric dictionary
 * (core/metric_dict.c); this file only writes the text exposition.
 */
static enum prom_type
prom_type_of(enum metric_kind kind)
{
	return kind == METRIC_KIND_COUNTER ? PROM_COUNTER : PROM_GAUGE;
}

void
prom_format_value(struct buf *out, double v)
{
	if (isnan(v)) {
		buf_adds(out, "NaN");
	} else if (isinf(v)) {
		buf_adds(out, v > 0 ? "+Inf" : "-Inf");
	} else {
		/* 15 digits: exact for every value a sensor gives, no 0.30000000000000004 */
		char tmp[NUMFMT_MAX];
		size_t n = numfmt_g15(tmp, v == 0 ? 0.0 : v);
		buf_add(out, tmp, n);
	}
}

void
prom_escape_label(struct buf *out, const char *s)
{
	for (const char *p = s; *p; p++) {
		switch (*p) {
		case '\\':
			buf_add(out, "\\\\", 2);
			break;
		case '"':
			buf_add(out, "\\\"", 2);
			break;
		case '\n':
			buf_add(out, "\\n", 2);
			break;
		default:
			buf_addc(out, *p);
		}
	}
}

static void
escape_help(struct buf *out, const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p == '\\') {
			buf_add(out, "\\\\", 2);
		} else if (*p == '\n') {
			buf_add(out, "\\n", 2);
		} else {
			buf_addc(out, *p);
		}
	}
}

static void
family_header(struct buf *out, const char *family, const char *help, enum prom_type type)
{
	buf_addf(out, "# HELP %s ", family);
	escape_help(out, help);
	buf_addf(out, "\n# TYPE %s %s\n", family, type == PROM_COUNTER ? "counter" : "gauge");
}

struct entry {
	struct metric_series ser;
	double value;
	size_t order; /* position in the sample: keeps the sort stable */
};

/* Compares digit runs by number, so cpu="2" sorts before cpu="10". */
static int
natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			while (*a == '0') {
				a++;
			}
			while (*b == '0') {
				b++;
			}
			size_t na = 0, nb = 0;
			while (isdigit((unsigned char)a[na])) {
				na++;
			}
			while (isdigit((unsigned char)b[nb])) {
				nb++;
			}
			if (na != nb) {
				return na < nb ? -1 : 1;
			}
			int c = strncmp(a, b, na);
			if (c != 0) {
				return c;
			}
			a += na;
			b += nb;
			continue;
		}
		if (*a != *b) {
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		}
		a++;
		b++;
	}
	return *a ? 1 : (*b ? -1 : 0);
}

static int
same_series_cmp(const struct entry *x, const struct entry *y)
{
	int c = strcmp(x->ser.family, y->ser.family);
	if (c != 0) {
		return c;
	}
	/* the series without labels first (throttle_active before its reasons) */
	if (x->ser.label_count != y->ser.label_count) {
		return x->ser.label_count < y->ser.label_count ? -1 : 1;
	}
	for (size_t l = 0; l < x->ser.label_count; l++) {
		c = natural_cmp(x->ser.label_values[l], y->ser.label_values[l]);
		if (c != 0) {
			return c;
		}
	}
	return 0;
}

static int
entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = same_series_cmp(x, y);
	if (c != 0) {
		return c;
	}
	return x->order < y->order ? -1 : (x->order > y->order ? 1 : 0);
}

static void
label_pair(struct buf *out, bool first, const char *name, const char *value)
{
	buf_addf(out, "%s%s=\"", first ? "" : ",", name);
	prom_escape_label(out, value);
	buf_addc(out, '"');
}

static const char *
or_empty(const char *s)
{
	return s ? s : "";
}

/* The info families (core/metric_dict.h) that FACTS give, value 1. */
static void
info_families(struct buf *out, const struct metric_info_facts *facts)
{
	size_t n;
	const struct metric_info_def *info = metric_dict_info(&n);
	for (size_t i = 0; i < n; i++) {
		const struct metric_info_def *d = &info[i];
		if (!metric_info_present(d, facts)) {
			continue;
		}
		family_header(out, d->family, d->help, PROM_GAUGE);
		buf_adds(out, d->family);
		buf_addc(out, '{');
		for (size_t l = 0; l < d->label_count; l++) {
			label_pair(out, l == 0, d->labels[l].name, metric_info_fact(facts, d->labels[l].fact));
		}
		buf_adds(out, "} 1\n");
	}
}

void
prom_format_sample(struct buf *out, const struct sample *s, const struct metric_info_facts *info,
		   struct metric_dict_cache *dict)
{
	const struct metric_set *set = &s->metrics;
	const struct metric_def *const *defs = metric_dict_classify(dict, set);
	struct entry *entries = NULL;
	size_t n = 0;
	if (set->count > 0) {
		entries = xrealloc(NULL, set->count, sizeof(*entries));
	}
	for (size_t i = 0; i < set->count; i++) {
		struct entry *e = &entries[n];
		if (!metric_dict_describe(defs[i], set->items[i].name, &e->ser)) {
			continue;
		}
		e->value = set->items[i].value * e->ser.scale;
		e->order = i;
		n++;
	}
	if (n > 1) {
		qsort(entries, n, sizeof(*entries), entry_cmp);
	}
	const char *family = "";
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = &entries[i];
		if (i > 0 && same_series_cmp(e, &entries[i - 1]) == 0) {
			continue; /* the first metric of a series wins */
		}
		if (strcmp(e->ser.family, family) != 0) {
			family_header(out, e->ser.family, e->ser.help, prom_type_of(e->ser.kind));
			family = e->ser.family;
		}
		buf_adds(out, e->ser.family);
		if (e->ser.label_count > 0) {
			buf_addc(out, '{');
			for (size_t l = 0; l < e->ser.label_count; l++) {
				label_pair(out, l == 0, e->ser.label_names[l], e->ser.label_values[l]);
			}
			buf_addc(out, '}');
		}
		buf_addc(out, ' ');
		prom_format_value(out, e->value);
		buf_addc(out, '\n');
	}
	free(entries);

	struct metric_info_facts facts = *info;
	facts.power_mode = s->power_mode;
	info_families(out, &facts);
	if (s->seq > 0) {
		family_header(out, "tegrawatch_sample_timestamp_seconds",
			      "Time of the latest sample in seconds since the epoch (a replay's recorded time).",
			      PROM_GAUGE);
		buf_adds(out, "tegrawatch_sample_timestamp_seconds ");
		prom_format_value(out, (double)s->time_ms / 1000.0);
		buf_addc(out, '\n');
	}
}

static void
one_value(struct buf *out, const char *family, const char *help, enum prom_type type, double v)
{
	if (v < 0 || isnan(v)) {
		return;
	}
	family_header(out, family, help, type);
	buf_adds(out, family);
	buf_addc(out, ' ');
	prom_format_value(out, v);
	buf_addc(out, '\n');
}

void
prom_format_process(struct buf *out, const struct prom_process *p)
{
	one_value(out, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", PROM_COUNTER,
		  p->cpu_seconds);
	one_value(out, "process_max_fds", "Maximum number of open file descriptors.", PROM_GAUGE, p->max_fds);
	one_value(out, "process_open_fds", "Number of open file descriptors.", PROM_GAUGE, p->open_fds);
	one_value(out, "process_resident_memory_bytes", "Resident memory size in bytes.", PROM_GAUGE,
		  p->resident_bytes);
	one_value(out, "process_start_time_seconds", "Start time of the process since the epoch in seconds.",
		  PROM_GAUGE, p->start_time_seconds);
	one_value(out, "process_virtual_memory_bytes", "Virtual memory size in bytes.", PROM_GAUGE, p->virtual_bytes);
}

void
prom_format_alerts_head(struct buf *out)
{
	buf_adds(out, "# HELP tegrawatch_alerts One series per alert pending or firing now, as Prometheus's ALERTS.\n"
		      "# TYPE tegrawatch_alerts gauge\n");
}

void
prom_format_alert(struct buf *out, const struct prom_alert *a)
{
	buf_adds(out, "tegrawatch_alerts{");
	label_pair(out, true, "alertname", or_empty(a->alertname));
	label_pair(out, false, "alertstate", a->pending ? "pending" : "firing");
	label_pair(out, false, "severity", or_empty(a->severity));
	label_pair(out, false, "metric", or_empty(a->metric));
	buf_adds(out, "} 1\n");
}
