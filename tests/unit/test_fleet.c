/*
 * The fleet sinks' pure parts: the spool record of a sample (exact round
 * trip, filters, damage at every offset), the protobuf writer (bytes of
 * the spec's own examples), the series table (mapping, scaling as /metrics
 * writes numbers, one point per series and sample), the remote-write
 * labels (sorted, __name__ first, target labels), OTLP names and units,
 * and the remote_write:/otlp: sections' checks. The bytes on the wire are
 * checked by real decoders in tests/integration (Prometheus, the OTLP
 * JavaScript types).
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

#include <cmocka.h>

#include "agent/config.h"
#include "core/diag.h"
#include "fleet/encode.h"
#include "fleet/pb.h"
#include "fleet/sample_record.h"

static struct sample *
make_sample(void)
{
	struct sample *s = calloc(1, sizeof(*s));
	s->seq = 4242;
	s->time_ms = 1741946400123;
	snprintf(s->power_mode, sizeof(s->power_mode), "MAXN_SUPER");
	metric_set_put(&s->metrics, "cpu.0.load_pct", 12);
	metric_set_put(&s->metrics, "cpu.0.freq_mhz", 729);
	metric_set_put(&s->metrics, "cpu.1.load_pct", -3);
	metric_set_put(&s->metrics, "temp.cpu_c", 46.375);
	metric_set_put(&s->metrics, "power.vdd_in.mw", 4754);
	metric_set_put(&s->metrics, "energy.vdd_in.joules_total", 34.91099999999999);
	metric_set_put(&s->metrics, "agent.big", 9007199254740993.0);
	metric_set_put(&s->metrics, "agent.nan", NAN);
	metric_set_put(&s->metrics, "agent.negzero", -0.0);
	return s;
}

static bool
no_agent(void *arg, const char *name)
{
	(void)arg;
	return strncmp(name, "agent.", 6) != 0;
}

static void
test_record_round_trip(void **state)
{
	(void)state;
	struct sample *s = make_sample();
	struct buf b;
	buf_init(&b);
	sample_record_encode(&b, s, NULL, NULL);
	struct sample_record_reader r;
	assert_int_equal(sample_record_open(&r, b.buf, b.len), 0);
	assert_int_equal(r.seq, 4242);
	assert_int_equal(r.time_ms, 1741946400123);
	assert_string_equal(r.power_mode, "MAXN_SUPER");
	assert_int_equal(r.count, s->metrics.count);
	const char *name;
	double v;
	struct metric_set *sorted = calloc(1, sizeof(*sorted));
	metric_set_merge(sorted, &s->metrics);
	metric_set_sort(sorted); /* the record holds the metrics in name order */
	for (size_t i = 0; i < sorted->count; i++) {
		assert_int_equal(sample_record_next(&r, &name, &v), 1);
		assert_string_equal(name, sorted->items[i].name);
		double want = sorted->items[i].value;
		/* bit for bit: NaN, -0.0 and 2^53 + 1 included */
		assert_memory_equal(&v, &want, sizeof(v));
	}
	assert_int_equal(sample_record_next(&r, &name, &v), 0);
	free(sorted);
	/* front coding: the 124 bytes of names, 2 length bytes and at most 9 value bytes each, a 21-byte head,
	 * less the 23 bytes the names share with the one before (cpu.0., cpu., agent., agent.n) */
	assert_true(b.len <= 124 + 9 * 11 + 21 - 23);

	buf_reset(&b);
	sample_record_encode(&b, s, no_agent, NULL);
	assert_int_equal(sample_record_open(&r, b.buf, b.len), 0);
	assert_int_equal(r.count, 6);
	while (sample_record_next(&r, &name, &v) == 1) {
		assert_true(strncmp(name, "agent.", 6) != 0);
	}
	buf_free(&b);
	free(s);
}

