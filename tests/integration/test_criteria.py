#!/usr/bin/env python3
"""A soak verdict (issue 24 item 5): `report --criteria FILE` over the demo
recording (which throttles) and a calm part of it, in the text, the JSON and
the page, with the exit status scripts and CI read.

Usage: test_criteria.py TEGRAWATCH SOURCE_ROOT
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BIN = None
SRC = None
ENV = dict(os.environ, TZ="UTC")

CRITERIA = """\
criteria:
  - metric: temp.tj_c
    max_below: 101
  - no_throttle: true
  - metric: power.vdd_in.mw
    p99_below: 20000
  - name: a throttle is never predicted closer than 2 minutes
    metric: throttle_eta.*_s
    min_above: 120
    if_absent: pass
"""


class CriteriaTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.crit = self.write("c.yaml", CRITERIA)
        self.demo = os.path.join(SRC, "configs/demo/tegrastats.log")
        self.root = os.path.join(SRC, "configs/demo/root")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def report(self, log, *extra):
        return subprocess.run([BIN, "report", log, "--root", self.root, "--criteria", self.crit] + list(extra),
                              capture_output=True, text=True, timeout=120, env=ENV)

    def test_the_demo_fails_with_its_evidence(self):
        out = os.path.join(self.tmp, "r.json")
        html = os.path.join(self.tmp, "r.html")
        p = self.report(self.demo, "--json", out, "--html", html)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("Criteria: FAIL (2 of 4 passed)", p.stderr)
        with open(out) as f:
            c = json.load(f)["criteria"]
        self.assertFalse(c["passed"])
        res = {x["name"]: x for x in c["results"]}
        tj = res["temp.tj_c max below 101"]
        self.assertTrue(tj["pass"])
        self.assertEqual((tj["value"], tj["metric"]), (100.062, "temp.tj_c"))
        self.assertIn("at 2025-03-14T10:08:58Z", tj["evidence"])
        thr = res["no throttle"]
        self.assertFalse(thr["pass"])
        self.assertEqual(thr["value"], 125)
        self.assertIn("the first at 2025-03-14T10:07:03Z (thermal: gpu at 99.0 C", thr["evidence"])
        self.assertTrue(res["power.vdd_in.mw p99 below 20000"]["pass"])
        eta = res["a throttle is never predicted closer than 2 minutes"]
        self.assertEqual((eta["pass"], eta["value"], eta["metric"]), (False, 0, "throttle_eta.gpu_s"))
        with open(html) as f:
            page = f.read()
        self.assertIn('"criteria":{"passed":false', page)

    def test_a_calm_run_passes(self):
        """The idle warm-up alone (the first two minutes): every criterion holds, exit status 0."""
        with open(self.demo) as f:
            calm = self.write("calm.log", "".join(f.readlines()[:127]))
        p = self.report(calm)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Criteria: PASS (4 of 4 passed)", p.stdout)
        self.assertIn("no throttle_eta.*_s in the recording (if_absent: pass)", p.stdout)

    def test_absent_metric_fails_unless_told(self):
        self.crit = self.write("c2.yaml", "criteria:\n  - metric: temp.nothing_c\n    max_below: 50\n")
        p = self.report(self.demo, "--json", "-")
        self.assertEqual(p.returncode, 1)
        r = json.loads(p.stdout)["criteria"]["results"][0]
        self.assertEqual((r["pass"], r["value"]), (False, None))

    def test_mistakes_have_their_place(self):
        self.crit = self.write("bad.yaml", "criteria:\n  - metric: temp.tj_c\n    max_belo: 95\n"
                                           "  - metric: temp.tj_c\n    max_below: hot\n  - no_throttle: true\n"
                                           "    metric: temp.tj_c\n")
        p = self.report(self.demo)
        self.assertEqual(p.returncode, 64)
        self.assertIn(self.crit + ":3:5: unknown key 'max_belo'", p.stderr)
        self.assertIn(self.crit + ":5:16: max_below: expected a number, got 'hot'", p.stderr)
        self.assertIn(self.crit + ":7:13: the throttle criteria take no metric", p.stderr)


if __name__ == "__main__":
    BIN, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
    unittest.main(argv=sys.argv[:1], verbosity=2)
