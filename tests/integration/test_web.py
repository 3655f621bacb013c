#!/usr/bin/env python3
"""The HTTP server over real HTTP on a free 127.0.0.1 port: every endpoint's
shape and headers, history and statistics against the replayed demo
recording, the event stream, limits and error codes, authentication, the
refusal of a non-loopback address without authentication, and
`promtool check metrics` on /metrics.

Usage: test_web.py TEGRAWATCH SOURCE_ROOT

Only 127.0.0.1 is ever bound. promtool (Debian package `prometheus`, in
scripts/deps.txt) must be installed: the test fails without it.
"""
import base64
import http.client
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

BIN = None
SRC = None
LOG = None
ROOT = None
SPEED = 10
TIMEOUT_S = 3  # web.connection_timeout in the test configuration
PER_IP = 8

API_PATHS = ["/api/v1/snapshot", "/api/v1/history?metric=temp.tj_c", "/api/v1/alerts", "/metrics", "/healthz"]
CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; connect-src 'self'")


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def parse_log(path):
    """Values of the demo recording by 1-based data line (= sample seq)."""
    lines = {}
    seq = 0
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            seq += 1
            v = {}
            v["temp.tj_c"] = float(re.search(r"\btj@([0-9.]+)C", line).group(1))
            v["power.vdd_in.mw"] = float(re.search(r"\bVDD_IN (\d+)mW/", line).group(1))
            v["gpu.freq_mhz"] = float(max(re.search(r"GR3D_FREQ \d+%@\[([0-9,]+)\]", line).group(1).split(","),
                                          key=int))
            lines[seq] = v
    return lines


def nearest_rank_p95(values):
    s = sorted(values)
    rank = (95 * len(s) + 99) // 100
    return s[rank - 1]


def write_config(path, port, extra_web="", listen=None):
    text = f"""agent:
  board_name: web-test
  state_file: ""
include:
  - {SRC}/configs/rules.d/*.yaml
web:
  listen: "{listen or f"127.0.0.1:{port}"}"
  max_connections: 32
  max_connections_per_ip: {PER_IP}
  connection_timeout: {TIMEOUT_S}s
{extra_web}rules:
  - name: web-test-early
    metric: agent.samples_total
    warning: 20
    for: 1s
    repeat: 5s
    summary: "sample {{{{value}}}}"
"""
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)


def request(port, method, path, headers=None, body=None, timeout=10):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        hdrs = {}
        for k, v in resp.getheaders():
            hdrs.setdefault(k.lower(), []).append(v)
        return resp.status, {k: ", ".join(v) for k, v in hdrs.items()}, hdrs, data
    finally:
        conn.close()


