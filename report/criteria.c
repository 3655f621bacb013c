/* The criteria of a soak verdict (criteria.h): the file, and each limit against the report. */
#include "criteria.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cfg_decode.h"
#include "core/cfg_tree.h"
#include "core/xalloc.h"

static const char *const stat_names[] = {"max", "min", "mean", "p50", "p95", "p99"};
#define STATS_N (sizeof(stat_names) / sizeof(stat_names[0]))

static const char *const keys[] = {"name",       "metric",    "if_absent", "no_throttle", "throttle_seconds_below",
				   "max_below",  "max_above", "min_below", "min_above",   "mean_below",
				   "mean_above", "p50_below", "p50_above", "p95_below",   "p95_above",
				   "p99_below",  "p99_above"};
#define KEYS_N (sizeof(keys) / sizeof(keys[0]))

static void
report_at(struct cfg_decoder *dec, const struct cfg_node *node, const char *msg)
{
	cfg_report(dec, node, "%s", msg);
}

/* One item of `criteria:` into *C; false (reported) when it is not one. */
static bool
decode_item(struct cfg_decoder *dec, const struct cfg_node *map, struct criterion *c)
{
	memset(c, 0, sizeof(*c));
	if (map->type != CFG_MAP) {
		report_at(dec, map, "a criterion is a map: {metric: temp.tj_c, max_below: 95}");
		return false;
	}
	int limits = 0;
	bool ok = true;
	const struct cfg_node *metric = NULL;
	for (size_t i = 0; i < map->count; i++) {
		const struct cfg_node *k = map->keys[i], *v = map->items[i];
		size_t n = 0;
		while (n < KEYS_N && strcmp(keys[n], k->value) != 0) {
			n++;
		}
		if (n == KEYS_N) {
			cfg_report_unknown_key(dec, k, keys, KEYS_N);
			ok = false;
			continue;
		}
		if (v->type != CFG_SCALAR) {
			cfg_report(dec, v, "%s: expected a value", k->value);
			ok = false;
			continue;
		}
		double num;
		if (strcmp(k->value, "name") == 0) {
			snprintf(c->name, sizeof(c->name), "%s", v->value);
		} else if (strcmp(k->value, "metric") == 0) {
			metric = v;
			if (strlen(v->value) >= sizeof(c->metric) || !v->value[0]) {
				cfg_report(dec, v,
					   "metric: a metric name or a glob (temp.*_c) of at most 63 characters");
				ok = false;
			}
			snprintf(c->metric, sizeof(c->metric), "%s", v->value);
		} else if (strcmp(k->value, "if_absent") == 0) {
			c->absent_passes = strcmp(v->value, "pass") == 0;
			if (!c->absent_passes && strcmp(v->value, "fail") != 0) {
				cfg_report(dec, v, "if_absent: expected pass or fail, got '%s'", v->value);
				ok = false;
			}
		} else if (strcmp(k->value, "no_throttle") == 0) {
			limits++;
			c->stat = CRIT_THROTTLE_S;
			c->below = true;
			c->limit = 0; /* "below 0 s" read as "none": checked as == 0 */
			if (strcmp(v->value, "true") != 0) {
				cfg_report(dec, v, "no_throttle: only 'true' makes sense");
				ok = false;
			}
		} else if (!v->quoted && cfg_parse_number(v->value, &num)) {
			limits++;
			c->limit = num;
			c->below = strstr(k->value, "_below") != NULL;
			if (strcmp(k->value, "throttle_seconds_below") == 0) {
				c->stat = CRIT_THROTTLE_S;
			} else {
				for (size_t s = 0; s < STATS_N; s++) {
					if (strncmp(k->value, stat_names[s], strlen(stat_names[s])) == 0 &&
					    k->value[strlen(stat_names[s])] == '_') {
						c->stat = (enum criterion_stat)s;
					}
				}
			}
		} else {
			cfg_report(dec, v, "%s: expected a number, got '%s'", k->value, v->value);
			ok = false;
		}
	}
	if (limits != 1) {
		report_at(dec, map,
			  "a criterion has exactly one limit: max_below, p99_below, min_above, ..., no_throttle or "
			  "throttle_seconds_below");
		return false;
	}
	if ((c->stat == CRIT_THROTTLE_S) != (metric == NULL)) {
		report_at(dec, metric ? metric : map,
			  c->stat == CRIT_THROTTLE_S ? "the throttle criteria take no metric"
						     : "this limit needs a metric");
		return false;
	}
	if (ok && !c->name[0]) {
		if (c->stat == CRIT_THROTTLE_S && c->limit == 0) {
			snprintf(c->name, sizeof(c->name), "no throttle");
		} else if (c->stat == CRIT_THROTTLE_S) {
			snprintf(c->name, sizeof(c->name), "throttled below %g s", c->limit);
		} else {
			snprintf(c->name, sizeof(c->name), "%.63s %s %s %g", c->metric, stat_names[c->stat],
				 c->below ? "below" : "above", c->limit);
		}
	}
	return ok;
}

