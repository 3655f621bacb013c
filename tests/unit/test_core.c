/* Metric sets, the text buffer, the JSON writer and a sample's metrics formatted once (metrics_text.h). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emulator.h"

#include "core/buf.h"
#include "core/json.h"
#include "core/metrics.h"
#include "core/metrics_text.h"
#include "core/sample_json.h"

static struct metric_set *
new_set(void)
{
	struct metric_set *set = calloc(1, sizeof(*set));
	assert_non_null(set);
	metric_set_clear(set);
	return set;
}

static void
test_put_replace_find(void **state)
{
	(void)state;
	struct metric_set *set = new_set();
	double v = 0;
	assert_int_equal(metric_set_put(set, "temp.cpu_c", 40.5), 0);
	assert_int_equal(metric_set_put(set, "temp.gpu_c", 39), 0);
	assert_int_equal(metric_set_put(set, "temp.cpu_c", 41.25), 0);
	assert_int_equal(set->count, 2);
	assert_true(metric_set_get(set, "temp.cpu_c", &v));
	assert_true(v == 41.25);
	assert_false(metric_set_get(set, "temp.cp", &v));
	assert_int_equal(metric_set_put_n(set, "cpu.0.load_pctXXXX", 14, 7), 0);
	assert_true(metric_set_get(set, "cpu.0.load_pct", &v));
	assert_true(v == 7);
	assert_int_equal(metric_set_put(set, "", 1), -EINVAL);
	char longname[METRIC_NAME_MAX + 1];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[METRIC_NAME_MAX] = '\0';
	assert_int_equal(metric_set_put(set, longname, 1), -EINVAL);
	assert_true(metric_set_remove(set, "temp.gpu_c"));
	assert_false(metric_set_remove(set, "temp.gpu_c"));
	assert_int_equal(set->count, 2);
	assert_true(metric_set_get(set, "cpu.0.load_pct", &v));
	assert_int_equal(metric_set_putf(set, 3, "cpu.%d.online", 11), 0);
	assert_true(metric_set_get(set, "cpu.11.online", &v) && v == 3);
	free(set);
}

/* The whole-word put finds and replaces the same names as the plain one, at every length. */
static void
test_put_buf_matches_put_n(void **state)
{
	(void)state;
	struct metric_set *set = new_set();
	char buf[METRIC_NAME_MAX + 16];
	for (size_t len = 1; len < METRIC_NAME_MAX; len++) {
		memset(buf, 'x', sizeof(buf)); /* bytes past the name must not matter */
		for (size_t i = 0; i < len; i++) {
			buf[i] = (char)('a' + (i * 7 + len) % 26);
		}
		assert_int_equal(metric_set_put_buf(set, buf, len, (double)len), 0);
		char name[METRIC_NAME_MAX];
		memcpy(name, buf, len);
		name[len] = '\0';
		double v = 0;
		assert_true(metric_set_get(set, name, &v));
		assert_true(v == (double)len);
		assert_int_equal(metric_set_put_n(set, name, len, -1), 0);
		assert_int_equal(set->count, len); /* replaced, not added */
	}
	memset(buf, 'a', sizeof(buf));
	assert_int_equal(metric_set_put_buf(set, buf, METRIC_NAME_MAX, 1), -EINVAL);
	assert_int_equal(metric_set_put_buf(set, buf, 0, 1), -EINVAL);
	free(set);
}

static void
test_capacity_and_sort(void **state)
{
	(void)state;
	struct metric_set *set = new_set();
	for (int i = 0; i < METRIC_SET_MAX; i++) {
		assert_int_equal(metric_set_putf(set, i, "m.%04d", METRIC_SET_MAX - i), 0);
	}
	assert_int_equal(metric_set_put(set, "one.more", 1), -ENOSPC);
	/* replacing still works when full */
	assert_int_equal(metric_set_put(set, "m.0001", -1), 0);
	metric_set_sort(set);
	assert_string_equal(set->items[0].name, "m.0001");
	assert_true(set->items[0].value == -1);
	double v;
	assert_true(metric_set_get(set, "m.0512", &v) && v == 0);
	free(set);
}

