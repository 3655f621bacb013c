#!/usr/bin/env python3
"""The NVML source end to end, without a GPU: the real agent loads the fake
libnvidia-ml.so.1 (tests/nvml/fake_nvml.c) through its own dlopen(), found
first in LD_LIBRARY_PATH, answering a data file: the recorded answers of a
real H200 (tests/fixtures/nvml/h200.fake, checked against the probe it comes
from), of Thor (thor.fake) and of an Orin on JetPack 7.2 (orin-jp72.fake). Also: no library, an init failure, a GPU
that is lost, a call that hangs (the samples stay on time), NVML kept out
of a board that does not need it, and `run` on this host, which is not a
Jetson.

Usage: test_nvml.py TEGRAWATCH SOURCE_ROOT FAKE_NVML_DIR
"""
import json
import os
import random
import shutil
import sys
import time

import harness
from harness import src

FAKE_DIR = None


def fixture(name):
    return src("tests/fixtures", name)


def gpu(s, n=0):
    prefix = "gpu.%d." % n
    return {k[len(prefix):]: v for k, v in s["metrics"].items() if k.startswith(prefix)}


def load_fake(path):
    """A .fake data file as {field: (rc, [values])}."""
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 4 and p[1] == "0" and p[0] not in ("gpu", "cost", "hang", "lost"):
                out[p[0]] = (int(p[2]), [int(v) for v in p[3:]])
    return out


class Base(harness.TestCase):
    def start(self, data, config="sources: {nvml: on}\n", args=("--interval", "200"), fake=True, env=None):
        """The agent with CONFIG, the fake NVML answering DATA (found first in LD_LIBRARY_PATH; FAKE false: a
        directory without the library)."""
        self.counts = self.path("counts")
        e = {"FAKE_NVML_COUNTS": self.counts, "LD_LIBRARY_PATH": FAKE_DIR if fake else self.d}
        if data:
            e["FAKE_NVML_DATA"] = data
        e.update(env or {})
        cfg = 'agent: {log_level: info, state_file: ""}\nweb: {listen: ""}\n' + config
        return self.agent(["--no-tegrastats", "--json"] + list(args), config=cfg, env=e)

    def calls(self):
        """Calls per field of GPU 0, written by the fake at nvmlShutdown."""
        out = {}
        with open(self.counts) as f:
            for line in f:
                g, field, n = line.split()
                if g == "0":
                    out[field] = int(n)
        return out


