/*
 * The OOM killer's victims, from the kernel log to the alert: the kill line
 * in real log lines and real /dev/kmsg records (tests/fixtures/oom_log,
 * its README says where each comes from), the sample's "oom_killed" in JSON
 * and back, and {{oom_killed}} in an alert's summary.
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

#include "core/json.h"
#include "core/json_read.h"
#include "core/sample_json.h"
#include "core/xalloc.h"
#include "engine_events.h"
#include "helpers.h"
#include "host/oom_log.h"

/* the message of a fixture line: what follows dmesg's "[...] " and syslog's "... kernel: " */
static const char *
message_of(const char *line)
{
	const char *k = strstr(line, " kernel: ");
	const char *p = k ? k + strlen(" kernel: ") : line;
	if (*p == '[') {
		const char *close = strstr(p, "] ");
		p = close ? close + 2 : p;
	}
	return p;
}

/* Every line of the public captures: the kills named, the older kernels' choice, the reaper and the constraint not. */
static void
test_messages(void **state)
{
	(void)state;
	static const struct {
		int32_t pid; /* 0: no kill */
		const char *comm;
	} want[] = {
		{0, NULL},     {2700, "DeviceMemory"}, {0, NULL},      {28438, "java"},
		{0, NULL},     {42453, "memcg_test_1"}, {63214, "uwsgi"}, {0, NULL},
		{0, NULL},     {360, "polkitd"},       {140113, "simplescreenrec"}, {3783517, "pulse"},
	};
	char *text = th_read_file(FIXTURES_DIR "/oom_log/messages", NULL);
	assert_non_null(text);
	size_t n = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), n++) {
		assert_true(n < sizeof(want) / sizeof(want[0]));
		const char *msg = message_of(line);
		struct oom_victim v = {.pid = -7, .comm = "untouched"};
		int r = oom_log_parse_message(msg, strlen(msg), &v);
		print_message("line %zu: %s\n", n + 1, msg);
		if (want[n].pid == 0) {
			assert_int_equal(r, -ENOENT);
			assert_int_equal(v.pid, -7);
		} else {
			assert_int_equal(r, 0);
			assert_int_equal(v.pid, want[n].pid);
			assert_string_equal(v.comm, want[n].comm);
		}
	}
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	free(text);
}

/* Real /dev/kmsg records: the kernel's kills only, names with blanks, parentheses and escapes decoded. */
static void
test_records(void **state)
{
	(void)state;
	static const struct {
		int r;
		int32_t pid;
		const char *comm;
	} want[] = {
		{-ENOENT, 0, NULL},   {-ENOENT, 0, NULL}, {0, 6007, "python3"}, {-ENOENT, 0, NULL},
		{-ENOENT, 0, NULL},   {-ENOENT, 0, NULL}, {-ENOENT, 0, NULL}, /* user space's "kill": facility 1 */
		{0, 19060, "tw oom(hog)"}, {0, 19082, "x?y) z\\w"},
	};
	size_t len;
	char *text = th_read_file(FIXTURES_DIR "/oom_log/kmsg", &len);
	assert_non_null(text);
	size_t n = 0;
	for (const char *rec = text; rec < text + len; n++) {
		/* one record: its line and the continuation lines that start with a blank */
		const char *end = rec;
		do {
			const char *nl = memchr(end, '\n', (size_t)(text + len - end));
			end = nl ? nl + 1 : text + len;
		} while (end < text + len && *end == ' ');
		assert_true(n < sizeof(want) / sizeof(want[0]));
		struct oom_victim v = {0};
		int r = oom_log_parse_record(rec, (size_t)(end - rec), &v);
		print_message("record %zu: %.*s", n + 1, (int)(end - rec), rec);
		assert_int_equal(r, want[n].r);
		if (r == 0) {
			assert_int_equal(v.pid, want[n].pid);
			assert_string_equal(v.comm, want[n].comm);
		}
		rec = end;
	}
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	free(text);
}

