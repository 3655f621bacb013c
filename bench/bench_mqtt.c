/*
 * MQTT cost of one sample of a fixture board (the AGX Orin by default):
 *
 * 1. bytes on the wire: the state JSON the agent publishes, its topic and
 *    the MQTT PUBLISH header (QoS 1, MQTT 3.1.1 and 5), plus the 4-byte
 *    PUBACK coming back; TCP/IP and TLS framing are not counted; the same
 *    for the limits message (sent when a limit changes, not per sample) and
 *    for the state with mqtt.state_full (every metric, the older shape);
 * 2. CPU to build that JSON (mqtt_state_json, the limits object with it);
 * 3. with a broker PORT on 127.0.0.1: CPU per published sample through the
 *    real sink (JSON, spool push, libmosquitto publish, socket writes,
 *    PUBACK reads), publishing N samples and waiting until every one is
 *    acknowledged. The broker's own CPU is not counted.
 *
 * Usage: bench_mqtt [PORT [SAMPLES [ROOT]]]    (bench/README.md)
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/json.h"
#include "mqtt/mqtt.h"
#include "mqtt/mqtt_payload.h"
#include "core/sample.h"
#include "tegra/board.h"
#include "tegra/throttle.h"

#ifndef BENCH_DEFAULT_ROOT
#define BENCH_DEFAULT_ROOT "tests/fixtures/boards/agx-orin-jp5"
#endif
#define JSON_ROUNDS 20000
#define DEFAULT_SAMPLES 20000UL
#define BOOT "6a6f29ab-1778-4cd2-af13-1dad09b5532e"
#define DEVICE "orin-agx-01"

/* the agent's own counters: what `run` adds to every sample (values are typical) */
static const char *const agent_metrics[] = {
	"agent.samples_total",          "agent.late_ticks_total",         "agent.read_errors_total",
	"agent.config_reloads_total",   "agent.config_reload_failures_total", "agent.alerts_firing",
	"agent.action_runs_total",      "agent.action_failures_total",    "agent.action_timeouts_total",
	"agent.action_dropped_total",   "agent.mqtt_connected",           "agent.mqtt_connects_total",
	"agent.mqtt_disconnects_total", "agent.mqtt_publishes_total",     "agent.mqtt_spool_depth",
	"agent.mqtt_dropped_total",     "agent.mqtt_spool_corrupt_total",
};

static int64_t
cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t
wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double
metric(const struct sample *s, const char *name)
{
	double v = -1;
	metric_set_get(&s->metrics, name, &v);
	return v;
}

/* Runs the sink's loop share until the spool is empty (or 30 s pass). */
static int
drain(struct sink *sink, struct sample *probe)
{
	int64_t end = wall_ns() + 30LL * 1000000000;
	for (;;) {
		sample_clear(probe);
		sink->ops->add_metrics(sink, &probe->metrics);
		if (metric(probe, "agent.mqtt_connected") == 1 && metric(probe, "agent.mqtt_spool_depth") == 0) {
			return 0;
		}
		if (wall_ns() > end) {
			return -ETIMEDOUT;
		}
		int fd = sink->ops->get_fd(sink);
		if (fd >= 0) {
			struct pollfd p = {.fd = fd, .events = sink->ops->poll_events(sink)};
			poll(&p, 1, 10);
		} else {
			struct timespec t = {0, 10 * 1000000};
			nanosleep(&t, NULL);
		}
		sink->ops->dispatch(sink);
	}
}

static int
publish_bench(int port, unsigned long n, const struct sample *s)
{
	char *empty = "";
	struct mqtt_config cfg = {
		.host = "127.0.0.1",
		.port = port,
		.prefix = "tegrawatch",
		.device_id = DEVICE,
		.client_id = empty,
		.protocol = MQTT_PROTOCOL_311,
		.keepalive_ms = 30000,
		.qos = 1,
		.username = empty,
		.password_file = empty,
		.ca_file = empty,
		.cert_file = empty,
		.key_file = empty,
		.backoff_base_ms = 100,
		.backoff_cap_ms = 1000,
		.inflight = 100,
		.spool_records = (int)n + 100,
		.spool_file = empty,
		.spool_file_max_mb = 64,
		.ha_discovery = 0,
		.ha_prefix = "homeassistant",
	};
	struct agent_info info = {.version = "bench", .interval_ms = 1000};
	struct sink *sink;
	int r = mqtt_sink_create(&cfg, &info, &sink);
	if (r < 0) {
		fprintf(stderr, "bench_mqtt: cannot create the sink: %s\n", strerror(-r));
		return 1;
	}
	struct sample *probe = calloc(1, sizeof(*probe));
	if (!probe || drain(sink, probe) < 0) {
		fprintf(stderr, "bench_mqtt: no broker on 127.0.0.1:%d\n", port);
		sink_destroy(sink);
		free(probe);
		return 1;
	}
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	int64_t c0 = cpu_ns(), w0 = wall_ns();
	/* the agent's pattern: write a sample, let the loop run the socket; bursts of 100 */
	for (unsigned long i = 0; i < n; i++) {
		sink->ops->write(sink, s);
		if (i % 100 == 99) {
			sink->ops->dispatch(sink);
		}
	}
	r = drain(sink, probe);
	int64_t c1 = cpu_ns(), w1 = wall_ns();
	getrusage(RUSAGE_SELF, &ru1);
	double user_us = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) * 1e6 +
			 (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec);
	double sys_us = (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1e6 +
			(double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec);
	sample_clear(probe);
	sink->ops->add_metrics(sink, &probe->metrics);
	printf("publish through the sink, QoS 1, %lu samples acknowledged%s:\n", n, r < 0 ? " (TIMED OUT)" : "");
	printf("  CPU per sample:   %.1f us (user %.1f, sys %.1f)\n", (double)(c1 - c0) / 1e3 / (double)n,
	       user_us / (double)n, sys_us / (double)n);
	printf("  wall:             %.2f s, %.0f samples/s drained\n", (double)(w1 - w0) / 1e9,
	       (double)n / ((double)(w1 - w0) / 1e9));
	printf("  publishes acked:  %.0f, dropped %.0f\n", metric(probe, "agent.mqtt_publishes_total"),
	       metric(probe, "agent.mqtt_dropped_total"));
	sink_destroy(sink);
	free(probe);
	return r < 0;
}

