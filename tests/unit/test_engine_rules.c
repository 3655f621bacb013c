/*
 * The alert engine, what a rule can say: globs and their instance cap, power
 * modes, thresholds relative to the board, changes and increases, repeat,
 * and the templates of summaries and descriptions.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/cfg_decode.h"
#include "core/diag.h"
#include "core/metric_dict.h"
#include "core/xalloc.h"
#include "engine_events.h"
#include "helpers.h"
#include "thresholds/template.h"

/* ---- globs ---------------------------------------------------------------------------- */

static void
test_glob_expansion(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(1);
	struct rule *r = th_rule_init(set, 0, "hot", "temp.*_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	th_level(r, SEVERITY_WARNING, 90);
	e = engine_create(set, record, &rec);

	at(s, 0, "MAXN");
	th_put(s, "temp.cpu_c", 95);
	th_put(s, "trip.cpu.passive_c", 95);
	th_put(s, "temp.gpu_c", 91);
	th_put(s, "temp.soc0_c", 40);
	engine_evaluate(e, s);
	assert_int_equal(rec.n, 2);
	assert_string_equal(rec.ev[0].metric, "temp.cpu_c");
	assert_string_equal(rec.ev[0].fp, "af4de9bec8c7bf48");
	assert_string_equal(rec.ev[1].metric, "temp.gpu_c");
	assert_string_equal(rec.ev[1].fp, "ee9560eb19a6217c");
	assert_int_equal(engine_instance_count(e), 3);
	assert_int_equal(engine_firing_count(e), 2);

	/* same names, other order: a new layout, and every value still goes to its instance */
	at(s, 1000, "MAXN");
	th_put(s, "temp.soc0_c", 40);
	th_put(s, "temp.gpu_c", 80);
	th_put(s, "trip.cpu.passive_c", 95);
	th_put(s, "temp.cpu_c", 96);
	engine_evaluate(e, s);
	assert_int_equal(rec.n, 3);
	assert_int_equal(rec.ev[2].t, TRANSITION_RESOLVED);
	assert_string_equal(rec.ev[2].metric, "temp.gpu_c");
	assert_int_equal(engine_layout_rebuilds(e), 2);

	/* the same layout again: no rebuild */
	at(s, 2000, "MAXN");
	th_put(s, "temp.soc0_c", 40);
	th_put(s, "temp.gpu_c", 80);
	th_put(s, "trip.cpu.passive_c", 95);
	th_put(s, "temp.cpu_c", 96);
	engine_evaluate(e, s);
	assert_int_equal(engine_layout_rebuilds(e), 2);
	assert_int_equal(rec.n, 3);
	engine_destroy(e);
	th_rule_set_free(set);
	rec_reset(&rec);
}

static void
test_glob_instance_cap(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(1);
	struct rule *r = th_rule_init(set, 0, "many", "x.*.v", RULE_ABOVE);
	struct engine *e;

	th_level(r, SEVERITY_WARNING, 1);
	e = engine_create(set, NULL, NULL);
	at(s, 0, "");
	for (int i = 0; i < 300; i++) {
		assert_int_equal(metric_set_putf(&s->metrics, 0, "x.%d.v", i), 0);
	}
	engine_evaluate(e, s);
	assert_int_equal(engine_instance_count(e), 256);
	assert_int_equal(engine_dropped_instances(e), 44);
	engine_destroy(e);
	th_rule_set_free(set);
}

/* ---- power modes ----------------------------------------------------------------------- */

static void
test_power_mode_filter(void **state)
{
	static const struct {
		const char *mode;
		double id; /* nvpmodel.id, NAN = not in the sample */
		double v;
		struct want want;
	} steps[] = {
		{ "15W", 1, 99, { 0, TRANSITION_PENDING, SEVERITY_NONE } },        /* not evaluated */
		{ "MAXN", 0, 99, { 1000, TRANSITION_FIRING, SEVERITY_WARNING } },  /* in the list */
		{ "MAXN", 0, 99, { 0, TRANSITION_PENDING, SEVERITY_NONE } },
		{ "15W", 1, 99, { 3000, TRANSITION_RESOLVED, SEVERITY_WARNING } }, /* leaves the list */
		{ "", 2, 99, { 4000, TRANSITION_FIRING, SEVERITY_WARNING } },      /* mode "2" by id */
		{ "", NAN, 99, { 5000, TRANSITION_RESOLVED, SEVERITY_WARNING } },  /* unknown mode */
		{ "maxn", 0, 99, { 6000, TRANSITION_FIRING, SEVERITY_WARNING } },  /* names ignore case */
	};
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(1);
	struct rule *r = th_rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;
	size_t n = 0;

	th_level(r, SEVERITY_WARNING, 95);
	add_mode(r, "MAXN");
	add_mode(r, "2");
	e = engine_create(set, record, &rec);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		at(s, (int64_t)i * 1000, steps[i].mode);
		th_put(s, "temp.cpu_c", steps[i].v);
		if (!isnan(steps[i].id)) {
			th_put(s, "nvpmodel.id", steps[i].id);
		}
		engine_evaluate(e, s);
		if (steps[i].want.sev != SEVERITY_NONE) {
			n++;
			assert_int_equal(rec.n, n);
			assert_int_equal(rec.ev[n - 1].at_ms, steps[i].want.at_ms);
			assert_int_equal(rec.ev[n - 1].t, steps[i].want.t);
		} else {
			assert_int_equal(rec.n, n);
		}
	}
	assert_string_equal(rec.ev[0].power_mode, "MAXN");
	engine_destroy(e);
	th_rule_set_free(set);
	rec_reset(&rec);
}

