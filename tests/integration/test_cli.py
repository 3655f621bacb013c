#!/usr/bin/env python3
"""The real tegrawatch binary on real files: parse, snapshot, run.

Usage: test_cli.py TEGRAWATCH SOURCE_ROOT
"""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import harness

BIN = None
SRC = None


def run(args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 60)
    if args[:1] == ["run"]:
        kw["env"] = dict(kw.get("env") or os.environ, **harness.no_default_web(args, kw.get("env")))
    return subprocess.run([BIN] + args, **kw)


def data_lines(path):
    """(line number, text) of the data lines of a recorded tegrastats file."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if s and not s.startswith("#"):
                out.append((n, line.rstrip("\n")))
    return out


class ParseTest(unittest.TestCase):
    def test_every_real_line(self):
        files = sorted(glob.glob(os.path.join(SRC, "tests/fixtures/tegrastats/*.txt")))
        self.assertGreaterEqual(len(files), 11)
        for path in files:
            p = run(["parse", path])
            self.assertEqual(p.returncode, 0, p.stderr)
            docs = [json.loads(l) for l in p.stdout.splitlines()]
            want = data_lines(path)
            self.assertEqual([d["line"] for d in docs], [n for n, _ in want], path)
            for d, (n, text) in zip(docs, want):
                self.assertNotIn("error", d, "%s:%d" % (path, n))
                self.assertIn("ram.total_mb", d["metrics"])
                stamped = text[:2].isdigit()
                if stamped:
                    self.assertRegex(d["ts"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")
                else:
                    self.assertIsNone(d["ts"])

    def test_stdin_stamp_and_values(self):
        line = ("11-15-2024 08:38:09 RAM 6185/7620MB (lfb 8x2MB) SWAP 851/3810MB (cached 1MB) "
                "CPU [15%@729,11%@729,14%@729,13%@729,11%@729,8%@729] EMC_FREQ 43%@2133 GR3D_FREQ 63%@[621] "
                "NVDEC off NVJPG off NVJPG1 off VIC off OFA off APE 200 cpu@53.968C soc2@52.437C soc0@50.75C "
                "gpu@53.343C tj@53.968C soc1@51.656C VDD_IN 12479mW/12479mW VDD_CPU_GPU_CV 4667mW/4667mW "
                "VDD_SOC 2817mW/2817mW\n")
        p = run(["parse"], input=line)
        self.assertEqual(p.returncode, 0)
        d = json.loads(p.stdout)
        self.assertEqual(d["line"], 1)
        self.assertEqual(d["ts"], "2024-11-15T08:38:09")
        m = d["metrics"]
        self.assertEqual(m["gpu.freq_mhz"], 621)
        self.assertEqual(m["gpu.load_pct"], 63)
        self.assertEqual(m["temp.cpu_c"], 53.968)
        self.assertEqual(m["power.vdd_in.mw"], 12479)
        self.assertEqual(m["engine.nvdec.on"], 0)
        self.assertEqual(m["engine.ape.freq_mhz"], 200)
        self.assertEqual(m["cpu.5.load_pct"], 8)

    def test_bad_lines_are_errors_with_a_column(self):
        text = ("RAM 1923/3964MB (lfb 2x2MB) CPU [5%@1224,4%@1224\n"
                "RAM 1409/3964MB (lfb 28x4MB) CPU [22%@518,67%@518,off,off] GR3D_FREQ 0%@76\n"
                "\n# a comment\n"
                "garbage with no tokens at all\n")
        p = run(["parse"], input=text)
        self.assertEqual(p.returncode, 0)
        docs = [json.loads(l) for l in p.stdout.splitlines()]
        self.assertEqual([d["line"] for d in docs], [1, 2, 5])
        self.assertIn("error", docs[0])
        self.assertRegex(docs[0]["error"], r"^column \d+: ")
        self.assertNotIn("metrics", docs[0])
        self.assertEqual(docs[1]["metrics"]["cpu.2.online"], 0)
        self.assertIn("error", docs[2])

    def test_missing_file(self):
        # sysexits: a missing input file is EX_NOINPUT (66), for every command that reads one
        p = run(["parse", "/nonexistent/tegrastats.log"])
        self.assertEqual(p.returncode, 66)
        self.assertIn("/nonexistent/tegrastats.log", p.stderr)
        p = run(["replay", "/nonexistent/tegrastats.log", "--dry-run"])
        self.assertEqual(p.returncode, 66)
        p = run(["run", "--replay", "/nonexistent/tegrastats.log", "--no-json"])
        self.assertEqual(p.returncode, 66)

    def test_command_line_conventions(self):
        # global options anywhere, COMMAND --help for each command, --version
        for cmd in ("parse", "snapshot", "run", "check", "replay"):
            p = run([cmd, "--help"])
            self.assertEqual(p.returncode, 0, cmd)
            self.assertTrue(p.stdout.startswith("Usage: tegrawatch " + cmd), (cmd, p.stdout[:80]))
        version = run(["--version"])
        self.assertEqual(version.returncode, 0)
        self.assertRegex(version.stdout, r"^tegrawatch \d+\.\d+\.\d+\n$")
        log = os.path.join(SRC, "configs/demo/tegrastats.log")
        for args in (["-v", "parse", log], ["parse", "-v", log], ["parse", log, "-v"]):
            p = run(args)
            self.assertEqual(p.returncode, 0, args)
            self.assertIn("lines parsed", p.stderr, args)  # the info summary -v asks for
        p = run(["parse", "-q", log])
        self.assertNotIn("lines parsed", p.stderr)


class RunTest(unittest.TestCase):
    def test_counters_integrate_every_sample(self):
        """energy.RAIL.joules_total is the sum of power x interval; throttle seconds count throttled time."""
        log = os.path.join(SRC, "configs/demo/tegrastats.log")
        p = run(["run", "--replay", log, "--speed", "0", "--json"], timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr[-400:])
        docs = [json.loads(x) for x in p.stdout.splitlines()]
        parsed = [json.loads(x) for x in run(["parse", log]).stdout.splitlines()]
        self.assertEqual(len(docs), len(parsed))
        rails = sorted(k[len("power."):-len(".mw")] for k in parsed[0]["metrics"]
                       if k.startswith("power.") and k.endswith(".mw"))
        self.assertTrue(rails)
        for rail in rails:
            want, prev_t = 0.0, None
            for d, q in zip(docs, parsed):
                t = d["time_ms"]
                if prev_t is not None and ("power.%s.mw" % rail) in q["metrics"]:
                    want += q["metrics"]["power.%s.mw" % rail] / 1000.0 * (t - prev_t) / 1000.0
                prev_t = t
            got = docs[-1]["metrics"]["energy.%s.joules_total" % rail]
            self.assertTrue(abs(got - want) <= 1e-6 * max(1.0, want), (rail, got, want))
        for key in ["throttle.seconds_total"] + ["energy.%s.joules_total" % r for r in rails]:
            series = [d["metrics"][key] for d in docs]
            self.assertEqual(series, sorted(series), key)  # counters never go back
        throttled = sum((b["time_ms"] - a["time_ms"]) / 1000.0 for a, b in zip(docs, docs[1:])
                        if b["throttle"]["active"])
        self.assertGreater(throttled, 0)
        self.assertAlmostEqual(docs[-1]["metrics"]["throttle.seconds_total"], throttled, places=6)
        self.assertAlmostEqual(docs[-1]["metrics"]["throttle.thermal.seconds_total"],
                               sum((b["time_ms"] - a["time_ms"]) / 1000.0 for a, b in zip(docs, docs[1:])
                                   if "thermal" in b["throttle"]["reasons"]), places=6)

    def test_jp7_energy_integrates_the_current_power(self):
        """JetPack 7 rails are current/average/maximum: energy.RAIL.joules_total integrates the current."""
        cur = [3462, 3900, 3100, 3700, 3300]
        lines = []
        for i, c in enumerate(cur):
            seen = cur[:i + 1]
            lines.append("05-15-2026 09:12:%02d RAM 21034/125772MB (lfb 40x4MB) CPU [12%%@2601,8%%@2601] "
                         "GR3D_FREQ @[1575,1575,1400] NVENC0 off cpu@45.%dC/46.5C "
                         "VDD_IN %dmW/%dmW/%dmW\n" % (10 + i, i, c, sum(seen) // len(seen), max(seen)))
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "jp7.log")
            with open(log, "w") as f:
                f.writelines(lines)
            p = run(["run", "--replay", log, "--speed", "0", "--json"], timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr[-400:])
        docs = [json.loads(x) for x in p.stdout.splitlines()]
        self.assertEqual(len(docs), len(cur))
        want, prev_t = 0.0, None
        for i, (d, c) in enumerate(zip(docs, cur)):
            m = d["metrics"]
            self.assertEqual(m["power.vdd_in.mw"], c)
            self.assertEqual(m["power.vdd_in.max_mw"], max(cur[:i + 1]))
            self.assertEqual(m["temp_max.cpu_c"], 46.5)
            if prev_t is not None:
                want += c / 1000.0 * (d["time_ms"] - prev_t) / 1000.0
            prev_t = d["time_ms"]
        self.assertGreater(want, 0)
        got = docs[-1]["metrics"]["energy.vdd_in.joules_total"]
        self.assertTrue(abs(got - want) <= 1e-6 * want, (got, want))
        self.assertEqual(docs[-1]["metrics"]["agent.unknown_tokens_total"], 0)
        self.assertEqual(docs[-1]["metrics"]["agent.parse_errors_total"], 0)

    def test_demo_tells_the_story(self):
        p = run(["run", "--demo", "--speed", "0"], timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        docs = [json.loads(l) for l in p.stdout.splitlines()]
        lines = data_lines(os.path.join(SRC, "configs/demo/tegrastats.log"))
        self.assertEqual(len(docs), len(lines))
        self.assertEqual([d["seq"] for d in docs], list(range(1, len(docs) + 1)))
        self.assertTrue(all(d["power_mode"] == "MAXN_SUPER" for d in docs))
        active = [d for d in docs if d["throttle"]["active"]]
        self.assertGreater(len(active), 30, "the demo has a throttle episode")
        self.assertTrue(all("thermal" in d["throttle"]["reasons"] for d in active))
        # warm-up first: nothing throttled in the first minute, and the end has recovered
        self.assertFalse(any(d["throttle"]["active"] for d in docs[:60]))
        self.assertFalse(any(d["throttle"]["active"] for d in docs[-60:]))
        # the fixture tree adds what the log lacks, the log wins where both have a value
        first = docs[0]["metrics"]
        self.assertIn("trip.cpu.passive_c", first)
        self.assertIn("gpu.max_freq_mhz", first)
        self.assertEqual(first["agent.parse_errors_total"], 0)

    def test_replay_pacing_and_count(self):
        start = time.monotonic()
        p = run(["run", "--replay", os.path.join(SRC, "configs/demo/tegrastats.log"), "--speed", "20",
                 "--count", "6"])
        took = time.monotonic() - start
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(p.stdout.splitlines()), 6)
        # 5 gaps of 1 s at 20x: about 0.25 s; never the 5 s of real time
        self.assertLess(took, 3.0)
        self.assertGreater(took, 0.2)

    def test_bad_replay_line_is_reported_and_skipped(self):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write("RAM 1923/3964MB (lfb 2x2MB) CPU [5%@1224,4%@1224,3%@1224,6%@1224] GR3D_FREQ 0%@76\n")
            f.write("RAM 1923/3964MB (lfb 2x2MB) CPU [5%@1224,4%@12\n")
            f.write("RAM 1924/3964MB (lfb 2x2MB) CPU [5%@1224,4%@1224,3%@1224,6%@1224] GR3D_FREQ 5%@76\n")
            name = f.name
        try:
            p = run(["run", "--replay", name, "--speed", "0"])
        finally:
            os.unlink(name)
        self.assertEqual(p.returncode, 0)
        docs = [json.loads(l) for l in p.stdout.splitlines()]
        self.assertEqual(len(docs), 2)
        self.assertEqual(docs[1]["metrics"]["ram.used_mb"], 1924)
        self.assertEqual(docs[1]["metrics"]["agent.parse_errors_total"], 1)
        self.assertRegex(p.stderr, r"%s:2:\d+: " % name)

    def test_log_level_from_the_config(self):
        """agent.log_level quiets warnings; -v on the command line wins over it."""
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "t.log")
            with open(log, "w") as f:
                f.write("RAM 1923/3964MB (lfb 2x2MB) CPU [5%@1224,4%@1224,3%@1224,6%@1224] GR3D_FREQ 0%@76\n")
                f.write("RAM 1923/3964MB (lfb 2x2MB) CPU [5%@1224,4%@12\n")
            cfg = os.path.join(d, "c.yaml")
            with open(cfg, "w") as f:
                f.write('agent:\n  log_level: error\n  state_file: ""\nweb:\n  listen: ""\n')
            os.chmod(cfg, 0o644)
            quiet = run(["run", "--replay", log, "--speed", "0", "-c", cfg])
            loud = run(["run", "-v", "--replay", log, "--speed", "0", "-c", cfg])
        self.assertEqual(quiet.returncode, 0, quiet.stderr)
        self.assertNotIn(":2:", quiet.stderr)
        self.assertRegex(loud.stderr, r"t\.log:2:\d+: ")

    def test_no_jetson_explains_the_demo(self):
        with tempfile.TemporaryDirectory() as root:
            p = run(["run", "--root", root, "--count", "1"])
        self.assertEqual(p.returncode, 69)
        self.assertIn("no Jetson board found", p.stderr)
        self.assertIn("--demo", p.stderr)

    def test_environment_without_a_config_file(self):
        """TEGRAWATCH_<SECTION>_<KEY> works with no configuration file too, and its errors are located."""
        root = os.path.join(SRC, "tests/fixtures/boards/orin-nano-jp6")
        env = dict(os.environ, TEGRAWATCH_AGENT_INTERVAL="200ms", TEGRAWATCH_WEB_LISTEN="")
        p = run(["run", "--root", root, "--no-tegrastats", "--count", "3"], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        docs = [json.loads(l) for l in p.stdout.splitlines()]
        self.assertEqual(len(docs), 3)
        self.assertLess(docs[-1]["time_ms"] - docs[0]["time_ms"], 1500)
        env["TEGRAWATCH_AGENT_INTERVAL"] = "ten"
        p = run(["run", "--root", root, "--no-tegrastats", "--count", "1"], env=env)
        self.assertEqual(p.returncode, 78)
        self.assertIn("environment:TEGRAWATCH_AGENT_INTERVAL: expected a duration", p.stderr)

    def test_sigterm_stops_cleanly(self):
        d = tempfile.mkdtemp(prefix="tw-cli-")
        self.addCleanup(shutil.rmtree, d, True)
        agent = harness.Agent(d, ["--demo"])
        self.addCleanup(agent.kill)
        agent.next_sample(what="a sample")
        self.assertEqual(agent.stop(timeout=5), 0, agent.stderr())
        self.assertGreaterEqual(len(agent.samples()), 1)

    def test_live_tegrastats_next_to_sysfs(self):
        """A stand-in tegrastats prints real lines; sysfs adds trips and ceilings."""
        root = os.path.join(SRC, "tests/fixtures/boards/orin-nano-jp6")
        line = data_lines(os.path.join(SRC, "tests/fixtures/tegrastats/orin_nano_jetpack6_l4t_r36.txt"))[0][1]
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "tegrastats")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\n# stand-in: $1 $2 = --interval MS\n"
                        "while :; do echo '%s'; sleep 0.1; done\n" % line)
            os.chmod(fake, 0o755)
            p = run(["run", "--root", root, "--tegrastats", fake, "--interval", "200", "--count", "4"])
        self.assertEqual(p.returncode, 0, p.stderr)
        docs = [json.loads(l) for l in p.stdout.splitlines()]
        self.assertEqual(len(docs), 4)
        last = docs[-1]["metrics"]
        self.assertEqual(last["engine.ape.freq_mhz"], 200)   # only tegrastats has it
        self.assertEqual(last["gpu.freq_mhz"], 621)           # tegrastats wins over the tree
        self.assertIn("trip.cpu.passive_c", last)             # only sysfs has it


class SnapshotTest(unittest.TestCase):
    """`snapshot --root` on the fixture trees: identity, power mode and key values."""
    TREES = {
        "nano-jp4": ("NVIDIA Jetson Nano Developer Kit", "tegra210", "32.7.1", "4.6.1", "MAXN",
                     {"temp.cpu_c": 40, "power.pom_5v_in.mw": 1750, "gpu.freq_mhz": 76.8}),
        "agx-xavier-jp4": ("Jetson-AGX", "tegra194", "32.6.1", "4.6", "MODE_15W_DESKTOP",
                           {"temp.cpu_c": 37.5, "power.sys5v.mw": 1854, "fan.0.rpm": 1170}),
        "agx-orin-jp5": ("Jetson AGX Orin", "tegra234", "35.4.1", "5.1.2", "MAXN",
                         {"temp.cpu_c": 44.562, "oc.3.events": 0, "power.vin_sys_5v0.mw": 4025}),
        "agx-orin-jp7": ("NVIDIA Jetson AGX Orin Developer Kit", "tegra234", "39.2.0", "7.2", "MAXN",
                         {"temp.cpu_c": 50.718, "trip.gpu.passive_c": 99, "gpu.max_freq_mhz": 1300.5}),
        "orin-nano-jp6": ("NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super", "tegra234",
                          "36.4.3", "6.2", "MAXN_SUPER",
                          {"temp.cpu_c": 47.875, "power.vdd_in.crit_ma": 7784, "trip.cpu.passive_c": 99,
                           "trip.cpu.hot_surface_c": 70}),
        "orin-nx-jp6": ("NVIDIA Jetson Orin NX Engineering Reference Developer Kit Super", "tegra234",
                        "36.4.3", "6.2", "MAXN_SUPER",
                        {"temp.cv0_c": 41.156, "gpu.max_freq_mhz": 1173, "cpu.7.max_freq_mhz": 1984,
                         "trip.gpu.passive_c": 99, "trip.gpu.hot_surface_c": 70}),
    }

    def test_trees(self):
        for tree, (model, soc, l4t, jp, mode, values) in self.TREES.items():
            root = os.path.join(SRC, "tests/fixtures/boards", tree)
            p = run(["snapshot", "--root", root, "--json"])
            self.assertEqual(p.returncode, 0, p.stderr)
            d = json.loads(p.stdout)
            self.assertEqual((d["board"]["model"], d["board"]["soc"], d["board"]["l4t"], d["board"]["jetpack"]),
                             (model, soc, l4t, jp), tree)
            self.assertTrue(d["board"]["is_jetson"])
            self.assertEqual(d["power_mode"], mode, tree)
            for k, v in values.items():
                self.assertEqual(d["metrics"][k], v, "%s %s" % (tree, k))
            self.assertFalse(d["throttle"]["active"], tree)
            self.assertEqual(d["metrics"]["throttle.active"], 0)
            # the text form says the same
            t = run(["snapshot", "--root", root])
            self.assertEqual(t.returncode, 0)
            self.assertIn("board:       " + model, t.stdout)
            self.assertIn("power mode:  " + mode, t.stdout)
            self.assertIn("throttled:   no", t.stdout)

    def test_missing_root_is_not_a_crash(self):
        with tempfile.TemporaryDirectory() as root:
            p = run(["snapshot", "--root", root, "--json"])
        self.assertEqual(p.returncode, 0, p.stderr)
        d = json.loads(p.stdout)
        self.assertFalse(d["board"]["is_jetson"])


if __name__ == "__main__":
    BIN, SRC = harness.init()
    harness.main()
