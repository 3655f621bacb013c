#!/usr/bin/env python3
"""Alerts restored from the state file after a restart reach the actions as they reach the sinks.

An alert fires and the agent stops; the next agent restores it from the state file. Then:
- an `alertmanager-api` action sends it again at once (Alertmanager forgets what it is not told about: a real
  Alertmanager, restarted empty while the agent was down, lists it again), with its first `startsAt`;
- a `json` action does not (its receiver heard of it before), nor does an `exec` action run again.
The `resend` is an hour, so nothing but the restore can send it within the test.

Usage: test_restored_alerts.py TEGRAWATCH SOURCE_ROOT
Needs libcurl (webhook delivery); prometheus-alertmanager for the Alertmanager test. Loopback only.
"""
import os
import unittest

import harness
from harness import read_text, wait_until, write_file
from harness.webhooks import ALERTMANAGER, Alertmanager

CPU_ZONE = "sys/devices/virtual/thermal/thermal_zone0/temp"  # temp.cpu_c on the fixture


class RestoredAlertsTest(harness.TestCase):
    def setUp(self):
        super().setUp()
        self.tmp = self.d
        self.root = harness.copy_board(self.d)
        write_file(os.path.join(self.root, CPU_ZONE), "70000\n", 0o644)  # hot from the first sample to the last
        self.state = os.path.join(self.tmp, "alerts.state")
        self.ran = os.path.join(self.tmp, "exec-ran")

    def config(self, am_url, json_url):
        cfg = os.path.join(self.tmp, "tegrawatch.yaml")
        with open(cfg, "w") as f:
            f.write("""agent:
  board_name: jetson-lab-01
  state_file: %s
web:
  listen: ""
actions:
  am:
    type: webhook
    format: alertmanager-api
    url: %s
    resend: 1h
  hook:
    type: webhook
    format: json
    url: %s
  note:
    type: exec
    command: ["/bin/sh", "-c", "echo \\"$TEGRAWATCH_TRANSITION\\" >> %s"]
rules:
  - name: cpu-hot
    metric: temp.cpu_c
    warning: 60
    actions: {warning: [am, hook, note]}
""" % (self.state, am_url, json_url, self.ran))
        return cfg

    def live_agent(self, cfg, name):
        return self.agent(["--root", self.root, "--interval", "200", "--no-tegrastats", "-c", cfg], name=name)

    def fire_then_restart(self, cfg, sent_before_stop, while_down=None):
        """The first agent fires the alert and stops; returns the second agent, running on the state file."""
        first = self.live_agent(cfg, "first")
        first.wait_metrics(lambda m: m.get("agent.alerts_firing") == 1, "the alert firing")
        if not wait_until(sent_before_stop, 20, 0.1):
            raise AssertionError("the firing alert was not delivered\nstderr:\n" + first.stderr())
        self.assertEqual(first.stop(), 0, first.stderr())
        self.assertIn("cpu-hot", read_text(self.state))
        if while_down:
            while_down()
        second = self.live_agent(cfg, "second")
        second.wait_metrics(lambda m: m.get("agent.alerts_firing") == 1, "the restored alert")
        return second

    def test_restored_alert_is_sent_again_to_alertmanager_api_only(self):
        rec = self.receiver()
        cfg = self.config(rec.url("/api/v2/alerts"), rec.url("/json"))
        second = self.fire_then_restart(cfg, lambda: rec.bodies("/api/v2/alerts") and rec.bodies("/json"))
        fired = rec.bodies("/api/v2/alerts")[0][0]

        again = wait_until(lambda: rec.bodies("/api/v2/alerts")[1:], 15)
        self.assertTrue(again, "the restored alert was not sent again\nstderr:\n" + second.stderr())
        alert = again[0][0]
        self.assertEqual(alert["labels"], fired["labels"])
        self.assertEqual(alert["startsAt"], fired["startsAt"], "the alert as it started before the restart")
        self.assertNotIn("endsAt", alert)
        # the other actions heard of it before: a few samples later, still once each
        n = len(second.samples())
        second.wait_metrics(lambda m: len(second.samples()) >= n + 5, "five more samples")
        self.assertEqual(len(rec.bodies("/json")), 1, rec.bodies("/json"))
        self.assertEqual(read_text(self.ran).split(), ["firing"])
        self.assertEqual(second.last()["agent.action_runs_total"], 0)
        self.assertEqual(second.stop(), 0, second.stderr())

    @unittest.skipUnless(os.access(ALERTMANAGER, os.X_OK), "prometheus-alertmanager is not installed")
    def test_alertmanager_that_forgot_lists_the_restored_alert(self):
        ams = [Alertmanager(self.tmp, name="am1").start()]
        self.addCleanup(lambda: ams[-1].stop())
        rec = self.receiver()
        cfg = self.config(ams[0].url("/api/v2/alerts"), rec.url("/json"))
        listed = []

        def delivered():
            listed[:] = ams[0].active("cpu-hot")
            return listed

        def forget():
            # Alertmanager restarts with no memory of the alert (new storage), on the same port
            ams[0].stop()
            ams.append(Alertmanager(self.tmp, port=ams[0].port, name="am2").start())
            self.assertEqual(ams[1].active("cpu-hot"), [])
        second = self.fire_then_restart(cfg, delivered, forget)
        back = wait_until(lambda: ams[1].active("cpu-hot"), 15, 0.2)
        self.assertTrue(back, "the restored alert did not reach Alertmanager\nstderr:\n" + second.stderr())
        self.assertEqual(back[0]["startsAt"], listed[0]["startsAt"], "the alert as it started before the restart")
        self.assertEqual(second.stop(), 0, second.stderr())


if __name__ == "__main__":
    harness.init()
    harness.main()