static void
test_power_mode_cancels_pending(void **state)
{
	static const struct want want[] = {
		{ 0, TRANSITION_PENDING, SEVERITY_WARNING },
		{ 1000, TRANSITION_CANCELLED, SEVERITY_WARNING },
		END_WANT,
	};
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(1);
	struct rule *r = th_rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	th_level(r, SEVERITY_WARNING, 95);
	r->for_ms = 10000;
	add_mode(r, "MAXN");
	e = engine_create(set, record, &rec);
	at(s, 0, "MAXN");
	th_put(s, "temp.cpu_c", 99);
	engine_evaluate(e, s);
	at(s, 1000, "30W");
	th_put(s, "temp.cpu_c", 99);
	engine_evaluate(e, s);
	expect_events(&rec, want);
	engine_destroy(e);
	th_rule_set_free(set);
	rec_reset(&rec);
}

/* ---- thresholds relative to the board --------------------------------------------------------- */

static void
test_trip_relative(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(3);
	struct rule *hot = th_rule_init(set, 0, "near-trip", "temp.*_c", RULE_ABOVE);
	struct rule *hot_fb = th_rule_init(set, 1, "near-trip-fb", "temp.*_c", RULE_ABOVE);
	struct rule *slow = th_rule_init(set, 2, "capped", "*.freq_mhz", RULE_BELOW);
	struct recorder rec = { 0 };
	struct engine *e;

	level_ref(hot, SEVERITY_CRITICAL, REF_PASSIVE_TRIP, 1, -5);
	level_ref(hot_fb, SEVERITY_WARNING, REF_HOT_TRIP, 1, -10);
	hot_fb->level[SEVERITY_WARNING].has_fallback = true;
	hot_fb->level[SEVERITY_WARNING].fallback = 95;
	level_ref(slow, SEVERITY_WARNING, REF_CEILING, 0.5, 0);
	level_ref(slow, SEVERITY_CRITICAL, REF_HW_MAX, 0.25, 0);
	e = engine_create(set, record, &rec);

	at(s, 0, "MAXN");
	th_put(s, "temp.cpu_c", 91);           /* passive 95 - 5 = 90: critical; hot 99 - 10 = 89: warning */
	th_put(s, "trip.cpu.passive_c", 95);
	th_put(s, "trip.cpu.hot_c", 99);
	th_put(s, "temp.tj_c", 100);           /* no trips: no critical; fallback 95: warning */
	th_put(s, "temp.soc0_c", 60);
	th_put(s, "trip.soc0.passive_c", 95);
	th_put(s, "cpu.0.freq_mhz", 729.6);    /* ceiling 2201.6 x 0.5 = 1100.8: warning */
	th_put(s, "cpu.0.max_freq_mhz", 2201.6);
	th_put(s, "cpu.0.hw_max_freq_mhz", 2201.6);
	th_put(s, "cpu.1.freq_mhz", 729.6);    /* ceiling 1000 x 0.5 = 500: fine */
	th_put(s, "cpu.1.max_freq_mhz", 1000);
	th_put(s, "gpu.freq_mhz", 300);        /* hw max 1300.5 x 0.25 = 325.125: critical */
	th_put(s, "gpu.hw_max_freq_mhz", 1300.5);
	th_put(s, "emc.freq_mhz", 10);         /* no ceiling, no fallback: never alerts */
	engine_evaluate(e, s);

	assert_int_equal(rec.n, 5);
	assert_string_equal(rec.ev[0].metric, "temp.cpu_c");
	assert_int_equal(rec.ev[0].sev, SEVERITY_CRITICAL);
	assert_true(rec.ev[0].threshold == 90);
	assert_string_equal(rec.ev[1].metric, "temp.cpu_c");
	assert_int_equal(rec.ev[1].sev, SEVERITY_WARNING);
	assert_true(rec.ev[1].threshold == 89);
	assert_string_equal(rec.ev[2].metric, "temp.tj_c");
	assert_true(rec.ev[2].threshold == 95);
	assert_string_equal(rec.ev[3].metric, "cpu.0.freq_mhz");
	assert_true(rec.ev[3].threshold == 1100.8);
	assert_string_equal(rec.ev[4].metric, "gpu.freq_mhz");
	assert_int_equal(rec.ev[4].sev, SEVERITY_CRITICAL);
	assert_true(rec.ev[4].threshold == 325.125);

	/* the trip point moves (another board state): the threshold follows per sample */
	at(s, 1000, "MAXN");
	th_put(s, "temp.cpu_c", 91);
	th_put(s, "trip.cpu.passive_c", 100);
	th_put(s, "trip.cpu.hot_c", 99);
	th_put(s, "temp.tj_c", 100);
	th_put(s, "temp.soc0_c", 60);
	th_put(s, "trip.soc0.passive_c", 95);
	th_put(s, "cpu.0.freq_mhz", 729.6);
	th_put(s, "cpu.0.max_freq_mhz", 2201.6);
	th_put(s, "cpu.0.hw_max_freq_mhz", 2201.6);
	th_put(s, "cpu.1.freq_mhz", 729.6);
	th_put(s, "cpu.1.max_freq_mhz", 1000);
	th_put(s, "gpu.freq_mhz", 300);
	th_put(s, "gpu.hw_max_freq_mhz", 1300.5);
	th_put(s, "emc.freq_mhz", 10);
	engine_evaluate(e, s);
	assert_int_equal(rec.n, 6);
	assert_string_equal(rec.ev[5].metric, "temp.cpu_c");
	assert_int_equal(rec.ev[5].t, TRANSITION_RESOLVED);
	assert_true(rec.ev[5].threshold == 95);
	engine_destroy(e);
	th_rule_set_free(set);
	rec_reset(&rec);
}

