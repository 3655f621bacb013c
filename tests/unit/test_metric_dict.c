/* The metric dictionary: the table's own rules, docs/metrics.md against it, lookups, the per-layout cache. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/board_info.h"
#include "core/metric_dict.h"
#include "core/metrics.h"
#include "core/text.h"
#include "helpers.h"

#define DOC FIXTURES_DIR "/../../docs/metrics.md"
#define MQTT_DOC FIXTURES_DIR "/../../docs/mqtt.md"
#define HTTP_DOC FIXTURES_DIR "/../../docs/http.md"
#define CELLS_MAX 8
#define SPANS_MAX 16 /* names in one cell */

static size_t
placeholders(const char *pattern)
{
	size_t n = 0;
	for (const char *p = pattern; *p; p++) {
		if (*p >= 'A' && *p <= 'Z' && (p == pattern || !(p[-1] >= 'A' && p[-1] <= 'Z'))) {
			n++;
		}
	}
	return n;
}

/* A name of PATTERN: N as "0", other placeholders as "x1". */
static void
instance(const char *pattern, char *out, size_t size)
{
	size_t n = 0;
	for (const char *p = pattern; *p && n + 3 < size;) {
		if (*p >= 'A' && *p <= 'Z') {
			bool digit = p[0] == 'N' && !(p[1] >= 'A' && p[1] <= 'Z');
			while (*p >= 'A' && *p <= 'Z') {
				p++;
			}
			n += (size_t)snprintf(out + n, size - n, "%s", digit ? "0" : "x1");
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
}

/* What every line of the table must hold, whoever adds it. */
static void
test_table_rules(void **state)
{
	(void)state;
	size_t count;
	const struct metric_def *t = metric_dict_table(&count);
	assert_true(count >= 100);
	for (size_t i = 0; i < count; i++) {
		const struct metric_def *d = &t[i];
		const char *p = d->pattern;
		if (!(p[0] >= 'a' && p[0] <= 'z') || strlen(p) >= METRIC_NAME_MAX) {
			fail_msg("%s: a pattern starts with a lower-case letter and fits a name", p);
		}
		for (const char *c = p; *c; c++) {
			bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
				  *c == '_' || *c == '.';
			if (!ok) {
				fail_msg("%s: '%c' is not a pattern character", p, *c);
			}
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(t[j].pattern, p) == 0) {
				fail_msg("%s is in the table twice", p);
			}
		}
		/* the pattern's own example name finds this line: nothing earlier shadows it */
		char name[METRIC_NAME_MAX];
		instance(p, name, sizeof(name));
		assert_true(metric_name_valid(name));
		if (metric_dict_find(name) != d) {
			fail_msg("%s (%s) is taken by an earlier line", name, p);
		}
		size_t ph = placeholders(p);
		size_t from_name = 0, labels = 0;
		for (size_t l = 0; l < METRIC_LABELS_MAX && d->labels[l].name; l++) {
			labels++;
			from_name += d->labels[l].value == NULL || strcmp(d->labels[l].value, METRIC_LABEL_ATTRS) == 0;
		}
		if (ph != from_name) {
			fail_msg("%s: %zu placeholders, %zu labels from the name", p, ph, from_name);
		}
		if (ph > 0 && !d->family) {
			fail_msg("%s: a pattern with placeholders needs a family", p);
		}
		struct metric_series s;
		assert_true(metric_dict_series(name, &s));
		assert_ptr_equal(s.def, d);
		assert_int_equal(s.label_count, labels);
		if (strncmp(s.family, "tegrawatch_", 11) != 0 || strspn(s.family, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
									 strlen(s.family)) {
			fail_msg("%s: family %s", p, s.family);
		}
		/* Prometheus' rule: a counter's family ends in _total, nothing else does */
		if ((d->kind == METRIC_KIND_COUNTER) != text_has_suffix(s.family, "_total")) {
			fail_msg("%s: family %s and its kind disagree", p, s.family);
		}
		if (!d->unit || !d->unit[0] || !d->base_unit || !d->base_unit[0] || !d->help || !d->help[0] ||
		    !(d->scale > 0)) {
			fail_msg("%s: unit, base unit, help and a positive scale are required", p);
		}
		if (d->ha.name) {
			bool has_s = strstr(d->ha.name, "%s") != NULL;
			/* exp10 divides (mW shown in W): the discovery template knows no other way; a binary sensor
			 * (a process running, a link up) is ON or OFF: a class, no unit; a count of things (OOM
			 * kills) may go without one */
			bool unit_ok = d->ha.binary ? !d->ha.unit && d->ha.device_class
						    : d->ha.unit != NULL || strcmp(d->unit, "count") == 0;
			if (has_s != (ph > 0) || !unit_ok || d->kind == METRIC_KIND_LIMIT || d->ha.exp10 > 0) {
				fail_msg("%s: Home Assistant entity %s", p, d->ha.name);
			}
		}
	}
}

static char *
trim(char *s)
{
	while (*s == ' ') {
		s++;
	}
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == ' ') {
		s[--n] = '\0';
	}
	return s;
}

/* Splits a table row "| a | b |" into its cells (in place). */
static size_t
cells_of(char *line, char **cells)
{
	size_t n = 0;
	char *p = line + 1;
	for (char *bar; (bar = strchr(p, '|')) != NULL && n < CELLS_MAX; p = bar + 1) {
		*bar = '\0';
		cells[n++] = trim(p);
	}
	return n;
}

/* The `code` spans of CELL, at most MAX, written over the cell. */
static size_t
spans_of(char *cell, char **out, size_t max)
{
	size_t n = 0;
	for (char *p = strchr(cell, '`'); p && n < max; p = strchr(p, '`')) {
		char *q = strchr(p + 1, '`');
		assert_non_null(q);
		*q = '\0';
		out[n++] = p + 1;
		p = q + 1;
	}
	return n;
}

static int
column(char **cells, size_t n, const char *title)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(cells[i], title) == 0) {
			return (int)i;
		}
	}
	return -1;
}

