#!/usr/bin/env python3
"""What a newcomer meets in the first ten minutes (issue 35): the demo in a terminal (where to look, said again,
a short status instead of a 4 KB JSON line a second, and a recording that plays again instead of ending in silence,
its times going on), and the demo's samples on request.

Usage: test_first_minutes.py TEGRAWATCH SOURCE_ROOT
"""
import os
import pty
import re
import select
import subprocess

import harness
from harness import wait_until

# three samples of the demo recording: a short recording that ends (and starts again) every 3 s of its time
SHORT = 3


class Terminal:
    """`tegrawatch ARGS` with stdout a pseudo-terminal (what it reads as a person watching), stderr a file."""

    def __init__(self, test, args, env=None):
        self.master, slave = pty.openpty()
        self.err = test.path("terminal.err")
        with open(self.err, "wb") as err:
            self.proc = subprocess.Popen([BIN] + args, stdout=slave, stderr=err, env=harness.clean_env(env))
        os.close(slave)
        self.out = b""
        test.addCleanup(self.close)

    def text(self):
        while select.select([self.master], [], [], 0)[0]:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the agent ended and the terminal with it
                break
            if not chunk:
                break
            self.out += chunk
        return self.out.decode(errors="replace").replace("\r\n", "\n")

    def wait(self, pred, timeout=30):
        if not wait_until(lambda: pred(self.text()), timeout):
            raise AssertionError("the terminal never showed it:\n%s\nstderr:\n%s"
                                 % (self.text(), harness.read_text(self.err)))

    def close(self):
        harness.end_process(self.proc)
        os.close(self.master)


class Demo(harness.TestCase):
    def short_log(self):
        lines = harness.read_text(harness.src("configs/demo/tegrastats.log")).splitlines(True)
        data = [line for line in lines if line.strip() and not line.startswith("#")]
        return self.path("short.log", "".join(data[:SHORT]))

    def env(self):
        # no broker (nothing to connect to) and a port of the test's own
        return {"TEGRAWATCH_WEB_LISTEN": "127.0.0.1:%d" % harness.free_port(), "TEGRAWATCH_MQTT_HOST": ""}

    def test_terminal_gets_where_to_look_and_short_lines(self):
        env = self.env()
        t = Terminal(self, ["run", "--demo", "--speed", "20"], env)
        t.wait(lambda s: len(re.findall(r"^demo 2025-03-14T\d\d:\d\d:00Z ", s, re.M)) >= 3)
        text = t.text()
        self.assertIn("demo: dashboard  http://%s/" % env["TEGRAWATCH_WEB_LISTEN"], text)
        self.assertIn("--json", text)  # how to get the samples
        status = [line for line in text.splitlines() if line.startswith("demo 20")]
        for line in status:
            self.assertLess(len(line), 200, line)
            self.assertIn("http://%s/" % env["TEGRAWATCH_WEB_LISTEN"], line)  # where to look, again
        self.assertNotIn("{", text)  # no JSON: the samples are asked for with --json
        # one line a minute of the recording: 10:00, 10:01, 10:02...
        stamps = [re.match(r"demo (\S+)", line).group(1) for line in status]
        self.assertEqual(stamps[:3], ["2025-03-14T10:00:00Z", "2025-03-14T10:01:00Z", "2025-03-14T10:02:00Z"])

    def test_recording_plays_again_and_time_goes_on(self):
        t = Terminal(self, ["run", "--demo", "--replay", self.short_log(), "--speed", "20"], self.env())
        t.wait(lambda s: "pass 2)" in s)
        self.assertIn("the recording ended (%d samples, pass 1); it plays again from the start" % SHORT, t.text())
        self.assertIsNone(t.proc.poll())  # still running: the dashboard stays

    def test_json_on_request_in_a_loop(self):
        a = self.agent(["--demo", "--replay", self.short_log(), "--speed", "20", "--json"], env=self.env())
        a.next_sample(lambda s: s["seq"] >= 3 * SHORT + 1, what="a sample of the fourth pass")
        samples = a.samples()
        times = [s["time_ms"] for s in samples]
        # a second apart, across the ends of the recording too: the rules and the history see time go on
        self.assertEqual([b - a for a, b in zip(times, times[1:])], [1000] * (len(times) - 1))
        self.assertEqual([s["seq"] for s in samples], list(range(1, len(samples) + 1)))
        self.assertIn("demo: dashboard", a.stderr())  # where to look goes to stderr next to JSON
        self.assertEqual(a.stop(), 0)

    def test_as_fast_as_possible_ends(self):
        p = harness.tegrawatch(["run", "--demo", "--replay", self.short_log(), "--speed", "0", "--json"],
                               env=self.env(), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(p.stdout.splitlines()), SHORT)


if __name__ == "__main__":
    BIN, SRC = harness.init()
    harness.main()