class H200Test(Base):
    """The recorded answers of a real H200, replayed."""

    def test_fake_file_is_the_probe(self):
        with open(fixture("nvml/h200-probe.jsonl")) as f:
            probe = json.loads(f.readline())
        fields = probe["devices"][0]["fields"]
        fake = load_fake(fixture("nvml/h200.fake"))
        for name, rec in fields.items():
            self.assertEqual(fake[name], (rec["rc"], [rec["value"]]), name)
        # its processes: none, as nvidia-smi -q -x of the same machine says (an empty <processes>)
        with open(fixture("nvml/h200-nvsmi.xml")) as f:
            self.assertRegex(f.read(), r"<processes>\s*</processes>")
        with open(fixture("nvml/h200.fake")) as f:
            procs = [line.split() for line in f if line.startswith("procs_")]
        self.assertEqual(procs, [["procs_compute", "0", "0"], ["procs_graphics", "0", "0"]])

    def test_gpu_metrics(self):
        with open(fixture("nvml/h200-probe.jsonl")) as f:
            probe = json.loads(f.readline())["devices"][0]["fields"]
        a = self.start(fixture("nvml/h200.fake"), args=("--interval", "100"))
        first = a.next_sample(lambda s: True, what="the first sample")
        # the first sample waits for the first poll (bounded): it has the GPU
        self.assertEqual(first["metrics"]["agent.nvml_gpus"], 1, a.stderr())
        g = gpu(first)
        v = lambda k: probe[k]["value"]
        self.assertEqual(g["lost"], 0)
        self.assertEqual(g["temp_c"], v("temp_gpu_c"))
        self.assertEqual(g["temp_slowdown_c"], v("temp_slowdown_c"))
        self.assertEqual(g["temp_shutdown_c"], v("temp_shutdown_c"))
        self.assertEqual(g["load_pct"], v("util_gpu_pct"))
        self.assertEqual(g["mem.load_pct"], v("util_mem_pct"))
        self.assertEqual(g["sm.freq_mhz"], v("clock_sm_mhz"))
        self.assertEqual(g["sm.max_freq_mhz"], v("clock_max_sm_mhz"))
        self.assertEqual(g["mem.freq_mhz"], v("clock_mem_mhz"))
        self.assertEqual(g["mem.max_freq_mhz"], 3201)
        self.assertEqual(g["power_mw"], v("power_mw"))
        self.assertEqual(g["power_limit_mw"], v("power_limit_mw"))
        self.assertAlmostEqual(g["energy_joules_total"], v("energy_mj") / 1000.0)
        self.assertEqual(g["pstate"], v("pstate"))
        self.assertAlmostEqual(g["mem.used_mb"], v("mem_used_b") / 1048576.0)
        self.assertEqual(g["mem.total_mb"], 143771)
        self.assertEqual(g["clocks_event_reasons"], 1)
        # 0x1 is GPU idle: context, not throttling; the supported mask 0x1ff gives every event metric
        self.assertEqual(g["event.idle"], 1)
        for e in ("thermal", "power_cap", "power_brake", "hw_slowdown", "applications"):
            self.assertEqual(g["event." + e], 0, e)
        self.assertNotIn("fan_pct", g)  # NOT_SUPPORTED (rc 3) on the H200
        self.assertFalse(first["throttle"]["active"])
        self.assertIn("gpu0 idle (NVML)", first["throttle"]["context"])
        for _ in range(10):
            a.next_sample()
        self.assertEqual(a.stop(), 0)
        c = self.calls()
        polls = c["util_gpu_pct"]
        self.assertGreaterEqual(polls, 10)
        # static fields once, a NOT_SUPPORTED field never again, the energy not every sample (every 10 s)
        for static in ("temp_slowdown_c", "temp_shutdown_c", "clock_max_sm_mhz", "clock_max_mem_mhz",
                       "supported_event_reasons"):
            self.assertEqual(c[static], 1, static)
        self.assertEqual(c["fan_pct"], 1)
        self.assertLessEqual(c["energy_mj"], 2)
        self.assertGreaterEqual(c["temp_gpu_c"], polls - 1)
        self.assertEqual(c["clocks_event_reasons"], c["temp_gpu_c"])

    def test_event_reasons_become_throttle_reasons(self):
        data = os.path.join(self.d, "hot.fake")
        with open(fixture("nvml/h200.fake")) as f:
            text = f.read()
        # SW thermal slowdown 0x20 + SW power cap 0x4 + HW power brake 0x80, at 88 C and 699 W
        text = text.replace("clocks_event_reasons 0 0 1", "clocks_event_reasons 0 0 %d" % (0x20 | 0x4 | 0x80))
        text = text.replace("temp_gpu_c 0 0 33", "temp_gpu_c 0 0 88")
        text = text.replace("power_mw 0 0 77533", "power_mw 0 0 699000")
        with open(data, "w") as f:
            f.write(text)
        a = self.start(data)
        s = a.next_sample(lambda s: s["throttle"]["active"], what="a throttled sample")
        r = s["throttle"]["reasons"]
        self.assertEqual(sorted(r), ["freq_cap", "overcurrent", "thermal"])
        self.assertEqual(r["thermal"], "gpu0 in thermal slowdown (NVML) at 88 C")
        self.assertEqual(r["freq_cap"], "gpu0 held at its power limit (NVML: software power cap), 699 of 700 W")
        self.assertIn("gpu0 slowed down by the power brake", r["overcurrent"])
        self.assertEqual(gpu(s)["clocks_event_reasons"], 0xa4)  # the raw mask is kept
        kinds = {(c["reason"], c["kind"], c["source"]) for c in s["throttle"]["causes"]}
        self.assertIn(("thermal", "gpu_event", "gpu0"), kinds)
        self.assertNotIn("gpu0 idle", s["throttle"]["context"])
        self.assertEqual(a.stop(), 0)