/*
 * A set refilled with the same names in the same order takes a path that
 * neither hashes nor copies (metric_put_replay_). Checked against a plain
 * list over random runs: lines that repeat the last one, that change a
 * name, drop or add one, repeat a name, and removes and sorts in between,
 * past the index's generation wrap.
 */
struct model {
	size_t count;
	int name[METRIC_SET_MAX];
	double value[METRIC_SET_MAX];
	int where[METRIC_SET_MAX]; /* by name id: index in name[], or -1 */
};

/* enough names that the index's probe runs get long and depend on order */
#define POOL 500
#define LINE_MAX_NAMES 320

static void
pool_name(int id, char *buf)
{
	/*
	 * Lengths 2..40 so every compare shape (short, one word, two, more) is
	 * hit; the id sits in the middle, so that same-length names differ
	 * in neither their first nor their last eight bytes.
	 */
	static const char *const shapes[] = { "a%d", "cpu.%d.load_pct", "gpu.gpc.%d.freq_mhz",
					      "engine.nvjpg%d.load_pct", "power.vdd_%d_gpu_cv.avg_mw",
					      "temp.some_rather_long_%d_sensor_name_c" };
	snprintf(buf, METRIC_NAME_MAX, shapes[id % 6], id);
}

/* The id in a pool name: its only run of digits. */
static int
id_of(const char *name)
{
	while (*name && (*name < '0' || *name > '9')) {
		name++;
	}
	return atoi(name);
}

static void
model_clear(struct model *m)
{
	m->count = 0;
	for (int id = 0; id < POOL; id++) {
		m->where[id] = -1;
	}
}

static void
model_put(struct model *m, int id, double value)
{
	if (m->where[id] >= 0) {
		m->value[m->where[id]] = value;
		return;
	}
	m->where[id] = (int)m->count;
	m->name[m->count] = id;
	m->value[m->count++] = value;
}

static void
model_remove_first(struct model *m)
{
	m->where[m->name[0]] = -1;
	memmove(m->name, m->name + 1, (m->count - 1) * sizeof(m->name[0]));
	memmove(m->value, m->value + 1, (m->count - 1) * sizeof(m->value[0]));
	m->count--;
	for (size_t k = 0; k < m->count; k++) {
		m->where[m->name[k]] = (int)k;
	}
}

static void
check_against_model(const struct metric_set *set, const struct model *m)
{
	assert_int_equal(set->count, m->count);
	char name[METRIC_NAME_MAX];
	for (int id = 0; id < POOL; id++) {
		pool_name(id, name);
		const struct metric *found = metric_set_find(set, name);
		if (m->where[id] < 0) {
			assert_null(found);
		} else {
			assert_non_null(found);
			assert_string_equal(found->name, name);
			assert_true(found->value == m->value[m->where[id]]);
		}
	}
}