static void
test_record_damage(void **state)
{
	(void)state;
	struct sample *s = make_sample();
	struct buf b;
	buf_init(&b);
	sample_record_encode(&b, s, NULL, NULL);
	/* every cut short record fails cleanly, never reads past its end */
	for (size_t cut = 0; cut < b.len; cut++) {
		char *copy = malloc(cut ? cut : 1);
		memcpy(copy, b.buf, cut);
		struct sample_record_reader r;
		const char *name;
		double v;
		int got = sample_record_open(&r, copy, cut);
		while (got == 0 && (got = sample_record_next(&r, &name, &v)) == 1) {
			got = 0;
		}
		assert_int_equal(got, -EINVAL);
		free(copy);
	}
	b.buf[0] = 2; /* another version */
	struct sample_record_reader r;
	assert_int_equal(sample_record_open(&r, b.buf, b.len), -EINVAL);
	buf_free(&b);
	free(s);
}

static void
test_pb_bytes(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b);
	pb_uint(&b, 1, 150); /* the encoding guide's example: 08 96 01 */
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.buf, "\x08\x96\x01", 3);
	buf_reset(&b);
	pb_string(&b, 2, "testing"); /* 12 07 74 65 73 74 69 6e 67 */
	assert_memory_equal(b.buf, "\x12\x07testing", 9);
	buf_reset(&b);
	pb_double(&b, 1, 1.0);
	assert_memory_equal(b.buf, "\x09\x00\x00\x00\x00\x00\x00\xf0\x3f", 9);
	buf_reset(&b);
	pb_uint(&b, 2, (uint64_t)(int64_t)-1); /* negative int64: ten bytes */
	assert_int_equal(b.len, 11);
	/* a nested message longer than 127 bytes gets a two-byte length in front */
	buf_reset(&b);
	size_t m = pb_open(&b, 3);
	for (int i = 0; i < 100; i++) {
		pb_uint(&b, 1, 1);
	}
	pb_close(&b, m);
	assert_int_equal(b.len, 1 + 2 + 200);
	assert_memory_equal(b.buf, "\x1a\xc8\x01\x08\x01", 5);
	buf_free(&b);
}

/* A small dictionary: temperatures as /metrics maps them, power scaled to watts, agent.* left out. */
static bool
test_map(const char *name, struct fleet_series *out)
{
	memset(out, 0, sizeof(*out));
	out->scale = 1;
	if (strncmp(name, "temp.", 5) == 0) {
		snprintf(out->family, sizeof(out->family), "tegrawatch_temperature_celsius");
		out->label_count = 1;
		out->label_names[0] = "sensor";
		snprintf(out->label_values[0], sizeof(out->label_values[0]), "%.*s", (int)strlen(name) - 7,
			 name + 5);
		return true;
	}
	if (strncmp(name, "power.", 6) == 0 || strncmp(name, "watts.", 6) == 0) {
		snprintf(out->family, sizeof(out->family), "tegrawatch_power_watts");
		out->label_count = 1;
		out->label_names[0] = "rail";
		snprintf(out->label_values[0], sizeof(out->label_values[0]), "vdd_in");
		out->scale = 0.001;
		return true;
	}
	if (strncmp(name, "energy.", 7) == 0) {
		snprintf(out->family, sizeof(out->family), "tegrawatch_energy_joules_total");
		out->counter = true;
		return true;
	}
	return false;
}

static void
test_series_table(void **state)
{
	(void)state;
	struct series_table t;
	series_table_init(&t, test_map);
	series_table_add_metric(&t, "power.vdd_in.mw", 1000, 4754);
	series_table_add_metric(&t, "watts.vdd_in", 1000, 1); /* the same series, same time: the first wins */
	series_table_add_metric(&t, "temp.cpu_c", 1000, 46.375);
	series_table_add_metric(&t, "agent.samples_total", 1000, 7);
	series_table_add_metric(&t, "energy.vdd_in.joules_total", 1000, 34.91099999999999);
	series_table_add_metric(&t, "power.vdd_in.mw", 2000, 4800);
	assert_int_equal(t.batch_count, 3);
	struct series *p = t.batch[0];
	assert_string_equal(p->s.family, "tegrawatch_power_watts");
	assert_int_equal(p->npoints, 2);
	assert_true(p->values[0] == 4.754); /* as /metrics writes it, not 4.7540000000000004 */
	assert_true(p->values[1] == 4.8);
	assert_true(t.batch[2]->values[0] == 34.911);
	series_table_batch_reset(&t);
	assert_int_equal(t.batch_count, 0);
	series_table_add_metric(&t, "temp.cpu_c", 3000, 47);
	assert_int_equal(t.batch_count, 1);
	assert_int_equal(t.batch[0]->npoints, 1);
	series_table_free(&t);
}