class ThorTest(Base):
    """Thor's answers on the Thor fixture: auto loads NVML there (a PCI GPU, no sysfs load)."""

    def test_thor(self):
        a = self.start(fixture("nvml/thor.fake"), config="",
                       args=("--interval", "100", "--root", fixture("boards/agx-thor-jp7")))
        loads = []
        while 96 not in loads:
            s = a.next_sample()
            loads.append(gpu(s).get("load_pct"))
            g = gpu(s)
            self.assertEqual(g["temp_c"], 41)
            self.assertEqual(g["power_mw"], 6600)
            # memory utilization is Thor's placeholder (always 0): absent, as are the unsupported fields
            for absent in ("mem.load_pct", "mem.used_mb", "sm.freq_mhz", "temp_slowdown_c", "fan_pct"):
                self.assertNotIn(absent, g)
            # the board's own GPU clock (devfreq, kHz) next to it, and no sysfs load
            self.assertEqual(s["metrics"]["gpu.freq_mhz"], 1049)
            self.assertNotIn("gpu.load_pct", s["metrics"])
        # the answers in turn (0 idle, then under CUDA); samples and polls are not in step, so a value may
        # show twice or be skipped, never come out of order
        seen = [v for i, v in enumerate(loads) if i == 0 or v != loads[i - 1]]
        it = iter([0, 85, 97, 98, 96])
        self.assertTrue(all(v in it for v in seen), loads)
        self.assertEqual(seen[0], 0)
        self.assertEqual(a.stop(), 0)
        c = self.calls()
        for dropped in ("clock_sm_mhz", "mem_used_b", "temp_slowdown_c", "fan_pct", "pstate", "energy_mj"):
            self.assertEqual(c[dropped], 1, dropped)
        self.assertIn("GPU clock from devfreq gpu-gpc-0", a.stderr())

    def test_kept_out_where_it_adds_nothing(self):
        """An Orin (GPU load in sysfs, no NVIDIA PCI device): auto never maps the library."""
        a = self.start(fixture("nvml/h200.fake"), config="",
                       args=("--interval", "100", "--root", fixture("boards/orin-nano-jp6")))
        s = a.next_sample(lambda s: s["seq"] >= 3, what="three samples")
        self.assertNotIn("agent.nvml_gpus", s["metrics"])
        self.assertFalse(harness.mapped(a.pid, ("libnvidia-ml",)))
        self.assertEqual(a.stop(), 0)

    def test_off(self):
        a = self.start(fixture("nvml/thor.fake"), config="sources: {nvml: off}\n",
                       args=("--interval", "100", "--root", fixture("boards/agx-thor-jp7")))
        s = a.next_sample(lambda s: s["seq"] >= 2, what="two samples")
        self.assertFalse([k for k in s["metrics"] if k.startswith("gpu.0.") or "nvml" in k])
        self.assertFalse(harness.mapped(a.pid, ("libnvidia-ml",)))
        self.assertEqual(a.stop(), 0)


class OrinJetPack72Test(Base):
    """An Orin on JetPack 7.2 (issue 30): nvgpu's NVML answers NOT_SUPPORTED for nearly everything
    (tests/fixtures/nvml/orin-jp72.fake says where from)."""

    def test_not_supported_adds_nothing(self):
        """sources.nvml on: the GPU is counted, and no gpu.0.* value is made up for what NVML did not answer."""
        a = self.start(fixture("nvml/orin-jp72.fake"),
                       args=("--interval", "100", "--root", fixture("boards/orin-nano-jp6")))
        for _ in range(3):
            s = a.next_sample(lambda s: s["metrics"].get("agent.nvml_gpus") == 1, what="the GPU counted")
            # only the source's own state (not lost), no value of 0 in place of an answer
            self.assertEqual(gpu(s), {"lost": 0})
            # the board's own GPU metrics (devfreq, load file) are still there
            self.assertEqual(s["metrics"]["gpu.freq_mhz"], 306)
        self.assertEqual(a.stop(), 0)
        c = self.calls()
        for field in ("util_gpu_pct", "temp_gpu_c", "power_mw", "clock_sm_mhz", "clock_mem_mhz", "mem_used_b"):
            self.assertEqual(c[field], 1, field)  # NOT_SUPPORTED once: never asked again
        self.assertIn("nvml: GPU 0 (Orin (nvgpu)): nvmlDeviceGetUtilizationRates is not supported", a.stderr())

    def test_auto_stays_off_while_the_devfreq_node_is_missing(self):
        """jetson_stats PR #889: a monitor started before the GPU's devfreq node exists latched onto NVML. Here auto
        needs an NVIDIA PCI device or a devfreq GPU without a load file: a missing node is neither."""
        root = harness.copy_board(self.d)
        os.unlink(os.path.join(root, "sys/class/devfreq/17000000.gpu"))
        shutil.rmtree(os.path.join(root, "sys/devices/platform/17000000.gpu/devfreq"))
        a = self.start(fixture("nvml/orin-jp72.fake"), config="", args=("--interval", "100", "--root", root))
        s = a.next_sample(lambda s: s["seq"] >= 2, what="two samples")
        self.assertFalse([k for k in s["metrics"] if k.startswith("gpu.") or "nvml" in k])
        self.assertFalse(harness.mapped(a.pid, ("libnvidia-ml",)))
        self.assertEqual(a.stop(), 0)