static void
test_refill_matches_model(void **state)
{
	(void)state;
	struct metric_set *set = new_set();
	struct model *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	static int line[LINE_MAX_NAMES];
	int n = 0;
	unsigned seed = 12345;
	char buf[METRIC_NAME_MAX + 16];
	/* 97 % of this program's instructions (ASan timed out at 60 s at 70,000 beside a loaded run): a tenth under qemu-user */
	int rounds = (int)(20000 / emulator_slowdown());
	for (int round = 0; round < rounds; round++) {
		seed = seed * 1103515245u + 12345u;
		unsigned r = (seed >> 16) % 100;
		if (n == 0 || r < 5) { /* a new line shape */
			n = 1 + (int)((seed >> 8) % LINE_MAX_NAMES);
			unsigned x = seed;
			for (int i = 0; i < n; i++) {
				x = x * 1664525u + 1013904223u;
				line[i] = (int)((x >> 8) % POOL);
			}
		} else if (r < 10) { /* one name changes (it may repeat another) */
			line[(seed >> 4) % (unsigned)n] = (int)((seed >> 9) % POOL);
		} else if (r < 13 && n > 1) { /* one fewer */
			n--;
		} else if (r < 16 && n < LINE_MAX_NAMES) { /* one more */
			line[n++] = (int)((seed >> 11) % POOL);
		}
		metric_set_clear(set);
		model_clear(m);
		for (int i = 0; i < n; i++) {
			double v = (double)round + i / 512.0;
			pool_name(line[i], buf);
			if (i % 2) {
				assert_int_equal(metric_set_put(set, buf, v), 0);
			} else {
				assert_int_equal(metric_set_put_buf(set, buf, strlen(buf), v), 0);
			}
			model_put(m, line[i], v);
		}
		if (r >= 97 && m->count > 1) { /* remove the first name */
			pool_name(m->name[0], buf);
			assert_true(metric_set_remove(set, buf));
			model_remove_first(m);
		} else if (r >= 94) {
			metric_set_sort(set);
			model_clear(m);
			for (size_t k = 0; k < set->count; k++) {
				model_put(m, id_of(set->items[k].name), set->items[k].value);
			}
		}
		if (r >= 94) {
			/* the next line repeats the set's new order: replays over a rebuilt index */
			n = (int)m->count;
			memcpy(line, m->name, m->count * sizeof(line[0]));
		}
		/* the index's generation wraps after 65535 clears */
		if (round % 7 == 0 || r >= 94) {
			check_against_model(set, m);
		}
	}
	free(m);
	free(set);
}

/* A put after a remove in the same fill must not replay stale items. */
static void
test_refill_then_remove(void **state)
{
	(void)state;
	struct metric_set *set = new_set();
	const char *names[] = { "x.one", "y.two", "z.three" };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(metric_set_put(set, names[i], i), 0);
	}
	metric_set_clear(set);
	assert_int_equal(metric_set_put(set, "x.one", 10), 0);
	assert_int_equal(metric_set_put(set, "y.two", 11), 0);
	assert_true(metric_set_remove(set, "x.one"));
	assert_int_equal(metric_set_put(set, "y.two", 12), 0);
	assert_int_equal(set->count, 1);
	double v;
	assert_true(metric_set_get(set, "y.two", &v) && v == 12);
	assert_false(metric_set_get(set, "x.one", &v));
	assert_int_equal(metric_set_put(set, "z.three", 13), 0);
	assert_int_equal(set->count, 2);
	assert_true(metric_set_get(set, "z.three", &v) && v == 13);
	free(set);
}

static void
test_name_valid(void **state)
{
	(void)state;
	assert_true(metric_name_valid("temp.cpu_c"));
	assert_true(metric_name_valid("gpu.gpc.1.freq_mhz"));
	assert_false(metric_name_valid("Temp.cpu_c"));
	assert_false(metric_name_valid("temp..cpu"));
	assert_false(metric_name_valid(".temp"));
	assert_false(metric_name_valid("temp."));
	assert_false(metric_name_valid("temp cpu"));
	assert_false(metric_name_valid(""));
}

static void
test_buf(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b);
	assert_null(b.buf);
	buf_add(&b, "", 0); /* an empty add still gives a string */
	assert_string_equal(b.buf, "");
	buf_adds(&b, "ab");
	buf_addc(&b, 'c');
	buf_addf(&b, "-%d-%s", 42, "x");
	assert_string_equal(b.buf, "abc-42-x");
	assert_int_equal(b.len, 8);
	/* longer than addf's stack buffer and than the first allocation */
	char big[700];
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	buf_reset(&b);
	assert_string_equal(b.buf, "");
	buf_addf(&b, "<%s>", big);
	assert_int_equal(b.len, sizeof(big) + 1);
	assert_int_equal(b.buf[0], '<');
	assert_int_equal(b.buf[b.len - 1], '>');
	assert_int_equal(b.buf[b.len], '\0');
	assert_true(b.cap > b.len);
	size_t len;
	char *text = buf_take(&b, &len);
	assert_int_equal(len, sizeof(big) + 1);
	assert_int_equal(strlen(text), len);
	assert_null(b.buf);
	assert_int_equal(b.len, 0);
	free(text);
	/* taking an empty buffer gives "", never NULL */
	text = buf_take(&b, NULL);
	assert_string_equal(text, "");
	free(text);
	buf_free(&b);
}