/* A row's unit cell against its names: one unit for all, or one each in order. */
static void
check_units(char *cell, const struct metric_def **defs, size_t n)
{
	char *units[SPANS_MAX];
	size_t k = 0;
	for (char *p = cell; p && k < SPANS_MAX;) {
		char *comma = strstr(p, ", ");
		if (comma) {
			*comma = '\0';
		}
		units[k++] = p;
		p = comma ? comma + 2 : NULL;
	}
	if (k != 1 && k != n) {
		fail_msg("%s: %zu units for %zu names", defs[0]->pattern, k, n);
	}
	for (size_t i = 0; i < n; i++) {
		const char *u = units[k == 1 ? 0 : i];
		if (strcmp(defs[i]->unit, u) != 0) {
			fail_msg("%s: docs/metrics.md says unit '%s', the table '%s'", defs[i]->pattern, u, defs[i]->unit);
		}
	}
}

/* "`tegrawatch_webhook_sent_total{action}` counter" against the line. */
static void
check_prometheus(char *cell, const struct metric_def *d)
{
	char *span[1];
	assert_int_equal(spans_of(cell, span, 1), 1);
	char want[128];
	size_t n = (size_t)snprintf(want, sizeof(want), "%s{", d->family);
	for (size_t l = 0; l < METRIC_LABELS_MAX && d->labels[l].name; l++) {
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%s%s", l ? "," : "", d->labels[l].name);
	}
	snprintf(want + n, sizeof(want) - n, "}");
	if (strcmp(span[0], want) != 0) {
		fail_msg("%s: docs/metrics.md says %s, the table %s", d->pattern, span[0], want);
	}
	const char *type = d->kind == METRIC_KIND_COUNTER ? "counter" : "gauge";
	if (!text_has_suffix(span[0] + strlen(span[0]) + 1, type)) {
		fail_msg("%s: docs/metrics.md does not call it a %s", d->pattern, type);
	}
}