/* Walks a WriteRequest: the labels of the first TimeSeries as "name=value," text, and its sample count. */
static size_t
read_varint(const uint8_t **p)
{
	size_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		uint8_t c = *(*p)++;
		v |= (size_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			return v;
		}
	}
}

static void
first_series(const struct buf *b, char *labels, size_t size, size_t *samples)
{
	const uint8_t *p = (const uint8_t *)b->buf;
	assert_int_equal(*p++, 0x0a); /* field 1, length-delimited */
	size_t len = read_varint(&p);
	const uint8_t *end = p + len;
	labels[0] = '\0';
	*samples = 0;
	while (p < end) {
		uint8_t tag = *p++;
		size_t n = read_varint(&p);
		if (tag == 0x0a) {
			const uint8_t *q = p;
			assert_int_equal(*q++, 0x0a);
			size_t kl = read_varint(&q);
			snprintf(labels + strlen(labels), size - strlen(labels), "%.*s=", (int)kl, (const char *)q);
			q += kl;
			assert_int_equal(*q++, 0x12);
			size_t vl = read_varint(&q);
			snprintf(labels + strlen(labels), size - strlen(labels), "%.*s,", (int)vl, (const char *)q);
		} else {
			assert_int_equal(tag, 0x12);
			(*samples)++;
		}
		p += n;
	}
}

/* Two records of make_sample() a second apart in REC, the second without a power mode when NO_MODE; S is theirs. */
static struct sample *
two_records(struct buf *rec, bool no_mode, const void *payloads[2], size_t lens[2])
{
	struct sample *s = make_sample();
	buf_init(rec);
	sample_record_encode(rec, s, NULL, NULL);
	size_t first_len = rec->len;
	s->time_ms += 1000;
	if (no_mode) {
		s->power_mode[0] = '\0';
	}
	sample_record_encode(rec, s, NULL, NULL);
	payloads[0] = rec->buf;
	payloads[1] = rec->buf + first_len;
	lens[0] = first_len;
	lens[1] = rec->len - first_len;
	return s;
}

/* The batch's series of FAMILY, its place in the batch in *AT; NULL when none. */
static const struct series *
batch_family(const struct fleet_encoder *e, const char *family, size_t *at)
{
	for (size_t i = 0; i < e->series.batch_count; i++) {
		if (strcmp(e->series.batch[i]->s.family, family) == 0) {
			*at = i;
			return e->series.batch[i];
		}
	}
	return NULL;
}