static void
test_json_writer(void **state)
{
	(void)state;
	struct json j;
	json_init(&j);
	json_object_begin(&j);
	json_key(&j, "s");
	json_string(&j, "a\"b\\c\n\x01");
	json_key(&j, "n");
	json_array_begin(&j);
	json_number(&j, 44.562);
	json_number(&j, 1750);
	json_number(&j, -256);
	json_number(&j, 0.1 + 0.2);
	json_number(&j, NAN);
	json_int(&j, -3);
	json_bool(&j, true);
	json_null(&j);
	json_array_end(&j);
	json_key(&j, "o");
	json_object_begin(&j);
	json_object_end(&j);
	json_object_end(&j);
	assert_string_equal(j.out.buf, "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"n\":[44.562,1750,-256,0.3,null,-3,true,null],\"o\":{}}");
	assert_int_equal(j.out.len, strlen(j.out.buf)); /* j.out.len and j.out.buf are the buffer's */
	json_reset(&j);
	json_array_begin(&j);
	json_array_end(&j);
	assert_string_equal(j.out.buf, "[]");
	json_free(&j);
}

static void
test_sample_json(void **state)
{
	(void)state;
	struct sample *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	sample_clear(s);
	s->seq = 7;
	s->time_ms = 0;
	strcpy(s->power_mode, "MAXN");
	metric_set_put(&s->metrics, "temp.cpu_c", 50.5);
	s->throttle.active = true;
	s->throttle.reason[THROTTLE_THERMAL] = true;
	strcpy(s->throttle.why[THROTTLE_THERMAL], "cpu at 96.0 C >= passive trip 95.0 C");
	struct json j;
	json_init(&j);
	sample_to_json(&j, s);
	char ts[32];
	rfc3339_utc(0, ts, sizeof(ts));
	char want[512];
	snprintf(want, sizeof(want),
		 "{\"seq\":7,\"ts\":\"%s\",\"time_ms\":0,\"power_mode\":\"MAXN\",\"metrics\":{\"temp.cpu_c\":50.5},"
		 "\"throttle\":{\"active\":true,\"reasons\":{\"thermal\":\"cpu at 96.0 C >= passive trip 95.0 C\"},"
		 "\"context\":\"\",\"causes\":[]}}",
		 ts);
	assert_string_equal(j.out.buf, want);
	json_free(&j);
	free(s);
}

/* Names joined by hand: what snprintf() gives, nothing past METRIC_NAME_MAX. */
static void
test_metric_names(void **state)
{
	(void)state;
	char buf[METRIC_NAME_MAX], want[METRIC_NAME_MAX * 2];
	assert_int_equal(metric_name_join(buf, "network.", "eth0", ".up"), 15);
	assert_string_equal(buf, "network.eth0.up");
	const long long nums[] = {0, 7, 11, 255, -3, 1234567890123LL, INT64_MIN};
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		snprintf(want, sizeof(want), "cpu.%lld.freq_mhz", nums[i]);
		assert_int_equal(metric_name_num(buf, "cpu.", nums[i], ".freq_mhz"), strlen(want));
		assert_string_equal(buf, want);
	}
	/* 63 bytes fit, 64 do not */
	char long_part[METRIC_NAME_MAX];
	memset(long_part, 'x', sizeof(long_part));
	long_part[63 - 4] = '\0';
	assert_int_equal(metric_name_join(buf, "a.", long_part, ".b"), 63);
	long_part[63 - 4] = 'x';
	long_part[64 - 4] = '\0';
	assert_int_equal(metric_name_join(buf, "a.", long_part, ".b"), 0);
	struct metric_set *set = new_set();
	assert_int_equal(metric_set_put3(set, 4.5, "disk.", "mmcblk0", ".reads_total"), 0);
	double v;
	assert_true(metric_set_get(set, "disk.mmcblk0.reads_total", &v) && v == 4.5);
	assert_int_equal(metric_set_put3(set, 1, "a.", long_part, ".b"), -EINVAL);
	assert_int_equal(set->count, 1);
	free(set);
}