def raw_exchange(port, payload, timeout=5):
    """Sends PAYLOAD on a fresh socket and returns what comes back until close (b"" on reset)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out = b""
    try:
        try:
            s.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
            if b"\r\n\r\n" in out:
                head, _, rest = out.partition(b"\r\n\r\n")
                m = re.search(rb"(?i)content-length: (\d+)", head)
                if m and len(rest) >= int(m.group(1)):
                    break
    finally:
        s.close()
    return out


def status_of(raw):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", raw)
    return int(m.group(1)) if m else None


def header_of(raw, name):
    head = raw.partition(b"\r\n\r\n")[0].decode("latin-1")
    for line in head.split("\r\n")[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == name.lower():
            return v.strip()
    return None


class Agent:
    def __init__(self, cfg, speed=SPEED, stderr_path=None, log=None):
        self.err_path = stderr_path or cfg + ".stderr"
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen([BIN, "run", "--replay", log or LOG, "--root", ROOT, "--speed", str(speed),
                                      "-c", cfg], stdout=subprocess.DEVNULL, stderr=self.err)

    def wait_ready(self, port, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("agent exited: " + self.stderr())
            try:
                request(port, "GET", "/api/v1/snapshot", timeout=2)
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("the web server did not answer: " + self.stderr())

    def stderr(self):
        self.err.flush()
        with open(self.err_path) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()
        return self.proc.returncode


class JetPack7MetricsTest(unittest.TestCase):
    """JetPack 7 lines (three-value rails, two-value temperatures): their running maxima get families of their own,
    and promtool still accepts /metrics."""

    def test_jp7_families(self):
        promtool = shutil.which("promtool")
        self.assertIsNotNone(promtool, "promtool is missing: apt-get install prometheus (scripts/deps.txt)")
        with tempfile.TemporaryDirectory(prefix="tw-web-jp7-") as d:
            log = os.path.join(d, "jp7.log")
            with open(log, "w") as f:
                for i in range(600):
                    f.write("05-15-2026 09:%02d:%02d RAM 21034/125772MB (lfb 40x4MB) CPU [12%%@2601,8%%@2601] "
                            "GR3D_FREQ @[1575,1575,1400] NVENC0 off NVJPG1 off cpu@45.%dC/46.5C "
                            "VDD_GPU_SOC 5139mW/5002mW/5301mW VDD_IN 3462mW/3522mW/3582mW\n"
                            % (i // 60, i % 60, i % 10))
            port = free_port()
            cfg = os.path.join(d, "tw.yaml")
            write_config(cfg, port)
            agent = Agent(cfg, log=log)
            try:
                agent.wait_ready(port)
                deadline = time.time() + 20
                while time.time() < deadline:
                    status, _, _, body = request(port, "GET", "/metrics")
                    if b'tegrawatch_power_max_watts{rail="vdd_in"}' in body:
                        break
                    time.sleep(0.2)
            finally:
                agent.stop()
        self.assertEqual(status, 200)
        p = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, (p.stdout + p.stderr).decode())
        text = body.decode()
        for line in ('# TYPE tegrawatch_power_max_watts gauge', 'tegrawatch_power_max_watts{rail="vdd_in"} 3.582',
                     'tegrawatch_power_max_watts{rail="vdd_gpu_soc"} 5.301',
                     'tegrawatch_power_watts{rail="vdd_in"} 3.462',
                     'tegrawatch_power_average_watts{rail="vdd_in"} 3.522',
                     '# TYPE tegrawatch_temperature_max_celsius gauge',
                     'tegrawatch_temperature_max_celsius{sensor="cpu"} 46.5'):
            self.assertIn(line + "\n", text)


class FirstEventTest(unittest.TestCase):
    """A slow agent (a sample every 5 s) whose stream had no reader: a new reader still gets the latest sample at
    once (rendered for it then), not the next one seconds later."""

    def test_new_reader_gets_latest_sample_at_once(self):
        d = tempfile.mkdtemp(prefix="tw-web-first-")
        port = free_port()
        cfg = os.path.join(d, "tegrawatch.yaml")
        write_config(cfg, port)
        agent = Agent(cfg, speed=0.2)
        try:
            agent.wait_ready(port)
            deadline = time.time() + 10
            seq = 0
            while seq < 1 and time.time() < deadline:
                seq = json.loads(request(port, "GET", "/api/v1/snapshot")[3])["seq"]
                time.sleep(0.1)
            self.assertGreaterEqual(seq, 1)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            t0 = time.time()
            conn.request("GET", "/api/v1/events")
            resp = conn.getresponse()
            data = None
            while data is None:
                line = resp.readline().decode()
                self.assertTrue(line, "stream ended")
                if line.startswith("data: {\"seq\""):
                    data = json.loads(line[len("data: "):])
            took = time.time() - t0
            conn.close()
            # the next sample is up to 5 s away; the latest one comes at once
            self.assertLess(took, 2.5)
            self.assertIn(data["seq"], (seq, seq + 1))
        finally:
            agent.stop()
            shutil.rmtree(d, ignore_errors=True)


class WebTest(unittest.TestCase):
    """One agent replaying the demo at 10x with the web server on; the tests share it."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="tw-web-")
        cls.port = free_port()
        cls.cfg = os.path.join(cls.dir, "tegrawatch.yaml")
        write_config(cls.cfg, cls.port)
        cls.log = parse_log(LOG)
        cls.agent = Agent(cls.cfg)
        cls.agent.wait_ready(cls.port)

    @classmethod
    def tearDownClass(cls):
        rc = cls.agent.stop()
        with open(cls.agent.err_path) as f:
            err = f.read()
        shutil.rmtree(cls.dir, ignore_errors=True)
        if rc not in (0, -15):
            raise AssertionError(f"agent exit {rc}: {err}")

    def get(self, path, method="GET", headers=None):
        return request(self.port, method, path, headers=headers)

    def get_json(self, path):
        status, hdrs, _, body = self.get(path)
        self.assertEqual(status, 200, body)
        return json.loads(body)

    def wait_seq(self, seq, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            snap = self.get_json("/api/v1/snapshot")
            if snap["seq"] >= seq:
                return snap
            time.sleep(0.1)
        self.fail(f"sample {seq} never arrived")

    def line_time(self, snap):
        """time_ms of data line 1: lines are one second apart."""
        return snap["time_ms"] - (snap["seq"] - 1) * 1000

    def assert_common_headers(self, path, status, hdrs, api=True):
        self.assertIn("content-type", hdrs, path)
        self.assertEqual(hdrs.get("x-content-type-options"), "nosniff", path)
        if api:
            self.assertEqual(hdrs.get("cache-control"), "no-store", path)
        self.assertNotIn("server", hdrs, path)

    # ---- shapes and headers ----

    def test_headers_on_every_endpoint(self):
        for method in ("GET", "HEAD"):
            for path in API_PATHS + ["/nope", "/api/v1/history"]:
                status, hdrs, _, body = self.get(path, method)
                self.assert_common_headers(path, status, hdrs)
                if method == "HEAD":
                    self.assertEqual(body, b"", path)
            status, hdrs, _, body = self.get("/", method)
            self.assertEqual(status, 200)
            self.assert_common_headers("/", status, hdrs, api=False)
            self.assertEqual(hdrs["content-type"], "text/html; charset=utf-8")
            self.assertEqual(hdrs["content-security-policy"], CSP)
            self.assertEqual(hdrs["x-frame-options"], "DENY")
            if method == "GET":
                self.assertIn(b"<html", body.lower())
                self.assertLess(len(body), 60 * 1024, "the dashboard must stay under 60 KB")
        expected_types = {
            "/api/v1/snapshot": "application/json",
            "/api/v1/alerts": "application/json",
            "/metrics": "text/plain; version=0.0.4; charset=utf-8",
            "/healthz": "text/plain; charset=utf-8",
            "/nope": "application/json",
        }
        for path, ctype in expected_types.items():
            self.assertEqual(self.get(path)[1]["content-type"], ctype, path)

    def test_snapshot_shape(self):
        snap = self.wait_seq(3)
        self.assertEqual(list(snap), ["board", "agent", "seq", "ts", "time_ms", "power_mode", "metrics", "throttle",
                                      "alerts"])
        self.assertEqual(snap["board"], {
            "model": "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super",
            "soc": "tegra234", "module": "p3767-0005", "l4t": "36.4.3", "jetpack": "6.2"})
        self.assertEqual(set(snap["agent"]), {"version", "interval_ms", "uptime_s"})
        self.assertRegex(snap["agent"]["version"], r"^\d+\.\d+\.\d+")
        self.assertEqual(snap["agent"]["interval_ms"], 1000)
        self.assertIsInstance(snap["agent"]["uptime_s"], int)
        self.assertEqual(snap["power_mode"], "MAXN_SUPER")
        self.assertRegex(snap["ts"], r"^2025-03-14T10:\d\d:\d\d$")
        self.assertEqual(set(snap["throttle"]), {"active", "reasons", "context", "causes"})
        self.assertIsInstance(snap["alerts"], list)
        m = snap["metrics"]
        seq = snap["seq"]
        self.assertEqual(m["agent.samples_total"], seq)
        for name in ("temp.tj_c", "power.vdd_in.mw", "gpu.freq_mhz"):
            self.assertEqual(m[name], self.log[seq][name], name)

    # ---- history ----

    def check_history(self, metric, seconds):
        if seconds is None:
            h = self.get_json(f"/api/v1/history?metric={metric}")
            self.assertEqual(h["seconds"], 3600)
        else:
            h = self.get_json(f"/api/v1/history?metric={metric}&seconds={seconds}")
            self.assertEqual(h["seconds"], seconds)
        self.assertEqual(list(h), ["metric", "seconds", "interval_ms", "tier", "step_ms", "points", "stats"])
        self.assertEqual((h["tier"], h["step_ms"]), (0, 1000))
        self.assertEqual(h["metric"], metric)
        self.assertEqual(h["interval_ms"], 1000)
        pts = h["points"]
        snap = self.get_json("/api/v1/snapshot")
        t1 = self.line_time(snap)
        seqs = [(t - t1) // 1000 + 1 for t, _ in pts]
        # oldest first, one point per second, each the recorded value of its line
        self.assertEqual(seqs, list(range(seqs[0], seqs[0] + len(seqs))))
        for (t, v), seq in zip(pts, seqs):
            self.assertEqual((t - t1) % 1000, 0)
            self.assertEqual(v, self.log[seq][metric], f"{metric} at sample {seq}")
        if seconds is None:
            self.assertEqual(seqs[0], 1, "the whole run so far")
        else:
            self.assertEqual(len(pts), seconds)
        values = [self.log[s][metric] for s in seqs]
        st = h["stats"]
        self.assertEqual(set(st), {"count", "min", "mean", "max", "p95"})
        self.assertEqual(st["count"], len(values))
        self.assertEqual(st["min"], min(values))
        self.assertEqual(st["max"], max(values))
        self.assertEqual(st["p95"], nearest_rank_p95(values))
        self.assertTrue(math.isclose(st["mean"], sum(values) / len(values), rel_tol=1e-6), (st, values))
        return seqs

    def test_history_against_recording(self):
        self.wait_seq(45)
        self.check_history("temp.tj_c", 30)
        self.check_history("power.vdd_in.mw", 20)
        self.check_history("gpu.freq_mhz", 40)
        seqs = self.check_history("temp.tj_c", None)
        self.assertGreaterEqual(len(seqs), 45)

    def test_history_errors(self):
        cases = [
            ("/api/v1/history", 400),
            ("/api/v1/history?metric=", 400),
            ("/api/v1/history?metric=Temp.TJ", 400),
            ("/api/v1/history?metric=temp..c", 400),
            ("/api/v1/history?metric=temp.nothing_c", 404),
            ("/api/v1/history?metric=temp.tj_c&seconds=0", 400),
            ("/api/v1/history?metric=temp.tj_c&seconds=-5", 400),
            ("/api/v1/history?metric=temp.tj_c&seconds=abc", 400),
            ("/api/v1/history?metric=temp.tj_c&seconds=86401", 400),
            ("/api/v1/history?metric=temp.tj_c&tier=0&seconds=3601", 400),
            ("/api/v1/history?metric=temp.tj_c&tier=2", 400),
            ("/api/v1/history?metric=temp.tj_c&seconds=1.5", 400),
        ]
        for path, code in cases:
            status, hdrs, _, body = self.get(path)
            self.assertEqual(status, code, path)
            self.assertEqual(hdrs["content-type"], "application/json")
            self.assertIn("error", json.loads(body))
        h = self.get_json("/api/v1/history?metric=temp.tj_c&seconds=3600")
        self.assertEqual(h["seconds"], 3600)

    # ---- alerts and events ----

    def test_alerts(self):
        self.wait_seq(30)
        a = self.get_json("/api/v1/alerts")
        self.assertEqual(list(a), ["active", "recent"])
        early = [x for x in a["active"] if x["rule"] == "web-test-early"]
        self.assertEqual(len(early), 1, a["active"])
        self.assertEqual(early[0]["status"], "firing")
        self.assertEqual(early[0]["metric"], "agent.samples_total")
        for key in ("rule", "metric", "transition", "status", "severity", "previous_severity", "value",
                    "threshold", "absent", "fingerprint", "at", "starts_at", "ends_at", "summary", "description",
                    "labels", "throttle", "throttle_causes", "power_mode"):
            self.assertIn(key, early[0])
        self.assertLessEqual(len(a["recent"]), 100)
        mine = [x["transition"] for x in a["recent"] if x["rule"] == "web-test-early"]
        self.assertTrue(mine and mine[-1] in ("firing", "repeat"), mine)
        # newest last: the alert times never go back
        ats = [x["at"] for x in a["recent"]]
        self.assertEqual(ats, sorted(ats))
        snap = self.get_json("/api/v1/snapshot")
        self.assertIn("web-test-early", [x["rule"] for x in snap["alerts"]])

    def read_events(self, headers=None, want=("sample", "alert"), limit_s=10):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=limit_s)
        conn.request("GET", "/api/v1/events", headers=headers or {})
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        self.assertEqual(resp.getheader("Content-Type"), "text/event-stream")
        self.assertEqual(resp.getheader("X-Content-Type-Options"), "nosniff")
        self.assertEqual(resp.getheader("Cache-Control"), "no-store")
        events, cur, lines = [], {}, []
        deadline = time.time() + limit_s
        seen = set()
        while time.time() < deadline and not set(want) <= seen:
            line = resp.readline().decode()
            if not line:
                break
            line = line.rstrip("\n")
            lines.append(line)
            if line == "":
                if cur:
                    events.append(cur)
                    seen.add(cur.get("event"))
                cur = {}
                continue
            field, _, value = line.partition(": ")
            cur[field] = value
        conn.close()
        return lines, events

    def test_events_stream(self):
        self.wait_seq(25)
        lines, events = self.read_events()
        self.assertEqual(lines[0], "retry: 2000")
        kinds = {e.get("event") for e in events}
        self.assertIn("sample", kinds)
        self.assertIn("alert", kinds)
        ids = [int(e["id"]) for e in events if "id" in e]
        self.assertEqual(ids, sorted(ids))
        self.assertEqual(len(ids), len(set(ids)))
        samples = [json.loads(e["data"]) for e in events if e.get("event") == "sample"]
        for s in samples:
            self.assertEqual(list(s), ["seq", "ts", "time_ms", "power_mode", "metrics", "throttle"])
            self.assertEqual(s["metrics"]["temp.tj_c"], self.log[s["seq"]]["temp.tj_c"])
        seqs = [s["seq"] for s in samples]
        self.assertEqual(seqs, list(range(seqs[0], seqs[0] + len(seqs))), "no sample skipped")
        alerts = [json.loads(e["data"]) for e in events if e.get("event") == "alert"]
        self.assertEqual(alerts[0]["rule"], "web-test-early")
        self.assertIn(alerts[0]["transition"], ("repeat", "firing"))

    def test_rendered_on_demand_follows_samples(self):
        # /metrics and the snapshot are rendered by the first request after a sample and kept
        # for that sample only: each new sample must show, never a text kept from an older one
        def scraped_seq():
            _, _, _, body = self.get("/metrics")
            line = [l for l in body.decode().splitlines() if l.startswith("tegrawatch_agent_samples_total ")]
            return int(float(line[0].split()[1]))
        first = self.wait_seq(3)["seq"]
        seen = set()
        deadline = time.time() + 20
        while len(seen) < 3 and time.time() < deadline:
            seq = self.get_json("/api/v1/snapshot")["seq"]
            m = scraped_seq()
            again = self.get_json("/api/v1/snapshot")["seq"]
            if seq == again:  # no sample came between the two snapshots
                self.assertEqual(m, seq)
                seen.add(seq)
            time.sleep(0.05)
        self.assertGreaterEqual(len(seen), 3, "three samples in a row, each rendered fresh")
        self.assertGreater(min(seen), first - 1)

    def test_events_gap(self):
        # more than the 64 events of the ring since id 1: a reader resuming there skips ahead
        self.wait_seq(80)
        lines, events = self.read_events(headers={"Last-Event-ID": "1"}, want=("gap", "sample"))
        gap = [e for e in events if e.get("event") == "gap"]
        self.assertEqual(len(gap), 1, lines[:10])
        missed = json.loads(gap[0]["data"])["missed"]
        self.assertGreater(missed, 10)
        # the reader goes on with the oldest event still kept: id 2 + missed
        first_after = [e for e in events if "id" in e][0]
        self.assertEqual(int(first_after["id"]), 2 + missed)

    # ---- /metrics ----

    def test_metrics_promtool(self):
        promtool = shutil.which("promtool")
        self.assertIsNotNone(promtool, "promtool is missing: apt-get install prometheus (scripts/deps.txt)")
        self.wait_seq(5)
        status, hdrs, _, body = self.get("/metrics")
        self.assertEqual(status, 200)
        p = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, (p.stdout + p.stderr).decode())
        text = body.decode()
        samples = {}
        helps, types = set(), {}
        for line in text.splitlines():
            if line.startswith("# HELP "):
                helps.add(line.split()[2])
            elif line.startswith("# TYPE "):
                _, _, name, kind = line.split()
                self.assertNotIn(name, types, "one TYPE line per family")
                types[name] = kind
            else:
                key, _, value = line.rpartition(" ")
                samples[key] = float(value)
        for key in samples:
            family = key.split("{")[0]
            self.assertIn(family, types, key)
            self.assertIn(family, helps, key)
        seq = int(samples["tegrawatch_agent_samples_total"])
        self.assertEqual(types["tegrawatch_agent_samples_total"], "counter")
        self.assertEqual(samples['tegrawatch_temperature_celsius{sensor="tj"}'], self.log[seq]["temp.tj_c"])
        self.assertEqual(samples["tegrawatch_gpu_frequency_hertz"], self.log[seq]["gpu.freq_mhz"] * 1e6)
        self.assertTrue(math.isclose(samples['tegrawatch_power_watts{rail="vdd_in"}'],
                                     self.log[seq]["power.vdd_in.mw"] / 1000, rel_tol=1e-12))
        for key in ('tegrawatch_cpu_frequency_hertz{cpu="0"}', "tegrawatch_throttle_active",
                    'tegrawatch_throttle_reason_active{reason="thermal"}',
                    'tegrawatch_throttle_reason_active{reason="freq_cap"}',
                    'tegrawatch_energy_joules_total{rail="vdd_in"}', "tegrawatch_throttle_seconds_total",
                    'tegrawatch_throttle_reason_seconds_total{reason="thermal"}',
                    'tegrawatch_oc_events_total{event="3"}', 'tegrawatch_cpu_load_ratio{cpu="5"}',
                    "tegrawatch_memory_used_bytes", "tegrawatch_agent_read_errors_total",
                    "tegrawatch_agent_parse_errors_total", "tegrawatch_agent_late_ticks_total",
                    "tegrawatch_agent_alerts_firing", "process_cpu_seconds_total",
                    'tegrawatch_power_mode_info{mode="MAXN_SUPER"}'):
            self.assertIn(key, samples)
        self.assertEqual(types["tegrawatch_oc_events_total"], "counter")
        self.assertEqual(types["process_cpu_seconds_total"], "counter")
        self.assertGreater(samples["process_resident_memory_bytes"], 100 * 1024)
        self.assertGreaterEqual(samples["tegrawatch_agent_alerts_firing"], 1)
        ratios = [v for k, v in samples.items() if k.startswith("tegrawatch_cpu_load_ratio")]
        self.assertTrue(all(0 <= v <= 1 for v in ratios), ratios)
        self.assertIn('tegrawatch_board_info{model="NVIDIA Jetson Orin Nano Engineering Reference Developer Kit '
                      'Super",soc="tegra234",module="p3767-0005",l4t="36.4.3",jetpack="6.2"} 1', text)

    def test_metrics_alerts_series(self):
        # one tegrawatch_alerts series per active alert of the API, with its name, state, severity and metric
        promtool = shutil.which("promtool")
        self.assertIsNotNone(promtool, "promtool is missing: apt-get install prometheus (scripts/deps.txt)")
        self.wait_seq(30)
        pat = re.compile(r'^tegrawatch_alerts\{alertname="([^"]*)",alertstate="(pending|firing)",'
                         r'severity="([^"]*)",metric="([^"]*)"\} 1$')
        for _ in range(20):  # the set may change between the two requests: retry until both agree
            active = self.get_json("/api/v1/alerts")["active"]
            status, _, _, body = self.get("/metrics")
            self.assertEqual(status, 200)
            text = body.decode()
            series = set()
            for line in text.splitlines():
                if line.startswith("tegrawatch_alerts{"):
                    m = pat.match(line)
                    self.assertIsNotNone(m, line)
                    series.add(m.groups())
            want = {(a["rule"], a["status"], a["severity"], a["metric"]) for a in active}
            if series == want:
                break
            time.sleep(0.05)
        self.assertEqual(series, want)
        self.assertIn(("web-test-early", "firing", "warning", "agent.samples_total"), series)
        self.assertEqual(text.count("# TYPE tegrawatch_alerts gauge\n"), 1)
        p = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, (p.stdout + p.stderr).decode())

    def prom_values(self):
        status, _, _, body = self.get("/metrics")
        self.assertEqual(status, 200)
        out = {}
        for line in body.decode().splitlines():
            if line and not line.startswith("#"):
                key, _, value = line.rpartition(" ")
                out[key] = float(value)
        return out

    def test_request_and_alert_counters(self):
        snap = self.wait_seq(30)
        before = self.prom_values()
        for _ in range(5):
            self.assertEqual(self.get("/nope")[0], 404)
        for _ in range(3):
            self.assertEqual(self.get("/healthz")[0], 200)
        self.wait_seq(snap["seq"] + 3)  # the counters go into the next samples
        after = self.prom_values()
        req, err = "tegrawatch_agent_http_requests_total", "tegrawatch_agent_http_request_errors_total"
        self.assertEqual(after[err] - before[err], 5)
        self.assertGreaterEqual(after[req] - before[req], 9)  # the 8 above and the first scrape, at least
        firing = [k for k in after if k.startswith("tegrawatch_alerts{") and 'alertstate="firing"' in k]
        self.assertGreaterEqual(after["tegrawatch_agent_alerts_fired_total"], len(firing))
        self.assertGreaterEqual(after["tegrawatch_agent_alerts_fired_total"], 1)
        self.assertIn("tegrawatch_agent_alerts_resolved_total", after)

    def test_healthz(self):
        status, hdrs, _, body = self.get("/healthz")
        self.assertEqual((status, body), (200, b"ok\n"))

    # ---- limits and errors ----

    def test_methods_and_not_found(self):
        for method in ("POST", "PUT", "DELETE", "OPTIONS", "PATCH"):
            status, hdrs, _, body = self.get("/api/v1/snapshot", method)
            self.assertEqual(status, 405, method)
            self.assertEqual(hdrs["allow"], "GET, HEAD")
            self.assert_common_headers(method, status, hdrs)
        status, hdrs, _, body = request(self.port, "POST", "/metrics", body=b"x" * 5000)
        self.assertEqual(status, 405)
        status, hdrs, _, body = self.get("/etc/passwd")
        self.assertEqual((status, body), (404, b'{"error":"not found"}\n'))
        for path in ("/api/v1", "/api/v1/snapshot/", "/metrics/", "/index.html", "/API/V1/SNAPSHOT"):
            self.assertEqual(self.get(path)[0], 404, path)
        # the router decodes the target itself (web/route.c): escapes work, a NUL or a bad escape is a 400
        self.assertEqual(self.get("/api/v1/%73napshot")[0], 200)
        for path in ("/api/v1/snapshot%00junk", "/healthz%zz", "/api/v1/history?metric=temp.tj_c%00.x"):
            status, hdrs, _, body = self.get(path)
            self.assertEqual(status, 400, path)
            self.assertIn("error", json.loads(body))

    def test_uri_too_long(self):
        status, hdrs, _, body = self.get("/api/v1/history?metric=" + "a" * 3000)
        self.assertEqual(status, 414)
        self.assert_common_headers("414", status, hdrs)
        self.assertEqual(self.get("/" + "b" * 2100)[0], 414)
        self.assertEqual(self.get("/api/v1/history?metric=temp.tj_c&x=" + "c" * 1900)[0], 200)
        # beyond the 32 KiB connection memory libmicrohttpd answers 414 itself (without our headers)
        raw = raw_exchange(self.port, b"GET /?" + b"d" * 40000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        self.assertEqual(status_of(raw), 414, raw[:200])

    def test_headers_too_large(self):
        status, hdrs, _, body = self.get("/healthz", headers={"X-Big": "a" * 9000})
        self.assertEqual(status, 431)
        self.assert_common_headers("431", status, hdrs)
        many = {f"X-H{i}": "v" * 100 for i in range(90)}  # 90 headers, over 8 KiB together
        self.assertEqual(self.get("/healthz", headers=many)[0], 431)
        self.assertEqual(self.get("/healthz", headers={"X-Big": "a" * 7000})[0], 200)
        raw = raw_exchange(self.port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Huge: " + b"e" * 65536 +
                           b"\r\n\r\n")
        self.assertEqual(status_of(raw), 431, raw[:200])

    def test_host_header(self):
        for host in ("evil.example", "evil.example:%d" % self.port, "127.0.0.1.nip.io"):
            status, hdrs, _, body = self.get("/api/v1/snapshot", headers={"Host": host})
            self.assertEqual(status, 421, host)
            self.assert_common_headers(host, status, hdrs)
        for host in ("localhost:%d" % self.port, "127.0.0.1", "localhost:8080"):
            self.assertEqual(self.get("/healthz", headers={"Host": host})[0], 200, host)
        # two Host headers: 400, whichever comes first (a proxy may have checked the other one)
        for hosts in ((b"127.0.0.1", b"evil.example"), (b"evil.example", b"127.0.0.1"), (b"127.0.0.1", b"127.0.0.1"),
                      (b"localhost", b"LOCALHOST")):
            raw = raw_exchange(self.port, b"GET /api/v1/snapshot HTTP/1.1\r\nHost: " + hosts[0] + b"\r\nhost: " +
                               hosts[1] + b"\r\nConnection: close\r\n\r\n")
            self.assertEqual(status_of(raw), 400, (hosts, raw[:200]))
            self.assertIn(b'{"error":"more than one Host header"}', raw)

    def open_served(self, count, deadline_s=8):
        """COUNT keep-alive connections, each proven live by one answered request."""
        socks = []
        deadline = time.time() + deadline_s
        while len(socks) < count:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=3)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            try:
                got = s.recv(4096)
            except ConnectionResetError:
                got = b""
            if status_of(got) == 200:
                socks.append(s)
                continue
            # refused: a connection closed a moment ago may not be cleaned up yet
            s.close()
            if time.time() > deadline:
                for x in socks:
                    x.close()
                self.fail(f"only {len(socks)} of {count} connections were served")
            time.sleep(0.2)
        return socks

    def test_per_ip_limit(self):
        # 8 kept-alive connections from one address: a ninth is served, and the one that has waited longest
        # for its next request is closed to make room (docs/http.md): never more than 8 at once
        socks = self.open_served(PER_IP)
        try:
            raw = raw_exchange(self.port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                               timeout=3)
            self.assertEqual(status_of(raw), 200, "a ninth connection from one address evicts an idle one")
            try:
                evicted = socks[0].recv(4096)
            except ConnectionResetError:
                evicted = b""
            self.assertEqual(evicted, b"", "the connection idle the longest is closed")
            # the 7 others still work
            for s in socks[1:]:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                self.assertEqual(status_of(s.recv(4096)), 200)
        finally:
            for s in socks:
                s.close()

    def test_connection_timeout(self):
        for opening in (b"", b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"):  # idle, slowloris
            s = socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT_S + 5)
            start = time.time()
            s.sendall(opening)
            try:
                data = s.recv(1024)
            except ConnectionResetError:
                data = b""
            elapsed = time.time() - start
            s.close()
            self.assertEqual(data, b"")
            self.assertGreater(elapsed, TIMEOUT_S - 1.1)
            self.assertLess(elapsed, TIMEOUT_S + 2.5)


