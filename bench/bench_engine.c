/*
 * Cost of engine_evaluate(): 200 rules (exact names, globs, trip- and
 * ceiling-relative thresholds, changes/increases, absent_for, repeat) over
 * the full metric set of a fixture board (board_open + board_sample, plus
 * the per-core loads and throttle.* metrics a live agent adds). Values move
 * every sample (slow temperature waves, load swings, counter bumps, a power
 * mode change now and then) so alerts really fire and resolve, and a
 * listener makes every event render its texts.
 *
 * Prints CPU µs per sample for a steady metric layout with moving values,
 * for a quiet board (no transitions), and for a layout that changes on
 * every sample (the mapping rebuilt each time: the worst case).
 *
 * Usage: bench_engine [ROOT [SECONDS]]
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sample.h"
#include "tegra/board.h"
#include "thresholds/engine.h"

#ifndef BENCH_DEFAULT_ROOT
#define BENCH_DEFAULT_ROOT "tests/fixtures/boards/agx-orin-jp5"
#endif
#define RULES 200

static int64_t
cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) {
		return 0;
	}
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p) {
		abort();
	}
	return p;
}

static void
level(struct rule *r, enum severity s, enum threshold_ref ref, double scale, double offset)
{
	r->level[s].set = true;
	r->level[s].ref = ref;
	r->level[s].scale = scale;
	r->level[s].offset = offset;
}

/* The exact metrics rules of kind 0 cycle through. */
static const char *const exact_temps[] = {
	"temp.cpu_c", "temp.soc0_c", "temp.soc1_c", "temp.soc2_c", "temp.tj_c", "temp.tdiode_c", "temp.tboard_c",
};
static const char *const exact_rails[] = {
	"power.vdd_gpu_soc.mw", "power.vdd_cpu_cv.mw", "power.vin_sys_5v0.mw", "power.vddq_vdd2_1v8ao.mw",
};

/* Ten kinds of rules, twenty of each, as a real file would mix them. */
static void
make_rules(struct rule_set *set)
{
	set->count = RULES;
	set->rules = calloc(RULES, sizeof(*set->rules));
	if (!set->rules) {
		abort();
	}
	for (size_t i = 0; i < RULES; i++) {
		struct rule *r = &set->rules[i];
		char name[32];
		const char *metric = NULL;

		snprintf(name, sizeof(name), "rule-%03zu", i);
		r->name = xstrdup(name);
		r->op = RULE_ABOVE;
		r->event_severity = SEVERITY_WARNING;
		r->absent_severity = SEVERITY_WARNING;
		switch (i % 10) {
		case 0:
			metric = exact_temps[(i / 10) % 7];
			level(r, SEVERITY_WARNING, REF_NONE, 1, 70 + (double)(i % 7));
			level(r, SEVERITY_CRITICAL, REF_NONE, 1, 90);
			r->clear = 2;
			r->for_ms = 30000;
			r->absent_for_ms = 60000;
			break;
		case 1:
			metric = "temp.*_c";
			level(r, SEVERITY_WARNING, REF_PASSIVE_TRIP, 1, -(double)(5 + i % 20));
			r->level[SEVERITY_WARNING].has_fallback = true;
			r->level[SEVERITY_WARNING].fallback = 85;
			level(r, SEVERITY_CRITICAL, REF_CRITICAL_TRIP, 1, -5);
			r->clear = 3;
			r->clear_for_ms = 10000;
			break;
		case 2:
			metric = "cpu.*.freq_mhz";
			r->op = RULE_BELOW;
			level(r, SEVERITY_WARNING, REF_CEILING, 0.5, 0);
			level(r, SEVERITY_CRITICAL, REF_HW_MAX, 0.25, 0);
			r->for_ms = 10000;
			break;
		case 3:
			metric = "*.load_pct";
			level(r, SEVERITY_WARNING, REF_NONE, 1, 80 + (double)(i % 15));
			r->for_ms = 60000;
			r->clear = 10;
			break;
		case 4:
			metric = exact_rails[(i / 10) % 4];
			level(r, SEVERITY_WARNING, REF_NONE, 1, 3000);
			level(r, SEVERITY_CRITICAL, REF_NONE, 1, 6000);
			r->repeat_ms = 300000;
			break;
		case 5:
			metric = "nvpmodel.id";
			r->op = RULE_CHANGES;
			r->event_severity = SEVERITY_CRITICAL;
			r->clear_for_ms = 60000;
			break;
		case 6:
			metric = "oc.*.events";
			r->op = RULE_INCREASES;
			break;
		case 7:
			metric = "power.*.mw";
			level(r, SEVERITY_WARNING, REF_NONE, 1, 4000 + (double)(i % 3) * 500);
			r->for_ms = 5000;
			break;
		case 8:
			metric = "ram.used_mb";
			level(r, SEVERITY_WARNING, REF_NONE, 1, 40000);
			level(r, SEVERITY_CRITICAL, REF_NONE, 1, 60000);
			r->absent_for_ms = 30000;
			break;
		default:
			metric = "throttle.*";
			level(r, SEVERITY_WARNING, REF_NONE, 1, 1);
			r->repeat_ms = 600000;
			r->summary = xstrdup("{{metric}} on {{board}}: {{throttle}}");
			break;
		}
		r->metric = xstrdup(metric);
	}
}