/* What is no record, and kill lines cut or odd: refused or read as far as they say, never past their length. */
static void
test_edges(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int r;
		int32_t pid;
		const char *comm;
	} cases[] = {
		{"", -EINVAL, 0, NULL},
		{"no record", -EINVAL, 0, NULL},
		{"3,1,2;Killed process 5 (a) total-vm:1kB\n", -EINVAL, 0, NULL},   /* three fields before ';' */
		{"3,1,2,-\nKilled process 5 (a) total-vm:1kB\n", -EINVAL, 0, NULL}, /* ';' on a continuation line */
		{"x,1,2,-;Killed process 5 (a) total-vm:1kB\n", -EINVAL, 0, NULL},
		{"99999999999999999999,1,2,-;Killed process 5 (a)\n", -EINVAL, 0, NULL},
		{"3,1,2,-,caller=T1;Killed process 5 (a b) total-vm:1kB\n", 0, 5, "a b"}, /* a later field */
		{"3,1,2,-;Killed process 5 (a)", 0, 5, "a"},                              /* no newline */
		{"3,1,2,-;Killed process 5 ()\n", 0, 5, ""},
		{"3,1,2,-;Killed process 0 (a)\n", -ENOENT, 0, NULL},
		{"3,1,2,-;Killed process 2147483648 (a)\n", -ENOENT, 0, NULL},
		{"3,1,2,-;Killed process 12345678901 (a)\n", -ENOENT, 0, NULL},
		{"3,1,2,-;Killed process 5 (a\n", -ENOENT, 0, NULL},
		{"3,1,2,-;Killed process 5(a)\n", -ENOENT, 0, NULL},
		{"3,1,2,-;Killed process x (a)\n", -ENOENT, 0, NULL},
		{"3,1,2,-;driver: not Killed process 5 (a)\n", -ENOENT, 0, NULL}, /* neither at the start nor after ": " */
		{"3,1,2,-;Killed process 5 (a) b)\n", 0, 5, "a) b"},              /* a ')' ends the message */
		{"3,1,2,-;Killed process 5 (a) b) c d\n", 0, 5, "a"},             /* else the first ')' and a blank */
		{"3,1,2,-;Killed process 5 (\\x7f\\x0\\x4G) total-vm:1kB\n", 0, 5, "?\\x0\\x4G"},
		{"3,1,2,-;Killed process 5 (aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa) "
		 "total-vm:1kB\n",
		 0, 5, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}, /* cut to TOP_COMM_MAX */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case: %s\n", cases[i].text);
		/* exactly its length on the heap: ASan sees a read past it */
		size_t len = strlen(cases[i].text);
		char *exact = xmalloc(len ? len : 1);
		memcpy(exact, cases[i].text, len);
		struct oom_victim v = {0};
		assert_int_equal(oom_log_parse_record(exact, len, &v), cases[i].r);
		if (cases[i].r == 0) {
			assert_int_equal(v.pid, cases[i].pid);
			assert_string_equal(v.comm, cases[i].comm);
		}
		free(exact);
	}
}