/* ---- changes / increases ------------------------------------------------------------------------ */

static void
test_changes_increases(void **state)
{
	static const struct {
		const char *name;
		enum rule_op op;
		int64_t clear_for_ms;
		struct pt pts[12];
		struct want want[8];
	} cases[] = {
		{ "power mode changes, resolve on the next unchanged sample", RULE_CHANGES, 0,
		  { { 0, 0 }, { 1000, 0 }, { 2000, 2 }, { 3000, 2 }, { 4000, 2 }, { 5000, 0 }, END_PT },
		  { { 2000, TRANSITION_FIRING, SEVERITY_CRITICAL }, { 3000, TRANSITION_RESOLVED, SEVERITY_CRITICAL },
		    { 5000, TRANSITION_FIRING, SEVERITY_CRITICAL }, END_WANT } },
		{ "changes with clear_for 3s; a second change restarts the clock", RULE_CHANGES, 3000,
		  { { 0, 0 }, { 1000, 2 }, { 2000, 2 }, { 3000, 1 }, { 4000, 1 }, { 5000, 1 }, { 6000, 1 }, END_PT },
		  { { 1000, TRANSITION_FIRING, SEVERITY_CRITICAL }, { 6000, TRANSITION_RESOLVED, SEVERITY_CRITICAL },
		    END_WANT } },
		{ "counter increases; a reset only rebaselines", RULE_INCREASES, 0,
		  { { 0, 5 }, { 1000, 5 }, { 2000, 7 }, { 3000, 7 }, { 4000, 3 }, { 5000, 3 }, { 6000, 4 }, END_PT },
		  { { 2000, TRANSITION_FIRING, SEVERITY_CRITICAL }, { 3000, TRANSITION_RESOLVED, SEVERITY_CRITICAL },
		    { 6000, TRANSITION_FIRING, SEVERITY_CRITICAL }, END_WANT } },
		{ "a gap keeps the baseline", RULE_INCREASES, 0,
		  { { 0, 5 }, { 1000, NAN }, { 2000, 5 }, { 3000, NAN }, { 4000, 6 }, END_PT },
		  { { 4000, TRANSITION_FIRING, SEVERITY_CRITICAL }, END_WANT } },
	};
	struct sample *s = *state;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct rule_set *set = th_rule_set_new(1);
		struct rule *r = th_rule_init(set, 0, "mode-change", "nvpmodel.id", cases[c].op);
		struct recorder rec = { 0 };
		struct engine *e;

		print_message("case: %s\n", cases[c].name);
		r->event_severity = SEVERITY_CRITICAL;
		r->clear_for_ms = cases[c].clear_for_ms;
		e = engine_create(set, record, &rec);
		feed(e, s, "nvpmodel.id", cases[c].pts);
		expect_events(&rec, cases[c].want);
		assert_true(isnan(rec.ev[0].threshold));
		engine_destroy(e);
		th_rule_set_free(set);
		rec_reset(&rec);
	}
}

