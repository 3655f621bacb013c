#!/usr/bin/env python3
"""The power-mode guard (issue 24 item 3): agent.expected_power_mode against
a copy of the Orin Nano (JetPack 6) fixture tree whose mode is wrong.

Usage: test_power_mode.py TEGRAWATCH SOURCE_ROOT
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
STATUS = "var/lib/nvpmodel/status"
GPU_DEVFREQ = "sys/devices/platform/17000000.gpu/devfreq/17000000.gpu"


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class PowerModeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.root = os.path.join(self.tmp, "root")
        shutil.copytree(os.path.join(SRC, "tests/fixtures/boards/orin-nano-jp6"), self.root, symlinks=True)
        write(os.path.join(self.root, STATUS), "pmode:0000\n")  # 15W, not MAXN_SUPER

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def config(self, expected, extra=""):
        path = os.path.join(self.tmp, "c.yaml")
        write(path, 'agent: {state_file: "", board_name: lab, expected_power_mode: "%s"}\n'
              "include: [%s/configs/rules.d/*.yaml]\nweb: {listen: \"\"}\n%s" % (expected, SRC, extra))
        return path

    def run_agent(self, expected, count=3):
        p = subprocess.run([BIN, "run", "-c", self.config(expected), "--root", self.root, "--no-tegrastats",
                            "--interval", "50", "--count", str(count), "--json"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [json.loads(l) for l in p.stdout.splitlines()], p.stderr

    def test_wrong_mode_alerts_on_the_first_sample_with_both_names(self):
        samples, err = self.run_agent("MAXN_SUPER")
        self.assertEqual(samples[0]["power_mode"], "15W")
        self.assertEqual(samples[0]["metrics"]["nvpmodel.unexpected"], 1)
        fired = [l for l in err.splitlines() if "alert firing power-mode-unexpected" in l]
        self.assertEqual(len(fired), 1, err)
        self.assertIn("lab runs power mode 15W, expected MAXN_SUPER (id 2)", fired[0])

    def test_expected_by_id_is_named(self):
        samples, err = self.run_agent("2")
        self.assertIn("runs power mode 15W, expected MAXN_SUPER (id 2)", err)

    def test_right_mode_is_quiet(self):
        write(os.path.join(self.root, STATUS), "pmode:0002\n")
        samples, err = self.run_agent("maxn_super")
        self.assertTrue(all(s["metrics"]["nvpmodel.unexpected"] == 0 for s in samples))
        self.assertNotIn("alert firing", err)

    def test_no_expectation_no_metric(self):
        samples, err = self.run_agent("")
        self.assertNotIn("nvpmodel.unexpected", samples[0]["metrics"])
        self.assertNotIn("jetson_clocks.active", samples[0]["metrics"])
        self.assertNotIn("alert firing", err)

    def test_jetson_clocks(self):
        write(os.path.join(self.root, STATUS), "pmode:0002\n")
        samples, _ = self.run_agent("MAXN_SUPER, jetson_clocks on", count=2)
        m = samples[-1]["metrics"]
        self.assertEqual((m["jetson_clocks.active"], m["jetson_clocks.unexpected"]), (0, 1))
        # what jetson_clocks does: every floor at its ceiling
        for cpu in range(6):
            d = os.path.join(self.root, "sys/devices/system/cpu/cpu%d/cpufreq" % cpu)
            if os.path.isdir(d):
                with open(os.path.join(d, "scaling_max_freq")) as f:
                    write(os.path.join(d, "scaling_min_freq"), f.read())
        with open(os.path.join(self.root, GPU_DEVFREQ, "max_freq")) as f:
            write(os.path.join(self.root, GPU_DEVFREQ, "min_freq"), f.read())
        samples, _ = self.run_agent("MAXN_SUPER, jetson_clocks on", count=2)
        m = samples[-1]["metrics"]
        self.assertEqual((m["jetson_clocks.active"], m["jetson_clocks.unexpected"]), (1, 0))

    def test_replay_timeline_starts_with_the_alert(self):
        """replay --dry-run over the demo log on the wrong-mode tree: the first event is at the first sample."""
        p = subprocess.run([BIN, "replay", os.path.join(SRC, "configs/demo/tegrastats.log"), "-c",
                            self.config("MAXN_SUPER"), "--root", self.root, "--dry-run", "--json"],
                           capture_output=True, text=True, timeout=120, env=dict(os.environ, TZ="UTC"))
        self.assertEqual(p.returncode, 0, p.stderr)
        events = [json.loads(l) for l in p.stdout.splitlines()]
        mine = [e for e in events if e["rule"] == "power-mode-unexpected"]
        self.assertEqual([e["transition"] for e in mine], ["firing"])
        self.assertEqual(mine[0]["at"], events[0]["at"])
        self.assertEqual(mine[0]["at"], "2025-03-14T10:00:00Z")
        self.assertIn("expected MAXN_SUPER (id 2)", mine[0]["summary"])

    def test_recording_of_a_wrong_mode_at_boot(self):
        """A board that came up in 15W (a recording from boot, tests/gen_recordings.py): the first event is the alert."""
        harness.recordings(self.tmp)
        p = subprocess.run([BIN, "replay", os.path.join(self.tmp, "wrong-mode-boot.jsonl"), "-c",
                            self.config("MAXN_SUPER"), "--dry-run", "--json"],
                           capture_output=True, text=True, timeout=120, env=dict(os.environ, TZ="UTC"))
        self.assertEqual(p.returncode, 0, p.stderr)
        events = [json.loads(l) for l in p.stdout.splitlines()]
        self.assertEqual([(e["rule"], e["transition"], e["at"]) for e in events],
                         [("power-mode-unexpected", "firing", "2025-06-02T10:00:00Z")])
        self.assertIn("runs power mode 15W, expected MAXN_SUPER", events[0]["summary"])

    def test_check_refuses_a_bad_expectation_with_its_place(self):
        path = self.config("MAXN_SUPER, jetson_clocks maybe")
        p = subprocess.run([BIN, "check", "-c", path], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 78)
        self.assertIn(path + ":1:", p.stderr)
        self.assertIn("agent.expected_power_mode: expected 'on' or 'off' after jetson_clocks, got 'maybe'", p.stderr)

    def misdetect(self):
        """The Orin Nano Super that the JetPack 7.2 installer flashed without its Super modes (issue 30: a Jetson
        environment report of 2026-09-04, code-index id 68618966171): model without "Super", modes 15W and 7W only,
        in 15W, GPU MaxFreq=624750000, CPU MaxFreq=1510400. The 15W limits are those ceilings; 7W's are the
        fixture's (invented); the R39.2.0 line is the same report's."""
        write(os.path.join(self.root, "sys/firmware/devicetree/base/model"),
              "NVIDIA Jetson Orin Nano Developer Kit\0")
        write(os.path.join(self.root, "etc/nv_tegra_release"),
              "# R39 (release), REVISION: 2.0, GCID: 45755727, BOARD: generic, EABI: aarch64, "
              "DATE: Mon Jun  1 09:28:48 PM UTC 2026\n")
        conf = os.path.join(self.root, "etc/nvpmodel.conf")
        with open(conf) as f:
            params = f.read().split("< POWER_MODEL")[0]
        os.unlink(conf)
        write(conf, params + "< POWER_MODEL ID=0 NAME=15W >\nCPU_A78_0 MAX_FREQ 1510400\nCPU_A78_1 MAX_FREQ 1510400\n"
              "GPU MAX_FREQ 624750000\n< POWER_MODEL ID=1 NAME=7W >\nCPU_ONLINE CORE_4 0\nCPU_ONLINE CORE_5 0\n"
              "CPU_A78_0 MAX_FREQ 960000\nGPU MAX_FREQ 408000000\n< PM_CONFIG DEFAULT=0 >\n")
        write(os.path.join(self.root, GPU_DEVFREQ, "max_freq"), "624750000\n")
        for policy in ("policy0", "policy4"):
            write(os.path.join(self.root, "sys/devices/system/cpu/cpufreq", policy, "scaling_max_freq"), "1510400\n")

    def test_orin_nano_flashed_without_super_modes(self):
        self.misdetect()
        samples, err = self.run_agent("MAXN_SUPER")
        self.assertIn("agent.expected_power_mode: the board's nvpmodel.conf has no power mode MAXN_SUPER (only 15W, "
                      "7W): this Orin Nano may have been flashed without its Super configuration (the JetPack 7.2 "
                      "installer does that, NVIDIA known issue 6279443: a firmware and bootloader update, or "
                      "JetPack 7.2.1's ISO, fixes it)", err)
        self.assertEqual(samples[0]["power_mode"], "15W")
        self.assertEqual(samples[0]["metrics"]["nvpmodel.unexpected"], 1)
        self.assertIn("lab runs power mode 15W, expected MAXN_SUPER", err)

    def test_status_against_the_clocks(self):
        """nvpmodel's status says MAXN_SUPER, the ceilings are the fixture's 15W ones (invented there): reported after
        two checks 5 s apart, said once, alerted (that nvpmodel fails so at boot is unconfirmed: issue 30)."""
        write(os.path.join(self.root, STATUS), "pmode:0002\n")
        write(os.path.join(self.root, GPU_DEVFREQ, "max_freq"), "612000000\n")
        for policy in ("policy0", "policy4"):
            write(os.path.join(self.root, "sys/devices/system/cpu/cpufreq", policy, "scaling_max_freq"), "1497600\n")
        # the agent on the driven clock: its 14 ticks of 500 ms pass 10 real ms each
        a = harness.Agent(self.tmp, ["-c", self.config(""), "--root", self.root, "--no-tegrastats", "--interval", "500",
                                     "--count", "14", "--json"], driven=True)
        self.addCleanup(a.kill)
        a.pace(10)
        self.assertEqual(a.wait(), 0, a.stderr())
        samples, err = a.samples(), a.stderr()
        self.assertEqual(len(samples), 14)
        self.assertNotIn("nvpmodel.mismatch", samples[0]["metrics"])
        self.assertEqual(samples[-1]["metrics"]["nvpmodel.mismatch"], 1)
        self.assertEqual(err.count("nvpmodel's status says MAXN_SUPER (id 2) but the clocks run under the ceilings "
                                   "of 15W (id 0): GPU 612 MHz (MAXN_SUPER: 1020), CPU 1497.6 MHz (MAXN_SUPER: "
                                   "1728)"), 1, err)
        fired = [l for l in err.splitlines() if "alert firing nvpmodel-mismatch" in l]
        self.assertEqual(len(fired), 1, err)
        self.assertIn("lab: nvpmodel says power mode MAXN_SUPER, but the clocks run other ceilings", fired[0])

    def test_unknown_mode_is_said_at_start_and_still_watched(self):
        samples, err = self.run_agent("MAXN")
        self.assertIn("nvpmodel.conf has no power mode MAXN", err)
        self.assertEqual(samples[0]["metrics"]["nvpmodel.unexpected"], 1)


if __name__ == "__main__":
    BIN, SRC = harness.init(needs=("driven",))
    harness.main()
