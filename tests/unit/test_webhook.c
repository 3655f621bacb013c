/*
 * Webhooks without the network: the three bodies field by field (UTC
 * times, labels and annotations, a batch of two, firing and resolved),
 * Standard Webhooks signing against the reference test vector and secret
 * rotation, and the action settings: every key decodes, every mistake is
 * located.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/cfg_decode.h"
#include "core/cfg_tree.h"
#include "core/json.h"
#include "webhook/webhook_config.h"
#include "core/sample_json.h"
#include "webhook/webhook_format.h"
#include "webhook/webhook_sign.h"
#include "build_config.h"
#include "helpers.h"

/* ---- events ---- */

static const struct alert_label rule_labels[] = {{"team", "robots"}, {"zone", "cpu-thermal"}};

static const struct agent_info board = {
	.board_name = "orin-01", .device_id = "1421019054321", .generator_url = "http://orin-01:9474/"};

/* 2026-11-23T09:12:03Z */
#define T0_MS 1795425123000

static void
make_event(struct alert_event *ev, enum alert_transition t)
{
	memset(ev, 0, sizeof(*ev));
	ev->rule_name = "soc-hot";
	ev->labels = rule_labels;
	ev->label_count = 2;
	ev->metric = "temp.cpu_c";
	ev->transition = t;
	ev->severity = SEVERITY_CRITICAL;
	ev->previous = t == TRANSITION_FIRING ? SEVERITY_NONE : SEVERITY_CRITICAL;
	ev->value = 97.1;
	ev->threshold = 95.5;
	ev->at_ms = T0_MS + (t == TRANSITION_RESOLVED ? 60000 : 0);
	ev->starts_at_ms = T0_MS;
	ev->ends_at_ms = t == TRANSITION_RESOLVED ? T0_MS + 60000 : 0;
	snprintf(ev->fingerprint, sizeof(ev->fingerprint), "3f1c2a9be07d4e51");
	snprintf(ev->summary, sizeof(ev->summary), "cpu at 97.1 C");
	ev->power_mode = "MAXN";
	ev->board = "orin-01";
	ev->device_id = "1421019054321";
}