/* ---- repeat ------------------------------------------------------------------------------------- */

static void
test_repeat(void **state)
{
	static const struct pt pts[] = {
		{ 0, 99 }, { 5000, 99 }, { 10000, 99 }, { 15000, 99 }, { 20000, 99 }, { 24000, 99 }, { 25000, 80 },
		END_PT,
	};
	static const struct want want[] = {
		{ 0, TRANSITION_FIRING, SEVERITY_WARNING },
		{ 10000, TRANSITION_REPEAT, SEVERITY_WARNING },
		{ 20000, TRANSITION_REPEAT, SEVERITY_WARNING },
		{ 25000, TRANSITION_RESOLVED, SEVERITY_WARNING },
		END_WANT,
	};
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(1);
	struct rule *r = th_rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	th_level(r, SEVERITY_WARNING, 95);
	r->repeat_ms = 10000;
	e = engine_create(set, record_alerts, &rec);
	feed(e, s, "temp.cpu_c", pts);
	expect_events(&rec, want);
	assert_int_equal(rec.ev[1].starts_at_ms, 0);
	engine_destroy(e);
	th_rule_set_free(set);
	rec_reset(&rec);
}

/* ---- templates ---------------------------------------------------------------------------------- */

/* {{value}} of a metric without a value: its absent words where the dictionary has them, else "n/a". */
static void
test_template_absent_value(void **state)
{
	(void)state;
	char out[160];
	struct template_ctx ctx = {.metric = "throttle_eta.gpu_s", .value = NAN, .threshold = 300};
	template_render("{{metric}} says a throttle in {{value}}", &ctx, out, sizeof(out));
	assert_string_equal(out, "throttle_eta.gpu_s says a throttle in will not throttle at this load");
	ctx.metric = "temp.gpu_c";
	template_render("{{metric}} is {{value}}", &ctx, out, sizeof(out));
	assert_string_equal(out, "temp.gpu_c is n/a");
	assert_string_equal(metric_dict_absent_words("throttle_eta.cpu_s"), "will not throttle at this load");
	assert_null(metric_dict_absent_words("temp.cpu_c"));
	assert_null(metric_dict_absent_words(NULL));
	/* a timestamp (unit "unix s") reads as a time: when the board's previous boot was last seen */
	ctx.metric = "reboot.unexpected.last_seen_timestamp_s";
	ctx.value = 1764345600.5;
	template_render("last seen at {{value}}", &ctx, out, sizeof(out));
	assert_string_equal(out, "last seen at 2025-11-28T16:00:00Z");
	ctx.metric = "agent.samples_total";
	ctx.value = 1764345600;
	template_render("{{value}}", &ctx, out, sizeof(out));
	assert_string_equal(out, "1764345600");
}