/* The info families of the dictionary (core/metric_dict.h): remote write has them all, OTLP the sample's own. */
static void
test_info_series(void **state)
{
	(void)state;
	struct fleet_config cfg = {.job = "tegrawatch"};
	struct fleet_info info = {
		.agent = {.identity = {.model = "Jetson AGX Orin", .soc = "tegra234", .l4t = "36.4.3"},
			  .device_id = "orin-1",
			  .board_name = "lab",
			  .version = "0.1.0"},
		.map = test_map,
	};
	struct buf rec, out;
	buf_init(&out);
	const void *payloads[2];
	size_t lens[2];
	struct sample *s = two_records(&rec, true, payloads, lens);

	struct fleet_encoder *rw = rw_encoder_create(&cfg, &info);
	assert_int_equal(fleet_encode(rw, payloads, lens, 2, &out), 0);
	size_t mode_at = 0, board_at = 0, build_at = 0;
	const struct series *mode = batch_family(rw, "tegrawatch_power_mode_info", &mode_at);
	const struct series *board = batch_family(rw, "tegrawatch_board_info", &board_at);
	const struct series *build = batch_family(rw, "tegrawatch_build_info", &build_at);
	assert_true(mode && board && build);
	assert_true(mode_at < board_at && board_at < build_at); /* the sample's own first */
	assert_int_equal(mode->npoints, 1); /* the second sample has no power mode */
	assert_string_equal(mode->s.label_names[0], "mode");
	assert_string_equal(mode->s.label_values[0], "MAXN_SUPER");
	assert_int_equal(board->npoints, 2);
	assert_true(board->values[0] == 1 && board->values[1] == 1);
	assert_int_equal(board->s.label_count, 5);
	const char *names[] = {"model", "soc", "module", "l4t", "jetpack"};
	const char *values[] = {"Jetson AGX Orin", "tegra234", "", "36.4.3", ""};
	for (size_t l = 0; l < 5; l++) {
		assert_string_equal(board->s.label_names[l], names[l]);
		assert_string_equal(board->s.label_values[l], values[l]);
	}
	assert_string_equal(build->s.label_names[0], "version");
	assert_string_equal(build->s.label_values[0], "0.1.0");
	fleet_encoder_destroy(rw);

	struct fleet_encoder *otlp = otlp_encoder_create(&cfg, &info, 0);
	assert_int_equal(fleet_encode(otlp, payloads, lens, 2, &out), 0);
	mode = batch_family(otlp, "tegrawatch_power_mode_info", &mode_at);
	assert_non_null(mode);
	assert_int_equal(mode->npoints, 1);
	assert_string_equal(mode->s.help, "The nvpmodel power mode by name (value 1).");
	/* the resource says the board and the version */
	assert_null(batch_family(otlp, "tegrawatch_board_info", &board_at));
	assert_null(batch_family(otlp, "tegrawatch_build_info", &build_at));
	fleet_encoder_destroy(otlp);
	buf_free(&rec);
	buf_free(&out);
	free(s);
}

static void
test_remote_write_labels(void **state)
{
	(void)state;
	struct fleet_config cfg = {.job = "tegrawatch", .label_count = 1};
	char *names[] = {"site", NULL}, *values[] = {"lyon", NULL};
	cfg.label_names = names;
	cfg.label_values = values;
	struct fleet_info info = {
		.agent = {.device_id = "orin-1", .board_name = "lab", .version = "0.1.0"},
		.map = test_map,
	};
	struct fleet_encoder *e = rw_encoder_create(&cfg, &info);
	struct buf rec, out;
	buf_init(&out);
	const void *payloads[2];
	size_t lens[2];
	struct sample *s = two_records(&rec, false, payloads, lens);
	assert_int_equal(fleet_encode(e, payloads, lens, 2, &out), 0);
	char labels[512];
	size_t samples;
	first_series(&out, labels, sizeof(labels), &samples);
	/* cpu.* is not in the test map: the first series is energy (records are in name order), labels sorted */
	assert_string_equal(labels,
			    "__name__=tegrawatch_energy_joules_total,board=lab,instance=orin-1,job=tegrawatch,site=lyon,");
	assert_int_equal(samples, 2);
	/* a damaged record is counted, the others still encoded */
	lens[1] = 3;
	assert_int_equal(fleet_encode(e, payloads, lens, 2, &out), 1);
	fleet_encoder_destroy(e);
	buf_free(&rec);
	buf_free(&out);
	free(s);
}