/*
 * docs/metrics.md and the table hold the same patterns: every `name` in a
 * table's "name" column is a line of the table, every line is in such a
 * column, and where the docs give a unit or a Prometheus family, it is the
 * table's.
 */
static void
test_docs_match_table(void **state)
{
	(void)state;
	FILE *f = fopen(DOC, "r");
	if (!f) {
		fail_msg("%s: %s", DOC, strerror(errno));
	}
	size_t count;
	const struct metric_def *t = metric_dict_table(&count);
	bool *seen = calloc(count, sizeof(*seen));
	assert_non_null(seen);
	char line[4096], prev[4096] = "";
	int name_col = -1, unit_col = -1, prom_col = -1;
	bool in_table = false;
	size_t names = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] != '|') {
			in_table = false;
			prev[0] = '\0';
			continue;
		}
		if (strncmp(line, "|---", 4) == 0) {
			/* the line before was the header */
			char *cells[CELLS_MAX];
			size_t n = cells_of(prev, cells);
			name_col = column(cells, n, "name");
			unit_col = column(cells, n, "unit");
			prom_col = column(cells, n, "Prometheus");
			in_table = true;
			continue;
		}
		if (!in_table) {
			snprintf(prev, sizeof(prev), "%s", line);
			continue;
		}
		if (name_col < 0) {
			continue;
		}
		char *cells[CELLS_MAX];
		size_t n = cells_of(line, cells);
		assert_true((size_t)name_col < n);
		char *spans[SPANS_MAX];
		size_t k = spans_of(cells[name_col], spans, SPANS_MAX);
		if (k == SPANS_MAX) {
			fail_msg("docs/metrics.md: more than %d names in one cell", SPANS_MAX - 1);
		}
		const struct metric_def *defs[SPANS_MAX];
		for (size_t i = 0; i < k; i++) {
			defs[i] = metric_dict_by_pattern(spans[i]);
			if (!defs[i]) {
				fail_msg("docs/metrics.md names %s, the dictionary does not", spans[i]);
			}
			seen[defs[i] - t] = true;
			names++;
		}
		if (k > 0 && unit_col >= 0) {
			check_units(cells[unit_col], defs, k);
		}
		if (k == 1 && prom_col >= 0) {
			check_prometheus(cells[prom_col], defs[0]);
		}
	}
	fclose(f);
	assert_true(names >= 100);
	for (size_t i = 0; i < count; i++) {
		if (!seen[i]) {
			fail_msg("%s is in the dictionary, not in a name column of docs/metrics.md", t[i].pattern);
		}
	}
	free(seen);
}

/* docs/mqtt.md's table of what goes to the limits topic is the dictionary's limits, no more, no less. */
static void
test_mqtt_doc_limits(void **state)
{
	(void)state;
	FILE *f = fopen(MQTT_DOC, "r");
	if (!f) {
		fail_msg("%s: %s", MQTT_DOC, strerror(errno));
	}
	size_t count;
	const struct metric_def *t = metric_dict_table(&count);
	bool *seen = calloc(count, sizeof(*seen));
	assert_non_null(seen);
	char line[4096];
	bool section = false, table = false;
	size_t names = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "#", 1) == 0) {
			section = strcmp(line, "### `limits`") == 0;
			continue;
		}
		if (!section || line[0] != '|') {
			if (table) {
				break; /* the first table of the section only */
			}
			continue;
		}
		table = true;
		char *cells[CELLS_MAX];
		if (cells_of(line, cells) < 1 || strncmp(cells[0], "---", 3) == 0) {
			continue;
		}
		char *spans[SPANS_MAX];
		size_t k = spans_of(cells[0], spans, SPANS_MAX);
		if (k == SPANS_MAX) {
			fail_msg("docs/mqtt.md: more than %d names in one cell", SPANS_MAX - 1);
		}
		for (size_t i = 0; i < k; i++) {
			const struct metric_def *d = metric_dict_by_pattern(spans[i]);
			if (!d || d->kind != METRIC_KIND_LIMIT) {
				fail_msg("docs/mqtt.md lists %s as a limit, the dictionary does not", spans[i]);
			}
			seen[d - t] = true;
			names++;
		}
	}
	fclose(f);
	assert_true(names > 0);
	for (size_t i = 0; i < count; i++) {
		if (t[i].kind == METRIC_KIND_LIMIT && !seen[i]) {
			fail_msg("%s is a limit, docs/mqtt.md does not list it", t[i].pattern);
		}
	}
	free(seen);
}

