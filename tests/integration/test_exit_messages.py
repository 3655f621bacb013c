#!/usr/bin/env python3
"""Why the agent stopped is readable at `journalctl -p warning` (issue 25 item 1): every message that ends `run`
(a wrong option, a configuration mistake, no board, a recording it cannot read, a configured feature's library
that cannot be loaded) is one line at priority err when
stderr is the journal (JOURNAL_STREAM names it, as systemd sets it), and `check` prints each mistake the same way
for the unit's ExecReload. The real journal is tests/packaging/systemd.sh's; this runs without systemd.

Usage: test_exit_messages.py TEGRAWATCH SOURCE_ROOT EMPTY_LIBRARY
"""
import os
import subprocess
import sys

import harness

EX_USAGE, EX_UNAVAILABLE, EX_CONFIG = 64, 69, 78


class ExitMessages(harness.TestCase):
    def run_as_service(self, args, env_extra=None):
        """Runs tegrawatch with stderr a file that JOURNAL_STREAM names, as systemd does: (exit status, lines)."""
        err_path = os.path.join(self.d, "stderr")
        with open(err_path, "w") as err:
            st = os.fstat(err.fileno())
            env = harness.clean_env(dict({"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}, **(env_extra or {})))
            p = subprocess.run([BIN] + args, stdout=subprocess.DEVNULL, stderr=err, env=env, timeout=60)
        with open(err_path) as f:
            return p.returncode, [line for line in f.read().split("\n") if line]

    def assert_one_error(self, lines, text):
        errors = [line for line in lines if line.startswith("<3>")]
        self.assertEqual(len(errors), 1, lines)
        self.assertIn(text, errors[0])
        # nothing that explains it hides at a lower priority
        self.assertEqual([line for line in lines if not line.startswith(("<3>", "<4>"))], [], lines)

    def test_wrong_option(self):
        rc, lines = self.run_as_service(["run", "--interval", "5"])
        self.assertEqual(rc, EX_USAGE)
        self.assert_one_error(lines, "--interval wants milliseconds")

    def test_configuration_mistake(self):
        cfg = os.path.join(self.d, "tegrawatch.yaml")
        harness.write_file(cfg, 'agent:\n  state_file: ""\n  interval: fast\n')
        rc, lines = self.run_as_service(["run", "-c", cfg, "--root", harness.copy_board(self.d)])
        self.assertEqual(rc, EX_CONFIG)
        self.assert_one_error(lines, "tegrawatch.yaml:3:13")
        # the unit's ExecReload runs check: the same line at err
        rc, lines = self.run_as_service(["check", "-c", cfg])
        self.assertEqual(rc, EX_CONFIG)
        self.assert_one_error(lines, "tegrawatch.yaml:3:13")

    def test_no_board(self):
        empty = os.path.join(self.d, "empty")
        os.mkdir(empty)
        cfg = os.path.join(self.d, "tegrawatch.yaml")
        harness.write_file(cfg, 'agent:\n  state_file: ""\n')
        rc, lines = self.run_as_service(["run", "-c", cfg, "--root", empty, "--no-tegrastats"])
        self.assertEqual(rc, EX_UNAVAILABLE)
        self.assert_one_error(lines, "")

    def test_feature_library_missing(self):
        """MQTT and the web server load their library when configured (not at start): one that cannot be used is
        one error naming the package, exit 69, no crash (bench/README.md: what linking them cost)."""
        cfg, root = os.path.join(self.d, "tegrawatch.yaml"), harness.copy_board(self.d)
        for section, soname, text in (
                ('mqtt:\n  host: 127.0.0.1\n  port: 9\nweb:\n  listen: ""\n', "libmosquitto.so.1",
                 "mqtt: cannot load libmosquitto 2.0.11 or later: install libmosquitto1 (libmosquitto.so.1 has no "),
                ('web:\n  listen: 127.0.0.1:0\n', "libmicrohttpd.so.12",
                 "web: cannot load libmicrohttpd 0.9.75 or later: install libmicrohttpd12 (libmicrohttpd.so.12 has no ")):
            with self.subTest(soname):
                harness.write_file(cfg, 'agent:\n  state_file: ""\n' + section)
                rc, lines = self.run_as_service(["run", "-c", cfg, "--root", root, "--no-tegrastats"],
                                                {"LD_LIBRARY_PATH": harness.library_dir(self.d, EMPTY_LIB, soname)})
                self.assertEqual(rc, EX_UNAVAILABLE, lines)
                self.assert_one_error(lines, text)

    def test_unreadable_recording(self):
        rc, lines = self.run_as_service(["run", "--replay", os.path.join(self.d, "missing.log")])
        self.assertNotEqual(rc, 0)
        self.assert_one_error(lines, "missing.log")


if __name__ == "__main__":
    EMPTY_LIB = os.path.abspath(sys.argv.pop(3))
    BIN, SRC = harness.init()
    harness.main()