/* A sample's victims in JSON (recordings, the API) and read back; a list too long counts the rest in "more". */
static void
test_sample_json(void **state)
{
	(void)state;
	struct sample *s = th_sample_new();
	s->oom_killed.count = 2;
	s->oom_killed.list[0] = (struct oom_victim){.pid = 19060, .comm = "tw oom(hog)"};
	s->oom_killed.list[1] = (struct oom_victim){.pid = 7, .comm = "a\"b"};
	s->oom_killed.more = 3;
	struct json j;
	json_init(&j);
	oom_victims_to_json(&j, &s->oom_killed);
	assert_string_equal(j.out.buf,
			    "{\"processes\":[{\"pid\":19060,\"comm\":\"tw oom(hog)\"},{\"pid\":7,\"comm\":\"a\\\"b\"}],"
			    "\"more\":3}");
	struct json_reader r;
	struct oom_victims back = {.count = 9};
	json_reader_init(&r, j.out.buf);
	oom_victims_from_json(&r, &back);
	assert_false(r.failed);
	assert_int_equal(back.count, 2);
	assert_int_equal(back.more, 3);
	assert_int_equal(back.list[0].pid, 19060);
	assert_string_equal(back.list[1].comm, "a\"b");

	json_reset(&j);
	sample_to_json(&j, s);
	assert_non_null(strstr(j.out.buf, "\"oom_killed\":{\"processes\":[{\"pid\":19060,"));
	sample_clear(s);
	assert_int_equal(s->oom_killed.count + s->oom_killed.more, 0);
	json_reset(&j);
	sample_to_json(&j, s);
	assert_null(strstr(j.out.buf, "oom_killed")); /* a sample without victims says nothing of them */

	const char *six = "{\"processes\":[{\"pid\":1,\"comm\":\"a\"},{\"pid\":2},{\"pid\":3},{\"pid\":4},{\"pid\":5},"
			  "{\"pid\":6},7],\"more\":1,\"x\":[]}";
	json_reader_init(&r, six);
	oom_victims_from_json(&r, &back);
	assert_false(r.failed);
	assert_int_equal(back.count, OOM_VICTIMS_MAX);
	assert_int_equal(back.more, 6 - OOM_VICTIMS_MAX + 1);
	assert_string_equal(back.list[0].comm, "a");
	assert_string_equal(back.list[1].comm, "");
	json_free(&j);
	free(s);
}

/* {{oom_killed}}: the victims of the sample on which oom.kills_total grew, else "a process". */
static void
test_summary(void **state)
{
	struct sample *s = *state;
	struct rule_set *set = th_rule_set_new(1);
	struct rule *r = th_rule_init(set, 0, "oom-kill", "oom.kills_total", RULE_INCREASES);
	r->summary = xstrdup("the OOM killer ended {{oom_killed}} ({{value}} since boot)");
	struct recorder rec = {0};
	struct engine *e = engine_create(set, record, &rec);
	at(s, 0, "MAXN");
	th_put(s, "oom.kills_total", 3);
	engine_evaluate(e, s);
	at(s, 1000, "MAXN");
	th_put(s, "oom.kills_total", 4);
	s->oom_killed.count = 1;
	s->oom_killed.list[0] = (struct oom_victim){.pid = 19060, .comm = "tw oom(hog)"};
	engine_evaluate(e, s); /* fires, naming it */
	at(s, 2000, "MAXN");
	th_put(s, "oom.kills_total", 4);
	engine_evaluate(e, s); /* resolves */
	at(s, 3000, "MAXN");
	th_put(s, "oom.kills_total", 9); /* the log named none (not readable) */
	engine_evaluate(e, s);
	at(s, 4000, "MAXN");
	th_put(s, "oom.kills_total", 9);
	engine_evaluate(e, s);
	at(s, 5000, "MAXN");
	th_put(s, "oom.kills_total", 15);
	s->oom_killed.count = OOM_VICTIMS_MAX;
	for (int i = 0; i < OOM_VICTIMS_MAX; i++) {
		s->oom_killed.list[i] = (struct oom_victim){.pid = 100 + i, .comm = "w"};
	}
	s->oom_killed.more = 2;
	engine_evaluate(e, s);
	engine_destroy(e);
	th_rule_set_free(set);
	assert_int_equal(rec.n, 5);
	assert_int_equal(rec.ev[0].t, TRANSITION_FIRING);
	assert_string_equal(rec.ev[0].summary, "the OOM killer ended tw oom(hog) (pid 19060) (4 since boot)");
	assert_int_equal(rec.ev[2].t, TRANSITION_FIRING);
	assert_string_equal(rec.ev[2].summary, "the OOM killer ended a process (9 since boot)");
	assert_string_equal(rec.ev[4].summary, "the OOM killer ended w (pid 100), w (pid 101), w (pid 102), w (pid 103) "
					       "and 2 more (15 since boot)");
	rec_reset(&rec);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_sample_json),
		cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
