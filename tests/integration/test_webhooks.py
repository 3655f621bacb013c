#!/usr/bin/env python3
"""Alert webhooks end to end: the real agent on a fixture board whose
temperature the test raises and lowers, and every peer started here on a free
127.0.0.1 port (never any other address) and stopped again:

- a real Alertmanager (`format: alertmanager-api`): the alert in its API with
  our labels and annotations, at Alertmanager's own webhook receiver, then
  resolved;
- a local receiver: the `alertmanager`, `alertmanager-api` and `json` bodies
  field by field, and the Standard Webhooks signature checked with hmac;
- libcurl loaded only with a webhook action, and the signals the loop reads.

Faults (a receiver that fails, redirects, throttles, hangs or is down):
test_webhooks_faults.py.

Retries use TEGRAWATCH_WEBHOOK_BACKOFF_MS (the test-only back-off, see
docs/webhooks.md) so they come in a second, not after the production 5 s
doubling. With WEBHOOK_EXAMPLES=DIR the bodies received are written there
(docs/webhooks.md shows them).

Usage: test_webhooks.py TEGRAWATCH SOURCE_ROOT
Needs: prometheus-alertmanager for the Alertmanager test, promtool for the
/metrics check (missing: that test is skipped, the rest runs).
"""
import base64
import hashlib
import hmac
import json
import os
import signal
import time
import unittest

import harness
from harness import free_port, read_text, wait_until, write_file
from harness.webhooks import (ALERTMANAGER, COOL, HOT, MACHINE_ID, SECRET, TOKEN, Alertmanager, WebhookCase, events,
                              hook_config, hook_rule, json_action, save_example, verify_signature)



# ---------------------------------------------------------------------------------------------------------------
# 1. A real Alertmanager


@unittest.skipUnless(os.access(ALERTMANAGER, os.X_OK), "prometheus-alertmanager is not installed")
class AlertmanagerTest(WebhookCase):
    def test_alert_reaches_alertmanager_and_its_receiver_then_resolves(self):
        hook = self.receiver()
        am = Alertmanager(self.tmp, hook.url("/am-hook")).start()
        self.addCleanup(am.stop)
        agent = self.hook_agent(hook_config(
            """  am:
    type: webhook
    format: alertmanager-api
    url: %s
    resend: 1s
""" % am.url("/api/v2/alerts"),
            hook_rule("cpu-hot", "temp.cpu_c", ["am"], labels="{team: robots, site: lab}")))
        agent.wait_metrics(lambda m: "webhook.am.sent_total" in m, "the webhook counters")
        self.board.set("temp.cpu_c", HOT)
        agent.wait_metrics(lambda m: m.get("agent.alerts_firing") == 1, "the alert firing")

        # in Alertmanager's API, with our labels and annotations
        listed = wait_until(lambda: [a for a in am.alerts() if a["labels"].get("alertname") == "cpu-hot"], 15, 0.2)
        self.assertTrue(listed, "not in /api/v2/alerts:\n" + agent.stderr())
        a = listed[0]
        self.assertEqual(a["labels"], {"alertname": "cpu-hot", "severity": "warning", "instance": "jetson-lab-01",
                                       "board": "jetson-lab-01", "metric": "temp.cpu_c", "team": "robots",
                                       "site": "lab"})
        self.assertEqual(a["annotations"]["summary"], "jetson-lab-01: temp.cpu_c at 70 C (threshold 60)")
        self.assertEqual(a["annotations"]["description"], "cpu-hot warning on jetson-lab-01, team robots")
        self.assertEqual(a["annotations"]["value"], "70")
        self.assertEqual(a["annotations"]["threshold"], "60")
        self.assertEqual(a["status"]["state"], "active")
        self.assertTrue(a["startsAt"].endswith("Z"), a["startsAt"])

        # Alertmanager notified its own webhook receiver: a version 4 body, firing
        def am_says(status):
            return [b for b in hook.bodies("/am-hook") if b["status"] == status]
        fired = wait_until(lambda: am_says("firing"), 20, 0.1)
        self.assertTrue(fired, "alertmanager sent nothing:\n" + read_text(am.log))
        b = fired[0]
        self.assertEqual(b["version"], "4")
        self.assertEqual(b["receiver"], "hook")
        self.assertEqual(b["groupLabels"], {"alertname": "cpu-hot", "instance": "jetson-lab-01"})
        self.assertEqual(b["commonLabels"]["board"], "jetson-lab-01")
        self.assertEqual(len(b["alerts"]), 1)
        self.assertEqual(b["alerts"][0]["labels"]["team"], "robots")
        self.assertEqual(b["alerts"][0]["annotations"]["value"], "70")
        save_example("alertmanager-v4-from-alertmanager.json", hook.got("/am-hook")[0].body)

        # the resend keeps it there (resend: 1s), without new notifications from Alertmanager
        sent = agent.wait_metrics(lambda m: m["webhook.am.sent_total"] >= 3, "re-sends")["webhook.am.sent_total"]
        self.assertGreaterEqual(sent, 3)

        # cooled down: resolved in the API (gone from the active alerts), and at the receiver
        self.board.set("temp.cpu_c", COOL)
        agent.wait_metrics(lambda m: m.get("agent.alerts_firing") == 0, "the alert resolved")
        gone = wait_until(lambda: not [a for a in am.alerts() if a["labels"].get("alertname") == "cpu-hot"], 15, 0.2)
        self.assertTrue(gone, am.alerts())
        resolved = wait_until(lambda: am_says("resolved"), 20, 0.1)
        self.assertTrue(resolved, "no resolved notification:\n" + read_text(am.log))
        r = resolved[0]["alerts"][0]
        self.assertEqual(r["status"], "resolved")
        self.assertEqual(r["labels"]["alertname"], "cpu-hot")
        self.assertNotEqual(r["endsAt"], "0001-01-01T00:00:00Z")
        self.assertEqual(r["startsAt"], b["alerts"][0]["startsAt"])
        m = agent.last()
        self.assertEqual(m["webhook.am.failed_total"], 0)
        self.assertEqual(m["webhook.am.dropped_total"], 0)
        self.assertEqual(agent.stop(), 0)