static int
decode(const struct cfg_tree *tree, struct criteria *out, struct diag_list *diags)
{
	struct cfg_decoder dec = {.diags = diags, .context = "the criteria"};
	size_t before = diags->count;
	const struct cfg_node *root = cfg_tree_root(tree);
	const struct cfg_node *list = root->type == CFG_MAP ? cfg_map_get(root, "criteria") : NULL;
	if (!list || list->type != CFG_SEQ || list->count == 0) {
		report_at(&dec, list ? list : root, "expected 'criteria:' with a list of limits");
		return -EINVAL;
	}
	for (size_t i = 0; i < root->count; i++) {
		if (strcmp(root->keys[i]->value, "criteria") != 0) {
			static const char *const top[] = {"criteria"};
			cfg_report_unknown_key(&dec, root->keys[i], top, 1);
		}
	}
	struct criteria c = {.items = xcalloc(list->count, sizeof(struct criterion)), .count = list->count};
	for (size_t i = 0; i < list->count; i++) {
		decode_item(&dec, list->items[i], &c.items[i]);
	}
	if (diags->count != before) {
		criteria_free(&c);
		return -EINVAL;
	}
	*out = c;
	return 0;
}

/* The decoded criteria of TREE, loaded with result R (destroyed here). */
static int
finish(int r, struct cfg_tree *tree, struct criteria *out, struct diag_list *diags)
{
	if (r < 0) {
		return r;
	}
	r = decode(tree, out, diags);
	cfg_tree_destroy(tree);
	return r;
}

int
criteria_load(const char *path, struct criteria *out, struct diag_list *diags)
{
	struct cfg_tree *tree = NULL;
	int r = cfg_tree_load_file(path, &tree, diags); /* before TREE is read: arguments have no order */
	return finish(r, tree, out, diags);
}

int
criteria_load_buffer(const char *name, const char *buf, size_t len, struct criteria *out, struct diag_list *diags)
{
	struct cfg_tree *tree = NULL;
	int r = cfg_tree_load_buffer(name, buf, len, &tree, diags);
	return finish(r, tree, out, diags);
}

void
criteria_free(struct criteria *c)
{
	free(c->items);
	c->items = NULL;
	c->count = 0;
}

static double
stat_of(const struct stat_metric *m, enum criterion_stat s)
{
	switch (s) {
	case CRIT_MAX:
		return m->max;
	case CRIT_MIN:
		return m->min;
	case CRIT_MEAN:
		return m->mean;
	case CRIT_P50:
		return m->p50;
	case CRIT_P95:
		return m->p95;
	case CRIT_P99:
		return m->p99;
	case CRIT_THROTTLE_S:
		break;
	}
	return NAN;
}

static void
clock_of(int64_t ms, char *buf, size_t size)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	if (ms <= 0 || !gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		snprintf(buf, size, "?");
	}
}

static void
check_throttle(const struct criterion *c, const struct report *r, struct criterion_result *res)
{
	double s = r->all.throttle_seconds;
	size_t episodes = r->episode_count + r->episodes_dropped;
	res->measured = true;
	res->value = s;
	res->pass = c->limit == 0 ? s == 0 : s < c->limit;
	if (episodes == 0) {
		snprintf(res->evidence, sizeof(res->evidence), "not throttled over %.0f s", r->all.seconds);
		return;
	}
	const struct report_episode *e = &r->episodes[0];
	char at[32];
	res->at_ms = e->start_ms;
	clock_of(e->start_ms, at, sizeof(at));
	int k = 0;
	while (k < THROTTLE_REASON_COUNT && !e->reason[k]) {
		k++;
	}
	snprintf(res->evidence, sizeof(res->evidence),
		 "throttled %.0f s in %zu episode%s, the first at %s (%s: %.120s)", s, episodes,
		 episodes == 1 ? "" : "s", at, k < THROTTLE_REASON_COUNT ? throttle_reason_name(k) : "?",
		 k < THROTTLE_REASON_COUNT ? e->why[k] : "");
}

