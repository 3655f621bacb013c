#!/usr/bin/env python3
"""Alerts end to end: the shipped rules on the demo recording, exec actions,
SIGHUP reloads and the state file across a restart.

Usage: test_alerts.py TEGRAWATCH SOURCE_ROOT
"""
import collections
import glob
import json
import os
import signal
import time

import harness
from harness import free_port, wait_until, write_file

CPU_ZONE_TEMP = "sys/devices/virtual/thermal/thermal_zone0/temp"

RECORDER = """#!/bin/sh
# exec action stand-in: keeps the alert's environment in one file per call
out="$1/$(date +%s%N)-$$.env"
env | grep '^TEGRAWATCH_' | sort > "$out.tmp" && mv "$out.tmp" "$out"
"""


def run(args, **kw):
    return harness.tegrawatch(args, timeout=kw.pop("timeout", 120), **kw)


def read_envs(d):
    envs = []
    for path in sorted(glob.glob(os.path.join(d, "*.env"))):
        with open(path) as f:
            envs.append(dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l))
    return envs


class DemoTimelineTest(harness.TestCase):
    """`replay --dry-run` on the demo: the story of configs/demo/README.md as alerts."""

    def timeline(self):
        p = run(["replay", harness.src("configs/demo/tegrastats.log"), "-c",
                 harness.src("configs/demo/tegrawatch.yaml"), "--root", harness.src("configs/demo/root"),
                 "--dry-run", "--json"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("900 samples", p.stderr)
        self.assertIn("dry run", p.stderr)
        return [json.loads(l) for l in p.stdout.splitlines()]

    def test_story(self):
        events = self.timeline()
        count = collections.Counter((e["rule"], e["metric"], e["transition"]) for e in events)
        # one throttle episode: fired once, resolved once, with its reason
        self.assertEqual(count[("throttling", "throttle.active", "firing")], 1)
        self.assertEqual(count[("throttling", "throttle.active", "resolved")], 1)
        fired = [e for e in events if e["rule"] == "throttling" and e["transition"] == "firing"][0]
        self.assertEqual(fired["severity"], "critical")
        self.assertIn("thermal: ", fired["throttle"])
        self.assertIn("throttling: thermal", fired["summary"])
        # the input power spike: once
        self.assertEqual(count[("input-power-high", "power.vdd_in.mw", "firing")], 1)
        self.assertEqual(count[("input-power-high", "power.vdd_in.mw", "resolved")], 1)
        # gpu: warning 10 C below its 99 C throttle trip, then critical 3 C below, then back, no flapping; tj has
        # no throttle trip of its own (Orin's are on cpu-thermal and gpu-thermal): the fallbacks 85 and 95 C
        for zone, warn, crit in (("gpu", 89, 96), ("tj", 85, 95)):
            seq = [e for e in events if e["metric"] == "temp.%s_c" % zone]
            self.assertEqual([e["transition"] for e in seq], ["pending", "firing", "escalated", "deescalated", "resolved"])
            self.assertEqual(seq[1]["threshold"], warn)
            self.assertEqual(seq[2]["threshold"], crit)
        # the 70 C hot-surface trip: one warning that says what it is, long before the throttle, and no throttle then
        hot = [e for e in events if e["rule"] == "hot-surface"]
        self.assertEqual([e["transition"] for e in hot], ["pending", "firing", "resolved"])
        self.assertEqual(hot[1]["severity"], "warning")
        self.assertIn("hot surface, do not touch", hot[1]["summary"])
        self.assertIn("not a throttle", hot[1]["summary"])
        self.assertLess(hot[1]["at"], fired["at"])
        # every alert that fired also resolved, in time order
        firing = {e["fingerprint"] for e in events if e["transition"] == "firing"}
        resolved = {e["fingerprint"] for e in events if e["transition"] == "resolved"}
        self.assertEqual(firing, resolved)
        times = [e["at"] for e in events]
        self.assertEqual(times, sorted(times))

    def test_speed_does_not_change_the_timeline(self):
        """Rules run on sample time: the same log gives the same alerts at any pace."""
        a = self.timeline()
        b = self.timeline()
        self.assertEqual(a, b)


class ExecActionTest(harness.TestCase):
    def test_run_replay_calls_exec_with_the_alert(self):
        d = self.d
        rec = os.path.join(d, "recorder")
        write_file(rec, RECORDER, 0o755)
        out = os.path.join(d, "events")
        os.mkdir(out)
        cfg = os.path.join(d, "tegrawatch.yaml")
        write_file(cfg, """
agent:
  board_name: test-board
  state_file: ""
include: %s/configs/rules.d/*.yaml
actions:
  record:
    type: exec
    command: [%s, %s]
    timeout: 5s
notify:
  warning: [record]
  critical: [record]
""" % (harness.src(), rec, out))
        p = run(["run", "--replay", harness.src("configs/demo/tegrastats.log"), "--speed", "0",
                 "--root", harness.src("configs/demo/root"), "-c", cfg])
        self.assertEqual(p.returncode, 0, p.stderr)
        envs = read_envs(out)
        throttle = [e for e in envs if e["TEGRAWATCH_RULE"] == "throttling"]
        self.assertEqual([e["TEGRAWATCH_TRANSITION"] for e in throttle], ["firing", "resolved"])
        f, r = throttle
        self.assertEqual(f["TEGRAWATCH_SEVERITY"], "critical")
        self.assertEqual(f["TEGRAWATCH_STATUS"], "firing")
        self.assertEqual(r["TEGRAWATCH_STATUS"], "resolved")
        self.assertEqual(f["TEGRAWATCH_FINGERPRINT"], r["TEGRAWATCH_FINGERPRINT"])
        self.assertEqual(f["TEGRAWATCH_STARTS_AT"], r["TEGRAWATCH_STARTS_AT"])
        self.assertNotEqual(r["TEGRAWATCH_ENDS_AT"], "")
        self.assertTrue(f["TEGRAWATCH_THROTTLE"].startswith("thermal: "), f["TEGRAWATCH_THROTTLE"])
        self.assertIn("test-board is throttling", f["TEGRAWATCH_SUMMARY"])
        self.assertEqual(f["TEGRAWATCH_POWER_MODE"], "MAXN_SUPER")
        # every firing got its resolve
        by_fp = collections.defaultdict(list)
        for e in envs:
            by_fp[e["TEGRAWATCH_FINGERPRINT"]].append(e["TEGRAWATCH_TRANSITION"])
        for fp, seq in by_fp.items():
            self.assertEqual(seq[0], "firing", seq)
            self.assertEqual(seq[-1], "resolved", seq)

    def test_slow_action_never_blocks_sampling(self):
        d = self.d
        slow = os.path.join(d, "slow")
        write_file(slow, "#!/bin/sh\nsleep 30\n", 0o755)
        cfg = os.path.join(d, "c.yaml")
        write_file(cfg, """
agent: {state_file: ""}
actions:
  slow: {type: exec, command: [%s], timeout: 1s}
rules:
  - name: always
    metric: ram.total_mb
    warning: 1
    actions: {warning: [slow]}
""" % slow)
        t0 = time.monotonic()
        p = run(["run", "--replay", harness.src("configs/demo/tegrastats.log"), "--speed", "20",
                 "--count", "40", "-c", cfg])
        took = time.monotonic() - t0
        self.assertEqual(p.returncode, 0, p.stderr)
        docs = [json.loads(l) for l in p.stdout.splitlines()]
        self.assertEqual(len(docs), 40)
        # 40 samples at 50 ms: about 2 s, while the action sleeps 30 s and is killed after 1 s
        self.assertLess(took, 6)
        self.assertEqual(docs[-1]["metrics"]["agent.action_timeouts_total"], 1)
        self.assertIn("still running after its timeout", p.stderr)


class ReloadAndRestartTest(harness.TestCase):
    RULES = """
agent:
  state_file: %(state)s
  board_name: live
actions:
  record: {type: exec, command: [%(rec)s, %(out)s], timeout: 5s}
notify:
  warning: [log, record]
  critical: [log, record]
rules:
  - name: cpu-hot
    metric: temp.cpu_c
    warning: 60
    clear: 2
%(extra)s"""

    def setUp(self):
        super().setUp()
        self.tmp = self.d
        self.root = harness.copy_board(self.d)
        self.rec = os.path.join(self.tmp, "recorder")
        write_file(self.rec, RECORDER, 0o755)
        self.out = os.path.join(self.tmp, "events")
        os.mkdir(self.out)
        self.cfg = os.path.join(self.tmp, "tegrawatch.yaml")
        self.state = os.path.join(self.tmp, "alerts.state")
        self.write_config("")

    def live_agent(self):
        """The agent on the board copy, 100 ms ticks, reading self.cfg (rewritten by the tests)."""
        return self.agent(["--root", self.root, "--interval", "100", "--no-tegrastats", "-c", self.cfg])

    def write_config(self, extra, text=None):
        if text is None:
            text = self.RULES % {"state": self.state, "rec": self.rec, "out": self.out, "extra": extra}
        write_file(self.cfg, text, 0o644)

    def set_cpu_temp(self, mc):
        write_file(os.path.join(self.root, CPU_ZONE_TEMP), "%d\n" % mc, 0o644)

    def wait_events(self, n, timeout=20.0):
        wait_until(lambda: len(read_envs(self.out)) >= n, timeout, step=0.1)
        return read_envs(self.out)

    def test_sighup_reload_keeps_state_and_survives_a_bad_file(self):
        agent = self.live_agent()
        try:
            self.set_cpu_temp(70000)
            agent.next_sample(lambda s: s["metrics"].get("agent.alerts_firing") == 1, what="the alert firing")
            # a broken file: the old configuration keeps running, errors are located, the failure counted
            self.write_config(None, text="rules:\n  - name: cpu-hot\n    metric: temp.cpu_c\n    warnin: 60\n")
            agent.send(signal.SIGHUP)
            s = agent.next_sample(lambda s: s["metrics"].get("agent.config_reload_failures_total") == 1,
                                  what="a failure")
            self.assertEqual(s["metrics"]["agent.alerts_firing"], 1)
            agent.wait_stderr("tegrawatch.yaml:4:5: unknown key 'warnin'")
            # a good file keeping the rule and adding one: the alert keeps its state, no resolve, no new firing
            self.write_config("""  - name: gpu-hot
    metric: temp.gpu_c
    warning: 40
""")
            agent.send(signal.SIGHUP)
            s = agent.next_sample(lambda s: s["metrics"].get("agent.config_reloads_total") == 1, what="the reload")
            s = agent.next_sample(lambda s: s["metrics"].get("agent.alerts_firing") == 2, what="the new rule firing")
            self.set_cpu_temp(50000)
            agent.next_sample(lambda s: s["metrics"].get("agent.alerts_firing") == 1, what="cpu-hot resolved")
        finally:
            self.assertEqual(agent.stop(), 0)
        # a clean stop waits for the exec actions: what they recorded is all there is
        envs = self.wait_events(3)
        seq = [(e["TEGRAWATCH_RULE"], e["TEGRAWATCH_TRANSITION"]) for e in envs]
        self.assertEqual(len(seq), 3, seq)
        self.assertEqual(seq.count(("cpu-hot", "firing")), 1, seq)
        self.assertEqual(seq.count(("cpu-hot", "resolved")), 1, seq)
        self.assertEqual(seq.count(("gpu-hot", "firing")), 1, seq)
        self.assertLess(seq.index(("cpu-hot", "firing")), seq.index(("cpu-hot", "resolved")))

    def test_reload_names_settings_only_a_restart_applies(self):
        base = self.RULES % {"state": self.state, "rec": self.rec, "out": self.out, "extra": ""}
        self.write_config(None, text=base + 'web:\n  listen: ""\n')
        agent = self.live_agent()
        try:
            s = agent.next_sample(lambda s: "agent.config_restart_needed" in s["metrics"], what="the gauge")
            self.assertEqual(s["metrics"]["agent.config_restart_needed"], 0)
            # web and mqtt changed: named and flagged; board_name is applied, so not named
            self.write_config(None, text=base.replace("board_name: live", "board_name: renamed") +
                              'web:\n  listen: "127.0.0.1:1"\nmqtt:\n  host: 127.0.0.1\n')
            agent.send(signal.SIGHUP)
            agent.next_sample(lambda s: s["metrics"].get("agent.config_reloads_total") == 1 and
                           s["metrics"].get("agent.config_restart_needed") == 1, what="the reload flagged")
            agent.wait_stderr("mqtt.host, web.listen changed; a reload does not apply them: restart the agent")
            self.assertFalse(agent.stderr_lines("board_name"), agent.stderr())
            # back to what the agent started with: nothing waits for a restart
            self.write_config(None, text=base + 'web:\n  listen: ""\n')
            agent.send(signal.SIGHUP)
            agent.next_sample(lambda s: s["metrics"].get("agent.config_reloads_total") == 2 and
                           s["metrics"].get("agent.config_restart_needed") == 0, what="the flag cleared")
        finally:
            self.assertEqual(agent.stop(), 0)

    def test_resolve_after_restart(self):
        agent = self.live_agent()
        try:
            self.set_cpu_temp(70000)
            agent.next_sample(lambda s: s["metrics"].get("agent.alerts_firing") == 1, what="the alert firing")
        finally:
            self.assertEqual(agent.stop(), 0)
        self.assertTrue(os.path.exists(self.state))
        first = self.wait_events(1)
        self.assertEqual([e["TEGRAWATCH_TRANSITION"] for e in first], ["firing"])
        # the board cooled while the agent was down
        self.set_cpu_temp(45000)
        agent = self.live_agent()
        try:
            agent.next_sample(lambda s: s["seq"] >= 3 and s["metrics"].get("agent.alerts_firing") == 0, what="resolved")
        finally:
            self.assertEqual(agent.stop(), 0)
        envs = self.wait_events(2)
        self.assertEqual([e["TEGRAWATCH_TRANSITION"] for e in envs], ["firing", "resolved"])
        self.assertEqual(envs[0]["TEGRAWATCH_FINGERPRINT"], envs[1]["TEGRAWATCH_FINGERPRINT"])
        self.assertEqual(envs[0]["TEGRAWATCH_STARTS_AT"], envs[1]["TEGRAWATCH_STARTS_AT"])

    def test_restored_alert_is_listed_after_restart(self):
        """An alert restored from the state file shows in the HTTP API at once, not at its next transition."""
        port = free_port()
        text = self.RULES % {"state": self.state, "rec": self.rec, "out": self.out, "extra": ""}
        self.write_config(None, text=text + "web:\n  listen: 127.0.0.1:%d\n" % port)
        agent = self.live_agent()
        try:
            self.set_cpu_temp(70000)
            agent.next_sample(lambda s: s["metrics"].get("agent.alerts_firing") == 1, what="the alert firing")
        finally:
            self.assertEqual(agent.stop(), 0)
        agent = self.live_agent()   # still hot: no new transition will come
        try:
            agent.next_sample(lambda s: s["seq"] >= 2, what="two samples")
            agent.port = port
            status, _, body = agent.wait_web().get("/api/v1/alerts")
            self.assertEqual(status, 200, body)
            alerts = json.loads(body)
        finally:
            self.assertEqual(agent.stop(), 0)
        self.assertEqual([a["rule"] for a in alerts["active"]], ["cpu-hot"])
        self.assertEqual(alerts["recent"], [])
        envs = self.wait_events(1)
        self.assertEqual([e["TEGRAWATCH_TRANSITION"] for e in envs], ["firing"])  # not announced twice

    def test_check_command(self):
        self.assertEqual(run(["check", "-c", self.cfg]).returncode, 0)
        self.write_config(None, text="agent:\n  intervall: 5s\nrules:\n  - name: x\n    metric: temp.cpu_c\n"
                                     "    warning: 90\n    critical: 80\n")
        p = run(["check", "-c", self.cfg])
        self.assertEqual(p.returncode, 78)
        lines = p.stderr.splitlines()
        self.assertTrue(any("tegrawatch.yaml:2:3: unknown key 'intervall'" in l and "interval" in l for l in lines),
                        p.stderr)
        self.assertGreaterEqual(len([l for l in lines if "tegrawatch.yaml:" in l]), 2, p.stderr)


if __name__ == "__main__":
    harness.init()
    harness.main()
