#!/usr/bin/env python3
"""Joules per unit of work (issue 24 item 4): an application reports
inferences over UDP (StatsD lines, as a shell, Python and C would send them)
and POST /api/v1/work to a live agent on a fixture board; and a recording
of an application whose load changes (tests/gen_recordings.py), reported
per phase and power mode against its truth and an independent computation,
and compared with --compare.

Usage: test_work.py TEGRAWATCH SOURCE_ROOT
"""
import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

import harness

BIN = None
SRC = None
REC = None
ENV = dict(os.environ, TZ="UTC")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


class LiveTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.web, self.udp = harness.free_port(), harness.free_port(socket.SOCK_DGRAM)
        cfg = os.path.join(self.tmp, "c.yaml")
        with open(cfg, "w") as f:
            f.write('agent: {state_file: ""}\nweb: {listen: "127.0.0.1:%d"}\nwork: {listen: "127.0.0.1:%d"}\n'
                    % (self.web, self.udp))
        self.proc = subprocess.Popen([BIN, "run", "-c", cfg, "--root",
                                      os.path.join(SRC, "tests/fixtures/boards/orin-nano-jp6"), "--no-tegrastats",
                                      "--interval", "100", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.samples = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.assertTrue(harness.wait_until(self.metrics_up, 20), "the web server did not answer")
        # units sent before the agent's first sample have no interval to fall in: send them after it
        self.samples.get(timeout=20)

    def _pump(self):
        for line in self.proc.stdout:
            self.samples.put(json.loads(line)["metrics"])

    def tearDown(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()
        self.err = self.proc.stderr.read()
        self.proc.stderr.close()
        shutil.rmtree(self.tmp)

    def metrics_up(self):
        try:
            return self.get("/metrics")
        except OSError:
            return None

    def get(self, path):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.web, path), timeout=5) as r:
            return r.read().decode()

    def post(self, body, ctype="application/json", path="/api/v1/work"):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.web, path), data=body, method="POST",
                                     headers={"Content-Type": ctype})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def sample_with(self, pred, timeout=20):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                m = self.samples.get(timeout=0.5)
            except queue.Empty:
                continue
            if pred(m):
                return m
        self.fail("no sample with it")

    def test_udp_shell_python_c_and_post(self):
        # shell: bash's /dev/udp, the documented one-liner
        subprocess.run(["bash", "-c", 'echo "inference:1|c" > /dev/udp/127.0.0.1/%d' % self.udp], check=True)
        # Python
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"inference:1|c", ("127.0.0.1", self.udp))
        # C: the documented snippet, compiled
        csrc = os.path.join(self.tmp, "w.c")
        with open(csrc, "w") as f:
            f.write('#include <arpa/inet.h>\n#include <sys/socket.h>\nint main(void) {\n'
                    '\tstruct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(%d),'
                    ' .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};\n'
                    '\tint fd = socket(AF_INET, SOCK_DGRAM, 0);\n'
                    '\tsendto(fd, "inference:1|c", 13, MSG_DONTWAIT, (struct sockaddr *)&a, sizeof(a));\n'
                    '\treturn 0;\n}\n' % self.udp)
        exe = os.path.join(self.tmp, "w")
        subprocess.run(["cc", "-o", exe, csrc], check=True)
        subprocess.run([exe], check=True)
        self.assertEqual(self.post(b'{"name": "inference", "count": 7}'), (202, {"accepted": True}))
        m = self.sample_with(lambda m: m.get("work.inference.count_total") == 10)
        self.assertIn("work.inference.rate_per_s", m)
        # the fixture board draws a constant power: joules per unit = the energy since the first unit / units
        m = self.sample_with(lambda m: "work.inference.joules_per_unit" in m)
        self.assertGreater(m["work.inference.joules_per_unit"], 0)
        prom = self.get("/metrics")
        self.assertIn('tegrawatch_work_units_total{work="inference"} 10', prom)
        self.assertIn('tegrawatch_work_energy_per_unit_joules{work="inference"}', prom)

    def test_post_limits_and_auth_rules(self):
        self.assertEqual(self.post(b'{"name": "x"}', "text/plain")[0], 415)  # a form a page could send unasked
        self.assertEqual(self.post(b'{"name": "a b"}')[0], 400)
        self.assertEqual(self.post(b"x" * 5000)[0], 413)
        self.assertEqual(self.post(b"{}", path="/api/v1/snapshot")[0], 405)
        with self.assertRaises(urllib.error.HTTPError) as e:
            self.get("/api/v1/work")
        self.assertEqual(e.exception.code, 405)
        self.assertEqual(e.exception.headers["Allow"], "POST")
        # a request for another host name (DNS rebinding) is refused as for GET
        req = urllib.request.Request("http://127.0.0.1:%d/api/v1/work" % self.web, data=b'{"name":"x"}',
                                     method="POST", headers={"Content-Type": "application/json",
                                                             "Host": "evil.example:80"})
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=5)
        self.assertEqual(e.exception.code, 421)

    def test_bad_lines_are_counted(self):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"inference:1|g\nok:2|c\n", ("127.0.0.1", self.udp))
        m = self.sample_with(lambda m: m.get("work.ok.count_total") == 2)
        self.assertEqual(m["agent.work_bad_lines_total"], 1)