class StartupTest(unittest.TestCase):
    """Configurations the server refuses (exit 78) and authentication."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tw-web-start-")
        self.cfg = os.path.join(self.dir, "tegrawatch.yaml")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_refused(self, listen, extra=""):
        write_config(self.cfg, 0, extra_web=extra, listen=listen)
        p = subprocess.run([BIN, "run", "--replay", LOG, "--root", ROOT, "--speed", "10", "-c", self.cfg],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 78, p.stderr)
        self.assertEqual(p.stdout, "", "no sample before the refusal")
        return p.stderr

    def test_non_loopback_without_auth(self):
        # never bound: the refusal comes before the socket
        for listen in ("0.0.0.0:9474", "[::]:9474", "192.0.2.10:9474"):
            err = self.run_refused(listen)
            self.assertIn("refusing to listen on " + listen + " without authentication", err)
            self.assertIn("web.token_file", err)

    def test_bad_web_settings(self):
        self.assertIn("listen: expected HOST:PORT", self.run_refused("jetson.lan:9474"))
        self.assertIn("must be set together", self.run_refused("127.0.0.1:0", "  basic_auth_user: admin\n"))
        missing = os.path.join(self.dir, "missing-token")
        self.assertIn("token_file " + missing, self.run_refused("127.0.0.1:0", f"  token_file: {missing}\n"))

    def test_token_and_basic_auth(self):
        token = os.path.join(self.dir, "token")
        password = os.path.join(self.dir, "password")
        for path, text in ((token, "t0ken-for-tests\n"), (password, "pa55word\n")):
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o600)
        port = free_port()
        write_config(self.cfg, port, extra_web=f"  token_file: {token}\n  basic_auth_user: admin\n"
                                               f"  basic_auth_password_file: {password}\n")
        agent = Agent(self.cfg)
        try:
            deadline = time.time() + 15
            while True:
                try:
                    status, hdrs, multi, body = request(port, "GET", "/api/v1/snapshot", timeout=2)
                    break
                except OSError:
                    self.assertLess(time.time(), deadline, agent.stderr())
                    time.sleep(0.1)
            self.assertEqual(status, 401)
            self.assertEqual(sorted(multi["www-authenticate"]),
                             ['Basic realm="tegrawatch", charset="UTF-8"', 'Bearer realm="tegrawatch"'])
            self.assertEqual(hdrs["x-content-type-options"], "nosniff")
            basic = lambda u, p: {"Authorization": "Basic " + base64.b64encode(f"{u}:{p}".encode()).decode()}
            cases = [
                ({}, 401),
                ({"Authorization": "Bearer t0ken-for-tests"}, 200),
                ({"Authorization": "bearer t0ken-for-tests"}, 200),
                ({"Authorization": "Bearer t0ken-for-test"}, 401),
                ({"Authorization": "Bearer t0ken-for-tests2"}, 401),
                ({"Authorization": "Bearer "}, 401),
                (basic("admin", "pa55word"), 200),
                (basic("admin", "pa55wore"), 401),
                (basic("admim", "pa55word"), 401),
                (basic("admin", ""), 401),
            ]
            # failed logins are limited per address (test_web_limits.py): each case from its own
            for i, (headers, code) in enumerate(cases):
                for path in ("/api/v1/snapshot", "/metrics", "/", "/healthz"):
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10,
                                                      source_address=(f"127.0.0.{20 + i}", 0))
                    conn.request("GET", path, headers=headers)
                    status = conn.getresponse().status
                    conn.close()
                    self.assertEqual(status, code, (headers, path))
        finally:
            agent.stop()

    def test_healthz_late(self):
        # one sample every 10 s against an interval of 1 s: late after 3 x 1 s + 1 s
        port = free_port()
        write_config(self.cfg, port)
        agent = Agent(self.cfg, speed=0.1)
        try:
            agent.wait_ready(port)
            self.assertEqual(request(port, "GET", "/healthz")[0], 200)
            deadline = time.time() + 9
            status = body = None
            while time.time() < deadline:
                status, hdrs, _, body = request(port, "GET", "/healthz")
                if status == 503:
                    break
                time.sleep(0.2)
            self.assertEqual(status, 503)
            self.assertTrue(body.startswith(b"late: no sample for "), body)
            self.assertEqual(hdrs["content-type"], "text/plain; charset=utf-8")
        finally:
            agent.stop()


class HistoryTierTest(unittest.TestCase):
    """The one-minute tier over HTTP: an agent replaying the demo at 60x (a recorded minute a second) with a
    one-minute tier 0, so a longer span is answered from tier 1; each minute's statistics against the recording."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="tw-tier-")
        cls.port = free_port()
        cls.cfg = os.path.join(cls.dir, "tegrawatch.yaml")
        write_config(cls.cfg, cls.port, extra_web="  history: 1m\n  minute_history: 1h\n")
        cls.log = parse_log(LOG)
        cls.agent = Agent(cls.cfg, speed=60)
        cls.agent.wait_ready(cls.port)

    @classmethod
    def tearDownClass(cls):
        cls.agent.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def get_json(self, path):
        status, _, _, body = request(self.port, "GET", path)
        self.assertEqual(status, 200, body)
        return json.loads(body)

    def test_minutes_against_recording(self):
        deadline = time.time() + 30
        snap = self.get_json("/api/v1/snapshot")
        while snap["seq"] < 250 and time.time() < deadline:
            time.sleep(0.2)
            snap = self.get_json("/api/v1/snapshot")
        self.assertGreaterEqual(snap["seq"], 250)
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
        snap = self.get_json("/api/v1/snapshot")
        names = sorted(snap["metrics"])
        self.assertGreater(len(names), 100)
        for name in names:
            for tier in (0, 1):
                status, _, _, body = request(self.port, "GET", f"/api/v1/history?metric={name}&tier={tier}")
                self.assertEqual(status, 200, (name, tier, body))


if __name__ == "__main__":
    BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    LOG = os.path.join(SRC, "configs/demo/tegrastats.log")
    ROOT = os.path.join(SRC, "configs/demo/root")
    del sys.argv[1:3]
    unittest.main(verbosity=2)