class FailureTest(Base):
    def test_no_library(self):
        a = self.start(fixture("nvml/h200.fake"), fake=False)
        s = a.next_sample(lambda s: s["seq"] >= 2, what="two samples")
        self.assertFalse([k for k in s["metrics"] if k.startswith("gpu.") or "nvml" in k])
        self.assertEqual(a.stop(), 0)
        self.assertIn("sources.nvml is on, but NVML cannot be loaded (libnvidia-ml.so.1", a.stderr())

    def test_init_failure(self):
        data = os.path.join(self.d, "noinit.fake")
        with open(data, "w") as f:
            f.write("init 9\ngpu 0 NVIDIA H200\ntemp_gpu_c 0 0 40\n")
        a = self.start(data)
        s = a.next_sample(lambda s: s["seq"] >= 3, what="three samples")
        self.assertEqual(s["metrics"]["agent.nvml_gpus"], 0)
        self.assertFalse([k for k in s["metrics"] if k.startswith("gpu.0.")])
        self.assertEqual(a.stop(), 0)
        self.assertIn("cannot start NVML (nvmlInit_v2: Driver Not Loaded (9))", a.stderr())

    def test_gpu_lost(self):
        data = os.path.join(self.d, "lost.fake")
        shutil.copy(fixture("nvml/h200.fake"), data)
        with open(data, "a") as f:
            f.write("lost 0 3\n")
        a = self.start(data, args=("--interval", "100"))
        s = a.next_sample(lambda s: gpu(s).get("lost") == 1, what="the GPU lost")
        self.assertEqual(gpu(s), {"lost": 1})
        s = a.next_sample(lambda s: True, what="the next sample")
        self.assertEqual(gpu(s), {"lost": 1})
        self.assertEqual(a.stop(), 0)
        err = a.stderr()
        self.assertEqual(err.count("fell off the bus"), 1, err)  # said once
        self.assertIn("GPU 0 (NVIDIA H200) is lost (nvmlDeviceGetUtilizationRates: GPU is lost)", err)

    def hang(self, release):
        data = os.path.join(self.d, "hang.fake")
        shutil.copy(fixture("nvml/h200.fake"), data)
        with open(data, "a") as f:
            f.write("hang 0 temp_gpu_c 5\n")
        return self.start(data, args=("--interval", "100"), env={"FAKE_NVML_RELEASE": release})

    def test_hung_call_keeps_sampling_on_time(self):
        release = os.path.join(self.d, "release")
        open(release, "w").close()
        a = self.hang(release)
        # the GPU while NVML answers, then its metrics go (stale) while the call hangs
        a.next_sample(lambda s: "temp_c" in gpu(s), what="GPU metrics")
        stale = a.next_sample(lambda s: s["metrics"].get("agent.nvml_stale") == 1, what="NVML stale")
        self.assertFalse(gpu(stale))
        # meanwhile every sample comes on time: 100 ms apart (by their own stamps), none late, while NVML hangs
        seen = [a.next_sample() for _ in range(10)]
        gaps = [b["time_ms"] - a_["time_ms"] for a_, b in zip(seen, seen[1:])]
        self.assertLess(max(gaps), 350, gaps)
        self.assertEqual(seen[-1]["seq"] - seen[0]["seq"], 9)
        self.assertEqual(seen[-1]["metrics"]["agent.late_ticks_total"], seen[0]["metrics"]["agent.late_ticks_total"])
        self.assertTrue(all(s["metrics"]["agent.nvml_stale"] == 1 for s in seen))
        # the driver answers again: so does the GPU
        os.unlink(release)
        s = a.next_sample(lambda s: "temp_c" in gpu(s) and s["metrics"]["agent.nvml_stale"] == 0, what="GPU metrics back")
        self.assertEqual(a.stop(), 0)
        err = a.stderr()
        self.assertIn("nvml: no answer for", err)
        self.assertIn("GPU 0, nvmlDeviceGetTemperature", err)
        self.assertIn("nvml: NVML answers again", err)

    def test_hung_call_does_not_hang_the_exit(self):
        release = os.path.join(self.d, "release")
        open(release, "w").close()
        a = self.hang(release)
        a.next_sample(lambda s: s["metrics"].get("agent.nvml_stale") == 1, what="NVML stale")
        t0 = time.monotonic()
        self.assertEqual(a.stop(timeout=10), 0)
        self.assertLess(time.monotonic() - t0, 5)
        self.assertIn("an NVML call has not returned in 1000 ms: left running at exit", a.stderr())


