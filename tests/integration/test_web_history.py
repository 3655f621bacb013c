#!/usr/bin/env python3
"""The HTTP server's one-minute history tier, against the replayed demo
recording (on a free 127.0.0.1 port).

Usage: test_web_history.py TEGRAWATCH SOURCE_ROOT
"""
import json
import math
import subprocess

import harness
from harness import demo_values, free_port, request, wait_until, web_config


class HistoryTierTest(harness.TestCase):
    """The one-minute tier over HTTP: an agent replaying the demo at 60x (a recorded minute a second) with a
    one-minute tier 0, so a longer span is answered from tier 1; each minute's statistics against the recording."""

    @classmethod
    def setUpClass(cls):
        cls.port = free_port()
        cls.log = demo_values(harness.src("configs/demo/tegrastats.log"))
        cls.agent = cls.class_agent(harness.demo_args(60), port=cls.port, stdout=subprocess.DEVNULL,
                                    config=web_config(cls.port, extra_web="  history: 1m\n  minute_history: 1h\n"))
        cls.agent.wait_web("/api/v1/snapshot")

    @classmethod
    def tearDownClass(cls):
        cls.agent.stop()

    def get_json(self, path):
        status, _, _, body = request(self.port, "GET", path)
        self.assertEqual(status, 200, body)
        return json.loads(body)

    def test_minutes_against_recording(self):
        def ready():
            snap = self.get_json("/api/v1/snapshot")
            return snap if snap["seq"] >= 250 else None
        snap = wait_until(ready, 60, step=0.2)
        self.assertTrue(snap, "250 samples never came")
        t1 = snap["time_ms"] - (snap["seq"] - 1) * 1000  # data lines are one second apart
        for metric in ("temp.tj_c", "power.vdd_in.mw", "gpu.freq_mhz"):
            h = self.get_json(f"/api/v1/history?metric={metric}&seconds=3600")
            self.assertEqual((h["tier"], h["step_ms"], h["seconds"]), (1, 60000, 3600))
            pts = h["points"]
            self.assertGreaterEqual(len(pts), 4)
            # the recording's samples by minute, up to the newest the answer saw
            newest = max(p[0] for p in pts) + 60000
            by_minute = {}
            for seq, v in self.log.items():
                t = t1 + (seq - 1) * 1000
                if t < newest:
                    by_minute.setdefault(t // 60000 * 60000, []).append(v[metric])
            seen = []
            for t, mean, lo, hi, count in pts[:-1]:  # the last minute is still being filled
                values = by_minute[t]
                self.assertEqual((lo, hi, count), (min(values), max(values), len(values)), f"{metric} at {t}")
                self.assertTrue(math.isclose(mean, sum(values) / len(values), rel_tol=1e-6), (mean, values))
                seen += values
            self.assertEqual(pts[0][0], t1 // 60000 * 60000, "from the first minute")
            st = h["stats"]
            self.assertIsNone(st["p95"])  # minutes do not keep their samples
            last = pts[-1]
            self.assertEqual(st["count"], len(seen) + last[4])
            self.assertEqual(st["min"], min(seen + [last[2]]))
            self.assertEqual(st["max"], max(seen + [last[3]]))
        # within tier 0's minute the samples themselves; a tier asked for wins
        h = self.get_json("/api/v1/history?metric=temp.tj_c&seconds=60")
        self.assertEqual((h["tier"], h["step_ms"]), (0, 1000))
        self.assertTrue(all(len(p) == 2 for p in h["points"]))
        h = self.get_json("/api/v1/history?metric=temp.tj_c&seconds=30&tier=1")
        self.assertEqual(h["tier"], 1)
        self.assertTrue(1 <= len(h["points"]) <= 2)
        for path in ("/api/v1/history?metric=temp.tj_c&tier=0&seconds=61",
                     "/api/v1/history?metric=temp.tj_c&seconds=3601"):
            self.assertEqual(request(self.port, "GET", path)[0], 400, path)

    def test_every_metric_has_both_tiers(self):
        # the server answers before the first sample is in (slow under emulation): wait for one
        snap = wait_until(lambda: (s := self.get_json("/api/v1/snapshot"))["seq"] >= 1 and s, 60, step=0.2)
        self.assertTrue(snap, "no sample came")
        names = sorted(snap["metrics"])
        self.assertGreater(len(names), 100)
        for name in names:
            for tier in (0, 1):
                status, _, _, body = request(self.port, "GET", f"/api/v1/history?metric={name}&tier={tier}")
                self.assertEqual(status, 200, (name, tier, body))


if __name__ == "__main__":
    harness.init()
    harness.main()
