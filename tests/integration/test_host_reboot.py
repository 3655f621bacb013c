#!/usr/bin/env python3
"""Reboots between two runs of the agent (docs/metrics.md#reboots): boot.state, next to the alert state, holds the
boot the agent last saw. The test writes it by hand with another boot id (this machine cannot reboot for a test):
- another boot, the agent never stopped in it: the reboot is logged, reboot.unexpected.last_seen_timestamp_s is on
  the first sample only, and the shipped rule unexpected-reboot fires once (naming when the previous boot was last
  seen) and resolves; the file then holds this boot, marked stopped after a clean stop;
- the next start, on this same boot: nothing;
- another boot after a clean stop (orderly): logged, reboot.orderly.* on the first sample, no alert;
- a garbage boot id on file: said with the file and line, nothing told, the file written again.

Usage: test_host_reboot.py TEGRAWATCH SOURCE_ROOT
"""
import os

import harness
from harness import BOOT_ID, read_text, write_file

OTHER = "0b4bc5a3-6a3d-4f0e-9a8b-2a1d0c9e7f11"
SEEN_MS = 1764345600000  # 2025-11-28T16:00:00Z


def state(boot_id, stopped):
    return ("# tegrawatch boot state 1\nboot_id %s\nlast_seen_ms %d\nuptime_ms 93784000\nstopped %d\n"
            % (boot_id, SEEN_MS, stopped))


class RebootTest(harness.TestCase):
    def setUp(self):
        super().setUp()
        self.boot_id = BOOT_ID
        self.state_path = os.path.join(self.d, "boot.state")

    def start(self, name):
        rules = harness.src("configs", "rules.d", "host.yaml")
        config = 'agent:\n  state_file: "%s"\ninclude: ["%s"]\n' % (os.path.join(self.d, "alerts.state"), rules)
        return self.agent([], name=name, config=config)

    def first_samples(self, a, n=3):
        """The first N samples: the reboot's metric would be on the first (a sample's alerts are logged before it
        is written)."""
        a.next_sample(lambda s: s["seq"] >= n, what="sample %d" % n)
        return a.samples()[:n]

    def reboot_metrics(self, samples):
        return [(s["seq"], k, v) for s in samples for k, v in s["metrics"].items() if k.startswith("reboot.")]

    def test_unexpected_then_same_boot(self):
        write_file(self.state_path, state(OTHER, 0))
        a = self.start("unexpected")
        a.wait_stderr("alert firing unexpected-reboot", timeout=20)
        samples = self.first_samples(a)
        self.assertEqual(self.reboot_metrics(samples),
                         [(1, "reboot.unexpected.last_seen_timestamp_s", SEEN_MS / 1000)])
        err = a.stderr()
        self.assertIn("reboots: the board rebooted without the agent stopping first", err)
        self.assertIn("the previous boot %s was last seen at 2025-11-28T16:00:00Z, up 1d2h3m4s; this boot is %s"
                      % (OTHER, self.boot_id), err)
        firing = a.stderr_lines("alert firing unexpected-reboot")
        self.assertEqual(len(firing), 1)
        self.assertIn("[warning]", firing[0])
        self.assertIn("rebooted without an orderly shutdown: the previous boot was last seen at 2025-11-28T16:00:00Z",
                      firing[0])
        a.wait_stderr("alert resolved unexpected-reboot", timeout=20)  # at the next sample: fired once
        self.assertEqual(a.stop(), 0)
        saved = read_text(self.state_path)
        self.assertIn("boot_id %s\n" % self.boot_id, saved)
        self.assertIn("stopped 1\n", saved)

        # the same boot again: nothing to tell
        b = self.start("same")
        samples = self.first_samples(b)
        self.assertEqual(self.reboot_metrics(samples), [])
        self.assertNotIn("reboot", b.stderr())
        self.assertEqual(b.stop(), 0)

    def test_orderly(self):
        write_file(self.state_path, state(OTHER, 1))
        a = self.start("orderly")
        samples = self.first_samples(a)
        self.assertEqual(self.reboot_metrics(samples), [(1, "reboot.orderly.last_seen_timestamp_s", SEEN_MS / 1000)])
        self.assertNotIn("unexpected-reboot", a.stderr())  # logged at info only: no warning, no alert
        self.assertEqual(a.stop(), 0)
        self.assertIn("boot_id %s\n" % self.boot_id, read_text(self.state_path))

    def test_garbage_boot_id(self):
        write_file(self.state_path, state("not-a-boot-id", 0))
        a = self.start("garbage")
        samples = self.first_samples(a)
        self.assertEqual(self.reboot_metrics(samples), [])
        self.assertIn("%s:2: boot_id: not a boot id (8-4-4-4-12 lower-case hex digits): the boot before this one is "
                      "not known, so no reboot is told at this start" % self.state_path, a.stderr())
        self.assertNotIn("unexpected-reboot", a.stderr())
        self.assertEqual(a.stop(), 0)
        self.assertIn("boot_id %s\n" % self.boot_id, read_text(self.state_path))


if __name__ == "__main__":
    harness.init()
    harness.main()