/* Moves every value a little: waves, swings, counters; deterministic. */
static void
step_values(struct sample *s, const struct sample *base, uint64_t k)
{
	for (size_t i = 0; i < s->metrics.count; i++) {
		struct metric *m = &s->metrics.items[i];
		double b = base->metrics.items[i].value;
		double phase = (double)(i * 37 % 600);

		if (strncmp(m->name, "temp.", 5) == 0) {
			m->value = b + 30 + 25 * sin(2 * M_PI * ((double)k + phase) / 600.0);
		} else if (strstr(m->name, ".load_pct")) {
			m->value = 50 + 50 * sin(2 * M_PI * ((double)k + phase) / 240.0);
		} else if (strncmp(m->name, "oc.", 3) == 0 && strstr(m->name, ".events")) {
			m->value = b + (double)(k / 97);
		} else if (strcmp(m->name, "nvpmodel.id") == 0) {
			m->value = (double)((k / 500) % 2);
		} else if (strstr(m->name, ".freq_mhz") && !strstr(m->name, "max_freq")) {
			m->value = (k / 50) % 3 == 0 ? b * 0.3 : b;
		} else if (strcmp(m->name + strlen(m->name) - 3, ".mw") == 0) {
			m->value = b * (1.0 + 0.8 * sin(2 * M_PI * ((double)k + phase) / 180.0));
		} else if (strcmp(m->name, "throttle.active") == 0 || strcmp(m->name, "throttle.thermal") == 0) {
			m->value = (k / 120) % 4 == 0;
		}
	}
	s->throttle.active = (k / 120) % 4 == 0;
	s->throttle.reason[THROTTLE_THERMAL] = s->throttle.active;
}

static void
count_event(const struct alert_event *ev, void *data)
{
	uint64_t *n = data;

	/* touch the rendered text so the work cannot be skipped */
	*n += ev->summary[0] != '\0';
}

struct run {
	uint64_t samples;
	uint64_t events;
	int64_t cpu_ns;
	uint64_t rebuilds;
};

enum load {
	LOAD_MOVING, /* values move, alerts fire and resolve */
	LOAD_QUIET,  /* values stay at the fixture's (a healthy board): no transitions */
	LOAD_CHURN,  /* moving, and the set of metric names changes every sample */
};

static void
run(const struct rule_set *rules, struct sample *s, const struct sample *base, double seconds, enum load load,
    struct run *out)
{
	int64_t start, budget = (int64_t)(seconds * 1e9);
	uint64_t k = 0;
	bool churn = load == LOAD_CHURN;

	memset(out, 0, sizeof(*out));
	struct engine *e = engine_create(rules, count_event, &out->events);
	engine_set_board(e, "agx-orin-bench", "bench");
	start = cpu_ns();
	do {
		for (int i = 0; i < 1000; i++, k++) {
			if (churn) {
				int64_t t0;

				/* a metric comes and goes: the layout changes every sample */
				if (k % 2) {
					metric_set_put(&s->metrics, "engine.nvenc.freq_mhz", 115);
				} else {
					metric_set_remove(&s->metrics, "engine.nvenc.freq_mhz");
				}
				step_values(s, base, k);
				s->time_ms = base->time_ms + (int64_t)k * 1000;
				/* time the engine only, not the metric set's own re-indexing */
				t0 = cpu_ns();
				engine_evaluate(e, s);
				out->cpu_ns += cpu_ns() - t0;
				continue;
			}
			if (load == LOAD_MOVING) {
				step_values(s, base, k);
			}
			s->time_ms = base->time_ms + (int64_t)k * 1000;
			s->seq = k + 1;
			engine_evaluate(e, s);
		}
	} while (cpu_ns() - start < budget);
	if (!churn) {
		out->cpu_ns = cpu_ns() - start;
	}
	out->samples = k;
	out->rebuilds = engine_layout_rebuilds(e);
	if (load == LOAD_MOVING) {
		printf("instances: %zu\n", engine_instance_count(e));
	}
	engine_destroy(e);
}