static void
check_series(const char *name, const char *family, enum metric_kind kind, double scale, const char *label0,
	     const char *value0)
{
	struct metric_series s;
	assert_true(metric_dict_series(name, &s));
	assert_string_equal(s.family, family);
	assert_int_equal(s.kind, kind);
	assert_true(s.scale == scale);
	assert_int_equal(s.label_count, label0 ? 1 : 0);
	if (label0) {
		assert_string_equal(s.label_names[0], label0);
		assert_string_equal(s.label_values[0], value0);
	}
}

static void
test_series(void **state)
{
	(void)state;
	check_series("power.vdd_in.mw", "tegrawatch_power_watts", METRIC_KIND_GAUGE, 0.001, "rail", "vdd_in");
	check_series("temp.a_c_c", "tegrawatch_temperature_celsius", METRIC_KIND_GAUGE, 1, "sensor", "a_c");
	check_series("throttle.freq_cap", "tegrawatch_throttle_reason_active", METRIC_KIND_GAUGE, 1, "reason",
		     "freq_cap");
	check_series("gpu.max_freq_mhz", "tegrawatch_gpu_max_frequency_hertz", METRIC_KIND_LIMIT, 1e6, NULL, NULL);
	check_series("agent.memory_max_bytes", "tegrawatch_agent_memory_max_bytes", METRIC_KIND_LIMIT, 1, NULL, NULL);
	/* unknown names keep a family of their own */
	check_series("agent.new_thing_total", "tegrawatch_agent_new_thing_total", METRIC_KIND_COUNTER, 1, NULL, NULL);
	check_series("agent.new_gauge", "tegrawatch_agent_new_gauge", METRIC_KIND_GAUGE, 1, NULL, NULL);
	check_series("cpu.x.load_pct", "tegrawatch_cpu_x_load_pct", METRIC_KIND_GAUGE, 1, NULL, NULL);
	check_series("Odd-Name.x", "tegrawatch__dd__ame_x", METRIC_KIND_GAUGE, 1, NULL, NULL);
	struct metric_series s;
	assert_true(metric_dict_series("trip.tj.hot_c", &s));
	assert_string_equal(s.label_names[1], "type");
	assert_string_equal(s.label_values[1], "hot");
	assert_string_equal(s.base_unit, "Cel");
	assert_true(metric_dict_series("hwmon.nct7802_1.in0_mv", &s));
	assert_string_equal(s.label_values[0], "nct7802_1");
	assert_string_equal(s.label_values[1], "in0");
	/* no family, or one /metrics writes itself */
	assert_false(metric_dict_series("", &s));
	assert_false(metric_dict_series("board_info", &s));
	assert_false(metric_dict_series("alerts", &s));

	char buf[METRIC_NAME_MAX];
	const struct metric_def *rail = metric_dict_by_pattern("power.RAIL.mw");
	assert_non_null(rail);
	assert_true(metric_dict_capture(rail, "power.vdd_cpu_gpu_cv.mw", 0, buf, sizeof(buf)));
	assert_string_equal(buf, "vdd_cpu_gpu_cv");
	assert_false(metric_dict_capture(rail, "power.vdd_in.avg_mw", 0, buf, sizeof(buf)));
	assert_false(metric_dict_capture(rail, "power.vdd_in.mw", 1, buf, sizeof(buf)));
	assert_false(metric_dict_capture(rail, "power.vdd_in.mw", 0, buf, 4));
	assert_ptr_equal(metric_dict_find("cpu.11.load_pct"), metric_dict_by_pattern("cpu.N.load_pct"));
	assert_null(metric_dict_find("cpu.a.load_pct"));
	assert_null(metric_dict_find("temp.a.b_c"));
	assert_null(metric_dict_find(""));
}

