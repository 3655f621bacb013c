#!/usr/bin/env python3
"""The OTLP/HTTP sink end to end: a receiver on 127.0.0.1 keeps every request body; the OpenTelemetry
JavaScript SDK's generated protobuf types (tests/otlp, `npm ci --prefix tests/otlp`) decode them.

- every data point against its sample: the same run also pushes to Prometheus (remote write, already
  checked against /metrics), and each point's metric, attributes, time and value must be a Prometheus
  sample once translated back (unit suffix, _total for sums), and the other way round; two metrics
  straight from the JSON Lines; the resource (host.*, os.type, device.model.name, service.*), the
  scope, gauges, cumulative monotonic sums with the agent's start time, UCUM units, gzip;
- a wrong bearer token is refused (401), counted, logged once and never retried; the right one works
  (uncompressed bodies);
- headers: (a tenant and an API key) on every request, a retried one included;
- zlib is mapped only with the otlp sink (and libsnappy not at all).

The demo runs are on a clock the test drives (tegrawatch-driven): their ticks, batches and back-offs pass in a
fraction of their time.

Usage: test_otlp.py TEGRAWATCH SOURCE_ROOT   (exit 77 without prometheus or the decoder)
"""
import json
import os
import shutil
import subprocess
import sys

import harness
from harness import fleet as fp
from harness import wait_until, write_file

SRC = None
NODE = shutil.which("node") or "/usr/bin/node"
PACE_MS = 5  # real ms a tick of a driven agent lasts (its sockets served meanwhile)
UNIT_SUFFIX = {"Cel": "_celsius", "1": "_ratio", "Hz": "_hertz", "By": "_bytes", "W": "_watts", "V": "_volts",
               "A": "_amperes", "J": "_joules", "s": "_seconds", "": ""}


def otlp_config(url, extra="", rw_url=None):
    text = """agent:
  state_file: ""
  board_name: otlp-lab-1
web:
  listen: ""
otlp:
  url: %s
  batch_samples: 20
  batch_interval: 500ms
  labels: {site: lyon}
%s""" % (url, extra)
    if rw_url:
        text += "remote_write:\n  url: %s\n  batch_samples: 20\n  batch_interval: 500ms\n" % rw_url
    return text


