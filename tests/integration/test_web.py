#!/usr/bin/env python3
"""The HTTP server over real HTTP on a free 127.0.0.1 port, one agent replaying
the demo for every test: each endpoint's shape and headers, history and
statistics against the replayed recording, the event stream, limits and error
codes, and `promtool check metrics` on /metrics (also for JetPack 7 lines).
Configurations refused, authentication, a slow agent: test_web_setups.py; the
minute tier: test_web_history.py; the server under abuse: test_web_limits.py.

Usage: test_web.py TEGRAWATCH SOURCE_ROOT

Only 127.0.0.1 is ever bound. promtool (Debian package `prometheus`, in
scripts/deps.txt) must be installed: the test fails without it.
"""
import http.client
import json
import math
import re
import shutil
import socket
import subprocess
import time

import harness
from harness import (WEB_PER_IP, WEB_TIMEOUT_S, demo_values, free_port, raw_exchange, request, status_of, wait_until,
                     web_config)

SPEED = 10
API_PATHS = ["/api/v1/snapshot", "/api/v1/history?metric=temp.tj_c", "/api/v1/alerts", "/metrics", "/healthz"]
CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; connect-src 'self'")


def nearest_rank_p95(values):
    s = sorted(values)
    rank = (95 * len(s) + 99) // 100
    return s[rank - 1]


class JetPack7MetricsTest(harness.TestCase):
    """JetPack 7 lines (three-value rails, two-value temperatures): their running maxima get families of their own,
    and promtool still accepts /metrics."""

    def test_jp7_families(self):
        promtool = shutil.which("promtool")
        self.assertIsNotNone(promtool, "promtool is missing: apt-get install prometheus (scripts/deps.txt)")
        log = self.path("jp7.log", "".join(
            "05-15-2026 09:%02d:%02d RAM 21034/125772MB (lfb 40x4MB) CPU [12%%@2601,8%%@2601] "
            "GR3D_FREQ @[1575,1575,1400] NVENC0 off NVJPG1 off cpu@45.%dC/46.5C "
            "VDD_GPU_SOC 5139mW/5002mW/5301mW VDD_IN 3462mW/3522mW/3582mW\n" % (i // 60, i % 60, i % 10)
            for i in range(600)))
        port = free_port()
        agent = self.agent(harness.demo_args(SPEED, log), config=web_config(port), port=port,
                           stdout=subprocess.DEVNULL).wait_web("/api/v1/snapshot")

        def scraped():
            status, _, body = agent.get("/metrics")
            return (status, body) if b'tegrawatch_power_max_watts{rail="vdd_in"}' in body else None
        got = wait_until(scraped, 30, step=0.2)
        self.assertTrue(got, "no running maximum in /metrics")
        status, body = got
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


class WebTest(harness.TestCase):
    """One agent replaying the demo at 10x with the web server on; the tests share it."""

    @classmethod
    def setUpClass(cls):
        cls.port = free_port()
        cls.log = demo_values(harness.src("configs/demo/tegrastats.log"))
        cls.agent = cls.class_agent(harness.demo_args(SPEED), config=web_config(cls.port), port=cls.port,
                                    stdout=subprocess.DEVNULL)
        cls.agent.wait_web("/api/v1/snapshot")

    @classmethod
    def tearDownClass(cls):
        rc = cls.agent.stop()
        if rc not in (0, -15):
            raise AssertionError(f"agent exit {rc}: {cls.agent.stderr()}")

    def get(self, path, method="GET", headers=None):
        return request(self.port, method, path, headers=headers)

    def get_json(self, path):
        status, hdrs, _, body = self.get(path)
        self.assertEqual(status, 200, body)
        return json.loads(body)

    def wait_seq(self, seq, timeout=60):
        def arrived():
            snap = self.get_json("/api/v1/snapshot")
            return snap if snap["seq"] >= seq else None
        snap = wait_until(arrived, timeout, step=0.1)
        if not snap:
            self.fail(f"sample {seq} never arrived")
        return snap

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
        self.assertRegex(snap["ts"], r"^2025-03-14T10:\d\d:\d\dZ$")
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

        def three_seen():
            # /metrics between two snapshots shows a sample between theirs: never one older than the first (a
            # text kept from before it); no quiet moment is needed, which a slow machine at 10 Hz may never give
            seq = self.get_json("/api/v1/snapshot")["seq"]
            m = scraped_seq()
            again = self.get_json("/api/v1/snapshot")["seq"]
            self.assertGreaterEqual(m, seq)
            self.assertLessEqual(m, again)
            seen.add(m)
            return len(seen) >= 3
        self.assertTrue(wait_until(three_seen, 60), "three samples in a row, each rendered fresh")
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
        # qemu-user (the arm64 run, scripts/test-arm64.sh) makes up /proc/self/stat with the memory fields 0
        if not harness.UNDER_QEMU:
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

        def both():
            active = self.get_json("/api/v1/alerts")["active"]
            status, _, _, body = self.get("/metrics")
            self.assertEqual(status, 200)
            series = set()
            for line in body.decode().splitlines():
                if line.startswith("tegrawatch_alerts{"):
                    m = pat.match(line)
                    self.assertIsNotNone(m, line)
                    series.add(m.groups())
            want = {(a["rule"], a["status"], a["severity"], a["metric"]) for a in active}
            return series, want, body
        # the set may change between the two requests: asked again until both agree
        self.assertTrue(wait_until(lambda: both()[0] == both()[1], 30), "the alerts API and /metrics never agreed")
        series, want, body = both()
        text = body.decode()
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
        # the counters go into the samples taken after the last answer: count from the sample seen now, not from
        # `snap` (on a slow machine snap + 3 may already be out before the last request is answered)
        self.wait_seq(self.get_json("/api/v1/snapshot")["seq"] + 2)
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

    def open_served(self, count, timeout=30):
        """COUNT keep-alive connections, each proven live by one answered request."""
        socks = []

        def one_more():
            s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            try:
                got = s.recv(4096)
            except ConnectionResetError:
                got = b""
            if status_of(got) == 200:
                socks.append(s)
            else:
                s.close()  # refused: a connection closed a moment ago may not be cleaned up yet
            return len(socks) >= count
        if not wait_until(one_more, timeout, step=0.2):
            for x in socks:
                x.close()
            self.fail(f"only {len(socks)} of {count} connections were served")
        return socks

    def test_per_ip_limit(self):
        # 8 kept-alive connections from one address: a ninth is served, and the one that has waited longest
        # for its next request is closed to make room (docs/http.md): never more than 8 at once
        socks = self.open_served(WEB_PER_IP)
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
        # an idle and a slowloris connection side by side, each closed by libmicrohttpd's own idle timeout
        opened = []
        for opening in (b"", b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"):  # idle, slowloris
            s = socket.create_connection(("127.0.0.1", self.port), timeout=WEB_TIMEOUT_S + 5)
            opened.append((s, time.time()))
            s.sendall(opening)
        for s, start in opened:
            try:
                data = s.recv(1024)
            except ConnectionResetError:
                data = b""
            elapsed = time.time() - start
            s.close()
            self.assertEqual(data, b"")
            self.assertGreater(elapsed, WEB_TIMEOUT_S - 1.1)
            self.assertLess(elapsed, WEB_TIMEOUT_S + 2.5)


if __name__ == "__main__":
    harness.init()
    harness.main()
