/*
 * host.probes: the configuration (through the whole loader, so messages
 * carry their place as `check` prints them), the window's statistics, the
 * ICMP echo messages, and the source against loopback sockets this test
 * opens: a port that listens (answered, rtt > 0) and one that does not
 * (refused: down at once, counted as lost).
 */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/config.h"
#include "core/diag.h"
#include "core/sample.h"
#include "host/icmp_echo.h"
#include "host/probe_config.h"
#include "host/probe_source.h"
#include "host/probe_window.h"
#include "tests/unit/config_checks.h"

/* Loads YAML; returns the config or NULL, with every message "NAME:LINE:COL: text" joined by '\n' into MSGS. */
static struct config *
load(const char *yaml, char *msgs, size_t size)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg = NULL;
	int r = config_load_buffer("t.yaml", yaml, strlen(yaml), &cfg, &diags);
	msgs[0] = '\0';
	for (size_t i = 0, at = 0; i < diags.count; i++) {
		char line[512];
		diag_format(&diags.items[i], line, sizeof(line));
		at += (size_t)snprintf(msgs + at, size - at, "%s\n", line);
		if (at >= size) {
			break;
		}
	}
	diag_list_free(&diags);
	return r == 0 ? cfg : NULL;
}

static void
test_config_good(void **state)
{
	(void)state;
	char msgs[2048];
	struct config *cfg = load("host:\n"
				  "  probes:\n"
				  "    - {name: broker, host: 192.168.1.10, port: 1883}\n"
				  "    - {name: board2, host: board2.lan, icmp: true, interval: 30s, timeout: 5s, window: 10}\n"
				  "    - {name: v6, host: \"fd00::10\", interval: 1s}\n",
				  msgs, sizeof(msgs));
	if (!cfg) {
		fail_msg("%s", msgs);
	}
	const struct host_probes *p = &cfg->host.probes;
	assert_int_equal(p->count, 3);
	assert_string_equal(p->items[0].name, "broker");
	assert_int_equal(p->items[0].port, 1883);
	assert_int_equal(p->items[0].interval_ms, 10000); /* the defaults */
	assert_int_equal(p->items[0].timeout_ms, 2000);
	assert_int_equal(p->items[0].window, 6);
	assert_int_equal(p->items[1].port, 0); /* ICMP */
	assert_int_equal(p->items[1].interval_ms, 30000);
	assert_int_equal(p->items[1].timeout_ms, 5000);
	assert_int_equal(p->items[1].window, 10);
	assert_string_equal(p->items[2].host, "fd00::10");
	assert_int_equal(p->items[2].timeout_ms, 1000); /* the default 2 s, cut to a shorter interval */
	config_destroy(cfg);

	cfg = load("host: {probes: []}\n", msgs, sizeof(msgs));
	assert_non_null(cfg);
	assert_int_equal(cfg->host.probes.count, 0);
	config_destroy(cfg);
}

