#!/usr/bin/env python3
"""The wall clock steps while the agent runs (issue 21): an hour forward (NTP at boot on a board without an RTC
battery) and an hour back. libfaketime moves CLOCK_REALTIME only (FAKETIME_DONT_FAKE_MONOTONIC=1), read from a
file at every call (FAKETIME_TIMESTAMP_FILE, FAKETIME_NO_CACHE=1), so a test steps it mid-run. Durations (rules,
actions, webhook repeats, the MQTT view's pace, the history's windows, the report's episodes) must not follow it;
the step must be logged once, counted (agent.clock_steps_total) and marked on its sample (clock_step_ms).

Usage: test_clock_steps.py TEGRAWATCH SOURCE_ROOT
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

import harness
from harness import free_port, mqtt_keys, mqtt_section, read_jsonl, wait_until, write_file

CPU_TEMP = "sys/devices/virtual/thermal/thermal_zone0/temp"  # cpu-thermal, throttle trip 99 C
HOUR = 3600
FAKETIME = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1") + glob.glob("/usr/lib/faketime/libfaketime.so.1"))


def faketime_for(binary):
    """The libfaketime of BINARY's architecture: the arm64 run (scripts/test-arm64.sh) preloads libfaketime:arm64
    into the aarch64 agent under qemu-user; an x86_64 one would be refused there (wrong ELF class)."""
    with open(binary, "rb") as f:
        machine = int.from_bytes(f.read(20)[18:20], "little")
    triplet = {0x3E: "x86_64-linux-gnu", 0xB7: "aarch64-linux-gnu"}.get(machine, "")
    return [p for p in FAKETIME if "/%s/" % triplet in p] or [p for p in FAKETIME if "-linux-gnu/" not in p]

RECORDER = """#!/bin/sh
# exec action stand-in: one file per call with the alert's transition
echo "$TEGRAWATCH_RULE $TEGRAWATCH_TRANSITION" > "$1/$(date +%s%N)-$$.ev"
"""


class ClockAgent(harness.Agent):
    """`tegrawatch run` on a fixture board under libfaketime; step() moves its wall clock. With RECORD, its
    samples are those of `--record`."""

    def __init__(self, d, name, cfg, root=None, interval_ms=50, args=(), record=None):
        self.record = record
        self.clock = os.path.join(d, name + ".faketime")
        self.offset = 0
        write_file(self.clock, "+0\n", 0o644)
        web = "" if "web:" in cfg else 'web: {listen: ""}\n'  # no server unless asked: port 9474 may be taken
        env = dict(LD_PRELOAD=FAKETIME[0], FAKETIME_TIMESTAMP_FILE=self.clock, FAKETIME_NO_CACHE="1",
                   FAKETIME_DONT_FAKE_MONOTONIC="1",
                   # libfaketime 0.9.10 ends a wait on a CLOCK_MONOTONIC condition at once (fixed upstream
                   # later): the web server's notifier would spin; this makes such a wait last 1 s, its own
                   FAKETIME_WAIT_MS="1000",
                   ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
        argv = ["-v", "--root", root or harness.src(harness.FIXTURE_BOARD), "--interval", str(interval_ms),
                "--no-tegrastats"] + list(args)
        if record:
            argv += ["--record", record, "--no-json"]
        super().__init__(d, argv, name=name, config='agent:\n  state_file: ""\n' + web + cfg, env=env)
        self.interval_ms = interval_ms

    def samples(self):
        if self.record:
            return [x for x in read_jsonl(self.record) if "metrics" in x] if os.path.exists(self.record) else []
        return super().samples()

    def step(self, seconds, after=3):
        """Moves the agent's wall clock by SECONDS once the agent has taken AFTER samples."""
        assert wait_until(lambda: len(self.samples()) >= after, 30), self.stderr()
        self.offset += seconds
        write_file(self.clock, "%+d\n" % self.offset, 0o644)
        self.stepped_at = len(self.samples())

    def after_step(self, seconds=1.0):
        """Waits for SECONDS of samples surely taken after the last step; returns them. A second is enough to see
        a duration follow the step: each is looked at every sample, and an hour is past any of theirs."""
        first = self.stepped_at + 1  # the sample being taken as the clock moved may be on either side
        n = int(seconds * 1000 / self.interval_ms)
        assert wait_until(lambda: len(self.samples()) >= first + n, 60), self.stderr()
        return self.samples()[first:]