class OtlpTest(harness.TestCase):
    def otlp_receiver(self, token=None):
        def answer(req):
            if token and req.headers.get("authorization") != "Bearer " + token:
                return 401, {}
            return 200, {"Content-Type": "application/x-protobuf"}
        return self.receiver(answer=answer)

    def fleet_agent(self, name, text, args, driven=False):
        return self.agent(["--json"] + list(args), name=name, config=text, driven=driven)

    def demo_run(self, name, text, count, speed):
        """An agent of the demo at SPEED for COUNT samples, on the driven clock: its ticks pass PACE_MS real ms
        each, its last three and its end's flush on the real clock. It must exit 0."""
        a = self.fleet_agent(name, text, ["--demo", "--speed", str(speed), "--count", str(count)], driven=True)
        self.assertEqual(a.run_to_end(count, 1000 // speed, a.now()[0], PACE_MS), 0, a.stderr())
        return a

    def decode(self, requests):
        """The bodies that were accepted, decoded by the OpenTelemetry types: one dict per request."""
        files = []
        for i, r in enumerate(requests):
            if r.status != 200:
                continue
            gz = r.headers.get("content-encoding") == "gzip"
            path = os.path.join(self.d, "body%04d%s" % (i, ".gz" if gz else ""))
            with open(path, "wb") as f:
                f.write(r.body)
            files.append(path)
        out = subprocess.run([NODE, os.path.join(SRC, "tests/otlp/decode.cjs")] + files, capture_output=True,
                             text=True, cwd=os.path.join(SRC, "tests/otlp"))
        self.assertEqual(out.returncode, 0, out.stderr)
        return [json.loads(line) for line in out.stdout.splitlines()]

    def temperature_times(self, requests):
        """The times (ms) of the tegrawatch_temperature points in the accepted REQUESTS."""
        times = set()
        for d in self.decode(requests):
            for m in d["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]:
                if m["name"] == "tegrawatch_temperature":
                    times |= {int(dp["timeUnixNano"]) // 1000000 for dp in m["gauge"]["dataPoints"]}
        return times

    def test_every_point_against_its_sample(self):
        prom = fp.Prometheus(self.d).start()
        self.addCleanup(prom.stop)
        rx = self.otlp_receiver()
        a = self.demo_run("a", otlp_config(rx.url("/v1/metrics"), rw_url=prom.url("/api/v1/write")), 120, 20)
        samples = a.samples()
        times = [s["time_ms"] for s in samples]
        reqs = rx.got()
        self.assertTrue(all(r.headers["content-type"] == "application/x-protobuf" for r in reqs))
        self.assertTrue(all(r.headers["content-encoding"] == "gzip" for r in reqs))
        self.assertTrue(all(r.path == "/v1/metrics" for r in reqs))
        docs = self.decode(reqs)
        self.assertGreaterEqual(len(docs), 120 // 20)

        points = {}  # (family, frozenset(attrs)) -> [(t_ms, value)]
        for doc in docs:
            (rm,) = doc["resourceMetrics"]
            res = {kv["key"]: kv["value"]["stringValue"] for kv in rm["resource"]["attributes"]}
            self.assertEqual(res["service.name"], "tegrawatch")
            self.assertEqual(res["service.instance.id"], "otlp-lab-1")
            self.assertEqual(res["host.name"], "otlp-lab-1")
            self.assertEqual(res["host.id"], "otlp-lab-1")
            self.assertIn(res["host.arch"], ("amd64", "arm64"))
            self.assertEqual(res["os.type"], "linux")
            self.assertEqual(res["device.model.name"], "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super")
            self.assertEqual(res["site"], "lyon")
            (sm,) = rm["scopeMetrics"]
            self.assertEqual(sm["scope"]["name"], "tegrawatch")
            for m in sm["metrics"]:
                self.assertFalse(m["name"].endswith(("_celsius", "_watts", "_hertz", "_bytes", "_ratio")), m["name"])
                if m.get("sum"):
                    self.assertEqual(m["sum"]["aggregationTemporality"], "AGGREGATION_TEMPORALITY_CUMULATIVE")
                    self.assertTrue(m["sum"]["isMonotonic"])
                    dps, family = m["sum"]["dataPoints"], m["name"] + UNIT_SUFFIX[m["unit"]] + "_total"
                else:
                    dps, family = m["gauge"]["dataPoints"], m["name"] + UNIT_SUFFIX[m["unit"]]
                for dp in dps:
                    attrs = frozenset((kv["key"], kv["value"]["stringValue"]) for kv in dp["attributes"])
                    t_ns = int(dp["timeUnixNano"])
                    self.assertEqual(t_ns % 1000000, 0)
                    if m.get("sum"):
                        self.assertGreater(int(dp["startTimeUnixNano"]), 0)
                    points.setdefault((family, attrs), []).append((t_ns // 1000000, dp["asDouble"]))

        # each series holds every sample once, in order
        for key, pts in points.items():
            got = [t for t, _ in pts]
            if key[0] in fp.SOMETIMES:  # a forecast only in the samples that have one (docs/prediction.md)
                self.assertTrue(set(got) <= set(times) and got == sorted(set(got)), key)
                continue
            self.assertEqual(got, times, key)
        # every point is the sample Prometheus got by remote write, and nothing is missing
        series = prom.raw('{instance="otlp-lab-1"}', times[-1] / 1000 + 1)
        pushed = {}
        for key, pts in series.items():
            d = dict(key)
            family = d.pop("__name__")
            for k in ("job", "instance", "board"):
                d.pop(k)
            if family in ("tegrawatch_board_info", "tegrawatch_build_info"):
                continue  # the resource carries them in OTLP
            pushed[(family, frozenset(d.items()))] = pts
        self.assertEqual(set(points), set(pushed))
        for key in points:
            self.assertEqual(points[key], pushed[key], key)
        # and two of them straight from the samples
        cpu = points[("tegrawatch_temperature_celsius", frozenset({("sensor", "cpu")}))]
        self.assertEqual([v for _, v in cpu], [s["metrics"]["temp.cpu_c"] for s in samples])
        ram = points[("tegrawatch_memory_used_bytes", frozenset())]
        self.assertEqual([v for _, v in ram], [s["metrics"]["ram.used_mb"] * 1048576 for s in samples])
        self.assertGreater(len(points), 100)

    def test_wrong_bearer_token_refused_once_right_one_works(self):
        rx = self.otlp_receiver(token="s3cret-token")
        for name, tok in (("wrong", "nope"), ("right", "s3cret-token")):
            write_file(os.path.join(self.d, name + ".tok"), tok + "\n")
        extra = "  compression: none\n  bearer_token_file: %s\n"
        bad = self.demo_run("bad", otlp_config(rx.url("/v1/metrics"), extra % os.path.join(self.d, "wrong.tok")),
                            40, 10)
        good = self.demo_run("good", otlp_config(rx.url("/v1/metrics"), extra % os.path.join(self.d, "right.tok")),
                             40, 10)
        m = bad.last()
        self.assertGreater(m["agent.otlp_samples_rejected_total"], 0)
        self.assertEqual(m["agent.otlp_retries_total"], 0)
        self.assertEqual(m["agent.otlp_samples_sent_total"], 0)
        self.assertEqual(bad.stderr().count("HTTP 401"), 1, bad.stderr())
        self.assertNotIn("nope", bad.stderr())
        ok = [r for r in rx.got() if r.status == 200]
        self.assertTrue(all("content-encoding" not in r.headers for r in ok))
        self.assertEqual(self.temperature_times(ok), {s["time_ms"] for s in good.samples()})

    def test_headers_on_every_request_retries_included(self):
        def gateway(req):  # an API gateway: the key and the tenant, or 403 (never retried)
            ok = req.headers.get("x-api-key") == "k-123" and req.headers.get("x-scope-orgid") == "board-fleet-7"
            return (200, {"Content-Type": "application/x-protobuf"}) if ok else (403, {})
        rx = self.receiver(answer=gateway, script=[(503, {})])
        extra = "  backoff_base: 200ms\n  headers: {X-Scope-OrgID: board-fleet-7, X-Api-Key: k-123}\n"
        a = self.demo_run("a", otlp_config(rx.url("/v1/metrics"), extra), 20, 20)
        got = rx.got()
        self.assertEqual(got[0].status, 503)
        self.assertGreaterEqual(len(got), 2)
        for r in got:  # the retry too; the sink's own headers once each, beside them
            names = [k.lower() for k, _ in r.raw_headers]
            self.assertEqual((r.headers.get("x-scope-orgid"), r.headers.get("x-api-key")), ("board-fleet-7", "k-123"))
            for h in ("x-scope-orgid", "x-api-key", "content-type", "content-encoding", "user-agent"):
                self.assertEqual(names.count(h), 1, (h, r.raw_headers))
        # every sample arrived, the refused first batch's too (the clean stop's flush included)
        self.assertEqual(self.temperature_times(got), {s["time_ms"] for s in a.samples()})

    def test_zlib_mapped_only_with_the_sink(self):
        rx = self.otlp_receiver()
        a = self.fleet_agent("maps", otlp_config(rx.url("/v1/metrics")),
                       ["--root", os.path.join(SRC, "tests/fixtures/boards/orin-nano-jp6"), "--no-tegrastats",
                        "--interval", "100"])
        wait_until(lambda: len(a.samples()) >= 3, 30)
        libs = harness.mapped(a.pid, ("libz.so", "libcurl", "libsnappy"))
        a.stop()
        self.assertEqual(libs, {"libz.so", "libcurl"})


def main():
    global SRC
    _, SRC = harness.init(needs=("driven",))
    os.chdir(SRC)
    if not os.path.exists(fp.PROMETHEUS) or not os.path.isdir(os.path.join(SRC, "tests/otlp/node_modules")):
        print("prometheus or the OTLP decoder (npm ci --prefix tests/otlp) missing: skipped")
        sys.exit(77)
    harness.main()


if __name__ == "__main__":
    main()