int
main(int argc, char **argv)
{
	const char *root = BENCH_DEFAULT_ROOT;
	double seconds = 2.0;
	struct rule_set rules = { 0 };
	struct sample *base, *s;
	struct board *b = NULL;
	struct run steady, quiet, churn;
	int err;

	if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: %s [ROOT [SECONDS]]\n", argv[0]);
		return 2;
	}
	if (argc > 1) {
		root = argv[1];
	}
	if (argc > 2) {
		char *end;
		seconds = strtod(argv[2], &end);
		if (*end || !(seconds > 0 && seconds <= 600)) {
			fprintf(stderr, "bench_engine: SECONDS must be in (0, 600]\n");
			return 2;
		}
	}
	base = calloc(1, sizeof(*base));
	s = calloc(1, sizeof(*s));
	if (!base || !s) {
		fprintf(stderr, "bench_engine: out of memory\n");
		return 1;
	}
	err = board_open(root, &b);
	if (err == 0) {
		sample_clear(base);
		err = board_sample(b, base);
		sample_clear(base);
		err = err ? err : board_sample(b, base);
		board_destroy(b);
	}
	if (err != 0) {
		fprintf(stderr, "bench_engine: %s: %s\n", root, strerror(-err));
		return 1;
	}
	/* what a live agent adds on top of sysfs: per-core loads and the throttle verdicts */
	for (int c = 0; c < 12; c++) {
		metric_set_putf(&base->metrics, 10, "cpu.%d.load_pct", c);
	}
	metric_set_put(&base->metrics, "cpu.load_pct", 10);
	metric_set_put(&base->metrics, "throttle.active", 0);
	metric_set_put(&base->metrics, "throttle.thermal", 0);
	metric_set_put(&base->metrics, "throttle.overcurrent", 0);
	metric_set_put(&base->metrics, "throttle.rail_alarm", 0);
	metric_set_put(&base->metrics, "throttle.freq_cap", 0);
	snprintf(base->throttle.why[THROTTLE_THERMAL], THROTTLE_WHY_MAX, "cpu at 96.0 C >= passive trip 95.0 C");
	base->time_ms = 1700000000000;
	make_rules(&rules);

	printf("root: %s\n", root);
	printf("metrics_per_sample: %zu\n", base->metrics.count);
	printf("rules: %zu\n", rules.count);
	*s = *base;
	run(&rules, s, base, seconds, LOAD_MOVING, &steady);
	printf("samples: %llu\n", (unsigned long long)steady.samples);
	printf("events: %llu (%.3f per sample)\n", (unsigned long long)steady.events,
	       (double)steady.events / (double)steady.samples);
	printf("layout_rebuilds: %llu\n", (unsigned long long)steady.rebuilds);
	printf("cpu_us_per_sample: %.2f\n", (double)steady.cpu_ns / 1e3 / (double)steady.samples);

	*s = *base;
	run(&rules, s, base, seconds / 2, LOAD_QUIET, &quiet);
	printf("quiet_events: %llu\n", (unsigned long long)quiet.events);
	printf("quiet_cpu_us_per_sample: %.2f\n", (double)quiet.cpu_ns / 1e3 / (double)quiet.samples);

	*s = *base;
	run(&rules, s, base, seconds / 2, LOAD_CHURN, &churn);
	printf("churn_samples: %llu (layout rebuilt %llu times)\n", (unsigned long long)churn.samples,
	       (unsigned long long)churn.rebuilds);
	printf("churn_cpu_us_per_sample: %.2f\n", (double)churn.cpu_ns / 1e3 / (double)churn.samples);

	rule_set_free(&rules);
	free(base);
	free(s);
	return 0;
}