bool
criteria_evaluate(const struct criteria *c, const struct report *r, struct criterion_result *res)
{
	bool all = true;
	for (size_t i = 0; i < c->count; i++) {
		const struct criterion *k = &c->items[i];
		struct criterion_result *o = &res[i];
		memset(o, 0, sizeof(*o));
		if (k->stat == CRIT_THROTTLE_S) {
			check_throttle(k, r, o);
			all = all && o->pass;
			continue;
		}
		/* a glob: the worst of the metrics it matches */
		const struct stat_metric *worst = NULL;
		for (size_t m = 0; m < r->all.stats.count; m++) {
			const struct stat_metric *sm = &r->all.stats.items[m];
			if (!metric_glob_match(k->metric, sm->name) || sm->count == 0) {
				continue;
			}
			double v = stat_of(sm, k->stat);
			if (!worst || (k->below ? v > stat_of(worst, k->stat) : v < stat_of(worst, k->stat))) {
				worst = sm;
			}
		}
		if (!worst) {
			o->pass = k->absent_passes;
			snprintf(o->evidence, sizeof(o->evidence), "no %s in the recording%s", k->metric,
				 k->absent_passes ? " (if_absent: pass)" : "");
			all = all && o->pass;
			continue;
		}
		o->measured = true;
		o->value = stat_of(worst, k->stat);
		snprintf(o->metric, sizeof(o->metric), "%s", worst->name);
		o->pass = k->below ? o->value < k->limit : o->value > k->limit;
		char at[32] = "";
		if (k->stat == CRIT_MAX) {
			o->at_ms = worst->max_at_ms;
			clock_of(worst->max_at_ms, at, sizeof(at));
		}
		snprintf(o->evidence, sizeof(o->evidence), "%s %s %.6g%s%s over %llu samples (limit: %s %g)",
			 worst->name, stat_names[k->stat], o->value, at[0] ? " at " : "", at,
			 (unsigned long long)worst->count, k->below ? "below" : "above", k->limit);
		all = all && o->pass;
	}
	return all;
}

void
criteria_json(const struct criteria *c, const struct criterion_result *res, struct json *j)
{
	bool all = true;
	for (size_t i = 0; i < c->count; i++) {
		all = all && res[i].pass;
	}
	json_object_begin(j);
	json_key(j, "passed");
	json_bool(j, all);
	json_key(j, "results");
	json_array_begin(j);
	for (size_t i = 0; i < c->count; i++) {
		const struct criterion *k = &c->items[i];
		const struct criterion_result *o = &res[i];
		json_object_begin(j);
		json_key(j, "name");
		json_string(j, k->name);
		json_key(j, "pass");
		json_bool(j, o->pass);
		json_key(j, "stat");
		json_string(j, k->stat == CRIT_THROTTLE_S ? "throttle_seconds" : stat_names[k->stat]);
		json_key(j, "op");
		json_string(j, k->below ? "below" : "above");
		json_key(j, "limit");
		json_number(j, k->limit);
		json_key(j, "metric");
		if (o->metric[0]) {
			json_string(j, o->metric);
		} else {
			json_null(j);
		}
		json_key(j, "value");
		if (o->measured) {
			json_number(j, o->value);
		} else {
			json_null(j);
		}
		json_key(j, "evidence");
		json_string(j, o->evidence);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

void
criteria_text(const struct criteria *c, const struct criterion_result *res, FILE *out)
{
	size_t failed = 0;
	for (size_t i = 0; i < c->count; i++) {
		failed += !res[i].pass;
	}
	fprintf(out, "\nCriteria: %s (%zu of %zu passed)\n", failed ? "FAIL" : "PASS", c->count - failed, c->count);
	for (size_t i = 0; i < c->count; i++) {
		fprintf(out, "  %s  %-36s %s\n", res[i].pass ? "PASS" : "FAIL", c->items[i].name, res[i].evidence);
	}
}