/* S as JSON with and without its text: the same bytes. Returns the text's JSON (free it). */
static char *
json_both_ways(struct sample *s)
{
	struct metrics_text *text = s->text;
	struct json plain, memo;
	json_init(&plain);
	json_init(&memo);
	s->text = NULL;
	sample_to_json(&plain, s);
	s->text = text;
	sample_to_json(&memo, s);
	assert_string_equal(memo.out.buf, plain.out.buf);
	json_free(&plain);
	char *out = strdup(memo.out.buf);
	json_free(&memo);
	return out;
}

/*
 * The loop's text: formatted by the first writer after the seal, the same
 * bytes as json_key()/json_number() (odd values, a name to escape), keys
 * kept while the names stay and taken again when they move, nothing used
 * before the seal or after a clear.
 */
static void
test_metrics_text(void **state)
{
	(void)state;
	struct sample *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->text = metrics_text_create();
	struct metrics_members mm;
	for (int round = 0; round < 5; round++) {
		sample_clear(s);
		assert_false(metrics_text_get(s->text, &s->metrics, &mm)); /* not sealed: the writer formats */
		s->seq = (uint64_t)round + 1;
		/* rounds 3 and 4 repeat round 2: every member taken from the sample before, but a zero's sign */
		int r = round < 2 ? round : 2;
		metric_set_put(&s->metrics, "temp.cpu_c", 50.5 + r);
		metric_set_put(&s->metrics, "energy.vdd_in.joules_total", 0.1 + 0.2 * r);
		metric_set_put(&s->metrics, "odd\"name", r == 1 ? NAN : -0.0);
		metric_set_put(&s->metrics, "big", r == 2 ? INFINITY : 1e300);
		if (r == 2) {
			metric_set_put(&s->metrics, "new.name", round == 4 ? -0.0 : 0.0); /* a name more: the keys again */
		}
		metrics_text_seal(s->text);
		char *got = json_both_ways(s);
		const char *want[] = {
			"\"metrics\":{\"temp.cpu_c\":50.5,\"energy.vdd_in.joules_total\":0.1,\"odd\\\"name\":-0,"
			"\"big\":1e+300}",
			"\"metrics\":{\"temp.cpu_c\":51.5,\"energy.vdd_in.joules_total\":0.3,\"odd\\\"name\":null,"
			"\"big\":1e+300}",
			"\"metrics\":{\"temp.cpu_c\":52.5,\"energy.vdd_in.joules_total\":0.5,\"odd\\\"name\":-0,"
			"\"big\":null,\"new.name\":0}",
		};
		if (!strstr(got, want[r]) && !(round == 4 && strstr(got, "\"new.name\":-0}"))) {
			fail_msg("round %d: %s lacks %s", round, got, want[r]);
		}
		free(got);
		/* members one by one and in runs */
		assert_true(metrics_text_get(s->text, &s->metrics, &mm));
		assert_int_equal(mm.count, s->metrics.count);
		assert_int_equal(metrics_members_len(&mm, 0, 0), strlen("\"temp.cpu_c\":50.5"));
		assert_memory_equal(mm.text + mm.at[1], "\"energy", 7);
		assert_int_equal(metrics_members_len(&mm, 0, mm.count - 1), strlen(mm.text));
	}
	/* an empty set */
	sample_clear(s);
	metrics_text_seal(s->text);
	free(json_both_ways(s));
	assert_true(metrics_text_get(s->text, &s->metrics, &mm));
	assert_int_equal(mm.count, 0);
	metrics_text_destroy(s->text);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_replace_find),
		cmocka_unit_test(test_put_buf_matches_put_n),
		cmocka_unit_test(test_capacity_and_sort),
		cmocka_unit_test(test_refill_matches_model),
		cmocka_unit_test(test_refill_then_remove),
		cmocka_unit_test(test_name_valid),
		cmocka_unit_test(test_buf),
		cmocka_unit_test(test_json_writer),
		cmocka_unit_test(test_sample_json),
		cmocka_unit_test(test_metrics_text),
		cmocka_unit_test(test_metric_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