/* Each bad entry is refused with its place, as `check` and `run` print it. */
static void
test_config_bad(void **state)
{
	(void)state;
	static const struct {
		const char *yaml;
		const char *want;
	} cases[] = {
		{"host: {probes: [{name: a, host: \"foo bar\", port: 80}]}\n", "t.yaml:1:33: host: 'foo bar' is no address"},
		{"host: {probes: [{name: a, host: 999.1.1.1}]}\n", "t.yaml:1:33: host: '999.1.1.1' is no address"},
		{"host: {probes: [{name: a, host: -x.lan}]}\n", "t.yaml:1:33: host: '-x.lan' is no address"},
		{"host: {probes: [{name: Broker, host: h}]}\n", "t.yaml:1:24: name: 'Broker' is no probe name"},
		{"host: {probes: [{name: a, host: h, port: 70000}]}\n", "t.yaml:1:42: port: must be between 1 and 65535"},
		{"host: {probes: [{name: a, host: h, port: 80, icmp: true}]}\n", "t.yaml:1:52: icmp: true and a port"},
		{"host: {probes: [{name: a, host: h, icmp: false}]}\n", "t.yaml:1:42: icmp: false needs a port"},
		{"host: {probes: [{name: a, host: h, interval: 2s, timeout: 3s}]}\n",
		 "t.yaml:1:59: timeout: 3s is longer than the interval 2s"},
		{"host: {probes: [{name: a, host: h, window: 0}]}\n", "t.yaml:1:44: window: must be between 1 and 100"},
		{"host: {probes: [{host: h}]}\n", "t.yaml:1:17: missing 'name' in host.probes[0]"},
		{"host: {probes: [{name: a, host: h, prot: 80}]}\n", "t.yaml:1:36: unknown key 'prot' in host.probes[0]"},
		{"host: {probes: [{name: a, host: h}, {name: a, host: g}]}\n",
		 "t.yaml:1:44: name: a probe named 'a' is given above"},
		{"host: {probes: {name: a}}\n", "t.yaml:1:16: probes: expected a list of {name, host, port}, got a map"},
		{"host: {probes: [7]}\n", "t.yaml:1:17: host.probes[0]: expected a map, got '7'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char msgs[2048];
		struct config *cfg = load(cases[i].yaml, msgs, sizeof(msgs));
		if (cfg || !strstr(msgs, cases[i].want)) {
			fail_msg("case %zu: %s\nwanted: %s\ngot: %s", i, cases[i].yaml, cases[i].want, msgs);
		}
	}
}

static void
test_host_kind_and_name(void **state)
{
	(void)state;
	assert_int_equal(probe_host_kind("10.0.0.5"), PROBE_HOST_IPV4);
	assert_int_equal(probe_host_kind("::1"), PROBE_HOST_IPV6);
	assert_int_equal(probe_host_kind("broker.lan"), PROBE_HOST_NAME);
	assert_int_equal(probe_host_kind("localhost."), PROBE_HOST_NAME);
	assert_int_equal(probe_host_kind("a-b.c-d.example"), PROBE_HOST_NAME);
	const char *bad[] = {"", ".", "a..b", "a-.b", "-a", "a b", "a_b", "10.1", "1.2.3.256", "[::1]", "a/b"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (probe_host_kind(bad[i]) != PROBE_HOST_BAD) {
			fail_msg("'%s' taken for a host", bad[i]);
		}
	}
	char label[70];
	memset(label, 'a', 64);
	label[64] = '\0';
	assert_int_equal(probe_host_kind(label), PROBE_HOST_BAD); /* a label of 64 */
	label[63] = '\0';
	assert_int_equal(probe_host_kind(label), PROBE_HOST_NAME);
	assert_true(probe_name_valid("broker_2"));
	assert_false(probe_name_valid("broker-2"));
	assert_false(probe_name_valid(""));
	assert_false(probe_name_valid("abcdefghijklmnopqrstuvwxyz0123456")); /* 33 */
}

/* The window's statistics now: up, attempts, answered, loss and mean round-trip time (NAN: none). */
static void
expect(const struct probe_window *w, bool up, int attempts, int answered, double loss_pct, double rtt_ms)
{
	struct probe_stats st;
	assert_int_equal(probe_window_stats(w, &st), 0);
	assert_int_equal(st.up, up);
	assert_int_equal(st.attempts, attempts);
	assert_int_equal(st.answered, answered);
	assert_float_equal(st.loss_pct, loss_pct, 1e-9);
	if (isnan(rtt_ms)) {
		assert_true(isnan(st.rtt_mean_ms)); /* none answered: no round-trip time, not 0 */
	} else {
		assert_float_equal(st.rtt_mean_ms, rtt_ms, 1e-9);
	}
}

static void
test_window(void **state)
{
	(void)state;
	struct probe_window w;
	struct probe_stats st = {.attempts = -7};
	probe_window_init(&w, 4);
	assert_int_equal(probe_window_stats(&w, &st), -ENODATA); /* absent before the first attempt */
	assert_int_equal(st.attempts, -7);
	probe_window_add(&w, 1000);
	expect(&w, true, 1, 1, 0, 1.0);
	probe_window_add(&w, -1);
	probe_window_add(&w, 3000);
	probe_window_add(&w, -1);
	expect(&w, false, 4, 2, 50, 2.0); /* up is the last attempt's */
	probe_window_add(&w, 5000);
	expect(&w, true, 4, 2, 50, 4.0); /* the oldest went: 1000 out, 5000 in */
	for (int i = 0; i < 4; i++) {
		probe_window_add(&w, -1);
	}
	expect(&w, false, 4, 0, 100, NAN);
	probe_window_init(&w, 1000);
	assert_int_equal(w.size, PROBE_WINDOW_MAX);
	probe_window_init(&w, 0);
	assert_int_equal(w.size, 1);
}

static void
test_icmp_echo(void **state)
{
	(void)state;
	uint8_t msg[ICMP_ECHO_LEN];
	uint16_t seq = 0;
	icmp_echo_request(false, 0x1234, msg);
	assert_int_equal(msg[0], 8);
	assert_int_equal(msg[6], 0x12);
	assert_int_equal(msg[7], 0x34);
	assert_int_equal(icmp_echo_reply_seq(false, msg, sizeof(msg), &seq), -EINVAL); /* a request is no reply */
	msg[0] = 0;
	assert_int_equal(icmp_echo_reply_seq(false, msg, sizeof(msg), &seq), 0);
	assert_int_equal(seq, 0x1234);
	assert_int_equal(icmp_echo_reply_seq(true, msg, sizeof(msg), &seq), -EINVAL);
	icmp_echo_request(true, 7, msg);
	assert_int_equal(msg[0], 128);
	msg[0] = 129;
	assert_int_equal(icmp_echo_reply_seq(true, msg, 8, &seq), 0);
	assert_int_equal(seq, 7);
	assert_int_equal(icmp_echo_reply_seq(true, msg, 7, &seq), -EINVAL); /* cut */
	msg[1] = 1;
	assert_int_equal(icmp_echo_reply_seq(true, msg, 8, &seq), -EINVAL); /* a code other than 0 */
}

/* A loopback port: listening (with BACKLOG) or, closed at once, one where nothing listens. */
static int
loopback_port(bool listening, int *fd_out)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	if (listening) {
		assert_int_equal(listen(fd, 16), 0);
		*fd_out = fd;
	} else {
		close(fd);
	}
	return ntohs(a.sin_port);
}

