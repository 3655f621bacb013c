/*
 * OTLP metrics (opentelemetry-proto, metrics/v1): one ResourceMetrics for
 * the board, one ScopeMetrics (tegrawatch), one Metric per family with a
 * data point per series and sample.
 *
 *   ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
 *   ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; }
 *   Resource        { repeated KeyValue attributes = 1; }
 *   ScopeMetrics    { InstrumentationScope scope = 1; repeated Metric metrics = 2; }
 *   InstrumentationScope { string name = 1; string version = 2; }
 *   Metric          { string name = 1; string description = 2; string unit = 3; Gauge gauge = 5; Sum sum = 7; }
 *   Gauge           { repeated NumberDataPoint data_points = 1; }
 *   Sum             { repeated NumberDataPoint data_points = 1; AggregationTemporality aggregation_temporality = 2;
 *                     bool is_monotonic = 3; }            (CUMULATIVE = 2)
 *   NumberDataPoint { repeated KeyValue attributes = 7; fixed64 start_time_unix_nano = 2;
 *                     fixed64 time_unix_nano = 3; double as_double = 4; }
 *   KeyValue        { string key = 1; AnyValue value = 2; }   AnyValue { string string_value = 1; }
 *
 * Counters are monotonic cumulative sums from the agent's start; the rest
 * gauges. Units are UCUM (Cel, Hz, W, By, 1...). The resource is the board:
 * service.*, host.*, os.type, device.model.name and the configured labels.
 */
#include "encode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "core/text.h"
#include "core/xalloc.h"
#include "pb.h"

#define NS_PER_MS 1000000ull
#define CUMULATIVE 2

struct otlp_encoder {
	struct fleet_encoder base;
	struct buf resource; /* the Resource message's body */
	char *version;
	uint64_t start_ns;
	struct series **sorted; /* the batch's series by family */
	size_t sorted_cap;
};

/* Prometheus unit suffixes and their UCUM units, as a collector translates them back. */
static const struct {
	const char *suffix, *unit;
} units[] = {
	{"_celsius", "Cel"}, {"_ratio", "1"},   {"_hertz", "Hz"}, {"_bytes", "By"},  {"_watts", "W"},
	{"_volts", "V"},     {"_amperes", "A"}, {"_joules", "J"}, {"_seconds", "s"},
};

static bool
strip_suffix(char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	if (n > k && text_ends(s, n, suffix, k)) {
		s[n - k] = '\0';
		return true;
	}
	return false;
}

void
otlp_name_unit(const char *family, bool counter, char *name, const char **unit)
{
	snprintf(name, FLEET_FAMILY_MAX, "%s", family);
	if (counter) {
		strip_suffix(name, "_total");
	}
	*unit = "";
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strip_suffix(name, units[i].suffix)) {
			*unit = units[i].unit;
			return;
		}
	}
}

static void
string_attr(struct buf *out, unsigned field, const char *key, const char *value)
{
	size_t kv = pb_open(out, field);
	pb_string(out, 1, key);
	size_t any = pb_open(out, 2);
	pb_string(out, 1, value);
	pb_close(out, any);
	pb_close(out, kv);
}

static int
family_cmp(const void *a, const void *b)
{
	const struct series *x = *(struct series *const *)a, *y = *(struct series *const *)b;
	int c = strcmp(x->s.family, y->s.family);
	return c ? c : (x->order < y->order ? -1 : x->order > y->order);
}

/* One Metric: the family of FIRST, with the points of its N series. */
static void
write_metric(const struct otlp_encoder *e, struct series *const *group, size_t n, struct buf *out)
{
	const struct fleet_series *fs = &group[0]->s;
	char name[FLEET_FAMILY_MAX];
	const char *unit;
	otlp_name_unit(fs->family, fs->counter, name, &unit);
	size_t metric = pb_open(out, 2);
	pb_string(out, 1, name);
	if (fs->help && fs->help[0]) {
		pb_string(out, 2, fs->help);
	}
	if (unit[0]) {
		pb_string(out, 3, unit);
	}
	size_t data = pb_open(out, fs->counter ? 7 : 5);
	for (size_t i = 0; i < n; i++) {
		struct series *s = group[i];
		if (!s->cached.len) {
			for (size_t l = 0; l < s->s.label_count; l++) {
				string_attr(&s->cached, 7, s->s.label_names[l], s->s.label_values[l]);
			}
		}
		for (size_t p = 0; p < s->npoints; p++) {
			size_t dp = pb_open(out, 1);
			buf_add(out, s->cached.buf, s->cached.len);
			if (fs->counter) {
				pb_fixed64(out, 2, e->start_ns);
			}
			pb_fixed64(out, 3, (uint64_t)s->ts_ms[p] * NS_PER_MS);
			pb_double(out, 4, s->values[p]);
			pb_close(out, dp);
		}
	}
	if (fs->counter) {
		pb_uint(out, 2, CUMULATIVE);
		pb_uint(out, 3, 1);
	}
	pb_close(out, data);
	pb_close(out, metric);
}