# ---------------------------------------------------------------------------------------------------------------
# 2. The bodies and headers as the agent sends them


def rfc3339_ms(text):
    """"2026-11-23T09:12:03Z" -> epoch milliseconds (whole seconds: the agent writes no fraction)."""
    import calendar
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")) * 1000


class BodiesTest(WebhookCase):
    def test_three_formats_field_by_field_with_signatures(self):
        r = self.receiver()
        web = "127.0.0.1:%d" % free_port()
        secret = self.path("secret", SECRET + "\n")
        # the `am` action reads its secret and token as systemd credentials (credential:NAME)
        creds = self.path("credentials")
        os.mkdir(creds)
        write_file(os.path.join(creds, "hook-secret"), SECRET + "\n")
        write_file(os.path.join(creds, "hook-token"), TOKEN + "\n")
        agent = self.hook_agent(hook_config("""  am:
    type: webhook
    format: alertmanager
    url: %s
    secret_file: credential:hook-secret
    bearer_token_file: credential:hook-token
    headers: {X-Team: robots}
  api:
    type: webhook
    format: alertmanager-api
    url: %s
    resend: 1h
  js:
    type: webhook
    format: json
    url: %s
    secret_file: %s
""" % (r.url("/am"), r.url("/api"), r.url("/json"), secret),
            hook_rule("cpu-hot", "temp.cpu_c", ["am", "api", "js"], labels="{team: robots}"), web=web),
            env={"CREDENTIALS_DIRECTORY": creds})
        agent.wait_metrics(lambda m: "webhook.js.sent_total" in m, "the webhook counters")
        self.board.set("temp.cpu_c", HOT)
        for path in ("/am", "/api", "/json"):
            r.wait(1, path)
        self.board.set("temp.cpu_c", COOL)
        for path in ("/am", "/api", "/json"):
            r.wait(2, path)
        m = agent.wait_metrics(lambda m: m["webhook.am.sent_total"] == 2 and m["webhook.api.sent_total"] == 2 and
                               m["webhook.js.sent_total"] == 2, "every notification counted")
        self.assertEqual(agent.stop(), 0)
        now = time.time()
        for name in ("am", "api", "js"):
            self.assertEqual(m["webhook.%s.failed_total" % name], 0)
            self.assertEqual(m["webhook.%s.retried_total" % name], 0)
            self.assertEqual(m["webhook.%s.queue_depth" % name], 0)
            self.assertLessEqual(abs(m["webhook.%s.last_success_s" % name] - now), 60)
        self.assertEqual(len(r.got()), 6, [x.path for x in r.got()])  # nothing else: resend 1h, no retries

        # ---- json: the core event, one per request
        js = r.got("/json")
        fire, res = [json.loads(x.body) for x in js]
        keys = ["rule", "metric", "transition", "status", "severity", "previous_severity", "value", "threshold",
                "absent", "fingerprint", "at", "at_ms", "starts_at", "starts_at_ms", "ends_at", "ends_at_ms",
                "summary", "description", "labels", "throttle", "throttle_causes", "power_mode", "board"]
        self.assertEqual(list(fire), keys)
        self.assertEqual(list(res), keys)
        # the device id MQTT uses: made from the board's machine-id (docs/mqtt.md, Device id), not its name
        device_id = "jetson-" + hmac.new(MACHINE_ID.encode(), b"tegrawatch device id", hashlib.sha256).hexdigest()[:16]
        board = {"name": "jetson-lab-01", "device_id": device_id}
        self.assertEqual({k: fire[k] for k in keys if not k.startswith(("at", "starts_at", "ends_at"))}, {
            "rule": "cpu-hot", "metric": "temp.cpu_c", "transition": "firing", "status": "firing",
            "severity": "warning", "previous_severity": "none", "value": 70, "threshold": 60, "absent": False,
            "fingerprint": fire["fingerprint"], "summary": "jetson-lab-01: temp.cpu_c at 70 C (threshold 60)",
            "description": "cpu-hot warning on jetson-lab-01, team robots", "labels": {"team": "robots"},
            "throttle": "", "throttle_causes": [], "power_mode": "MAXN_SUPER", "board": board})
        self.assertRegex(fire["fingerprint"], "^[0-9a-f]{16}$")
        self.assertEqual(fire["starts_at_ms"], fire["at_ms"])
        self.assertIsNone(fire["ends_at"])
        self.assertIsNone(fire["ends_at_ms"])
        self.assertEqual(rfc3339_ms(fire["at"]), fire["at_ms"] // 1000 * 1000)
        self.assertLessEqual(abs(fire["at_ms"] / 1000 - now), 60)
        self.assertEqual((res["transition"], res["status"], res["previous_severity"], res["value"]),
                         ("resolved", "resolved", "warning", 45))
        self.assertEqual(res["fingerprint"], fire["fingerprint"])
        # the resolve's start is its stamp less the time that really passed (docs/reliability.md, clock steps):
        # without a step, the firing's stamp within the few ms the wall and monotonic clocks drift apart
        self.assertLessEqual(abs(res["starts_at_ms"] - fire["at_ms"]), 50, (res["starts_at_ms"], fire["at_ms"]))
        self.assertEqual(rfc3339_ms(res["starts_at"]), res["starts_at_ms"] // 1000 * 1000)
        self.assertEqual(res["ends_at_ms"], res["at_ms"])
        self.assertGreater(res["at_ms"], fire["at_ms"])
        self.assertEqual(rfc3339_ms(res["ends_at"]), res["ends_at_ms"] // 1000 * 1000)
        self.assertEqual(res["board"], board)

        # ---- alertmanager: Alertmanager's own webhook body (version 4)
        am_fire, am_res = r.bodies("/am")
        labels = {"alertname": "cpu-hot", "board": "jetson-lab-01", "instance": "jetson-lab-01",
                  "metric": "temp.cpu_c", "severity": "warning", "team": "robots"}
        ann = {"description": "cpu-hot warning on jetson-lab-01, team robots",
               "summary": "jetson-lab-01: temp.cpu_c at 70 C (threshold 60)", "threshold": "60", "value": "70"}
        self.assertEqual(am_fire, {
            "version": "4", "groupKey": '{}:{instance="jetson-lab-01"}', "truncatedAlerts": 0, "status": "firing",
            "receiver": "am", "groupLabels": {"instance": "jetson-lab-01"}, "commonLabels": labels,
            "commonAnnotations": ann, "externalURL": "http://%s/" % web,
            "alerts": [{"status": "firing", "labels": labels, "annotations": ann, "startsAt": fire["starts_at"],
                        "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://%s/" % web,
                        "fingerprint": fire["fingerprint"]}]})
        # a resolved alert says it ended and how long it lasted (a length this test does not fix)
        summary_res = am_res["commonAnnotations"].get("summary", "")
        self.assertRegex(summary_res, r"^jetson-lab-01: cpu-hot ended after .+ \(temp\.cpu_c: now 45\)$")
        ann_res = dict(ann, summary=summary_res, value="45")
        self.assertEqual(am_res["status"], "resolved")
        self.assertEqual(am_res["commonAnnotations"], ann_res)
        self.assertEqual(am_res["alerts"], [{
            "status": "resolved", "labels": labels, "annotations": ann_res, "startsAt": res["starts_at"],
            "endsAt": res["ends_at"], "generatorURL": "http://%s/" % web, "fingerprint": fire["fingerprint"]}])
        # labels as Alertmanager writes them: sorted by name
        self.assertEqual(list(json.loads(r.got("/am")[0].body)["commonLabels"]), sorted(labels))

        # ---- alertmanager-api: what POST /api/v2/alerts takes (no endsAt while firing)
        api_fire, api_res = r.bodies("/api")
        self.assertEqual(api_fire, [{"labels": labels, "annotations": ann, "startsAt": fire["starts_at"],
                                     "generatorURL": "http://%s/" % web}])
        self.assertEqual(api_res, [{"labels": labels, "annotations": ann_res, "startsAt": res["starts_at"],
                                    "endsAt": res["ends_at"], "generatorURL": "http://%s/" % web}])

        # ---- headers and signatures
        version = harness.tegrawatch(["--version"]).stdout.split()[-1]
        ids = set()
        for req in r.got():
            path, h, body = req.path, req.headers, req.body
            self.assertEqual(h["content-type"], "application/json")
            self.assertEqual(h["user-agent"], "tegrawatch/" + version)
            self.assertEqual(int(h["content-length"]), len(body))
            if path == "/api":  # no secret, no token: none of these
                for k in ("webhook-id", "webhook-timestamp", "webhook-signature", "authorization", "x-team"):
                    self.assertNotIn(k, h)
                continue
            self.assertRegex(h["webhook-id"], "^msg_[0-9a-f]{32}$")
            ids.add(h["webhook-id"])
            self.assertLessEqual(abs(int(h["webhook-timestamp"]) - now), 60)
            self.assertRegex(h["webhook-signature"], "^v1,[A-Za-z0-9+/]{43}=$")
            self.assertTrue(verify_signature(SECRET, h, body), (path, h))
            # the verifier itself: another key, another body or another id fail
            other = "whsec_" + base64.b64encode(bytes(range(2, 26))).decode()
            self.assertFalse(verify_signature(other, h, body))
            self.assertFalse(verify_signature(SECRET, h, body + b" "))
            self.assertFalse(verify_signature(SECRET, dict(h, **{"webhook-id": "msg_x"}), body))
            if path == "/am":
                self.assertEqual(h["authorization"], "Bearer " + TOKEN)
                self.assertEqual(h["x-team"], "robots")
            else:
                self.assertNotIn("authorization", h)
        self.assertEqual(len(ids), 4, "one webhook-id per notification")
        # neither the secret nor the token is ever logged
        self.assertNotIn(TOKEN, agent.stderr())
        self.assertNotIn(SECRET[6:], agent.stderr())
        for path, name in (("/json", "json"), ("/am", "alertmanager"), ("/api", "alertmanager-api")):
            for i, req in enumerate(r.got(path)):
                save_example("%s-%s.json" % (name, ("firing", "resolved")[i]), req.body)


class LazyLibcurlTest(WebhookCase):
    """libcurl is loaded by the first webhook action only: an agent without one never maps it."""

    def test_mapped_only_with_a_webhook_action(self):
        plain = self.hook_agent(hook_config("  {}\n", hook_rule("cpu-hot", "temp.cpu_c", ["log"])),
                           name="plain")
        plain.wait_metrics(lambda m: True, "a sample")
        self.assertFalse(harness.mapped(plain.proc.pid, ("libcurl",)), "libcurl mapped without a webhook action")
        plain.stop()

        r = self.receiver()
        hooked = self.hook_agent(hook_config(json_action("hook", r.url("/hook")),
                                            hook_rule("cpu-hot", "temp.cpu_c", ["hook"])),
                            name="hooked")
        hooked.wait_metrics(lambda m: True, "a sample")
        self.assertTrue(harness.mapped(hooked.proc.pid, ("libcurl",)), "libcurl not mapped with a webhook action")
        self.board.set("temp.cpu_c", HOT)
        self.assertEqual(events(r.wait(1)), [("cpu-hot", "firing")])
        hooked.stop()


class SignalsTest(WebhookCase):
    def test_sighup_reloads_and_sigterm_stops_with_webhooks(self):
        """The delivery thread must not take the signals the loop reads (it once did: SIGHUP killed the agent)."""
        r = self.receiver()
        agent = self.hook_agent(hook_config(json_action("ops", r.url("/hook")),
                                            hook_rule("cpu-hot", "temp.cpu_c", ["ops"])))
        agent.wait_metrics(lambda m: "webhook.ops.sent_total" in m, "the webhook counters")
        for n in (1, 2, 3):
            agent.send(signal.SIGHUP)
            agent.wait_metrics(lambda m: m["agent.config_reloads_total"] == n, "reload %d" % n)
        self.board.set("temp.cpu_c", HOT)
        self.assertEqual(events(r.wait(1)), [("cpu-hot", "firing")])  # the action survived the reloads
        self.assertEqual(agent.stop(), 0)


if __name__ == "__main__":
    harness.init()
    harness.main()
