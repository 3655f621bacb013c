#!/usr/bin/env python3
"""Headroom and time to throttle (issue 24 item 1) on recordings: the demo
(a first-order board that throttles at 10:07:03) and a heatsink soak made by
tests/gen_recordings.py (two time constants), replayed through the real
agent with the demo board's trip points. Prints the per-minute accuracy that
docs/prediction.md quotes.

Usage: test_prediction.py TEGRAWATCH SOURCE_ROOT
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import harness

BIN = None
SRC = None
TRIP = 99.0  # gpu-thermal's throttle trip in configs/demo/root (Orin's 70 C trip is the hot-surface alert)


def replay(log):
    p = subprocess.run([BIN, "run", "--replay", log, "--speed", "0", "--root", os.path.join(SRC, "configs/demo/root"),
                        "--json", "-c", os.path.join(SRC, "configs/demo/tegrawatch.yaml")],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, TZ="UTC", TEGRAWATCH_WEB_LISTEN=""))
    assert p.returncode == 0, p.stderr
    return [json.loads(l)["metrics"] for l in p.stdout.splitlines()]


def accuracy(samples, zone="gpu"):
    """First sample at the trip, first ETA under 5 min, and (truth, error, reported) at each whole minute before."""
    first = next(i for i, m in enumerate(samples) if m.get("temp.%s_c" % zone, 0) >= TRIP)
    warn = next(i for i, m in enumerate(samples) if m.get("throttle_eta.%s_s" % zone, 1e9) < 300)
    minutes = []
    for i in range(warn, first):
        truth = first - i
        m = samples[i]
        if truth % 60 == 0 and "throttle_eta.%s_s" % zone in m:
            minutes.append((truth, m["throttle_eta.%s_s" % zone] - truth, m["throttle_eta_error.%s_s" % zone]))
    print("\n%s: at the trip at sample %d; first ETA under 300 s at %d (%d s ahead)" % (zone, first + 1, warn + 1,
                                                                                     first - warn))
    for truth, err, rep in minutes:
        print("  %4d s before: ETA off by %+6.1f s, reported +-%.1f s" % (truth, err, rep))
    return first, warn, minutes


def warnings_in(samples, lo, hi):
    return [(i, k, v) for i in range(lo, hi) for k, v in samples[i].items()
            if k.startswith("throttle_eta.") and v < 300]


class DemoTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.samples = replay(os.path.join(SRC, "configs/demo/tegrastats.log"))

    def test_eta_each_minute(self):
        """From the first warning on, the ETA is within 10 s of the real time at each whole minute,
        and within its own reported uncertainty from the second minute on.

        Why 10 s: the fit is refreshed once a block (10 s), and the demo heats as a first-order system
        (its generator is one), the model the method assumes: more than a block off would be the
        method's fault, not the board's. Measured: +5.0, -0.8, -0.6 s."""
        first, warn, minutes = accuracy(self.samples)
        self.assertEqual(first, 423)  # 10:07:03
        self.assertGreaterEqual(first - warn, 180, "the first warning came too late")
        self.assertGreaterEqual(len(minutes), 3)
        for truth, err, rep in minutes:
            self.assertLessEqual(abs(err), 10, "%d s before the throttle" % truth)
        for truth, err, rep in minutes[1:]:
            self.assertLessEqual(abs(err), rep, "outside the reported uncertainty %d s before" % truth)

    def test_quiet_in_the_calm_phases(self):
        """Idle warm-up, the lighter load after the episode and idle again: no zone predicted under 5 min."""
        self.assertEqual(warnings_in(self.samples, 0, 121), [])
        self.assertEqual(warnings_in(self.samples, 560, 900), [])

    def test_will_not_throttle_at_the_lighter_load(self):
        """Phase 4 settles near 72 C: a steady temperature under the trip and no ETA."""
        m = self.samples[700]
        self.assertNotIn("throttle_eta.gpu_s", m)
        self.assertAlmostEqual(m["steady_temp.gpu_c"], 72, delta=1.5)
        self.assertAlmostEqual(m["headroom.gpu_c"], TRIP - m["temp.gpu_c"], places=3)
        # tj has no throttle trip (Orin's are on cpu-thermal and gpu-thermal): nothing is predicted for it
        self.assertNotIn("headroom.tj_c", m)

    def test_eta_zero_at_the_trip(self):
        self.assertEqual(self.samples[423]["throttle_eta.gpu_s"], 0)

    def test_the_shipped_rule(self):
        """throttle-predicted: fires once per zone before 10:07:03, resolves once, and never in a calm phase."""
        p = subprocess.run([BIN, "replay", os.path.join(SRC, "configs/demo/tegrastats.log"), "-c",
                            os.path.join(SRC, "configs/demo/tegrawatch.yaml"), "--root",
                            os.path.join(SRC, "configs/demo/root"), "--dry-run", "--json"],
                           capture_output=True, text=True, timeout=120, env=dict(os.environ, TZ="UTC"))
        self.assertEqual(p.returncode, 0, p.stderr)
        events = [json.loads(l) for l in p.stdout.splitlines()]
        mine = [e for e in events if e["rule"] == "throttle-predicted"]
        fired = {e["metric"]: e["at"] for e in mine if e["transition"] == "firing"}
        resolved = {e["metric"]: e["at"] for e in mine if e["transition"] == "resolved"}
        self.assertEqual(sorted(fired), ["throttle_eta.cpu_s", "throttle_eta.gpu_s"])
        self.assertEqual(sorted(resolved), sorted(fired))
        self.assertEqual(len([e for e in mine if e["transition"] == "firing"]), 2)
        for at in fired.values():
            self.assertTrue("2025-03-14T10:02:00Z" < at < "2025-03-14T10:07:03Z", at)
        throttling = [e for e in events if e["rule"] == "throttling" and e["transition"] == "firing"]
        self.assertLess(fired["throttle_eta.gpu_s"], throttling[0]["at"])
        self.assertIn("throttle in", [e for e in mine if e["transition"] == "firing"][0]["summary"])


    def test_report_says_the_episode_was_predicted(self):
        tmp = tempfile.mkdtemp()
        try:
            out = os.path.join(tmp, "r.json")
            html = os.path.join(tmp, "r.html")
            p = subprocess.run([BIN, "report", os.path.join(SRC, "configs/demo/tegrastats.log"), "--root",
                                os.path.join(SRC, "configs/demo/root"), "--json", out, "--html", html],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                r = json.load(f)
            ep = r["throttle"]["episodes"]
            self.assertEqual(len(ep), 1)
            self.assertTrue(180 <= ep[0]["predicted_s"] <= 240, ep[0]["predicted_s"])
            self.assertEqual(r["metrics"]["throttle_eta.gpu_s"]["min"], 0)
            self.assertLess(r["metrics"]["headroom.gpu_c"]["min"], 0)
            with open(html) as f:
                self.assertIn("predicted", f.read())
        finally:
            shutil.rmtree(tmp)


class HeatsinkSoakTest(unittest.TestCase):
    """Two time constants (die ~6 s, heatsink ~400 s): what a first-order fit gets wrong shows here."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        harness.recordings(cls.tmp)
        cls.samples = replay(os.path.join(cls.tmp, "heatsink-soak.log"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_eta_each_minute(self):
        """Within 30 s at each minute, and the first warning at least 4 minutes ahead.

        30 s: the heatsink's slow mode bends the curve later than a first-order fit of 5 min expects;
        measured errors are -24..+11 s (docs/prediction.md), the bound leaves room for a noisier board."""
        first, warn, minutes = accuracy(self.samples)
        self.assertGreaterEqual(first - warn, 240)
        self.assertGreaterEqual(len(minutes), 4)
        for truth, err, rep in minutes:
            self.assertLessEqual(abs(err), 30, "%d s before the throttle" % truth)

    def test_quiet_in_the_calm_phases(self):
        """Idle, the moderate load, and the near phase that settles ~7 C under the trip; recovery and idle."""
        self.assertEqual(warnings_in(self.samples, 0, 1500), [])
        self.assertEqual(warnings_in(self.samples, 2450, 3000), [])

    def test_near_phase_will_not_throttle(self):
        m = self.samples[1450]
        self.assertNotIn("throttle_eta.gpu_s", m)
        self.assertTrue(89 < m["steady_temp.gpu_c"] < TRIP, m.get("steady_temp.gpu_c"))


if __name__ == "__main__":
    BIN, SRC = harness.init()
    harness.main()