static void
otlp_write(struct fleet_encoder *base, struct buf *out)
{
	struct otlp_encoder *e = (struct otlp_encoder *)base;
	const struct series_table *t = &base->series;
	if (t->batch_count > e->sorted_cap) {
		e->sorted_cap = t->batch_count;
		e->sorted = xrealloc(e->sorted, e->sorted_cap, sizeof(*e->sorted));
	}
	memcpy(e->sorted, t->batch, t->batch_count * sizeof(*e->sorted));
	qsort(e->sorted, t->batch_count, sizeof(*e->sorted), family_cmp);

	size_t rm = pb_open(out, 1);
	size_t res = pb_open(out, 1);
	buf_add(out, e->resource.buf, e->resource.len);
	pb_close(out, res);
	size_t sm = pb_open(out, 2);
	size_t scope = pb_open(out, 1);
	pb_string(out, 1, "tegrawatch");
	pb_string(out, 2, e->version);
	pb_close(out, scope);
	for (size_t i = 0; i < t->batch_count;) {
		size_t j = i + 1;
		while (j < t->batch_count && strcmp(e->sorted[j]->s.family, e->sorted[i]->s.family) == 0) {
			j++;
		}
		write_metric(e, &e->sorted[i], j - i, out);
		i = j;
	}
	pb_close(out, sm);
	pb_close(out, rm);
}

static void
otlp_add_record(struct fleet_encoder *base, const struct sample_record_reader *r)
{
	/* the fixed info families are the resource's attributes (otlp_encoder_create) */
	const struct metric_info_facts facts = {.power_mode = r->power_mode};
	series_table_add_sample_info(&base->series, &facts, r->time_ms);
}

static void
otlp_destroy(struct fleet_encoder *base)
{
	struct otlp_encoder *e = (struct otlp_encoder *)base;
	series_table_free(&base->series);
	buf_free(&e->resource);
	free(e->version);
	free(e->sorted);
	free(e);
}

static const struct fleet_encoder_ops otlp_ops = {
	.add_record = otlp_add_record,
	.write = otlp_write,
	.destroy = otlp_destroy,
};

/* host.arch in the semantic conventions' words. */
static const char *
host_arch(const char *machine)
{
	static const struct {
		const char *uname, *arch;
	} arches[] = {{"aarch64", "arm64"}, {"arm64", "arm64"}, {"x86_64", "amd64"}, {"armv7l", "arm32"}};
	for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++) {
		if (strcmp(machine, arches[i].uname) == 0) {
			return arches[i].arch;
		}
	}
	return machine;
}

static void
attr_if(struct buf *out, const char *key, const char *value)
{
	if (value && value[0]) {
		string_attr(out, 1, key, value);
	}
}

struct fleet_encoder *
otlp_encoder_create(const struct fleet_config *cfg, const struct fleet_info *info, int64_t start_ms)
{
	struct otlp_encoder *e = xcalloc(1, sizeof(*e));
	e->base.ops = &otlp_ops;
	series_table_init(&e->base.series, info->map);
	e->version = xstrdup(info->agent.version ? info->agent.version : "");
	e->start_ns = (uint64_t)start_ms * NS_PER_MS;
	buf_init(&e->resource);
	struct utsname u;
	const struct board_identity *id = &info->agent.identity;
	attr_if(&e->resource, "service.name", "tegrawatch");
	attr_if(&e->resource, "service.version", e->version);
	attr_if(&e->resource, "service.instance.id", info->agent.device_id);
	attr_if(&e->resource, "host.name", info->agent.board_name);
	attr_if(&e->resource, "host.id", info->agent.device_id);
	attr_if(&e->resource, "host.arch", uname(&u) == 0 ? host_arch(u.machine) : "");
	attr_if(&e->resource, "os.type", "linux");
	attr_if(&e->resource, "device.model.name", id->model);
	attr_if(&e->resource, "tegrawatch.soc", id->soc);
	attr_if(&e->resource, "tegrawatch.module", id->module);
	attr_if(&e->resource, "tegrawatch.l4t", id->l4t);
	attr_if(&e->resource, "tegrawatch.jetpack", id->jetpack);
	for (size_t i = 0; i < cfg->label_count; i++) {
		attr_if(&e->resource, cfg->label_names[i], cfg->label_values[i]);
	}
	return &e->base;
}
