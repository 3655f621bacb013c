/*
 * The alert side as agent/alerting.c wires it: the rules stage's events
 * reach the `log` action, the webhook receiver and a sink through the one
 * fan-out, each action once and only where the rule routes it; the
 * counters come in the order they always had (the rules', the actions',
 * the webhooks'), all after the rules ran. The receiver is a socket of
 * the test on 127.0.0.1 that answers one request.
 */
#include <arpa/inet.h>
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

#include "agent/alerting.h"
#include "agent/config.h"
#include "core/log.h"
#include "core/loop.h"

#define WAIT_MS 20000 /* the bound on waiting for the delivery thread: generous for a loaded machine */

/* ---- a source of one metric, temp.a_c ---- */

struct one_metric {
	struct source base;
	double value;
};

static int
one_metric_read(struct source *src, struct sample *s)
{
	metric_set_put(&s->metrics, "temp.a_c", ((struct one_metric *)src)->value);
	return 0;
}

static void
one_metric_destroy(struct source *src)
{
	free(src);
}

static const struct source_ops one_metric_ops = {
	.name = "one",
	.read = one_metric_read,
	.destroy = one_metric_destroy,
};

/* ---- a sink: counts the events, keeps the last sample's metric names in order ---- */

struct listener {
	struct sink base;
	int events;
	char names[4096]; /* the last sample's metric names, space-separated */
	double firing;
};

static void
listener_notify(struct sink *sink, const struct alert_event *ev)
{
	(void)ev;
	((struct listener *)sink)->events++;
}

static int
listener_write(struct sink *sink, const struct sample *s)
{
	struct listener *l = (struct listener *)sink;
	l->names[0] = '\0';
	for (size_t i = 0; i < s->metrics.count; i++) {
		size_t len = strlen(l->names);
		snprintf(l->names + len, sizeof(l->names) - len, "%s ", s->metrics.items[i].name);
	}
	metric_set_get(&s->metrics, "agent.alerts_firing", &l->firing);
	return 0;
}

static void
listener_destroy(struct sink *sink)
{
	(void)sink; /* the test's own */
}

static const struct sink_ops listener_ops = {
	.name = "listener",
	.write = listener_write,
	.notify = listener_notify,
	.destroy = listener_destroy,
};

/* ---- the receiver: a listening socket, one request read whole and answered 200 ---- */

static int
listen_loopback(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	socklen_t len = sizeof(a);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* Waits for FD to be readable, at most WAIT_MS. */
static void
wait_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	assert_int_equal(poll(&p, 1, WAIT_MS), 1);
}

/* Accepts one connection and reads one request (headers and Content-Length bytes) into BUF. */
static int
read_request(int lfd, char *buf, size_t size)
{
	wait_readable(lfd);
	int c = accept(lfd, NULL, NULL);
	assert_true(c >= 0);
	size_t got = 0;
	for (;;) {
		char *end = strstr(buf, "\r\n\r\n");
		const char *cl = strstr(buf, "Content-Length: ");
		if (end && cl && got >= (size_t)(end + 4 - buf) + strtoul(cl + 16, NULL, 10)) {
			return c;
		}
		assert_true(got + 1 < size);
		wait_readable(c);
		ssize_t n = read(c, buf + got, size - 1 - got);
		assert_true(n > 0);
		got += (size_t)n;
		buf[got] = '\0';
	}
}

static struct config *
load(const char *yaml)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg = NULL;
	int r = config_load_buffer("test.yaml", yaml, strlen(yaml), &cfg, &diags);
	diag_list_print(&diags, stderr);
	diag_list_free(&diags);
	assert_int_equal(r, 0);
	return cfg;
}

static size_t
position(const char *names, const char *name)
{
	const char *at = strstr(names, name);
	assert_non_null(at);
	return (size_t)(at - names);
}

static void
test_actions_hear_the_fan_out(void **state)
{
	(void)state;
	int port;
	int lfd = listen_loopback(&port);
	char yaml[1024];
	snprintf(yaml, sizeof(yaml),
		 "agent: {state_file: \"\"}\n"
		 "actions:\n"
		 "  hook: {type: webhook, format: json, url: \"http://127.0.0.1:%d/hook\"}\n"
		 "  other: {type: webhook, format: json, url: \"http://127.0.0.1:%d/other\"}\n"
		 "rules:\n"
		 "  - name: hot\n"
		 "    metric: temp.a_c\n"
		 "    warning: 50\n"
		 "    actions: {warning: [log, hook]}\n",
		 port, port);
	struct agent *agent = agent_create(&(struct agent_options){.interval_ms = 1000});
	struct one_metric *src = calloc(1, sizeof(*src));
	assert_non_null(src);
	src->base.ops = &one_metric_ops;
	agent_add_source(agent, &src->base);
	assert_int_equal(alerting_add(agent, load(yaml), "jetson", "", true, NULL), 0);
	struct listener sink = {.base.ops = &listener_ops};
	agent_add_sink(agent, &sink.base);

	src->value = 10;
	agent_tick(agent);
	unsigned long warnings = log_warning_count();
	src->value = 90; /* fires on this sample */
	agent_tick(agent);
	assert_int_equal(sink.events, 1);
	assert_true(sink.firing == 1);
	assert_int_equal(log_warning_count(), warnings + 1); /* the log action's line, once */

	/* the rules' counters, then the actions', then the webhooks': as before they were listeners */
	size_t rules = position(sink.names, "agent.alerts_resolved_total ");
	size_t runs = position(sink.names, "agent.action_runs_total ");
	size_t hook = position(sink.names, "webhook.hook.sent_total ");
	assert_true(rules < runs && runs < hook);
	assert_non_null(strstr(sink.names, "webhook.other.sent_total "));

	/* the webhook got the event from the fan-out: one request, to hook only */
	char req[8192] = "";
	int c = read_request(lfd, req, sizeof(req));
	assert_non_null(strstr(req, "POST /hook "));
	assert_non_null(strstr(req, "\"rule\":\"hot\""));
	assert_non_null(strstr(req, "\"transition\":\"firing\""));
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	assert_int_equal(write(c, ok, sizeof(ok) - 1), (ssize_t)(sizeof(ok) - 1));
	close(c);
	agent_destroy(agent); /* sends what is left, within its grace: nothing is */
	struct pollfd p = {.fd = lfd, .events = POLLIN};
	assert_int_equal(poll(&p, 1, 0), 0); /* "other" was never called */
	close(lfd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_actions_hear_the_fan_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
