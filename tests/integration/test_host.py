#!/usr/bin/env python3
"""The host source on this machine's real files (docs/metrics.md#the-host): a
small tmpfs mounted by the test is filled until the shipped filesystem-full
rule fires, then remounted read-only until filesystem-readonly does, and
/metrics names it with its real mount point, type and device. Then the time
to full: on the driven clock (tegrawatch-driven), a tmpfs filled 1 MiB a
minute of the agent's time gets filesystem.MOUNT.full_eta_s as the space
left at that rate, and the shipped filesystem-filling rule fires; once the
writes stop, the trend's window (30 min of the agent's time) goes flat, the
time to full is absent and the rule resolves. Needs root (it mounts);
skipped otherwise. The tmpfs is unmounted in cleanup, always.

Usage: test_host.py TEGRAWATCH SOURCE_ROOT
"""
import json
import os
import subprocess

import harness
from harness import free_port


def run(*argv):
    subprocess.run(argv, check=True, capture_output=True, timeout=20)


class FilesystemTest(harness.TestCase):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.skipTest("mounting a tmpfs needs root")

    def mount(self, size):
        self.mp = os.path.join(self.d, "fs")
        os.mkdir(self.mp)
        try:
            run("mount", "-t", "tmpfs", "-o", "size=%s,mode=0700" % size, "tw-host-test", self.mp)
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            self.skipTest("cannot mount a tmpfs here: %s" % e)
        # runs before the temporary directory is removed (cleanups run last in, first out)
        self.addCleanup(subprocess.run, ["umount", "-l", self.mp], capture_output=True, timeout=20)

    def fill(self, mib):
        with open(os.path.join(self.mp, "fill"), "ab") as f:
            f.write(b"\0" * int(mib * 1024 * 1024))

    def test_full_then_readonly(self):
        self.mount("4m")
        port = free_port()
        rules = harness.src("configs", "rules.d", "host.yaml")
        config = ('agent:\n  state_file: ""\nweb:\n  listen: "127.0.0.1:%d"\n'
                  'host:\n  filesystems:\n    interval: 1s\n    include: ["%s"]\n'
                  'include: ["%s"]\n' % (port, self.mp, rules))
        a = self.agent([], config=config, port=port)

        def names(m, suffix):
            return [k for k in m if k.startswith("filesystem.") and k.endswith(suffix)]
        m = a.wait_metrics(lambda m: names(m, ".used_pct"), "filesystem.*.used_pct")
        self.assertEqual(len(names(m, ".used_pct")), 1, "only the included mount is watched: %s" % names(m, ""))
        prefix = names(m, ".used_pct")[0][:-len("used_pct")]
        self.assertLess(m[prefix + "used_pct"], 5)
        self.assertAlmostEqual(m[prefix + "size_mb"], 4.0, delta=0.01)
        self.assertEqual(m[prefix + "readonly"], 0)

        self.fill(3.75)  # 93.75 %: warning at 90
        a.wait_metric(prefix + "used_pct", lambda v: v >= 90, timeout=15)
        a.wait_stderr("alert firing filesystem-full", timeout=15)
        self.assertIn(prefix + "used_pct", "\n".join(a.stderr_lines("filesystem-full")))
        # the summary and a label name the real mount point, not its metric segment
        self.assertIn("file system %s is " % self.mp, "\n".join(a.stderr_lines("filesystem-full")))
        self.fill(0.2)  # 98.75 %: critical at 97
        a.wait_stderr("alert escalated filesystem-full", timeout=15)
        a.wait_web()
        status, _, body = a.get("/api/v1/alerts")
        active = [x for x in json.loads(body)["active"] if x["rule"] == "filesystem-full"]
        self.assertEqual([x["labels"] for x in active], [{"mountpoint": self.mp}])
        self.assertIn("file system %s is 9" % self.mp, active[0]["summary"])
        self.assertIn("(tmpfs on tw-host-test;", active[0]["description"])

        # the real mount point, type and device on /metrics
        a.wait_web()
        status, _, body = a.get("/metrics")
        self.assertEqual(status, 200)
        text = body.decode() if isinstance(body, bytes) else body
        self.assertIn('tegrawatch_filesystem_avail_bytes{mountpoint="%s",fstype="tmpfs",device="tw-host-test"}'
                      % self.mp, text)

        run("mount", "-o", "remount,ro", self.mp)
        a.wait_metric(prefix + "readonly", lambda v: v == 1, timeout=15)
        a.wait_stderr("filesystem-readonly", timeout=15)
        line = a.stderr_lines("filesystem-readonly")[0]
        self.assertIn("[critical]", line)
        self.assertIn(prefix + "readonly", line)
        self.assertIn("file system %s turned read-only" % self.mp, line)
        status, _, body = a.get("/metrics")
        text = body.decode() if isinstance(body, bytes) else body
        self.assertIn('tegrawatch_filesystem_readonly{mountpoint="%s",fstype="tmpfs",device="tw-host-test"} 1'
                      % self.mp, text)
        a.stop()

    def test_time_to_full(self):
        self.mount("64m")
        rules = harness.src("configs", "rules.d", "host.yaml")
        port = free_port()
        config = ('agent:\n  state_file: ""\nweb:\n  listen: "127.0.0.1:%d"\nhost:\n  filesystems:\n'
                  '    include: ["%s"]\ninclude: ["%s"]\n' % (port, self.mp, rules))
        a = self.agent([], config=config, port=port, driven=True)
        a.run(1000)
        m = a.wait_metrics(lambda m: any(k.endswith(".used_pct") for k in m), "filesystem.*.used_pct")
        prefix = [k for k in m if k.startswith("filesystem.") and k.endswith(".used_pct")][0][:-len("used_pct")]
        eta = prefix + "full_eta_s"

        # 1 MiB a minute of the agent's time (its scans every 10 s): after 4 min no trend yet (a sixth of the
        # 30 min window is 5 min), from 5 min on the space left at 1 MiB a minute
        etas = []
        for minute in range(12):
            self.fill(1)
            a.run(60000)
            m = a.last()
            if minute < 4:
                self.assertNotIn(eta, m, "a trend after %d min" % (minute + 1))
            elif minute >= 5:
                self.assertIn(eta, m, "no trend after %d min" % (minute + 1))
                expected = m[prefix + "avail_mb"] * 60
                self.assertAlmostEqual(m[eta], expected, delta=0.1 * expected, msg="minute %d" % (minute + 1))
                self.assertEqual(m[eta], round(m[eta]), "whole seconds")
                etas.append(m[eta])
        self.assertEqual(etas, sorted(etas, reverse=True), "less left, sooner full")
        a.wait_web()
        _, _, body = a.get("/metrics")
        text = body.decode() if isinstance(body, bytes) else body
        self.assertIn('tegrawatch_filesystem_full_eta_seconds{mountpoint="%s",fstype="tmpfs",device="tw-host-test"} %d'
                      % (self.mp, etas[-1]), text)
        a.wait_stderr("alert firing filesystem-filling", timeout=15)
        line = a.stderr_lines("alert firing filesystem-filling")[0]
        self.assertIn("[warning]", line)
        self.assertIn(self.mp, line, "the summary names the mount point")

        # the writes stop: 31 min later the window holds a flat line, the time to full is gone
        a.run(31 * 60000)
        m = a.last()
        self.assertNotIn(eta, m)
        self.assertIn(prefix + "avail_mb", m)
        a.wait_stderr("alert resolved filesystem-filling", timeout=15)
        a.stop()


if __name__ == "__main__":
    harness.init()
    harness.main()
