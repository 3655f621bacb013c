#!/usr/bin/env python3
"""`tegrawatch report` on the demo recording and variants of it, checked
against independent computations from `tegrawatch parse` output.

Usage: test_report.py TEGRAWATCH SOURCE_ROOT
"""
import csv
import datetime
import json
import math
import os
import re
import subprocess
import tempfile
import unittest

import harness

BIN = None
SRC = None
DEMO = None


def run(args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    if args[:1] == ["run"]:
        kw["env"] = dict(kw.get("env") or os.environ, **harness.no_default_web(args, kw.get("env")))
    return subprocess.run([BIN] + args, **kw)


def report(args, tmp, name="r.json"):
    out = os.path.join(tmp, name)
    p = run(["report"] + args + ["--json", out])
    if p.returncode != 0:
        raise AssertionError("report %s: exit %d: %s" % (args, p.returncode, p.stderr))
    with open(out) as f:
        return json.load(f)


def parsed(path):
    """[(epoch seconds, metrics)] of every data line, from `tegrawatch parse` (local-time stamps)."""
    p = run(["parse", path])
    assert p.returncode == 0, p.stderr
    out = []
    for line in p.stdout.splitlines():
        d = json.loads(line)
        t = datetime.datetime.strptime(d["ts"], "%Y-%m-%dT%H:%M:%S").timestamp()
        out.append((t, d["metrics"]))
    return out


def percentile(values, p):
    """Linear interpolation between the closest ranks (numpy's default)."""
    v = sorted(values)
    h = (len(v) - 1) * p
    lo = math.floor(h)
    if lo + 1 >= len(v):
        return v[lo]
    return v[lo] + (h - lo) * (v[lo + 1] - v[lo])


def intervals(times):
    """Each sample stands for the time until the next one; the last for the mean interval."""
    dts = [b - a for a, b in zip(times, times[1:])]
    mean = sum(dts) / len(dts) if dts else 1.0
    return dts + [mean]


def write_log(path, lines):
    with open(path, "w") as f:
        f.write("# a variant of the demo recording, written by test_report.py\n")
        f.write("\n".join(lines) + "\n")


def demo_lines():
    with open(DEMO) as f:
        return [l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")]


def cooler(line):
    """The demo with a better heatsink: every sensor 10 C cooler, so the GPU and CPU never get capped."""
    def temp(m):
        v = float(m.group(2)) - 10
        return "%s@%sC" % (m.group(1), ("%.3f" % v).rstrip("0").rstrip("."))
    line = re.sub(r"\b(cpu|soc0|soc1|soc2|gpu|tj)@([0-9.]+)C", temp, line)
    line = re.sub(r"GR3D_FREQ (\d+)%@\[(612|714)\]", r"GR3D_FREQ \1%@[1020]", line)
    return re.sub(r"%@(1344|1190)\b", "%@1728", line)


class DemoReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.r = report([DEMO, "--csv", os.path.join(cls.tmp.name, "r.csv")], cls.tmp.name)
        cls.samples = parsed(DEMO)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_shape(self):
        r = self.r
        for k in ("samples", "start", "end", "interval_s", "board", "metrics", "throttle", "energy_j",
                  "power_modes", "peaks", "alerts", "phases", "recommendations"):
            self.assertIn(k, r)
        self.assertEqual(r["samples"], 900)
        self.assertRegex(r["start"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertEqual(r["interval_s"], 1)
        self.assertEqual(r["duration_s"], 900)
        self.assertEqual(r["power_modes"], {"unknown": 900})
        self.assertEqual(r["alerts"], [], "no -c, no rules")
        self.assertFalse(any(k.startswith("agent.") for k in r["metrics"]), "the agent's own counters are left out")
        self.assertNotIn("host", r, "no host section without host metrics: the report is as before")

    def test_statistics_equal_an_independent_computation(self):
        names = set()
        for _, m in self.samples:
            names.update(m)
        self.assertGreater(len(names), 40)
        for name in sorted(names):
            vals = [m[name] for _, m in self.samples if name in m]
            got = self.r["metrics"][name]
            mean = sum(vals) / len(vals)
            std = math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals))
            self.assertEqual(got["count"], len(vals), name)
            self.assertAlmostEqual(got["mean"], mean, delta=1e-9 * max(1, abs(mean)), msg=name)
            self.assertAlmostEqual(got["std"], std, delta=1e-9 * max(1, std), msg=name)
            self.assertEqual(got["min"], min(vals), name)
            self.assertEqual(got["max"], max(vals), name)
            for p, key in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99")):
                want = percentile(vals, p)
                # float32 storage: 7 significant digits
                self.assertAlmostEqual(got[key], want, delta=2e-7 * max(1, abs(want)), msg="%s %s" % (name, key))

    def test_throttle_episode(self):
        t = self.r["throttle"]
        self.assertEqual(len(t["episodes"]), 1)
        e = t["episodes"][0]
        # samples 424-548 (configs/demo/README.md): 10:07:03 to the next sample, 10:09:08
        start = datetime.datetime(2025, 3, 14, 10, 7, 3).timestamp()
        self.assertEqual(e["start_ms"], int(start * 1000))
        self.assertEqual(e["seconds"], 125)
        self.assertEqual(e["samples"], 125)
        self.assertEqual(e["reasons"], ["thermal"])
        self.assertIn("714 MHz", e["why"]["thermal"])
        self.assertEqual(t["seconds"], 125)
        self.assertAlmostEqual(t["fraction"], 125 / 900)
        self.assertEqual(t["reasons"], {"thermal": 125})

    def test_energy_is_power_times_interval(self):
        times = [t for t, _ in self.samples]
        dts = intervals(times)
        rails = {k[len("power."):-len(".mw")] for _, m in self.samples for k in m
                 if re.fullmatch(r"power\.[a-z0-9_]+\.mw", k)}
        self.assertEqual(rails, {"vdd_in", "vdd_cpu_gpu_cv", "vdd_soc"})
        for rail in rails:
            want = sum(m["power.%s.mw" % rail] / 1000 * dt for (_, m), dt in zip(self.samples, dts))
            self.assertAlmostEqual(self.r["energy_j"][rail], want, delta=0.001, msg=rail)
        # the demo's own running average agrees: 11992 mW over 900 s
        self.assertAlmostEqual(self.r["energy_j"]["vdd_in"] / 900, 11.992, delta=0.001)

    def test_csv_rows(self):
        with open(os.path.join(self.tmp.name, "r.csv")) as f:
            rows = list(csv.reader(f))
        header, body = rows[0], rows[1:]
        self.assertEqual(header[:3], ["time", "time_ms", "power_mode"])
        self.assertEqual(len(body), 900)
        self.assertTrue(all(len(r) == len(header) for r in body))
        self.assertEqual(set(header[3:]), set(self.r["metrics"]))
        col = {n: i for i, n in enumerate(header)}
        for row, (t, m) in zip(body, self.samples):
            self.assertEqual(int(row[1]), int(t * 1000))
            for name, v in m.items():
                self.assertEqual(float(row[col[name]]), v, name)
        self.assertEqual([float(r[col["throttle.active"]]) for r in body].count(1.0), 125)

    def test_recommendations_with_evidence(self):
        recs = {r["id"]: r for r in self.r["recommendations"]}
        self.assertIn("thermal-throttling", recs)
        th = recs["thermal-throttling"]
        self.assertEqual(th["evidence"]["thermal_seconds"], 125)
        self.assertEqual(th["evidence"]["episodes"], 1)
        self.assertIn("125 s", th["text"])
        self.assertIn("cooling", th["text"])
        # nothing else in the demo calls for advice: no over-current, no swap growth, no CPU-bound stretch
        self.assertEqual(set(recs), {"thermal-throttling"})

    def test_text_summary(self):
        p = run(["report", DEMO])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("900 samples", p.stdout)
        self.assertIn("Throttling: 125 s", p.stdout)
        self.assertIn("[thermal-throttling]", p.stdout)
        self.assertNotIn("\nHost\n", p.stdout)


class BoardAndRules(unittest.TestCase):
    def test_root_gives_trips_board_and_modes_and_c_gives_alerts(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = report([DEMO, "--root", os.path.join(SRC, "configs/demo/root"), "-c",
                        os.path.join(SRC, "configs/demo/tegrawatch.yaml")], tmp)
            replay = run(["replay", DEMO, "--dry-run", "--json", "--root", os.path.join(SRC, "configs/demo/root"),
                          "-c", os.path.join(SRC, "configs/demo/tegrawatch.yaml")])
        self.assertEqual(r["board"]["soc"], "tegra234")
        self.assertEqual(r["power_modes"], {"MAXN_SUPER": 900})
        gpu = r["peaks"]["gpu"]
        self.assertEqual(gpu["max_c"], 100.062)
        self.assertEqual(gpu["trips"]["passive"], 99)
        self.assertAlmostEqual(gpu["margin_c"], -1.062)
        # Orin's 70 C trip is the hot-surface warning: no passive trip of its own, not the margin's reference
        self.assertNotIn("passive", r["peaks"]["tj"].get("trips", {}))
        # the alert timeline is the rules engine's, as `replay` prints it
        events = [json.loads(l) for l in replay.stdout.splitlines()]
        self.assertEqual([(a["rule"], a["metric"], a["transition"], a["at_ms"]) for a in r["alerts"]],
                         [(e["rule"], e["metric"], e["transition"], e["at_ms"]) for e in events])
        self.assertIn(("input-power-high", "firing"), {(a["rule"], a["transition"]) for a in r["alerts"]})
        zones = {z["sensor"]: z for z in r["recommendations"][0]["evidence"]["zones"]}
        self.assertAlmostEqual(zones["cpu"]["margin_c"], 99 - 97.093, places=3)


class CalmAndPhases(unittest.TestCase):
    def test_calm_recording_has_no_advice(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "calm.log")
            lines = demo_lines()
            write_log(log, lines[:120] + lines[780:])  # the two idle phases
            r = report([log, "--root", os.path.join(SRC, "configs/demo/root")], tmp)
        self.assertEqual(r["samples"], 240)
        self.assertEqual(r["recommendations"], [])
        self.assertEqual(r["throttle"]["episodes"], [])
        self.assertEqual(r["gaps"], 1, "the cut between the phases is a gap, counted at the last interval")

    def test_phases_split_statistics_and_energy(self):
        samples = parsed(DEMO)
        with tempfile.TemporaryDirectory() as tmp:
            ph = os.path.join(tmp, "phases.csv")
            with open(ph, "w") as f:
                f.write("start,end,name\n0,120,idle\n2025-03-14T10:02:00,2025-03-14T10:09:00,inference\n")
            r = report([DEMO, "--phases", ph], tmp)
        self.assertEqual([p["name"] for p in r["phases"]], ["idle", "inference"])
        idle, inf = r["phases"]
        self.assertEqual((idle["samples"], inf["samples"]), (120, 420))
        t0 = samples[0][0]
        for ph, lo, hi in ((idle, t0, t0 + 120), (inf, t0 + 120, t0 + 540)):
            sel = [m for t, m in samples if lo <= t < hi]
            want = sum(m["gpu.load_pct"] for m in sel) / len(sel)
            self.assertAlmostEqual(ph["metrics"]["gpu.load_pct"]["mean"], want)
            self.assertAlmostEqual(ph["energy_j"]["vdd_in"], sum(m["power.vdd_in.mw"] for m in sel) / 1000,
                                   delta=0.001)
        self.assertEqual(idle["throttle"]["seconds"], 0)
        self.assertEqual(inf["throttle"]["seconds"], 540 - 423)  # samples 424-540 of the episode

    def test_bad_phases_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            ph = os.path.join(tmp, "phases.csv")
            with open(ph, "w") as f:
                f.write("0,10,a\n20,5,backwards\n")
            p = run(["report", DEMO, "--phases", ph, "--json", os.path.join(tmp, "out.json")])
            self.assertEqual(p.returncode, 64)
            self.assertIn(":2:", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "out.json")), "no output on failure")


class Compare(unittest.TestCase):
    def test_cooler_board_compared(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = os.path.join(tmp, "cooler.log")
            write_log(b, [cooler(l) for l in demo_lines()])
            out = os.path.join(tmp, "cmp.json")
            p = run(["report", "--compare", DEMO, b, "--json", out])
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                c = json.load(f)
            text = run(["report", "--compare", DEMO, b])
        tj = c["metrics"]["temp.tj_c"]
        self.assertAlmostEqual(tj["delta_max"], -10, places=6)
        self.assertAlmostEqual(tj["delta_mean"], -10, places=6)
        self.assertAlmostEqual(tj["delta_p95"], -10, places=4)
        self.assertGreater(c["metrics"]["gpu.freq_mhz"]["delta_mean"], 0)
        self.assertEqual(c["throttle"], {"a_seconds": 125, "b_seconds": 0, "delta_seconds": -125})
        self.assertIn("vdd_in", c["energy_j"])
        self.assertEqual(c["a"]["recommendations"], ["thermal-throttling"])
        self.assertEqual(c["b"]["recommendations"], [])
        self.assertIn("B ran 10.0 C cooler at the junction", c["verdict"])
        self.assertIn("did not throttle; A throttled 125 s", c["verdict"])
        self.assertIn(c["verdict"], text.stdout)


# A recording of a real host (what `run --record` writes with the host source on): a second a sample.
# available memory dips to 800 MiB; the OOM counter goes 3 -> 4 -> 6, then a new boot starts it at 1 (4 kills in
# all); / fills to 93.5 % and back to 91 %, predicted full in 5 h 30 min at the soonest; eth0 goes down for 3 s once.
HOST_SAMPLES = [
    # ram.available_mb, oom.kills_total, root used %, root avail MiB, root full_eta_s (None: absent), eth0 up
    (6000, 3, 90.0, 1600, None, 1),
    (5000, 3, 91.0, 1440, None, 1),
    (2500, 4, 92.5, 1200, 21000, 0),
    (800, 4, 93.5, 1040, 19800, 0),
    (1200, 6, 93.0, 1120, None, 0),
    (4000, 6, 92.0, 1280, None, 1),
    (5500, 1, 91.5, 1360, None, 1),
    (5900, 1, 91.0, 1440, None, 1),
]


def host_recording(path):
    with open(path, "w") as f:
        f.write('{"tegrawatch_recording":1,"version":"x","board":null}\n')
        for i, (avail, kills, pct, free, eta, up) in enumerate(HOST_SAMPLES):
            m = {"ram.available_mb": avail, "oom.kills_total": kills, "filesystem.root.used_pct": pct,
                 "filesystem.root.avail_mb": free, "filesystem.root.readonly": 0, "filesystem.data.used_pct": 10.0,
                 "filesystem.data.avail_mb": 90000, "filesystem.data.readonly": 1, "network.eth0.up": up,
                 "network.wlan0.up": 1, "temp.tj_c": 50}
            if eta is not None:
                m["filesystem.root.full_eta_s"] = eta
            f.write(json.dumps({"seq": i + 1, "time_ms": 1764374400000 + 1000 * i, "power_mode": "15W",
                                "metrics": m, "throttle": {"active": False, "reasons": {}, "context": ""}}) + "\n")


class HostReport(unittest.TestCase):
    def test_host_section(self):
        with tempfile.TemporaryDirectory() as tmp:
            rec = os.path.join(tmp, "host.jsonl")
            host_recording(rec)
            r = report([rec], tmp)
            text = run(["report", rec])
        self.assertEqual(text.returncode, 0, text.stderr)
        h = r["host"]
        self.assertEqual(h["memory_available_mb"], {"min": 800, "max": 6000, "last": 5900})
        self.assertEqual(h["oom_kills"], 4)
        self.assertEqual(h["filesystems"]["root"], {"used_pct": {"min": 90, "max": 93.5, "last": 91},
                                                    "avail_mb": {"min": 1040, "max": 1600, "last": 1440},
                                                    "soonest_full_s": 19800, "readonly": False})
        self.assertIsNone(h["filesystems"]["data"]["soonest_full_s"], "never filling")
        self.assertTrue(h["filesystems"]["data"]["readonly"])
        self.assertEqual(h["links"], {"eth0": {"downs": 1, "down_s": 3, "up_at_end": True},
                                      "wlan0": {"downs": 0, "down_s": 0, "up_at_end": True}})
        # the statistics of every metric are there as for any other
        self.assertEqual(r["metrics"]["filesystem.root.used_pct"]["max"], 93.5)
        out = text.stdout
        self.assertIn("\nHost\n", out)
        self.assertIn("memory available     least 800 MiB, most 6000 MiB, at the end 5900 MiB", out)
        self.assertIn("OOM kills            4 during the run", out)
        self.assertRegex(out, r"\n    root +90\.0 +93\.5 +91\.0 +1440 MiB  5 h 30 min\n")
        self.assertRegex(out, r"\n    data +10\.0 +10\.0 +10\.0 +90000 MiB  -  \(read-only\)\n")
        self.assertRegex(out, r"\n    eth0 +1 +3 s  up\n")

    def test_a_link_down_at_the_end_and_a_recording_cut_short(self):
        with tempfile.TemporaryDirectory() as tmp:
            rec = os.path.join(tmp, "host.jsonl")
            with open(rec, "w") as f:
                f.write('{"tegrawatch_recording":1,"version":"x","board":null}\n')
                for i, up in enumerate((1, 0, 1, 0)):
                    f.write(json.dumps({"seq": i + 1, "time_ms": 1000 * (i + 1), "metrics": {"network.eth0.up": up},
                                        "throttle": {"active": False, "reasons": {}, "context": ""}}) + "\n")
            r = report([rec], tmp)
        self.assertEqual(r["host"]["links"]["eth0"], {"downs": 2, "down_s": 1, "up_at_end": False})
        self.assertIsNone(r["host"]["memory_available_mb"])
        self.assertIsNone(r["host"]["oom_kills"])
        self.assertEqual(r["host"]["filesystems"], {})


class Recording(unittest.TestCase):
    def test_record_then_report_equals_the_log(self):
        with tempfile.TemporaryDirectory() as tmp:
            rec = os.path.join(tmp, "run.jsonl")
            p = run(["run", "--replay", DEMO, "--speed", "0", "--no-json", "--record", rec])
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(rec) as f:
                lines = f.read().splitlines()
            self.assertEqual(len(lines), 901)
            self.assertEqual(json.loads(lines[0])["tegrawatch_recording"], 1)
            self.assertEqual(json.loads(lines[424])["throttle"]["active"], True)
            a = report([DEMO], tmp, "a.json")
            b = report([rec], tmp, "b.json")
        self.assertEqual(a, b)

    def test_record_with_sysfs_keeps_the_board(self):
        root = os.path.join(SRC, "configs/demo/root")
        with tempfile.TemporaryDirectory() as tmp:
            rec = os.path.join(tmp, "run.jsonl")
            p = run(["run", "--replay", DEMO, "--root", root, "--speed", "0", "--no-json", "--record", rec,
                     "-c", os.path.join(SRC, "configs/demo/tegrawatch.yaml")])
            self.assertEqual(p.returncode, 0, p.stderr)
            a = report([DEMO, "--root", root], tmp, "a.json")
            b = report([rec], tmp, "b.json")  # no --root: the recording has the board's metrics and identity
        self.assertEqual(b["board"], a["board"])
        self.assertEqual(b["power_modes"], {"MAXN_SUPER": 900})
        self.assertEqual(b["peaks"], a["peaks"])
        self.assertEqual(b["throttle"], a["throttle"])
        self.assertEqual(b["energy_j"], a["energy_j"])
        for name, st in a["metrics"].items():
            self.assertEqual(b["metrics"][name], st, name)

    def test_record_names_the_board_of_agent_root(self):
        # agent.root in the file, no --root: the header names the board the run read (issue 21 item 4)
        root = os.path.join(SRC, "configs/demo/root")
        with tempfile.TemporaryDirectory() as tmp:
            cfg = os.path.join(tmp, "root.yaml")
            with open(cfg, "w") as f:
                f.write('agent:\n  root: "%s"\n  state_file: ""\nweb:\n  listen: ""\n' % root)
            rec, rec_cli = os.path.join(tmp, "run.jsonl"), os.path.join(tmp, "cli.jsonl")
            p = run(["run", "--replay", DEMO, "--speed", "0", "--count", "5", "--no-json", "--record", rec,
                     "-c", cfg])
            self.assertEqual(p.returncode, 0, p.stderr)
            p = run(["run", "--replay", DEMO, "--root", root, "--speed", "0", "--count", "5", "--no-json",
                     "--record", rec_cli, "-c", cfg])
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(rec) as f:
                header = json.loads(f.readline())
            with open(rec_cli) as f:
                header_cli = json.loads(f.readline())
        self.assertIsNotNone(header["board"], header)
        self.assertEqual(header["board"]["model"], "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super")
        self.assertEqual(header["board"], header_cli["board"])

    def test_rotation_keeps_one_previous_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            rec = os.path.join(tmp, "run.jsonl")
            p = run(["run", "--replay", DEMO, "--speed", "0", "--no-json", "--record", rec,
                     "--record-max-mb", "0.5"])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(os.path.exists(rec + ".1"))
            self.assertLessEqual(os.path.getsize(rec), 512 * 1024)
            self.assertLessEqual(os.path.getsize(rec + ".1"), 512 * 1024)
            with open(rec) as f:
                first = json.loads(f.readline())
            self.assertIn("tegrawatch_recording", first, "each file starts with its header")
            # the newest file alone reports, and so do both together
            whole = os.path.join(tmp, "both.jsonl")
            with open(whole, "w") as out:
                for part in (rec + ".1", rec):
                    with open(part) as f:
                        out.write(f.read())
            tail = report([rec], tmp, "tail.json")
            both = report([whole], tmp, "both.json")
        self.assertLess(tail["samples"], 900)
        self.assertGreater(both["samples"], tail["samples"])
        self.assertLessEqual(both["samples"], 900)

    def test_bad_recording_lines_are_skipped(self):
        with tempfile.TemporaryDirectory() as tmp:
            rec = os.path.join(tmp, "bad.jsonl")
            with open(rec, "w") as f:
                f.write('{"tegrawatch_recording":1,"version":"x","board":null}\n')
                f.write('{"seq":1,"time_ms":1000,"power_mode":"15W","metrics":{"temp.tj_c":50,"x.y":null},'
                        '"throttle":{"active":false,"reasons":{},"context":""}}\n')
                f.write('{"seq":2,"time_ms":2000,"metrics":{"temp.tj_c":\n')
                f.write('{"seq":3,"time_ms":3000,"power_mode":"15W","metrics":{"temp.tj_c":60},'
                        '"throttle":{"active":true,"reasons":{"thermal":"a \\"quoted\\" \\u00b0C"},"context":""},'
                        '"later":[1,{"a":2}]}\n')
            p = run(["report", rec, "--json", os.path.join(tmp, "r.json")])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("bad.jsonl:3:", p.stderr)
            with open(os.path.join(tmp, "r.json")) as f:
                r = json.load(f)
        self.assertEqual(r["samples"], 2)
        self.assertEqual(r["metrics"]["temp.tj_c"]["mean"], 55)
        self.assertEqual(r["power_modes"], {"15W": 4})


if __name__ == "__main__":
    BIN, SRC = harness.init()
    DEMO = os.path.join(SRC, "configs/demo/tegrastats.log")
    harness.main()