/* {{metric.LABEL}}: a label of the metric's series, in the real text a source said for it (core/metric_attrs.h) */
static void
test_template_metric_label(void **state)
{
	(void)state;
	char out[160];
	struct template_ctx ctx = {.metric = "process.inference_server.up", .value = 0};
	template_render("process {{metric.name}} ({{ metric.name }}) {{metric.nope}}!", &ctx, out, sizeof(out));
	assert_string_equal(out, "process inference_server (inference_server) !"); /* no source said it: the segment */
	static const char *const names[] = {"name"};
	const char *values[] = {"Inference-Server"};
	assert_int_equal(metric_attrs_set("name", "inference_server", 1, names, values), 0);
	template_render("process {{metric.name}} is down", &ctx, out, sizeof(out));
	assert_string_equal(out, "process Inference-Server is down");
	metric_attrs_forget("name", NULL);
	static const char *const fs[] = {"mountpoint", "fstype", "device"};
	const char *fsv[] = {"/var/lib/docker", "ext4", "/dev/nvme0n1p1"};
	assert_int_equal(metric_attrs_set("mountpoint", "var_lib_docker", 3, fs, fsv), 0);
	ctx.metric = "filesystem.var_lib_docker.used_pct";
	template_render("{{metric.mountpoint}} ({{metric.fstype}} on {{metric.device}})", &ctx, out, sizeof(out));
	assert_string_equal(out, "/var/lib/docker (ext4 on /dev/nvme0n1p1)");
	metric_attrs_forget("mountpoint", NULL);
	ctx.metric = "temp.cpu_c";
	template_render("{{metric.sensor}}", &ctx, out, sizeof(out));
	assert_string_equal(out, "cpu");
	struct template_field f;
	assert_int_equal(template_field_parse("{{metric.}}", &f), 0);
	assert_int_equal(template_field_parse("{{metric.a b}}", &f), 0);
}

/* What a test listener keeps of an event: its labels as rendered, and whether it carried what ran. */
struct kept {
	int n;
	enum alert_transition t[8];
	char label[8][64];
	int cpu_count[8];
};

static void
keep(const struct alert_event *ev, void *data)
{
	struct kept *k = data;
	if (k->n < 8) {
		k->t[k->n] = ev->transition;
		snprintf(k->label[k->n], sizeof(k->label[k->n]), "%s=%s", ev->label_count ? ev->labels[0].key : "",
			 ev->label_count ? ev->labels[0].value : "");
		k->cpu_count[k->n] = ev->processes.cpu_count;
		k->n++;
	}
}

/* A label value with {{fields}} is rendered per alert; the sample's top processes go on firing events only. */
static void
test_labels_and_processes(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(1);
	struct rule *r = th_rule_init(set, 0, "process-down", "process.*.up", RULE_BELOW);
	th_level(r, SEVERITY_CRITICAL, 0);
	r->for_ms = 1000;
	r->labels = calloc(1, sizeof(*r->labels));
	assert_non_null(r->labels);
	r->labels[0] = (struct alert_label){xstrdup("process"), xstrdup("{{metric.name}} on {{board}}")};
	r->label_count = 1;
	struct kept k = {0};
	struct engine *e = engine_create(set, keep, &k);
	engine_set_board(e, "orin-7", "orin-7-id");
	at(s, 0, "MAXN");
	th_put(s, "process.app.up", 0);
	s->processes.cpu_count = 1; /* a recording's sample: what ran then */
	s->processes.by_cpu[0] = (struct top_process){.pid = 42, .comm = "trtexec", .cpu_pct = 187, .rss_bytes = 1};
	engine_evaluate(e, s); /* pending: not an alert yet, nothing of what ran */
	at(s, 1000, "MAXN");
	th_put(s, "process.app.up", 0);
	s->processes.cpu_count = 1;
	engine_evaluate(e, s); /* firing */
	at(s, 2000, "MAXN");
	th_put(s, "process.app.up", 1);
	s->processes.cpu_count = 1;
	engine_evaluate(e, s); /* resolved */
	assert_int_equal(k.n, 3);
	assert_int_equal(k.t[0], TRANSITION_PENDING);
	assert_int_equal(k.t[1], TRANSITION_FIRING);
	assert_int_equal(k.t[2], TRANSITION_RESOLVED);
	for (int i = 0; i < 3; i++) {
		assert_string_equal(k.label[i], "process=app on orin-7");
	}
	assert_int_equal(k.cpu_count[0], 0);
	assert_int_equal(k.cpu_count[1], 1);
	assert_int_equal(k.cpu_count[2], 0);
	assert_string_equal(r->labels[0].value, "{{metric.name}} on {{board}}"); /* the rule keeps its template */
	engine_destroy(e);
	th_rule_set_free(set);
}