static void
print_message(const char *what, const char *topic, size_t payload)
{
	size_t tlen = strlen(topic);
	printf("%s on %s (%zu bytes of topic):\n", what, topic, tlen);
	printf("  payload:                  %zu bytes of JSON\n", payload);
	printf("  PUBLISH QoS 1, MQTT 3.1.1: %zu bytes (+ 4 bytes PUBACK back)\n",
	       mqtt_publish_wire_bytes(tlen, payload, 1, false));
	printf("  PUBLISH QoS 1, MQTT 5:     %zu bytes (+ 4 bytes PUBACK back)\n",
	       mqtt_publish_wire_bytes(tlen, payload, 1, true));
}

static int
parse_ulong(const char *text, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || end == text || *end || v == 0 || v > max || text[0] == '-') {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned long port = 0, n = DEFAULT_SAMPLES;
	const char *root = argc > 3 ? argv[3] : BENCH_DEFAULT_ROOT;
	if ((argc > 1 && parse_ulong(argv[1], 65535, &port) < 0) ||
	    (argc > 2 && parse_ulong(argv[2], 10000000, &n) < 0) || argc > 4) {
		fprintf(stderr, "usage: bench_mqtt [PORT [SAMPLES [ROOT]]]\n");
		return 2;
	}
	struct board *b;
	int r = board_open(root, &b);
	if (r < 0) {
		fprintf(stderr, "bench_mqtt: %s: %s\n", root, strerror(-r));
		return 1;
	}
	/* a sample as `run` publishes it: two readings (for deltas), throttle, the agent's counters */
	struct sample *s = calloc(1, sizeof(*s));
	if (!s) {
		return 1;
	}
	struct throttle_detector *det = throttle_detector_create();
	for (int i = 0; i < 2; i++) {
		sample_clear(s);
		board_sample(b, s);
		throttle_detector_update(det, s);
	}
	s->seq = 86400;
	s->time_ms = 1741946400000;
	for (size_t i = 0; i < sizeof(agent_metrics) / sizeof(agent_metrics[0]); i++) {
		metric_set_put(&s->metrics, agent_metrics[i], i == 0 ? 86400 : i == 13 ? 172800 : 0);
	}
	/* every later sample of `run` repeats these names, so their layout is known (core/metric_dict.h) */
	struct metric_set *names = malloc(sizeof(*names));
	if (!names) {
		return 1;
	}
	memcpy(names, &s->metrics, sizeof(*names));
	metric_set_clear(&s->metrics);
	for (size_t i = 0; i < names->count; i++) {
		metric_set_put(&s->metrics, names->items[i].name, names->items[i].value);
	}
	free(names);

	char topic[MQTT_TOPIC_MAX];
	mqtt_topic(topic, sizeof(topic), "tegrawatch", DEVICE, "state");
	static struct metric_dict_cache dict;
	struct json j, limits, full;
	json_init(&j);
	json_init(&limits);
	json_init(&full);
	mqtt_state_json(&j, &limits, s, BOOT, 123456, false, &dict);
	printf("board %s: %zu metrics in the sample\n", root, s->metrics.count);
	print_message("state message", topic, j.out.len);
	mqtt_topic(topic, sizeof(topic), "tegrawatch", DEVICE, "limits");
	mqtt_state_json(&full, &limits, s, BOOT, 123456, true, &dict);
	json_reset(&j);
	mqtt_limits_json(&j, s, BOOT, 123456, &limits);
	print_message("limits message (on change only)", topic, j.out.len);
	mqtt_topic(topic, sizeof(topic), "tegrawatch", DEVICE, "state");
	print_message("state message with mqtt.state_full", topic, full.out.len);

	int64_t c0 = cpu_ns();
	for (int i = 0; i < JSON_ROUNDS; i++) {
		json_reset(&j);
		mqtt_state_json(&j, &limits, s, BOOT, (uint64_t)i, false, &dict);
	}
	printf("JSON build (mqtt_state_json, state + limits object): %.2f us CPU\n",
	       (double)(cpu_ns() - c0) / 1e3 / JSON_ROUNDS);
	json_free(&j);
	json_free(&limits);
	json_free(&full);

	r = 0;
	if (port) {
		r = publish_bench((int)port, n, s);
	} else {
		printf("(give a broker port on 127.0.0.1 to measure CPU per publish)\n");
	}
	throttle_detector_destroy(det);
	board_destroy(b);
	free(s);
	return r;
}