/* Puts the first N of NAMES into SET, a new sample. */
static void
fill(struct metric_set *set, const char *const *names, size_t n)
{
	metric_set_clear(set);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(metric_set_put(set, names[i], (double)i), 0);
	}
}

/* The entries are looked up again only when the set's names changed. */
static void
test_cache_per_layout(void **state)
{
	(void)state;
	struct metric_set *a = calloc(1, sizeof(*a));
	struct metric_set *b = calloc(1, sizeof(*b));
	struct metric_dict_cache *c = calloc(1, sizeof(*c));
	assert_true(a && b && c);
	static const char *const names[] = {"temp.cpu_c", "power.vdd_in.mw", "foo.bar", "cpu.0.load_pct",
					    "gpu.freq_mhz"};
	static const char *const other[] = {"temp.cpu_c", "fan.0.rpm"};
	/* new names: their layout is known from the next sample on */
	fill(a, names, 4);
	assert_int_equal(a->layout, 0);
	const struct metric_def *const *d = metric_dict_classify(c, a);
	assert_int_equal(c->misses, 1);
	assert_ptr_equal(d[0], metric_dict_by_pattern("temp.SENSOR_c"));
	assert_ptr_equal(d[1], metric_dict_by_pattern("power.RAIL.mw"));
	assert_null(d[2]);
	assert_ptr_equal(d[3], metric_dict_by_pattern("cpu.N.load_pct"));
	fill(a, names, 4);
	assert_true(a->layout != 0);
	metric_dict_classify(c, a);
	assert_int_equal(c->misses, 2);
	/* the same names again, or fewer of them: nothing looked up */
	for (int round = 0; round < 3; round++) {
		fill(a, names, 4);
		metric_dict_classify(c, a);
	}
	fill(a, names, 2);
	d = metric_dict_classify(c, a);
	assert_int_equal(c->misses, 2);
	assert_ptr_equal(d[1], metric_dict_by_pattern("power.RAIL.mw"));
	/* after a shorter sample, the longer one is new again */
	fill(a, names, 4);
	metric_dict_classify(c, a);
	assert_int_equal(c->misses, 3);
	/* one name more */
	fill(a, names, 5);
	fill(a, names, 5);
	d = metric_dict_classify(c, a);
	assert_int_equal(c->misses, 4);
	assert_ptr_equal(d[4], metric_dict_by_pattern("gpu.freq_mhz"));
	/* a copy carries the names and their layout */
	memcpy(b, a, sizeof(*a));
	metric_dict_classify(c, b);
	assert_int_equal(c->misses, 4);
	/* another name in place of an old one */
	fill(a, other, 2);
	assert_int_equal(a->layout, 0);
	d = metric_dict_classify(c, a);
	assert_int_equal(c->misses, 5);
	assert_ptr_equal(d[1], metric_dict_by_pattern("fan.N.rpm"));
	fill(a, other, 2);
	assert_true(a->layout != 0 && a->layout != b->layout);
	/* the copy kept the old names and its number */
	d = metric_dict_classify(c, b);
	assert_int_equal(c->misses, 6);
	assert_ptr_equal(d[1], metric_dict_by_pattern("power.RAIL.mw"));
	/* removing and sorting move names */
	assert_true(metric_set_remove(b, "temp.cpu_c"));
	assert_int_equal(b->layout, 0);
	d = metric_dict_classify(c, b);
	assert_ptr_equal(d[0], metric_dict_by_pattern("power.RAIL.mw"));
	metric_set_sort(b);
	d = metric_dict_classify(c, b);
	assert_ptr_equal(d[0], metric_dict_by_pattern("cpu.N.load_pct"));
	/* a set never cleared is never taken from the cache */
	struct metric_set *e = calloc(1, sizeof(*e));
	assert_non_null(e);
	metric_set_put(e, "zzz", 1);
	size_t misses = c->misses;
	metric_dict_classify(c, e);
	d = metric_dict_classify(c, e);
	assert_int_equal(c->misses, misses + 2);
	assert_null(d[0]);
	/* two sets filled alike never share a number */
	fill(e, names, 5);
	fill(e, names, 5);
	fill(b, names, 5);
	fill(b, names, 5);
	assert_true(e->layout != 0 && b->layout != 0 && e->layout != b->layout);
	free(a);
	free(b);
	free(c);
	free(e);
}