static void
test_otlp_names(void **state)
{
	(void)state;
	static const struct {
		const char *family;
		bool counter;
		const char *name, *unit;
	} cases[] = {
		{"tegrawatch_temperature_celsius", false, "tegrawatch_temperature", "Cel"},
		{"tegrawatch_gpu_load_ratio", false, "tegrawatch_gpu_load", "1"},
		{"tegrawatch_cpu_frequency_hertz", false, "tegrawatch_cpu_frequency", "Hz"},
		{"tegrawatch_memory_used_bytes", false, "tegrawatch_memory_used", "By"},
		{"tegrawatch_power_watts", false, "tegrawatch_power", "W"},
		{"tegrawatch_throttle_seconds_total", true, "tegrawatch_throttle", "s"},
		{"tegrawatch_energy_joules_total", true, "tegrawatch_energy", "J"},
		{"tegrawatch_oc_events_total", true, "tegrawatch_oc_events", ""},
		{"tegrawatch_fan_rpm", false, "tegrawatch_fan_rpm", ""},
		{"tegrawatch_agent_samples_total", true, "tegrawatch_agent_samples", ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[FLEET_FAMILY_MAX];
		const char *unit;
		otlp_name_unit(cases[i].family, cases[i].counter, name, &unit);
		assert_string_equal(name, cases[i].name);
		assert_string_equal(unit, cases[i].unit);
	}
}

/* Loads TEXT; returns the number of messages, the first in MSG. */
static size_t
load(const char *text, char *msg, size_t size)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg = NULL;
	config_load_buffer("t.yaml", text, strlen(text), &cfg, &diags);
	size_t n = diags.count;
	msg[0] = '\0';
	if (n) {
		diag_format(&diags.items[0], msg, size);
	}
	diag_list_free(&diags);
	config_destroy(cfg);
	return n;
}

static void
test_config_checks(void **state)
{
	(void)state;
	char msg[512];
	assert_int_equal(load("remote_write: {url: 'http://127.0.0.1:9090/api/v1/write', labels: {site: lyon}, "
			      "metrics: ['temp.*', 'power.*'], exclude: [temp.soc0_c], batch_samples: 50}\n"
			      "otlp: {url: 'https://collector:4318/v1/metrics', compression: none}\n",
			      msg, sizeof(msg)),
			 0);
	assert_int_equal(load("remote_write: {url: 'ftp://x/y'}\n", msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "t.yaml:1:21: remote_write.url: only http:// and https:// URLs are supported"));
	assert_int_equal(load("otlp: {url: 'http://u:p@x/v1/metrics'}\n", msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "credentials in the URL"));
	assert_int_equal(load("remote_write: {url: 'http://x/', labels: {instance: a}}\n", msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "'instance' is set by tegrawatch itself"));
	assert_int_equal(load("remote_write: {url: 'http://x/', labels: {__x: a}}\n", msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "is not a label name"));
	assert_int_equal(load("otlp: {url: 'http://x/', password_file: /nonexistent}\n", msg, sizeof(msg)), 2);
	assert_int_equal(load("otlp: {url: 'http://x/', compression: zstd}\n", msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "compression: expected gzip or none"));
	assert_int_equal(load("otlp: {url: 'http://x/', job: a}\n", msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "unknown key 'job'"));
	assert_int_equal(load("remote_write: {url: 'http://x/', metrics: ['Temp CPU']}\n", msg, sizeof(msg)), 1);
	/* off: nothing else is checked */
	assert_int_equal(load("remote_write: {password_file: /nonexistent}\n", msg, sizeof(msg)), 0);
}