static void
test_template_rendering(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(3);
	struct rule *r = th_rule_init(set, 0, "cpu-hot", "temp.cpu_c", RULE_ABOVE);
	struct rule *thr = th_rule_init(set, 1, "throttled", "throttle.*", RULE_ABOVE);
	struct rule *plain = th_rule_init(set, 2, "gpu-hot", "temp.gpu_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;
	char big[ALERT_TEXT_MAX + 64];

	th_level(r, SEVERITY_CRITICAL, 95);
	r->labels = calloc(2, sizeof(*r->labels));
	assert_non_null(r->labels);
	r->labels[0] = (struct alert_label){ xstrdup("team"), xstrdup("robots") };
	r->labels[1] = (struct alert_label){ xstrdup("room"), xstrdup("lab 2") };
	r->label_count = 2;
	r->summary = xstrdup("{{rule}} on {{board}}: {{metric}} at {{value}} C >= {{threshold}} "
			     "({{ severity }}, {{labels.team}}, {{labels.nope}}, {{power_mode}}, {{transition}})");
	r->description = xstrdup("{{labels.room}} {{bogus}} {single}");
	th_level(thr, SEVERITY_WARNING, 1);
	thr->summary = xstrdup("{{metric}}: {{throttle}}");
	th_level(plain, SEVERITY_WARNING, 80);
	/* a long summary is cut at a character boundary: each 'é' is two bytes */
	memset(big, 0, sizeof(big));
	for (size_t i = 0; i + 2 < sizeof(big); i += 2) {
		memcpy(big + i, "\xc3\xa9", 2);
	}
	plain->summary = xstrdup(big);

	e = engine_create(set, record, &rec);
	engine_set_board(e, "orin-7", "orin-7-id");
	at(s, 0, "MAXN");
	th_put(s, "temp.cpu_c", 96.5);
	th_put(s, "temp.gpu_c", 81);
	th_put(s, "throttle.active", 1);
	th_put(s, "throttle.thermal", 1);
	th_put(s, "throttle.overcurrent", 1);
	s->throttle.active = true;
	s->throttle.reason[THROTTLE_THERMAL] = true;
	snprintf(s->throttle.why[THROTTLE_THERMAL], THROTTLE_WHY_MAX, "cpu at 96.0 C >= passive trip 95.0 C");
	s->throttle.reason[THROTTLE_OVERCURRENT] = true;
	snprintf(s->throttle.why[THROTTLE_OVERCURRENT], THROTTLE_WHY_MAX, "oc1 event count 0 -> 2 (+2)");
	s->throttle.causes[0] = (struct throttle_cause){THROTTLE_THERMAL, "trip", "cpu", 96, 95};
	s->throttle.causes[1] = (struct throttle_cause){THROTTLE_OVERCURRENT, "oc_event", "oc1", 2, 0};
	s->throttle.cause_count = 2;
	engine_evaluate(e, s);

	assert_int_equal(rec.n, 5);
	assert_string_equal(rec.ev[0].summary,
			    "cpu-hot on orin-7: temp.cpu_c at 96.5 C >= 95 (critical, robots, , MAXN, firing)");
	assert_string_equal(rec.ev[0].description, "lab 2 {{bogus}} {single}");
	assert_string_equal(rec.ev[0].throttle, "");
	/* scoped to the board: the same rule and metric elsewhere give another fingerprint */
	assert_string_equal(rec.ev[0].fp, "2b91b15c8f535318");
	assert_string_equal(rec.ev[1].metric, "throttle.active");
	assert_string_equal(rec.ev[1].throttle,
			    "thermal: cpu at 96.0 C >= passive trip 95.0 C; overcurrent: oc1 event count 0 -> 2 (+2)");
	assert_string_equal(rec.ev[1].summary, "throttle.active: thermal: cpu at 96.0 C >= passive trip 95.0 C; "
					       "overcurrent: oc1 event count 0 -> 2 (+2)");
	assert_string_equal(rec.ev[2].metric, "throttle.thermal");
	assert_string_equal(rec.ev[2].throttle, "thermal: cpu at 96.0 C >= passive trip 95.0 C");
	assert_string_equal(rec.ev[3].metric, "throttle.overcurrent");
	assert_string_equal(rec.ev[3].throttle, "overcurrent: oc1 event count 0 -> 2 (+2)");
	/* the same reasons as data: all for throttle.active, its own for a reason, none elsewhere */
	assert_int_equal(rec.ev[0].cause_count, 0);
	assert_int_equal(rec.ev[1].cause_count, 2);
	assert_string_equal(rec.ev[1].causes[1].source, "oc1");
	assert_int_equal(rec.ev[2].cause_count, 1);
	assert_string_equal(rec.ev[2].causes[0].kind, "trip");
	assert_string_equal(rec.ev[2].causes[0].source, "cpu");
	assert_true(rec.ev[2].causes[0].value == 96 && rec.ev[2].causes[0].limit == 95);
	assert_int_equal(rec.ev[3].cause_count, 1);
	assert_int_equal(rec.ev[3].causes[0].reason, THROTTLE_OVERCURRENT);
	assert_string_equal(rec.ev[4].metric, "temp.gpu_c");
	/* 511 bytes fit: 255 characters, and half of the 256th is dropped */
	assert_int_equal(strlen(rec.ev[4].summary), 510);
	assert_int_equal((unsigned char)rec.ev[4].summary[509], 0xa9);

	/* the resolve says it ended, not the firing template in the present tense (fired at time 0, which stands for
	 * "not started": no length; test_first_minutes.py checks one) */
	at(s, 1000, "MAXN");
	th_put(s, "temp.cpu_c", 93.25);
	th_put(s, "temp.gpu_c", 81);
	engine_evaluate(e, s);
	assert_string_equal(rec.ev[5].summary, "orin-7: cpu-hot ended (temp.cpu_c: now 93.25)");
	engine_destroy(e);
	th_rule_set_free(set);
	rec_reset(&rec);
}

static void
test_default_summary(void **state)
{
	static const struct pt pts[] = { { 0, 40 }, { 1000, 96.125 }, END_PT };
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(1);
	struct rule *r = th_rule_init(set, 0, "hot", "temp.cpu_c", RULE_ABOVE);
	struct recorder rec = { 0 };
	struct engine *e;

	th_level(r, SEVERITY_WARNING, 95);
	e = engine_create(set, record, &rec);
	feed(e, s, "temp.cpu_c", pts);
	assert_int_equal(rec.n, 1);
	assert_string_equal(rec.ev[0].summary, "hot firing: temp.cpu_c = 96.125 (threshold 95)");
	assert_string_equal(rec.ev[0].description, "");
	engine_destroy(e);
	th_rule_set_free(set);
	rec_reset(&rec);
}

/* ---- the actions an event calls ------------------------------------------------------ */

static char **
names(const char *a, const char *b)
{
	char **v = xcalloc(3, sizeof(*v));
	v[0] = xstrdup(a);
	v[1] = b ? xstrdup(b) : NULL;
	return v;
}

/*
 * Each event names its actions: the rule's for its severity, else notify:'s
 * (per severity); none while pending or once cancelled. A reload's resolve
 * of a removed rule takes the new binding, as the new configuration's.
 */
static void
test_events_name_their_actions(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(2);
	struct rule *plain = th_rule_init(set, 0, "plain", "temp.cpu_c", RULE_ABOVE);
	th_level(plain, SEVERITY_WARNING, 80);
	th_level(plain, SEVERITY_CRITICAL, 90);
	plain->for_ms = 1000;
	struct rule *own = th_rule_init(set, 1, "own", "temp.gpu_c", RULE_ABOVE);
	th_level(own, SEVERITY_WARNING, 80);
	own->has_actions = true;
	own->actions[SEVERITY_WARNING] = names("hook", NULL);
	own->action_count[SEVERITY_WARNING] = 1;
	char **warn = names("log", NULL), **crit = names("log", "page");
	char **const notify[SEVERITY_COUNT] = {NULL, warn, crit};
	const size_t notify_count[SEVERITY_COUNT] = {0, 1, 2};
	struct recorder rec = {0};
	struct engine *e = engine_create(set, record, &rec);
	engine_set_notify(e, notify, notify_count);

	static const double cpu[] = {85, 70, 85, 85, 95, 95, 50}; /* critical too holds `for` before it escalates */
	for (int i = 0; i < 7; i++) {
		at(s, i * 1000, "MAXN");
		th_put(s, "temp.cpu_c", cpu[i]);
		th_put(s, "temp.gpu_c", i == 0 ? 85 : 50);
		engine_evaluate(e, s);
	}
	static const struct {
		const char *rule;
		enum alert_transition t;
		const char *actions;
	} want[] = {
		{"plain", TRANSITION_PENDING, ""},
		{"own", TRANSITION_FIRING, "hook"},
		{"plain", TRANSITION_CANCELLED, ""},
		{"own", TRANSITION_RESOLVED, "hook"},
		{"plain", TRANSITION_PENDING, ""},
		{"plain", TRANSITION_FIRING, "log"},
		{"plain", TRANSITION_ESCALATED, "log,page"},
		{"plain", TRANSITION_RESOLVED, "log,page"},
	};
	assert_int_equal(rec.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < rec.n; i++) {
		assert_string_equal(rec.ev[i].metric, strcmp(want[i].rule, "own") == 0 ? "temp.gpu_c" : "temp.cpu_c");
		assert_int_equal(rec.ev[i].t, want[i].t);
		assert_string_equal(rec.ev[i].actions, want[i].actions);
	}

	/* a reload drops "plain" while it fires: its resolve goes where the new binding says */
	for (int64_t t = 7000; t <= 8000; t += 1000) {
		at(s, t, "MAXN");
		th_put(s, "temp.cpu_c", 85);
		engine_evaluate(e, s);
	}
	assert_int_equal(rec.ev[rec.n - 1].t, TRANSITION_FIRING);
	struct rule_set *kept = th_rule_set_new(1);
	th_level(th_rule_init(kept, 0, "own", "temp.gpu_c", RULE_ABOVE), SEVERITY_WARNING, 80);
	char **paged = names("page", NULL);
	char **const notify2[SEVERITY_COUNT] = {NULL, paged, NULL};
	const size_t count2[SEVERITY_COUNT] = {0, 1, 0};
	struct engine *e2 = engine_create(kept, record, &rec);
	engine_set_notify(e2, notify2, count2);
	size_t before = rec.n;
	engine_adopt(e2, e);
	assert_int_equal(rec.n, before + 1);
	assert_int_equal(rec.ev[before].t, TRANSITION_RESOLVED);
	assert_string_equal(rec.ev[before].actions, "page");

	engine_destroy(e2);
	engine_destroy(e);
	th_rule_set_free(kept);
	th_rule_set_free(set);
	cfg_free_string_list(warn);
	cfg_free_string_list(crit);
	cfg_free_string_list(paged);
	rec_reset(&rec);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_glob_expansion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_glob_instance_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_mode_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_mode_cancels_pending, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trip_relative, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changes_increases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repeat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_template_rendering, setup, teardown),
		cmocka_unit_test(test_template_absent_value),
		cmocka_unit_test(test_template_metric_label),
		cmocka_unit_test_setup_teardown(test_labels_and_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_default_summary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events_name_their_actions, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