class ProcessesTest(Base):
    """process.NAME.gpu_memory_mb from NVML's running processes, for programs the test starts on this host (no
    nvmap here: NVML's answer is the only one)."""

    def setUp(self):
        super().setUp()
        self.tag = "%04d" % random.randrange(10000)  # names no other process on the machine has

    def start_program(self, name):
        """A sleep whose comm is NAME + the tag (the file's name), running until the test ends."""
        path = os.path.join(self.d, name + self.tag)
        shutil.copy("/bin/sleep", path)
        return self.spawn([path, "600"])

    def watch(self, data, names):
        entries = "".join("  - {name: %s, comm: %s%s}\n" % (n, n, self.tag) for n in names)
        return self.start(data, config="sources: {nvml: on, processes_interval: 1s}\nprocesses:\n" + entries,
                          args=("--interval", "100"))

    def test_recorded_h200_has_none(self):
        """The H200's recorded answer, no process on the GPU: a watched program holds 0 MiB there (told, not absent)."""
        self.start_program("twgpu")
        a = self.watch(fixture("nvml/h200.fake"), ["twgpu"])
        s = a.next_sample(lambda s: "process.twgpu.gpu_memory_mb" in s["metrics"], what="GPU memory told")
        self.assertEqual(s["metrics"]["process.twgpu.gpu_memory_mb"], 0)
        self.assertEqual(s["metrics"]["process.twgpu.up"], 1)
        self.assertEqual(a.stop(), 0)

    def test_listed_processes(self):
        """A SYNTHETIC answer (no recorded one lists a process): NVML's two lists in their API's shape, naming the
        programs the test started. One in both lists counts once; NVML_VALUE_NOT_AVAILABLE makes it absent."""
        app, helper, unknown = (self.start_program(n) for n in ("twapp", "twhelp", "twunk"))
        data = os.path.join(self.d, "procs.fake")
        with open(fixture("nvml/h200.fake")) as f:
            recorded = [line for line in f if not line.startswith("procs_")]
        with open(data, "w") as f:
            f.writelines(recorded)
            f.write("# synthetic, this test's pids: PID BYTES pairs\n")
            f.write("procs_compute 0 0 %d 524288000 %d 1048576 %d 18446744073709551615\n"
                    % (app.pid, helper.pid, unknown.pid))
            f.write("procs_graphics 0 0 %d 524288000\n" % app.pid)
        a = self.watch(data, ["twapp", "twhelp", "twunk"])
        s = a.next_sample(lambda s: "process.twapp.gpu_memory_mb" in s["metrics"], what="GPU memory told")
        m = s["metrics"]
        self.assertEqual(m["process.twapp.gpu_memory_mb"], 500)  # compute and graphics: the same memory, once
        self.assertEqual(m["process.twhelp.gpu_memory_mb"], 1)
        self.assertEqual(m["process.twunk.up"], 1)
        self.assertNotIn("process.twunk.gpu_memory_mb", m)  # listed, its memory unknown: absent, never 0
        self.assertEqual(a.stop(), 0)

    def test_not_supported_is_absent(self):
        """Thor's fake answers NOT_SUPPORTED for the process lists (no capture says more): absent, asked once."""
        self.start_program("twgpu")
        a = self.watch(fixture("nvml/thor.fake"), ["twgpu"])
        for _ in range(3):
            s = a.next_sample(lambda s: s["metrics"].get("process.twgpu.up") == 1, what="the program up")
            self.assertNotIn("process.twgpu.gpu_memory_mb", s["metrics"])
        self.assertEqual(a.stop(), 0)
        c = self.calls()
        self.assertEqual((c["procs_compute"], c["procs_graphics"]), (1, 1))
        self.assertIn("nvmlDeviceGetComputeRunningProcesses_v3 is not supported", a.stderr())


class AnyLinuxTest(Base):
    def test_run_on_this_host(self):
        """This host is no Jetson: run reads what it has, says so once, and keeps running."""
        if os.path.exists("/etc/nv_tegra_release"):
            self.skipTest("this host is a Jetson")
        a = self.start(None, config="sources: {nvml: auto}\n", fake=False, args=("--interval", "100", "--count", "3"))
        samples = [a.next_sample() for _ in range(3)]
        self.assertEqual(a.wait(10), 0)
        m = samples[-1]["metrics"]
        self.assertIn("ram.total_mb", m)
        self.assertIn("cpu.0.online", m)
        self.assertIn("cpu.load_pct", m)
        self.assertEqual(a.stderr().count("not a Jetson"), 1, a.stderr())


if __name__ == "__main__":
    FAKE_DIR = os.path.abspath(sys.argv.pop(3))
    harness.init()
    harness.main()
