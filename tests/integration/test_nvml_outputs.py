#!/usr/bin/env python3
"""NVML GPUs (gpu.N.*) and the Thor facts in every output, through the real agent and the fake
libnvidia-ml.so.1 replaying the H200's recorded answers: MQTT (state, the retained limits, Home Assistant
discovery and its view) against a real mosquitto on a free 127.0.0.1 port, Prometheus /metrics (checked by
promtool when it is installed), and the report of a recording (`run --record`, then `report`).

Usage: test_nvml_outputs.py TEGRAWATCH SOURCE_ROOT FAKE_NVML_DIR (MQTT helpers from test_mqtt.py; exit 77 =
skipped without mosquitto).
"""
import json
import os
import shutil
import subprocess
import sys

import harness
from harness import free_port, mqtt_keys, src, wait_until

FAKE_DIR = None


def nvml_env():
    return {"LD_LIBRARY_PATH": FAKE_DIR, "FAKE_NVML_DATA": src("tests/fixtures/nvml/h200.fake")}


class OutputsTest(harness.TestCase):
    def test_mqtt_state_limits_and_home_assistant(self):
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/gpu/#", "homeassistant/#"])
        self.mqtt_agent("gpu", mqtt_keys(b.port, "gpu"), args=("--interval", "200", "--no-tegrastats"),
                        extra="sources:\n  nvml: on\n", env=nvml_env())
        self.assertTrue(wait_until(lambda: len(s.all("tegrawatch/gpu/state")) >= 3
                                   and s.all("tegrawatch/gpu/ha"), 20))
        state = s.json("tegrawatch/gpu/state")[-1]["metrics"]
        limits = s.json("tegrawatch/gpu/limits")[-1]["metrics"]
        # what changes in the state, the GPU's thresholds, maximum clocks, memory size and power limit in limits
        for k in ("gpu.0.temp_c", "gpu.0.load_pct", "gpu.0.power_mw", "gpu.0.sm.freq_mhz", "gpu.0.event.idle"):
            self.assertIn(k, state)
        for k, v in (("gpu.0.temp_slowdown_c", 89), ("gpu.0.temp_shutdown_c", 95), ("gpu.0.sm.max_freq_mhz", 1980),
                     ("gpu.0.mem.total_mb", 143771), ("gpu.0.power_limit_mw", 700000)):
            self.assertEqual(limits[k], v, k)
            self.assertNotIn(k, state)
        # Home Assistant: a sensor each for the GPU's load, temperature and power, read from the ha view
        for what, name in (("load_pct", "GPU 0 load"), ("temp_c", "GPU 0 temperature"), ("power_mw", "GPU 0 power")):
            topic = "homeassistant/sensor/gpu_gpu_0_%s/config" % what
            self.assertTrue(wait_until(lambda: s.payloads(topic), 10), topic)
            self.assertEqual(json.loads(s.payloads(topic)[-1])["name"], name)
        view = s.json("tegrawatch/gpu/ha")[-1]["metrics"]
        self.assertEqual(view["gpu.0.temp_c"], 33)
        self.assertEqual(view["gpu.0.power_mw"], 77530)  # shown in W with 2 decimals: tens of mW

    def test_prometheus(self):
        port = free_port()
        a = self.agent(["--interval", "200", "--no-tegrastats", "--no-json", "--root",
                        src("tests/fixtures/boards/agx-thor-jp7")],
                       config='agent: {state_file: ""}\nweb: {listen: "127.0.0.1:%d"}\nsources: {nvml: on}\n' % port,
                       env=nvml_env(), port=port)
        a.wait_web()
        text = ""

        def scraped():
            nonlocal text
            _, _, body = a.get("/metrics")
            text = body.decode() if isinstance(body, bytes) else body
            return "tegrawatch_nvml_gpu_temperature_celsius" in text
        self.assertTrue(wait_until(scraped, 15), text[-2000:])
        for line in ('tegrawatch_nvml_gpu_temperature_celsius{gpu="0"} 33',
                     'tegrawatch_nvml_gpu_power_watts{gpu="0"} 77.533',
                     'tegrawatch_nvml_gpu_sm_max_frequency_hertz{gpu="0"} 1980000000',
                     'tegrawatch_nvml_gpu_clocks_event{gpu="0",event="idle"} 1',
                     'tegrawatch_nvml_gpu_energy_joules_total{gpu="0"} 4447.54',
                     '# TYPE tegrawatch_nvml_gpu_energy_joules_total counter',
                     'tegrawatch_agent_nvml_stale 0',
                     # the Thor facts: the INA238 input, the GPU clock from gpu-gpc-0 in kHz
                     'tegrawatch_power_watts{rail="vin"} 38.24',
                     'tegrawatch_gpu_frequency_hertz 1049000000'):
            self.assertIn(line + "\n", text)
        if shutil.which("promtool"):
            r = subprocess.run(["promtool", "check", "metrics"], input=text, text=True, capture_output=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_report_of_a_recording(self):
        rec = os.path.join(self.d, "run.jsonl")
        cfg = self.path("rec.yaml", 'agent: {state_file: ""}\nweb: {listen: ""}\nsources: {nvml: on}\n')
        r = harness.tegrawatch(["run", "-c", cfg, "--interval", "100", "--count", "20", "--no-json", "--record",
                                rec, "--root", src("tests/fixtures/boards/agx-thor-jp7")], env=nvml_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        out = os.path.join(self.d, "report.json")
        r = harness.tegrawatch(["report", rec, "--json", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            rep = json.load(f)
        peak = rep["all"]["peaks"]["gpu0"] if "all" in rep else rep["peaks"]["gpu0"]
        self.assertEqual(peak["max_c"], 33)
        self.assertEqual(peak["trips"], {"slowdown": 89, "shutdown": 95})
        self.assertEqual(peak["margin_c"], 56)
        r = harness.tegrawatch(["report", rec])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("gpu.0.power_mw", r.stdout)
        self.assertIn("gpu.0.temp_c", r.stdout)
        text = json.dumps(rep)
        self.assertIn('"gpu0"', text)  # the GPU's energy next to the rails
        self.assertIn('"vin"', text)  # Thor's INA238 input


if __name__ == "__main__":
    FAKE_DIR = os.path.abspath(sys.argv.pop(3))
    harness.init(needs=("mosquitto",))
    harness.main()