/* The info families: no metric lands on them, their facts, when they are written, and docs/http.md says them. */
static void
test_info_families(void **state)
{
	(void)state;
	size_t len, n;
	char *doc = th_read_file(HTTP_DOC, &len);
	const struct metric_info_def *defs = metric_dict_info(&n);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++) {
		const struct metric_info_def *d = &defs[i];
		struct metric_series s;
		assert_true(strncmp(d->family, "tegrawatch_", 11) == 0);
		assert_false(metric_dict_series(d->family + 11, &s)); /* the metric "board_info" is left out */
		assert_true(d->label_count >= 1 && d->label_count <= METRIC_INFO_LABELS_MAX);
		assert_true(d->help && d->help[0]);
		/* docs/http.md: `tegrawatch_board_info{model,soc,module,l4t,jetpack} 1`, a per-sample one with a value */
		char want[256];
		size_t k = (size_t)snprintf(want, sizeof(want), "`%s{", d->family);
		for (size_t l = 0; l < d->label_count; l++) {
			k += (size_t)snprintf(want + k, sizeof(want) - k, "%s%s", l ? "," : "", d->labels[l].name);
		}
		snprintf(want + k, sizeof(want) - k, "%s", d->per_sample ? "=" : "} 1`");
		if (!strstr(doc, want)) {
			fail_msg("docs/http.md does not say %s", want);
		}
	}
	free(doc);
	struct board_identity id = {.model = "Jetson", .jetpack = "6.2"};
	struct metric_info_facts facts = {.board = &id, .version = "1.2.3"};
	assert_string_equal(metric_info_fact(&facts, METRIC_INFO_MODEL), "Jetson");
	assert_string_equal(metric_info_fact(&facts, METRIC_INFO_SOC), "");
	assert_string_equal(metric_info_fact(&facts, METRIC_INFO_JETPACK), "6.2");
	assert_string_equal(metric_info_fact(&facts, METRIC_INFO_VERSION), "1.2.3");
	assert_string_equal(metric_info_fact(&facts, METRIC_INFO_POWER_MODE), "");
	struct metric_info_facts none = {0};
	assert_string_equal(metric_info_fact(&none, METRIC_INFO_L4T), "");
	/* a fixed family always, a per-sample one with its fact */
	for (size_t i = 0; i < n; i++) {
		assert_true(metric_info_present(&defs[i], &facts) == !defs[i].per_sample);
	}
	facts.power_mode = "MAXN";
	for (size_t i = 0; i < n; i++) {
		assert_true(metric_info_present(&defs[i], &facts));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_rules),
		cmocka_unit_test(test_docs_match_table),
		cmocka_unit_test(test_mqtt_doc_limits),
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_cache_per_layout),
		cmocka_unit_test(test_info_families),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
