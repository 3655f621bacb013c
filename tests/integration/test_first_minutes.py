#!/usr/bin/env python3
"""What a newcomer meets in the first ten minutes (issue 35): the demo in a terminal (where to look, said again,
a short status instead of a 4 KB JSON line a second, and a recording that plays again instead of ending in silence,
its times going on), and the demo's samples on request.

Usage: test_first_minutes.py TEGRAWATCH SOURCE_ROOT
"""
import json
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


RFC3339 = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"


class Messages(harness.TestCase):
    """Commands that used to leave the user guessing: replay without rules, check without a file, snapshot of a
    host that is not a Jetson, help's manual, and the words of a resolved alert."""

    def test_replay_without_c_runs_the_shipped_rules_and_says_so(self):
        log = harness.src("configs/demo/tegrastats.log")
        bare = harness.tegrawatch(["replay", log, "--dry-run"], timeout=120)
        self.assertEqual(bare.returncode, 0, bare.stderr)
        self.assertRegex(bare.stderr, r"no configuration \(none named with -c FILE, none at /etc/tegrawatch/"
                         r"tegrawatch.yaml\): \d+ rules loaded from the shipped .*/\*\.yaml")
        # the 125 s throttle of the demo recording is in the timeline, as `run` on a board would see it
        self.assertRegex(bare.stdout, r"throttling +critical +firing +throttle.active")
        self.assertRegex(bare.stderr, r"900 samples, [1-9]\d* alert events from \d+ rules")
        named = harness.tegrawatch(["replay", log, "--dry-run", "-c", harness.src("configs/demo/tegrawatch.yaml")],
                                   timeout=120)
        self.assertEqual(named.returncode, 0, named.stderr)
        self.assertNotIn("no configuration", named.stderr)
        self.assertIn("input-power-high", named.stdout)  # the demo configuration's own rule

    def test_report_without_c_says_why_no_timeline(self):
        p = harness.tegrawatch(["report", harness.src("configs/demo/tegrastats.log")], timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("no alert timeline: no rules were named (-c FILE", p.stderr)

    def test_check_without_c_names_the_file_it_looked_for(self):
        if os.path.exists("/etc/tegrawatch/tegrawatch.yaml"):
            self.skipTest("a configuration is installed here")
        p = harness.tegrawatch(["check"])
        self.assertEqual(p.returncode, 66, p.stderr)
        self.assertIn("none at /etc/tegrawatch/tegrawatch.yaml", p.stderr)
        self.assertIn("-c FILE", p.stderr)
        self.assertNotIn("cannot open", p.stderr)

    def test_snapshot_says_not_a_jetson_as_run_does(self):
        # this host (the tests run on x86-64 machines; a Jetson would be one)
        if os.path.exists("/etc/nv_tegra_release"):
            self.skipTest("a Jetson")
        snap = harness.tegrawatch(["snapshot"])
        self.assertEqual(snap.returncode, 0, snap.stderr)
        self.assertIn("(not a Jetson)", snap.stdout.splitlines()[0])
        run = harness.tegrawatch(["run", "--no-tegrastats", "--count", "1", "--interval", "100", "--no-json"])
        said = [line for line in snap.stderr.splitlines() if "not a Jetson" in line]
        self.assertTrue(said, snap.stderr)
        self.assertEqual(said, [line for line in run.stderr.splitlines() if "not a Jetson" in line])

    def test_help_names_a_manual_that_exists(self):
        p = harness.tegrawatch(["help"])
        page = re.search(r"`man -l (\S+)`", p.stdout)
        self.assertIsNotNone(page, p.stdout)  # a build tree installs no manual: the page of its source
        self.assertTrue(os.path.isfile(page.group(1)), page.group(1))

    def test_resolved_alert_says_it_ended_and_how_long(self):
        p = harness.tegrawatch(["run", "--demo", "--speed", "0", "--no-json"], timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        ended = [line for line in p.stderr.splitlines() if "alert resolved throttling" in line]
        self.assertEqual(len(ended), 1, p.stderr)
        # the recording throttles t 423-547; the rule's for: 5s and clear_for: 10s make it 2 min 10 s
        self.assertTrue(ended[0].endswith("demo-orin-nano: throttling ended after 2m10s (throttle.active: now 0)"),
                        ended[0])
        eta = [line for line in p.stderr.splitlines() if "alert resolved throttle-predicted" in line]
        self.assertTrue(eta)
        for line in eta:
            self.assertIn("will not throttle at this load", line)
            self.assertNotIn("n/a", line)


class OneTimeFormat(harness.TestCase):
    """One time format, RFC 3339 in UTC, across run, replay, report and the API, whatever the time zone."""

    def test_utc_everywhere(self):
        tz = {"TZ": "America/New_York"}
        log = harness.src("configs/demo/tegrastats.log")
        port = harness.free_port()
        a = self.agent(harness.demo_args(20) + ["--json"], env=dict(tz, TEGRAWATCH_WEB_LISTEN="127.0.0.1:%d" % port),
                       port=port)
        sample = a.next_sample()
        a.wait_web()
        self.assertRegex(sample["ts"], RFC3339)
        snap = a.snapshot()
        self.assertRegex(snap["ts"], RFC3339)
        self.assertEqual(a.stop(), 0)
        # the same instant, said the same way: the stamp is the board's local time, read in the zone we run in
        first = harness.tegrawatch(["replay", log, "--dry-run", "--json"], env=tz, timeout=120)
        events = [json.loads(line) for line in first.stdout.splitlines()]
        self.assertTrue(events)
        timeline = harness.tegrawatch(["replay", log, "--dry-run"], env=tz, timeout=120)
        stamps = [line.split()[0] for line in timeline.stdout.splitlines()]
        self.assertEqual(stamps, [e["at"] for e in events])
        for s in stamps:
            self.assertRegex(s, RFC3339)
        self.assertEqual(stamps[0][:15], "2025-03-14T14:0")  # 10:0x in New York (EDT, UTC-4) is 14:0x UTC
        rep = harness.tegrawatch(["report", log, "--json", "-"], env=tz, timeout=120)
        r = json.loads(rep.stdout)
        self.assertEqual(r["start"], "2025-03-14T14:00:00Z")
        text = harness.tegrawatch(["report", log], env=tz, timeout=120)
        self.assertIn("14:00:00Z", text.stdout)
        self.assertEqual(sample["ts"][:11], "2025-03-14T")


if __name__ == "__main__":
    BIN, SRC = harness.init()
    harness.main()