static void
test_config_headers(void **state)
{
	(void)state;
	char msg[512];
	const char *text = "remote_write: {url: 'http://x/api/v1/push', headers: {X-Scope-OrgID: board-fleet-7}}\n"
			   "otlp: {url: 'http://x/v1/metrics', headers: {X-Api-Key: k1, X-Prometheus-Remote-Write-Version: "
			   "'2'}}\n";
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg = NULL;
	assert_int_equal(config_load_buffer("t.yaml", text, strlen(text), &cfg, &diags), 0);
	assert_int_equal(cfg->remote_write.header_count, 1);
	assert_string_equal(cfg->remote_write.headers[0], "X-Scope-OrgID: board-fleet-7");
	assert_int_equal(cfg->otlp.header_count, 2); /* remote write's own header is OTLP's to use */
	assert_string_equal(cfg->otlp.headers[0], "X-Api-Key: k1");
	config_destroy(cfg);
	diag_list_free(&diags);

	/* each sink's own headers, with why; Authorization only beside the sink's own auth */
	static const struct {
		const char *text, *want;
	} refused[] = {
		{"remote_write: {url: 'http://x/', headers: {X-Prometheus-Remote-Write-Version: '2'}}\n",
		 "t.yaml:1:44: headers: 'X-Prometheus-Remote-Write-Version' is set by tegrawatch itself: it tells the "
		 "receiver how the body is encoded"},
		{"otlp: {url: 'http://x/', headers: {content-encoding: br}}\n",
		 "t.yaml:1:36: headers: 'content-encoding' is set by tegrawatch itself: it tells the receiver how the body "
		 "is encoded"},
		{"otlp: {url: 'http://x/', headers: {User-Agent: curl}}\n",
		 "t.yaml:1:36: headers: 'User-Agent' is set by tegrawatch itself: it names the agent and its version "
		 "(tegrawatch/VERSION)"},
		{"remote_write: {url: 'http://x/', headers: {Host: y}}\n",
		 "t.yaml:1:44: headers: 'Host' is set by tegrawatch itself: the HTTP client sets it from the URL and the "
		 "body"},
		{"remote_write: {url: 'http://x/', headers: {X-Key: \"a\\r\\nb\"}}\n",
		 "t.yaml:1:51: headers: 'X-Key': the value holds a line break or control character"},
		{"remote_write: {url: 'http://x/', username: u, headers: {authorization: 'ApiKey k'}}\n",
		 "t.yaml:1:56: remote_write.headers: Authorization is the header remote_write.username sets (basic auth): "
		 "keep one of the two"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(load(refused[i].text, msg, sizeof(msg)), 1);
		assert_string_equal(msg, refused[i].want);
	}
	assert_int_equal(load("otlp: {url: 'http://x/', headers: {Authorization: 'ApiKey k'}}\n", msg, sizeof(msg)), 0);

	/* a map has no environment override: the variable exists (not "unknown") but takes no text (docs) */
	diag_list_init(&diags);
	setenv("TEGRAWATCH_OTLP_HEADERS", "X-Scope-OrgID: t", 1);
	cfg = NULL;
	assert_int_equal(config_load_environment(&cfg, &diags), -EINVAL);
	assert_int_equal(diags.count, 1);
	diag_format(&diags.items[0], msg, sizeof(msg));
	assert_string_equal(msg, "environment:TEGRAWATCH_OTLP_HEADERS: headers: expected a map of header names to "
				 "values, got 'X-Scope-OrgID: t'");
	unsetenv("TEGRAWATCH_OTLP_HEADERS");
	config_destroy(cfg);
	diag_list_free(&diags);
}

static void
test_config_wants(void **state)
{
	(void)state;
	char *metrics[] = {"temp.*", "power.*", NULL}, *exclude[] = {"temp.soc*", NULL};
	struct fleet_config cfg = {.metrics = metrics, .metric_count = 2, .exclude = exclude, .exclude_count = 1};
	assert_true(fleet_config_wants(&cfg, "temp.cpu_c"));
	assert_false(fleet_config_wants(&cfg, "temp.soc0_c"));
	assert_true(fleet_config_wants(&cfg, "power.vdd_in.mw"));
	assert_false(fleet_config_wants(&cfg, "cpu.0.load_pct"));
	struct fleet_config all = {0};
	assert_true(fleet_config_wants(&all, "cpu.0.load_pct"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_round_trip),   cmocka_unit_test(test_record_damage),
		cmocka_unit_test(test_pb_bytes),            cmocka_unit_test(test_series_table),
		cmocka_unit_test(test_remote_write_labels), cmocka_unit_test(test_info_series),
		cmocka_unit_test(test_otlp_names),
		cmocka_unit_test(test_config_checks),       cmocka_unit_test(test_config_wants),
		cmocka_unit_test(test_config_headers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