class ClockStepTest(harness.TestCase):
    def clock_agent(self, cfg, name="a", **kw):
        a = ClockAgent(self.d, name, cfg, **kw)
        self.addCleanup(a.kill)
        return a

    def set_cpu_c(self, root, c):
        write_file(os.path.join(root, CPU_TEMP), "%d\n" % (c * 1000), 0o644)

    def check_marked(self, a, steps_s):
        """Each step is marked on one sample, counted and logged once."""
        s = a.samples()
        marks = [x["clock_step_ms"] for x in s if "clock_step_ms" in x]
        self.assertEqual(len(marks), len(steps_s), marks)
        for got, want in zip(marks, steps_s):
            self.assertLess(abs(got - want * 1000), 2000, marks)
        self.assertEqual(s[-1]["metrics"]["agent.clock_steps_total"], len(steps_s))
        self.assertEqual(a.stderr().count("the wall clock stepped"), len(steps_s), a.stderr())

    def test_rules_and_actions(self):
        """for, absent_for and repeat of 30 minutes do not fire on an hour's step forward; an exec action runs only
        for what really fired; a `for: 2s` rule still fires 2 s after it began across a step back (the two agents
        side by side)."""
        rec = os.path.join(self.d, "recorder")
        write_file(rec, RECORDER, 0o755)
        events = {}
        for name in ("a", "b"):
            events[name] = os.path.join(self.d, "events-" + name)
            os.mkdir(events[name])
        a = self.clock_agent("""rules:
  - {name: slow, metric: agent.samples_total, warning: 0, for: 30m}
  - {name: gone, metric: temp.nosuch_c, warning: 200, absent_for: 30m}
  - {name: again, metric: agent.samples_total, critical: 0, repeat: 30m}
actions:
  record: {type: exec, command: [%s, %s], timeout: 5s}
notify: {warning: [log, record], critical: [log, record]}
""" % (rec, events["a"]))
        # back an hour while a 2 s `for` is pending: it fires 2 s after it began, not an hour later
        b = self.clock_agent(name="b", cfg="""rules:
  - {name: soon, metric: agent.samples_total, warning: 5, for: 2s}
actions:
  record: {type: exec, command: [%s, %s], timeout: 5s}
notify: {warning: [record]}
""" % (rec, events["b"]))

        def seen(name):
            out = []
            for p in sorted(glob.glob(os.path.join(events[name], "*.ev"))):
                with open(p) as f:
                    out.append(f.read().strip())
            return out
        b.step(-HOUR, after=8)  # the streak began at sample 6
        self.assertTrue(wait_until(lambda: seen("a") == ["again firing"], 30), (seen("a"), a.stderr()))
        a.step(HOUR)
        after = a.after_step()
        self.assertTrue(all(x["metrics"]["agent.alerts_fired_total"] == 1 for x in after),
                        [x["metrics"]["agent.alerts_fired_total"] for x in after])
        self.assertEqual(seen("a"), ["again firing"], a.stderr())
        self.assertEqual(a.stop(), 0)
        self.check_marked(a, [HOUR])

        b.after_step(0)
        self.assertTrue(wait_until(lambda: seen("b") == ["soon firing"], 15), (seen("b"), b.stderr()))
        fired = [x for x in b.samples() if x["metrics"]["agent.alerts_fired_total"] == 1][0]
        # the streak begins at sample 6 (samples_total above 5); 2 s later it fires, 2 s of slack for the machine
        self.assertLess(fired["seq"], 6 + (2000 + 2000) // b.interval_ms, fired["seq"])
        self.assertEqual(b.stop(), 0)
        self.check_marked(b, [-HOUR])

    def test_webhook(self):
        """A firing alert with `repeat: 30m` is not repeated by an hour's step; its resolve says how long it really
        lasted (ends_at - starts_at), the hour left out."""
        hook = self.receiver()
        root = harness.copy_board(self.d)
        self.set_cpu_c(root, 70)
        started = time.monotonic()
        a = self.clock_agent("""rules:
  - {name: cpu-hot, metric: temp.cpu_c, warning: 60, repeat: 30m}
actions:
  hook: {type: webhook, format: json, url: "%s"}
notify: {warning: [hook]}
""" % hook.url("/"), root=root)

        def transitions():
            return [e["transition"] for e in hook.bodies()]
        self.assertTrue(wait_until(lambda: transitions() == ["firing"], 30), (transitions(), a.stderr()))
        seen_firing = time.monotonic()
        a.step(HOUR)
        a.after_step()
        self.assertEqual(transitions(), ["firing"])
        cooled = time.monotonic()
        self.set_cpu_c(root, 45)
        self.assertTrue(wait_until(lambda: transitions() == ["firing", "resolved"], 30), transitions())
        lasted = time.monotonic() - started
        got = hook.bodies()
        resolved = got[1]
        length_s = (resolved["ends_at_ms"] - resolved["starts_at_ms"]) / 1000.0
        # it fired before the test saw it and resolved after the test cooled the board: at least that long,
        # seconds, not the hour of the step
        self.assertGreater(length_s, cooled - seen_firing, resolved)
        self.assertLess(length_s, lasted, resolved)
        # the resolve is stamped on the new clock
        self.assertGreater(resolved["ends_at_ms"], got[0]["at_ms"] + (HOUR - 60) * 1000, resolved)
        self.assertEqual(a.stop(), 0)
        self.check_marked(a, [HOUR])

    def test_mqtt(self):
        """The Home Assistant view goes out at its own pace (every 30 s unchanged): neither an hour's step forward
        nor back brings it early; each step is marked on the state message of its sample."""
        b = self.broker()
        sub = self.sub(b.port, ["tegrawatch/ck/ha", "tegrawatch/ck/state"])
        a = self.clock_agent(mqtt_section(mqtt_keys(b.port, "ck", ha_interval="20s")))
        self.assertTrue(wait_until(lambda: sub.all("tegrawatch/ck/ha"), 30), a.stderr())
        a.step(HOUR)
        a.after_step()
        a.step(-HOUR)
        a.after_step()
        self.assertEqual(len(sub.all("tegrawatch/ck/ha")), 1, a.stderr())
        self.assertTrue(wait_until(lambda: len(sub.all("tegrawatch/ck/state")) >= len(a.samples()) - 2, 10))
        marks = [m["clock_step_ms"] for m in sub.json("tegrawatch/ck/state") if "clock_step_ms" in m]
        self.assertEqual(len(marks), 2, marks)
        self.assertTrue(marks[0] > 0 > marks[1], marks)
        self.assertEqual(a.stop(), 0)
        self.check_marked(a, [HOUR, -HOUR])

    def history(self, port, seconds):
        url = "http://127.0.0.1:%d/api/v1/history?metric=agent.samples_total&seconds=%d" % (port, seconds)
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)["points"]

    def test_history(self):
        """After a step either way the history stays in order, a second apart, and `seconds=N` is the last N
        seconds that passed; the points are told on the clock as it reads now (an agent for each way, side by
        side)."""
        agents = {}
        for step in (-HOUR, HOUR):
            port = free_port()
            agents[step] = (port, self.clock_agent('web: {listen: "127.0.0.1:%d"}\n' % port, name="h%d" % step,
                                                   interval_ms=100))
        for step, (port, a) in agents.items():
            a.step(step, after=10)
        for step, (port, a) in agents.items():
            with self.subTest(step=step):
                a.after_step(2.5)  # the 2 s asked for below all after the step
                pts = self.history(port, 2)
                times = [p[0] for p in pts]
                seqs = [p[1] for p in pts]
                self.assertEqual(times, sorted(times))
                self.assertGreaterEqual(len(pts), 15, pts)  # 2 s at 10 samples a second, a loaded machine
                self.assertLessEqual(len(pts), 21, pts)
                self.assertEqual(seqs, list(range(int(seqs[0]), int(seqs[0]) + len(seqs))))
                every = self.history(port, 3600)
                t = [p[0] for p in every]
                self.assertGreaterEqual(len(t), a.stepped_at + 25, "the points before the step are in the hour")
                self.assertEqual(t, sorted(t))
                self.assertLess(max(b - a for a, b in zip(t, t[1:])), 2000, "a gap: the step shows")
                last = a.samples()[-1]
                self.assertLessEqual(t[-1], last["time_ms"])
                self.assertGreater(t[0], last["time_ms"] - 120 * 1000)  # the run's start, moved with the clock
                self.assertEqual(a.stop(), 0)
                self.check_marked(a, [step])

    def test_report(self):
        """A throttle episode across an hour's step: `run --record` marks the step, and the report of the
        recording gives the episode's true length and no gap."""
        root = harness.copy_board(self.d)
        rec = os.path.join(self.d, "run.rec")
        t0 = time.monotonic()
        a = self.clock_agent("", root=root, record=rec)
        self.set_cpu_c(root, 101)  # above the 99 C throttle trip: thermal throttling
        a.step(HOUR)
        a.after_step()
        self.set_cpu_c(root, 50)
        lasted = time.monotonic() - t0
        a.after_step(0.5)
        self.assertEqual(a.stop(), 0)
        p = harness.tegrawatch(["report", rec, "--json", "-"])
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        eps = r["throttle"]["episodes"]
        self.assertEqual(len(eps), 1, eps)
        self.assertLess(eps[0]["seconds"], lasted + 2, eps)
        self.assertGreater(eps[0]["seconds"], 0.5, eps)
        self.assertEqual(eps[0]["end_ms"] - eps[0]["start_ms"], round(eps[0]["seconds"] * 1000), eps)
        self.assertLess(r["throttle"]["seconds"], lasted + 2, r["throttle"])
        self.assertEqual(r["gaps"], 0)
        self.assertLess(r["duration_s"], lasted + 10)
        self.check_marked(a, [HOUR])


if __name__ == "__main__":
    BIN, SRC = harness.init(needs=("mosquitto",))
    FAKETIME = faketime_for(BIN)
    if not FAKETIME:
        print("libfaketime is missing: install the Debian package faketime (scripts/deps.txt [test])")
        sys.exit(1)
    if "libtsan" in subprocess.run(["ldd", BIN], capture_output=True, text=True).stdout:
        print("skipped: libfaketime cannot be preloaded into a ThreadSanitizer build")
        sys.exit(77)
    harness.main()
