/*
 * The pipeline (core/pipeline.h, core/loop.c): fake sources,
 * stages and sinks record what the loop calls, in which order, and what
 * they see; the real rules stage shows that the sample on which an alert
 * fires carries agent.alerts_firing = 1.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/alerting.h"
#include "agent/config.h"
#include "core/loop.h"
#include "core/diag.h"

/* ---- a shared call log ---- */

static char calls[4096];

static void
logcall(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
logcall(const char *fmt, ...)
{
	size_t len = strlen(calls);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(calls + len, sizeof(calls) - len, fmt, ap);
	va_end(ap);
}

/* ---- a fake source: returns the results it is given, one per tick ---- */

struct fake_source {
	struct source base;
	const char *name;
	const int *results; /* 0, -EAGAIN, -ENODATA ... */
	size_t count, at;
	double value;
};

static int
fake_read(struct source *src, struct sample *s)
{
	struct fake_source *fs = (struct fake_source *)src;
	int r = fs->at < fs->count ? fs->results[fs->at] : -ENODATA;
	fs->at++;
	logcall("read:%s ", fs->name);
	if (r == 0) {
		char metric[64];
		snprintf(metric, sizeof(metric), "temp.%s_c", fs->name);
		metric_set_put(&s->metrics, metric, fs->value);
	}
	return r;
}

static void
fake_source_destroy(struct source *src)
{
	logcall("destroy:%s ", ((struct fake_source *)src)->name);
	free(src);
}

static const struct source_ops fake_source_ops = {
	.name = "fake",
	.read = fake_read,
	.destroy = fake_source_destroy,
};

static struct fake_source *
fake_source(const char *name, const int *results, size_t count)
{
	struct fake_source *fs = calloc(1, sizeof(*fs));
	assert_non_null(fs);
	fs->base.ops = &fake_source_ops;
	fs->name = name;
	fs->results = results;
	fs->count = count;
	return fs;
}

/* ---- a fake stage: adds a metric, emits one alert event when asked ---- */

struct fake_stage {
	struct stage base;
	const char *name;
	bool emit;
};

static int
fake_process(struct stage *st, struct sample *s)
{
	struct fake_stage *fs = (struct fake_stage *)st;
	logcall("process:%s ", fs->name);
	char metric[64];
	snprintf(metric, sizeof(metric), "stage.%s", fs->name);
	/* a later stage sees what an earlier one added */
	metric_set_put(&s->metrics, metric, (double)s->metrics.count);
	if (fs->emit) {
		struct alert_event ev = {.rule_name = fs->name, .metric = metric, .transition = TRANSITION_FIRING};
		alert_fanout_emit(st->out, &ev);
	}
	return 0;
}

static void
fake_stage_add_metrics(struct stage *st, struct metric_set *m)
{
	struct fake_stage *fs = (struct fake_stage *)st;
	logcall("stage-metrics:%s ", fs->name);
	(void)m;
}

/* Stages hear the fan-out too (the rules stage's actions), their own events included. */
static void
fake_stage_notify(struct stage *st, const struct alert_event *ev)
{
	logcall("stage-notify:%s(%s) ", ((struct fake_stage *)st)->name, ev->rule_name);
}

static void
fake_stage_destroy(struct stage *st)
{
	logcall("destroy:%s ", ((struct fake_stage *)st)->name);
	free(st);
}

static const struct stage_ops fake_stage_ops = {
	.name = "fake",
	.process = fake_process,
	.add_metrics = fake_stage_add_metrics,
	.notify = fake_stage_notify,
	.destroy = fake_stage_destroy,
};

static struct stage *
fake_stage(const char *name, bool emit)
{
	struct fake_stage *fs = calloc(1, sizeof(*fs));
	assert_non_null(fs);
	fs->base.ops = &fake_stage_ops;
	fs->name = name;
	fs->emit = emit;
	return &fs->base;
}

/* ---- a fake sink: records samples and alert events ---- */

struct fake_sink {
	struct sink base;
	const char *name;
	int writes, events;
	double last_firing; /* agent.alerts_firing of the last sample written, -1 when absent */
	double firing_when_notified; /* of the sample being processed when the first event arrived */
	int64_t first_event_seq;
	uint64_t seq_written;
};

static int
fake_write(struct sink *sink, const struct sample *s)
{
	struct fake_sink *fs = (struct fake_sink *)sink;
	logcall("write:%s ", fs->name);
	fs->writes++;
	fs->seq_written = s->seq;
	if (!metric_set_get(&s->metrics, "agent.alerts_firing", &fs->last_firing)) {
		fs->last_firing = -1;
	}
	return 0;
}

static void
fake_notify(struct sink *sink, const struct alert_event *ev)
{
	struct fake_sink *fs = (struct fake_sink *)sink;
	logcall("notify:%s(%s) ", fs->name, ev->rule_name);
	if (fs->events++ == 0) {
		fs->first_event_seq = (int64_t)fs->seq_written + 1; /* the sample being processed */
	}
}

static void
fake_sink_add_metrics(struct sink *sink, struct metric_set *m)
{
	struct fake_sink *fs = (struct fake_sink *)sink;
	logcall("sink-metrics:%s ", fs->name);
	metric_set_put(m, "sink.writes_total", fs->writes);
}

static void
fake_sink_destroy(struct sink *sink)
{
	logcall("destroy:%s ", ((struct fake_sink *)sink)->name);
	free(sink);
}

static const struct sink_ops fake_sink_ops = {
	.name = "fake",
	.write = fake_write,
	.notify = fake_notify,
	.add_metrics = fake_sink_add_metrics,
	.destroy = fake_sink_destroy,
};

/* A sink with only notify (the replay timeline), to check that write is optional. */
static const struct sink_ops notify_only_ops = {
	.name = "notify-only",
	.notify = fake_notify,
	.destroy = fake_sink_destroy,
};

static struct fake_sink *
fake_sink(const char *name, const struct sink_ops *ops)
{
	struct fake_sink *fs = calloc(1, sizeof(*fs));
	assert_non_null(fs);
	fs->base.ops = ops;
	fs->name = name;
	fs->last_firing = -1;
	return fs;
}

/* ---- tests ---- */

static void
test_tick_order(void **state)
{
	(void)state;
	calls[0] = '\0';
	static const int ok[] = {0, 0};
	struct agent *agent = agent_create(&(struct agent_options){.interval_ms = 1000});
	struct fake_source *a = fake_source("a", ok, 2);
	struct fake_source *b = fake_source("b", ok, 2);
	agent_add_source(agent, &a->base);
	agent_add_source(agent, &b->base);
	agent_add_stage(agent, fake_stage("throttle", false));
	agent_add_stage(agent, fake_stage("rules", true));
	struct fake_sink *s1 = fake_sink("s1", &fake_sink_ops);
	struct fake_sink *s2 = fake_sink("s2", &notify_only_ops);
	agent_add_sink(agent, &s1->base);
	agent_add_sink(agent, &s2->base);

	assert_int_equal(agent_tick(agent), 0);
	/* sources in order, then sink counters, then each stage with its counters right after,
	 * its alert event at once to every stage and every sink with notify, then the writes */
	assert_string_equal(calls, "read:a read:b sink-metrics:s1 process:throttle stage-metrics:throttle "
				   "process:rules stage-notify:throttle(rules) stage-notify:rules(rules) "
				   "notify:s1(rules) notify:s2(rules) stage-metrics:rules write:s1 ");
	assert_int_equal(agent_sample_count(agent), 1);
	assert_int_equal(s1->writes, 1);
	assert_int_equal(s2->events, 1);
	calls[0] = '\0';
	agent_destroy(agent);
	/* everything the agent owns is destroyed, whatever the order */
	assert_non_null(strstr(calls, "destroy:a "));
	assert_non_null(strstr(calls, "destroy:b "));
	assert_non_null(strstr(calls, "destroy:throttle "));
	assert_non_null(strstr(calls, "destroy:rules "));
	assert_non_null(strstr(calls, "destroy:s1 "));
	assert_non_null(strstr(calls, "destroy:s2 "));
}

static void
test_eagain_and_enodata(void **state)
{
	(void)state;
	/* a: nothing new, then data; b: always nothing new, then finished */
	static const int ra[] = {-EAGAIN, 0, 0};
	static const int rb[] = {-EAGAIN, -EAGAIN, -ENODATA};
	struct agent *agent = agent_create(&(struct agent_options){.interval_ms = 1000});
	agent_add_source(agent, &fake_source("a", ra, 3)->base);
	agent_add_source(agent, &fake_source("b", rb, 3)->base);
	agent_add_stage(agent, fake_stage("st", false));
	struct fake_sink *sink = fake_sink("s", &fake_sink_ops);
	agent_add_sink(agent, &sink->base);

	calls[0] = '\0';
	/* every source -EAGAIN: no sample, no stage, no write */
	assert_int_equal(agent_tick(agent), 0);
	assert_string_equal(calls, "read:a read:b ");
	assert_int_equal(agent_sample_count(agent), 0);
	/* one source with data: a sample */
	assert_int_equal(agent_tick(agent), 0);
	assert_int_equal(agent_sample_count(agent), 1);
	assert_int_equal(sink->writes, 1);
	/* a finished source ends the run, with no half sample */
	assert_int_equal(agent_tick(agent), 1);
	assert_int_equal(agent_sample_count(agent), 1);
	assert_int_equal(sink->writes, 1);
	agent_destroy(agent);
}

static void
test_run_stops_at_end_of_replay(void **state)
{
	(void)state;
	static const int r[] = {0, 0, 0, -ENODATA};
	struct agent *agent = agent_create(&(struct agent_options){.interval_ms = 10});
	agent_add_source(agent, &fake_source("a", r, 4)->base);
	struct fake_sink *sink = fake_sink("s", &fake_sink_ops);
	agent_add_sink(agent, &sink->base);
	assert_int_equal(agent_run(agent), 0);
	assert_int_equal(agent_sample_count(agent), 3);
	assert_int_equal(sink->writes, 3);
	agent_destroy(agent);
}

static void
test_full_lists_destroy_what_they_refuse(void **state)
{
	(void)state;
	struct agent *agent = agent_create(&(struct agent_options){.interval_ms = 1000});
	int refused = 0;
	for (int i = 0; i < 20; i++) {
		refused += agent_add_stage(agent, fake_stage("x", false)) == -ENOSPC;
	}
	assert_true(refused > 0);
	agent_destroy(agent); /* ASan: nothing leaks */
}

/* The real rules stage: the sample that fires carries agent.alerts_firing = 1. */
static void
test_firing_sample_counts_its_alert(void **state)
{
	(void)state;
	static const char yaml[] = "agent: {state_file: \"\"}\n"
				   "rules:\n"
				   "  - name: fake-high\n"
				   "    metric: temp.a_c\n"
				   "    warning: 50\n";
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg;
	int r = config_load_buffer("test.yaml", yaml, sizeof(yaml) - 1, &cfg, &diags);
	diag_list_print(&diags, stderr);
	diag_list_free(&diags);
	assert_int_equal(r, 0);

	static const int ok[] = {0, 0, 0};
	struct agent *agent = agent_create(&(struct agent_options){.interval_ms = 1000});
	struct fake_source *src = fake_source("a", ok, 3);
	agent_add_source(agent, &src->base);
	assert_int_equal(alerting_add(agent, cfg, "jetson", "", false, NULL), 0);
	struct fake_sink *sink = fake_sink("s", &fake_sink_ops);
	agent_add_sink(agent, &sink->base);

	src->value = 10;
	agent_tick(agent);
	assert_int_equal(sink->events, 0);
	assert_true(sink->last_firing == 0);
	src->value = 90; /* fires on this sample */
	agent_tick(agent);
	assert_int_equal(sink->events, 1);
	assert_int_equal(sink->first_event_seq, 2);
	assert_true(sink->last_firing == 1);
	agent_destroy(agent);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tick_order),
		cmocka_unit_test(test_eagain_and_enodata),
		cmocka_unit_test(test_run_stops_at_end_of_replay),
		cmocka_unit_test(test_full_lists_destroy_what_they_refuse),
		cmocka_unit_test(test_firing_sample_counts_its_alert),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