static void
test_time_utc(void **state)
{
	(void)state;
	char buf[RFC3339_LEN];
	rfc3339_utc(T0_MS + 999, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-23T09:12:03Z");
	rfc3339_utc(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00Z");
	/* the local zone never shows */
	setenv("TZ", "Asia/Kolkata", 1);
	rfc3339_utc(T0_MS, buf, sizeof(buf));
	unsetenv("TZ");
	assert_string_equal(buf, "2026-11-23T09:12:03Z");
}

static void
test_alertmanager_api_firing_and_resolved(void **state)
{
	(void)state;
	struct alert_event fire, res;
	make_event(&fire, TRANSITION_FIRING);
	make_event(&res, TRANSITION_RESOLVED);
	snprintf(res.description, sizeof(res.description), "hot \"again\"");
	res.threshold = NAN;
	snprintf(res.throttle, sizeof(res.throttle), "sw_thermal");
	const struct alert_event *evs[] = {&fire, &res};
	struct json j;
	json_init(&j);
	webhook_format_alertmanager_api(&j, &board, evs, 2);
	assert_string_equal(j.out.buf,
			    "[{\"labels\":{\"alertname\":\"soc-hot\",\"board\":\"orin-01\",\"instance\":\"orin-01\","
			    "\"metric\":\"temp.cpu_c\",\"severity\":\"critical\",\"team\":\"robots\","
			    "\"zone\":\"cpu-thermal\"},"
			    "\"annotations\":{\"summary\":\"cpu at 97.1 C\",\"threshold\":\"95.5\",\"value\":\"97.1\"},"
			    "\"startsAt\":\"2026-11-23T09:12:03Z\",\"generatorURL\":\"http://orin-01:9474/\"},"
			    "{\"labels\":{\"alertname\":\"soc-hot\",\"board\":\"orin-01\",\"instance\":\"orin-01\","
			    "\"metric\":\"temp.cpu_c\",\"severity\":\"critical\",\"team\":\"robots\","
			    "\"zone\":\"cpu-thermal\"},"
			    "\"annotations\":{\"description\":\"hot \\\"again\\\"\",\"summary\":\"cpu at 97.1 C\","
			    "\"throttle\":\"sw_thermal\",\"value\":\"97.1\"},"
			    "\"startsAt\":\"2026-11-23T09:12:03Z\",\"endsAt\":\"2026-11-23T09:13:03Z\","
			    "\"generatorURL\":\"http://orin-01:9474/\"}]");
	json_free(&j);
}

static void
test_alertmanager_api_rule_label_never_replaces(void **state)
{
	(void)state;
	static const struct alert_label clash[] = {{"severity", "low"}, {"alertname", "x"}, {"a", "1"}};
	struct alert_event ev;
	make_event(&ev, TRANSITION_REPEAT);
	ev.labels = clash;
	ev.label_count = 3;
	ev.value = NAN; /* absent: no value annotation */
	ev.threshold = NAN;
	const struct alert_event *evs[] = {&ev};
	struct json j;
	json_init(&j);
	webhook_format_alertmanager_api(&j, &board, evs, 1);
	assert_non_null(strstr(j.out.buf, "{\"labels\":{\"a\":\"1\",\"alertname\":\"soc-hot\","));
	assert_non_null(strstr(j.out.buf, "\"severity\":\"critical\"}"));
	assert_null(strstr(j.out.buf, "\"low\""));
	assert_non_null(strstr(j.out.buf, "\"annotations\":{\"summary\":\"cpu at 97.1 C\"},"));
	assert_null(strstr(j.out.buf, "endsAt")); /* repeat: still firing */
	json_free(&j);
}

static void
test_alertmanager_v4_batch(void **state)
{
	(void)state;
	struct alert_event a, b;
	make_event(&a, TRANSITION_FIRING);
	make_event(&b, TRANSITION_RESOLVED);
	b.rule_name = "gpu-hot";
	b.metric = "temp.gpu_c";
	snprintf(b.fingerprint, sizeof(b.fingerprint), "00112233445566ff");
	const struct alert_event *evs[] = {&a, &b};
	struct json j;
	json_init(&j);
	webhook_format_alertmanager(&j, &board, "ops", evs, 2);
	assert_string_equal(
		j.out.buf,
		"{\"version\":\"4\",\"groupKey\":\"{}:{instance=\\\"orin-01\\\"}\",\"truncatedAlerts\":0,"
		"\"status\":\"firing\",\"receiver\":\"ops\",\"groupLabels\":{\"instance\":\"orin-01\"},"
		"\"commonLabels\":{\"board\":\"orin-01\",\"instance\":\"orin-01\",\"severity\":\"critical\","
		"\"team\":\"robots\",\"zone\":\"cpu-thermal\"},"
		"\"commonAnnotations\":{\"summary\":\"cpu at 97.1 C\",\"threshold\":\"95.5\",\"value\":\"97.1\"},"
		"\"externalURL\":\"http://orin-01:9474/\",\"alerts\":["
		"{\"status\":\"firing\",\"labels\":{\"alertname\":\"soc-hot\",\"board\":\"orin-01\","
		"\"instance\":\"orin-01\",\"metric\":\"temp.cpu_c\",\"severity\":\"critical\",\"team\":\"robots\","
		"\"zone\":\"cpu-thermal\"},\"annotations\":{\"summary\":\"cpu at 97.1 C\",\"threshold\":\"95.5\","
		"\"value\":\"97.1\"},\"startsAt\":\"2026-11-23T09:12:03Z\",\"endsAt\":\"0001-01-01T00:00:00Z\","
		"\"generatorURL\":\"http://orin-01:9474/\",\"fingerprint\":\"3f1c2a9be07d4e51\"},"
		"{\"status\":\"resolved\",\"labels\":{\"alertname\":\"gpu-hot\",\"board\":\"orin-01\","
		"\"instance\":\"orin-01\",\"metric\":\"temp.gpu_c\",\"severity\":\"critical\",\"team\":\"robots\","
		"\"zone\":\"cpu-thermal\"},\"annotations\":{\"summary\":\"cpu at 97.1 C\",\"threshold\":\"95.5\","
		"\"value\":\"97.1\"},\"startsAt\":\"2026-11-23T09:12:03Z\",\"endsAt\":\"2026-11-23T09:13:03Z\","
		"\"generatorURL\":\"http://orin-01:9474/\",\"fingerprint\":\"00112233445566ff\"}]}");
	json_reset(&j);

	/* all resolved: resolved at the top; a board name with a quote stays a valid group key */
	const struct agent_info odd = {.board_name = "lab \"7\"", .device_id = "id"};
	const struct alert_event *one[] = {&b};
	webhook_format_alertmanager(&j, &odd, "ops", one, 1);
	assert_non_null(strstr(j.out.buf, "\"groupKey\":\"{}:{instance=\\\"lab \\\\\\\"7\\\\\\\"\\\"}\""));
	assert_non_null(strstr(j.out.buf, "\"status\":\"resolved\",\"receiver\""));
	assert_non_null(strstr(j.out.buf, "\"externalURL\":\"\""));
	json_free(&j);
}

static void
test_json_event_with_board(void **state)
{
	(void)state;
	struct alert_event ev;
	make_event(&ev, TRANSITION_ESCALATED);
	/* the json format sends the core event as it is: it names the board itself */
	struct json j;
	json_init(&j);
	alert_event_to_json(&j, &ev);
	assert_non_null(strstr(j.out.buf, ",\"board\":{\"name\":\"orin-01\",\"device_id\":\"1421019054321\"}}"));
	assert_non_null(strstr(j.out.buf, "\"transition\":\"escalated\""));
	json_free(&j);
}

static void
test_wanted_transitions(void **state)
{
	(void)state;
	struct alert_event ev;
	make_event(&ev, TRANSITION_PENDING);
	assert_false(webhook_event_wanted(&ev));
	ev.transition = TRANSITION_CANCELLED;
	assert_false(webhook_event_wanted(&ev));
	ev.transition = TRANSITION_DEESCALATED;
	assert_true(webhook_event_firing(&ev));
	ev.transition = TRANSITION_RESOLVED;
	assert_true(webhook_event_wanted(&ev));
	assert_false(webhook_event_firing(&ev));
}

/* ---- signing (core HMAC-SHA256) ---- */

#if HAVE_WEBHOOKS

static void
test_sign_reference_vector(void **state)
{
	(void)state;
	struct webhook_key key;
	assert_int_equal(webhook_key_parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", &key), 0);
	assert_int_equal(key.len, 24);
	const char *body = "{\"test\": 2432232314}";
	char sig[WEBHOOK_SIGNATURE_MAX];
	assert_int_equal(webhook_sign(&key, 1, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body, strlen(body), sig,
				      sizeof(sig)),
			 0);
	assert_string_equal(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");

	/* rotation: two secrets, two signatures, the old one still first */
	struct webhook_key keys[2] = {key, key};
	assert_int_equal(webhook_key_parse("whsec_c2VjcmV0LXR3by1zZWNyZXQtdHdvLXNlY3JldA==", &keys[1]), 0);
	assert_int_equal(webhook_sign(keys, 2, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body, strlen(body), sig,
				      sizeof(sig)),
			 0);
	assert_int_equal(strncmp(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1,", 51), 0);
	assert_int_equal(strlen(sig), 44 + 3 + 1 + 44 + 3);
	assert_int_equal(webhook_sign(&key, 1, "msg.dot", 1, body, 1, sig, sizeof(sig)), -EINVAL);
	assert_int_equal(webhook_sign(&key, 1, "msg", 1, body, 1, sig, 10), -ENOSPC);
	webhook_key_wipe(&key);
}

static void
test_sign_bad_secrets(void **state)
{
	(void)state;
	struct webhook_key key;
	const char *bad[] = {
		"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",       /* no prefix */
		"whsec_",                                 /* empty */
		"whsec_MfKQ9r8GKYqrTwjU",                 /* 12 bytes: too short */
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS!", /* not base64 */
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwA", /* no whole byte at the end */
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa=w", /* padding inside */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(webhook_key_parse(bad[i], &key), -EINVAL);
		assert_false(webhook_secret_syntax_ok(bad[i]));
	}
	/* unpadded base64 is accepted */
	assert_int_equal(webhook_key_parse("whsec_c2VjcmV0LXR3by1zZWNyZXQtdHdvLXNlY3JldA", &key), 0);
	assert_int_equal(key.len, 28);
}
#endif

/* ---- configuration ---- */

static char tmpdir[64];

static char *
write_file(const char *name, const char *text)
{
	static char path[160];
	th_join(path, sizeof(path), tmpdir, name);
	th_write_bytes(path, text, strlen(text), 0600); /* secrets: their owner's only, or validate refuses them */
	return path;
}

static int
setup_tmp(void **state)
{
	(void)state;
	char *dir = th_tmpdir("webhook");
	snprintf(tmpdir, sizeof(tmpdir), "%s", dir);
	free(dir);
	write_file("ops.secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n");
	write_file("two.secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\nwhsec_c2VjcmV0LXR3by1zZWNyZXQtdHdvLXNlY3JldA==\n");
	write_file("bad.secret", "hunter2\n");
	write_file("token", "abc.DEF-123\n\n");
	write_file("empty", "\n");
	write_file("ca.pem", "-----BEGIN CERTIFICATE-----\n");
	return 0;
}

static int
teardown_tmp(void **state)
{
	(void)state;
	th_rmtree(strdup(tmpdir));
	return 0;
}

/* Decodes and validates YAML (the map of one action) into CFG; the messages go to DIAGS. */
static int
decode(const char *yaml, struct webhook_config *cfg, struct diag_list *diags)
{
	struct cfg_tree *tree;
	memset(cfg, 0, sizeof(*cfg));
	assert_int_equal(cfg_tree_load_buffer("a.yaml", yaml, strlen(yaml), &tree, diags), 0);
	struct cfg_decoder dec = {.diags = diags, .context = "action 'ops'"};
	cfg_apply_defaults(webhook_keys, webhook_key_count, cfg);
	int r = cfg_decode_map(&dec, cfg_tree_root(tree), webhook_keys, webhook_key_count, cfg, NULL);
	if (r == 0) {
		struct cfg_place place = {.section = "actions.ops", .map = cfg_tree_root(tree), .file = "a.yaml"};
		r = webhook_config_validate(cfg, &place, diags);
	}
	cfg_tree_destroy(tree);
	return r;
}

static void
test_config_every_key(void **state)
{
	(void)state;
	char yaml[1024];
	snprintf(yaml, sizeof(yaml),
		 "url: https://hooks.example.com/tegrawatch\n"
		 "format: alertmanager\n"
		 "timeout: 2500ms\n"
		 "secret_file: %s/two.secret\n"
		 "bearer_token_file: %s/token\n"
		 "headers: {X-Team: robots, X-Empty: ''}\n"
		 "ca_file: %s/ca.pem\n"
		 "queue_file: /var/lib/tegrawatch/ops.queue\n"
		 "queue_max: 50\n"
		 "resend: 30s\n",
		 tmpdir, tmpdir, tmpdir);
	struct webhook_config cfg;
	struct diag_list diags;
	diag_list_init(&diags);
	assert_int_equal(decode(yaml, &cfg, &diags), 0);
	assert_int_equal(diags.count, 0);
	assert_string_equal(cfg.url, "https://hooks.example.com/tegrawatch");
	assert_int_equal(cfg.format, WEBHOOK_ALERTMANAGER);
	assert_int_equal(cfg.timeout_ms, 2500);
	assert_non_null(strstr(cfg.secret_file, "two.secret"));
	assert_non_null(strstr(cfg.bearer_token_file, "token"));
	assert_int_equal(cfg.header_count, 2);
	assert_string_equal(cfg.headers[0], "X-Team: robots");
	assert_string_equal(cfg.headers[1], "X-Empty: ");
	assert_non_null(strstr(cfg.ca_file, "ca.pem"));
	assert_string_equal(cfg.queue_file, "/var/lib/tegrawatch/ops.queue");
	assert_int_equal(cfg.queue_max, 50);
	assert_int_equal(cfg.resend_ms, 30000);

	struct webhook_config copy;
	webhook_config_copy(&copy, &cfg);
	assert_string_equal(copy.headers[1], "X-Empty: ");
	assert_ptr_not_equal(copy.url, cfg.url);
	webhook_config_free(&copy);
	webhook_config_free(&cfg);

	/* defaults */
	assert_int_equal(decode("url: http://127.0.0.1:9093/api/v2/alerts\nformat: alertmanager-api\n", &cfg, &diags), 0);
	assert_int_equal(cfg.format, WEBHOOK_ALERTMANAGER_API);
	assert_int_equal(cfg.timeout_ms, 10000);
	assert_string_equal(cfg.secret_file, "");
	assert_int_equal(cfg.header_count, 0);
	assert_null(cfg.headers);
	assert_int_equal(cfg.queue_max, 1000);
	assert_int_equal(cfg.resend_ms, 60000);
	assert_string_equal(webhook_format_name(cfg.format), "alertmanager-api");
	webhook_config_free(&cfg);
	diag_list_free(&diags);

	char *secrets[WEBHOOK_SECRETS_MAX];
	char why[160];
	char path[160];
	snprintf(path, sizeof(path), "%s/two.secret", tmpdir);
	assert_int_equal(webhook_read_secrets(path, secrets, why, sizeof(why)), 2);
	assert_string_equal(secrets[0], "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
	free(secrets[0]);
	free(secrets[1]);
	char *token;
	snprintf(path, sizeof(path), "%s/token", tmpdir);
	assert_int_equal(webhook_read_token(path, &token, why, sizeof(why)), 0);
	assert_string_equal(token, "abc.DEF-123");
	free(token);
}

/* Each mistake: the YAML and the one message expected, located. */
static void
expect_error(const char *yaml, const char *msg)
{
	struct webhook_config cfg;
	struct diag_list diags;
	diag_list_init(&diags);
	int r = decode(yaml, &cfg, &diags);
	webhook_config_free(&cfg);
	char got[600] = "(none)";
	if (diags.count) {
		diag_format(&diags.items[0], got, sizeof(got));
	}
	if (r != -EINVAL || diags.count != 1 || strcmp(got, msg) != 0) {
		print_error("for:\n%s\nexpected: %s\ngot %zu: %s\n", yaml, msg, diags.count, got);
		diag_list_free(&diags);
		fail();
	}
	diag_list_free(&diags);
}

static void
test_config_mistakes_located(void **state)
{
	(void)state;
	char yaml[512], msg[512];
	expect_error("format: json\n", "a.yaml:1:1: missing 'url' in action 'ops'");
	expect_error("url: http://x/\n", "a.yaml:1:1: missing 'format' in action 'ops'");
	expect_error("url: http://x/\nformat: slack\n",
		     "a.yaml:2:9: format: expected alertmanager-api, alertmanager or json, got 'slack'");
	expect_error("url: ftp://x/\nformat: json\n",
		     "a.yaml:1:6: actions.ops.url: only http:// and https:// URLs are supported");
	expect_error("url: https://\nformat: json\n", "a.yaml:1:6: actions.ops.url: the URL has no host");
	expect_error("url: https://user:pw@x/\nformat: json\n",
		     "a.yaml:1:6: actions.ops.url: credentials in the URL would be logged and shown: use "
		     "bearer_token_file or headers");
	expect_error("url: http://x/\nformat: json\ntimeout: 1h\n",
		     "a.yaml:3:10: timeout: must be between 100ms and 30s, got '1h'");
	expect_error("url: http://x/\nformat: json\nqueue_max: 0\n",
		     "a.yaml:3:12: queue_max: must be between 1 and 100000, got 0");
	expect_error("url: http://x/\nformat: json\nretries: 3\n",
		     "a.yaml:3:1: unknown key 'retries' in action 'ops' (known keys: url, format, timeout, secret_file, bearer_token_file, headers, ca_file, queue_file, queue_max, resend)");
	expect_error("url: http://x/\nformat: json\nsecret_flie: x\n",
		     "a.yaml:3:1: unknown key 'secret_flie' in action 'ops' (did you mean 'secret_file'?)");
	expect_error("url: http://x/\nformat: json\nheaders: [a, b]\n",
		     "a.yaml:3:10: headers: expected a map of header names to values, got a list");
	expect_error("url: http://x/\nformat: json\nheaders:\n  Bad Name: x\n",
		     "a.yaml:4:3: headers: 'Bad Name' is not a header name (letters, digits and !#$%&'*+-.^_`|~)");
	expect_error("url: http://x/\nformat: json\nheaders:\n  content-type: text/plain\n",
		     "a.yaml:4:3: headers: 'content-type' is set by tegrawatch itself");
	expect_error("url: http://x/\nformat: json\nheaders:\n  X-Key: \"a\\r\\nEvil: 1\"\n",
		     "a.yaml:4:10: headers: 'X-Key': the value holds a line break or control character");
	expect_error("url: http://x/\nformat: json\nheaders:\n  X-Key: {a: 1}\n",
		     "a.yaml:4:10: headers: 'X-Key': expected a text value, got a map");

	snprintf(yaml, sizeof(yaml), "url: http://x/\nformat: json\nsecret_file: %s/bad.secret\n", tmpdir);
	snprintf(msg, sizeof(msg),
		 "a.yaml:3:14: actions.ops.secret_file: cannot use %s/bad.secret: secret 1 is not whsec_ followed by "
		 "the base64 of 16 to 128 bytes",
		 tmpdir);
	expect_error(yaml, msg);
	/* a secret others can read is refused (goal E5), unless systemd gave it as a credential */
	snprintf(msg, sizeof(msg), "%s/ops.secret", tmpdir);
	assert_int_equal(chmod(msg, 0640), 0);
	snprintf(yaml, sizeof(yaml), "url: http://x/\nformat: json\nsecret_file: %s/ops.secret\n", tmpdir);
	snprintf(msg, sizeof(msg),
		 "a.yaml:3:14: actions.ops.secret_file: %s/ops.secret can be read by group or others (mode 0640): it "
		 "holds a secret; chmod 600 it",
		 tmpdir);
	expect_error(yaml, msg);
	setenv("CREDENTIALS_DIRECTORY", tmpdir, 1);
	struct webhook_config cred;
	struct diag_list diags;
	diag_list_init(&diags);
	assert_int_equal(decode(yaml, &cred, &diags), 0);
	webhook_config_free(&cred);
	diag_list_free(&diags);
	unsetenv("CREDENTIALS_DIRECTORY");
	snprintf(msg, sizeof(msg), "%s/token", tmpdir);
	assert_int_equal(chmod(msg, 0604), 0);
	snprintf(yaml, sizeof(yaml), "url: http://x/\nformat: json\nbearer_token_file: %s/token\n", tmpdir);
	snprintf(msg, sizeof(msg),
		 "a.yaml:3:20: actions.ops.bearer_token_file: %s/token can be read by group or others (mode 0604): "
		 "it holds a secret; chmod 600 it",
		 tmpdir);
	expect_error(yaml, msg);
	snprintf(msg, sizeof(msg), "%s/ops.secret", tmpdir);
	assert_int_equal(chmod(msg, 0600), 0);
	snprintf(msg, sizeof(msg), "%s/token", tmpdir);
	assert_int_equal(chmod(msg, 0600), 0);
	snprintf(yaml, sizeof(yaml), "url: http://x/\nformat: json\nsecret_file: %s/none\n", tmpdir);
	snprintf(msg, sizeof(msg), "a.yaml:3:14: actions.ops.secret_file: cannot use %s/none: No such file or directory",
		 tmpdir);
	expect_error(yaml, msg);
	snprintf(yaml, sizeof(yaml), "url: http://x/\nformat: json\nsecret_file: %s\n", tmpdir);
	snprintf(msg, sizeof(msg), "a.yaml:3:14: actions.ops.secret_file: cannot use %s: not a regular file", tmpdir);
	expect_error(yaml, msg);
	snprintf(yaml, sizeof(yaml), "url: http://x/\nformat: json\nbearer_token_file: %s/empty\n", tmpdir);
	snprintf(msg, sizeof(msg), "a.yaml:3:20: actions.ops.bearer_token_file: cannot use %s/empty: the file is empty",
		 tmpdir);
	expect_error(yaml, msg);
	snprintf(yaml, sizeof(yaml),
		 "url: http://x/\nformat: json\nbearer_token_file: %s/token\nheaders: {Authorization: Basic x}\n",
		 tmpdir);
	expect_error(yaml,
		     "a.yaml:4:10: actions.ops.headers: Authorization and bearer_token_file both set the same header");
	snprintf(yaml, sizeof(yaml), "url: http://x/\nformat: json\nca_file: %s/none.pem\n", tmpdir);
	snprintf(msg, sizeof(msg), "a.yaml:3:10: actions.ops.ca_file: cannot read %s/none.pem: No such file or directory",
		 tmpdir);
	expect_error(yaml, msg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_utc),
		cmocka_unit_test(test_alertmanager_api_firing_and_resolved),
		cmocka_unit_test(test_alertmanager_api_rule_label_never_replaces),
		cmocka_unit_test(test_alertmanager_v4_batch),
		cmocka_unit_test(test_json_event_with_board),
		cmocka_unit_test(test_wanted_transitions),
#if HAVE_WEBHOOKS
		cmocka_unit_test(test_sign_reference_vector),
		cmocka_unit_test(test_sign_bad_secrets),
#endif
		cmocka_unit_test_setup_teardown(test_config_every_key, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_config_mistakes_located, setup_tmp, teardown_tmp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
