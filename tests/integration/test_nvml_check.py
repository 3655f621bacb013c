#!/usr/bin/env python3
"""scripts/nvml-check.py, the one-command check of the NVML source against a real GPU, proven here without one:
the agent loads the fake libnvidia-ml.so.1 answering the recorded H200 (h200.fake), and a fake nvidia-smi
(tests/nvml/fake_nvidia_smi.py) answers what nvidia-smi said on the same machine (h200-nvsmi.xml, h200-smi.csv).
Consistent answers must PASS every check; an nvidia-smi that disagrees must FAIL exactly the checks it contradicts.

Usage: test_nvml_check.py TEGRAWATCH SOURCE_ROOT FAKE_NVML_DIR
"""
import os
import re
import subprocess
import sys

import harness
from harness import src

FAKE_DIR = None
# every check the checker makes on one GPU: none may go missing unnoticed
CHECKS = ["nvidia-smi.query", "agent.samples", "agent.nvml_gpus", "agent.nvml_stale", "agent.nvml_errors_total",
          "agent.log", "agent.exit"] + ["gpu0." + c for c in (
              "name", "lost", "sm.max_freq_mhz", "mem.max_freq_mhz", "temp_slowdown_c", "temp_shutdown_c",
              "mem.total_mb", "power_limit_mw", "temp_c", "power_mw", "sm.freq_mhz", "mem.freq_mhz", "load_pct",
              "mem.load_pct", "mem.used_mb", "pstate", "fan_pct", "clocks_event_reasons", "event.*",
              "energy_joules_total", "energy_joules_total.rate")]


def fixture(name):
    return src("tests/fixtures/nvml", name)


def edited(d, name, *swaps):
    """A copy of fixture NAME in D with each (old, new) of SWAPS replaced wherever it is (and known to be there)."""
    with open(fixture(name)) as f:
        text = f.read()
    for old, new in swaps:
        assert old in text, (name, old)
        text = text.replace(old, new)
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


class NvmlCheckTest(harness.TestCase):
    def check(self, args, **env):
        """The checker on the fake NVML and the fake nvidia-smi: (exit status, {check: PASS/FAIL}, output)."""
        e = harness.clean_env({"LD_LIBRARY_PATH": FAKE_DIR, "NVML_CHECK_SMI": src("tests/nvml/fake_nvidia_smi.py")})
        e.update(env)
        out = os.path.join(self.d, "out")
        p = subprocess.run([sys.executable, src("scripts/nvml-check.py"), harness.base.BIN, "--out", out] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=e, timeout=90)
        text = p.stdout.decode()
        with open(os.path.join(out, "nvml-check.txt")) as f:
            self.assertEqual(f.read(), text)  # --out keeps what it printed
        results = dict((m.group(2), m.group(1)) for m in re.finditer(r"^(PASS|FAIL) (\S+):", text, re.M))
        return p.returncode, results, text

    def test_consistent_answers_pass(self):
        # the energy rises at the agent's second reading (10 s on) by what the recorded 77.5 W gives in 10 s
        data = edited(self.d, "h200.fake", ("energy_mj 0 0 4447540", "energy_mj 0 0 4447540 5222870"))
        # 26 samples at 500 ms: the run outlasts the agent's 10 s between energy readings
        rc, results, text = self.check(["--samples", "26", "--interval-ms", "500"], FAKE_NVML_DATA=data)
        self.assertEqual(rc, 0, text)
        self.assertEqual(sorted(results), sorted(CHECKS), text)
        self.assertEqual(set(results.values()), {"PASS"}, text)
        self.assertRegex(text, r"\nPASS: %d checks, 0 failed\n" % len(CHECKS))
        self.assertRegex(text, r"\ncost: [0-9.]+ ms CPU per sample .*RssAnon [0-9]+ KiB")

    def test_disagreement_fails(self):
        # nvidia-smi says another maximum SM clock and power limit, 50 C where the agent reads 33, and a fan
        xml = edited(self.d, "h200-nvsmi.xml", ("<sm_clock>1980 MHz</sm_clock>", "<sm_clock>1755 MHz</sm_clock>"),
                     ("<current_power_limit>700.00 W", "<current_power_limit>600.00 W"))
        csv = edited(self.d, "h200-smi.csv", ("\n0,34,", "\n0,50,"), (",[N/A],", ",30,"))
        # a short run: too short to see the energy rise, which is said as such
        rc, results, text = self.check(["--samples", "6", "--interval-ms", "250"], FAKE_SMI_XML=xml, FAKE_SMI_CSV=csv,
                                       FAKE_NVML_DATA=fixture("h200.fake"))
        self.assertEqual(rc, 1, text)
        self.assertEqual(sorted(results), sorted(CHECKS), text)
        failed = sorted(k for k, v in results.items() if v == "FAIL")
        self.assertEqual(failed, ["gpu0.energy_joules_total", "gpu0.energy_joules_total.rate", "gpu0.fan_pct",
                                  "gpu0.power_limit_mw", "gpu0.sm.max_freq_mhz", "gpu0.temp_c"], text)
        self.assertIn("FAIL gpu0.sm.max_freq_mhz: agent 1980, nvidia-smi 1755", text)
        self.assertIn("FAIL gpu0.power_limit_mw: agent 700000, nvidia-smi 600000", text)
        self.assertIn("FAIL gpu0.temp_c: agent 33, nvidia-smi 50", text)
        self.assertIn("0 rise(s)", text)
        self.assertRegex(text, r"\nFAIL: %d checks, 6 failed \(" % len(CHECKS))


if __name__ == "__main__":
    FAKE_DIR = os.path.abspath(sys.argv.pop(3))
    harness.init()
    harness.main()