/* the value of NAME in S, NAN when absent */
static double
metric(const struct sample *s, const char *name)
{
	double v = NAN;
	metric_set_get(&s->metrics, name, &v);
	return v;
}

/* The source as the loop drives it: a read per "tick", its fd polled and dispatched in between. */
static void
test_source_loopback(void **state)
{
	(void)state;
	int lfd = -1;
	struct probe_config items[2] = {
		{.name = "open", .host = "127.0.0.1", .interval_ms = 1000, .timeout_ms = 1000, .window = 4},
		{.name = "closed", .host = "127.0.0.1", .interval_ms = 1000, .timeout_ms = 1000, .window = 4},
	};
	items[0].port = loopback_port(true, &lfd);
	items[1].port = loopback_port(false, NULL);
	struct host_probes probes = {items, 2};
	struct source *src = NULL;
	assert_int_equal(probe_source_create(&probes, &src), 0);
	struct sample *s = calloc(1, sizeof(*s));
	assert_int_equal(src->ops->read(src, s), 0);
	assert_true(isnan(metric(s, "probe.open.up"))); /* nothing ended yet: absent */
	/* at most 10 s for the handshake on a loaded machine; it takes microseconds */
	for (int i = 0; i < 100 && (isnan(metric(s, "probe.open.up")) || isnan(metric(s, "probe.closed.up"))); i++) {
		struct pollfd pfd = {.fd = src->ops->get_fd(src), .events = POLLIN};
		if (poll(&pfd, 1, 100) > 0) {
			assert_int_equal(src->ops->dispatch(src), 0);
		}
		sample_clear(s);
		assert_int_equal(src->ops->read(src, s), 0);
	}
	assert_float_equal(metric(s, "probe.open.up"), 1, 0);
	assert_float_equal(metric(s, "probe.open.loss_pct"), 0, 0);
	assert_true(metric(s, "probe.open.rtt_ms") > 0);
	assert_float_equal(metric(s, "probe.closed.up"), 0, 0); /* refused: down, at once */
	assert_float_equal(metric(s, "probe.closed.loss_pct"), 100, 0);
	assert_true(isnan(metric(s, "probe.closed.rtt_ms")));
	source_destroy(src);
	free(s);
	close(lfd);
}

int
main(void)
{
	clear_env();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_good),	   cmocka_unit_test(test_config_bad),
		cmocka_unit_test(test_host_kind_and_name), cmocka_unit_test(test_window),
		cmocka_unit_test(test_icmp_echo),	   cmocka_unit_test(test_source_loopback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