class RecordingTest(unittest.TestCase):
    """40 min of an application whose load changes: idle, 20/s at 15 W, 40/s at 19 W, then 15W mode, 12/s at 10 W."""

    @classmethod
    def setUpClass(cls):
        import gen_recordings
        cls.truth = gen_recordings.WORK_PHASES
        cls.tmp = tempfile.mkdtemp()
        cls.rec = os.path.join(REC, "work-load-changes.jsonl")
        phases = os.path.join(cls.tmp, "phases.csv")
        with open(phases, "w") as f:
            f.write("start,end,name\n" + "".join("%d,%d,p%d\n" % (a, b, i) for i, (a, b, *_) in
                                                 enumerate(cls.truth)))
        p = subprocess.run([BIN, "report", cls.rec, "--phases", phases, "--json", "-"], capture_output=True,
                           text=True, timeout=120, env=ENV)
        assert p.returncode == 0, p.stderr
        cls.report = json.loads(p.stdout)
        cls.work = cls.report["work"]["names"]["inference"]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_per_phase_against_the_truth(self):
        """Each working phase: J per inference = W / rate, above idle = (W - idle W) / rate, within 1 %."""
        idle = {"MAXN_SUPER": 5.0, "15W": 4.5}
        for i, (start, end, mode, rate, watts) in enumerate(self.truth):
            f = self.work["phases"].get("p%d" % i)
            if not rate:
                self.assertTrue(f is None or f["units"] == 0, f)
                continue
            self.assertAlmostEqual(f["j_per_unit"], watts / rate, delta=0.01 * watts / rate, msg=i)
            want = (watts - idle[mode]) / rate
            self.assertAlmostEqual(f["above_idle_j_per_unit"], want, delta=0.01 * want, msg=i)
        self.assertAlmostEqual(self.report["work"]["idle_w"]["MAXN_SUPER"], 5.0, delta=0.05)
        self.assertAlmostEqual(self.report["work"]["idle_w"]["15W"], 4.5, delta=0.05)

    def test_per_mode_equals_an_independent_computation(self):
        """Per power mode: the input energy of every interval (left rectangles) over the units, from the file."""
        with open(self.rec) as f:
            rows = [json.loads(l) for l in f][1:]
        units, joules = {}, {}
        for prev, cur in zip(rows, rows[1:]):
            if "work.inference.count_total" not in prev["metrics"]:
                continue
            mode = prev["power_mode"]
            du = cur["metrics"]["work.inference.count_total"] - prev["metrics"]["work.inference.count_total"]
            units[mode] = units.get(mode, 0) + du
            joules[mode] = joules.get(mode, 0) + prev["metrics"]["power.vdd_in.mw"] / 1000 * \
                (cur["time_ms"] - prev["time_ms"]) / 1000
        for mode, f in self.work["power_modes"].items():
            self.assertEqual(f["units"], units[mode])
            self.assertAlmostEqual(f["j_per_unit"], joules[mode] / units[mode], places=5)

    def test_text_and_compare(self):
        p = subprocess.run([BIN, "report", self.rec], capture_output=True, text=True, timeout=120, env=ENV)
        self.assertIn("J per inference", p.stdout)
        # B: the same run at a fifth more power for the same work
        hot = os.path.join(self.tmp, "hot.jsonl")
        with open(self.rec) as f, open(hot, "w") as out:
            for i, line in enumerate(f):
                if i:
                    d = json.loads(line)
                    d["metrics"]["power.vdd_in.mw"] = round(d["metrics"]["power.vdd_in.mw"] * 1.2)
                    line = json.dumps(d) + "\n"
                out.write(line)
        p = subprocess.run([BIN, "report", "--compare", self.rec, hot, "--json", "-"], capture_output=True, text=True,
                           timeout=120, env=ENV)
        self.assertEqual(p.returncode, 0, p.stderr)
        c = json.loads(p.stdout)
        w = c["work"]["inference"]
        self.assertAlmostEqual(w["b_j_per_unit"] / w["a_j_per_unit"], 1.2, places=3)
        self.assertIn("B spent 20.0 % more energy per inference", c["verdict"])


if __name__ == "__main__":
    BIN, SRC = harness.init()
    REC = harness.recordings()
    harness.main()
