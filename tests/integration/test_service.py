#!/usr/bin/env python3
"""The agent as a systemd service, without systemd: the test binds the
notify socket itself (NOTIFY_SOCKET, WATCHDOG_USEC) and reads what the agent
says: READY=1 once the first sample is in, WATCHDOG=1 regularly, none while
the loop is stopped, RELOADING=1 then READY=1 around SIGHUP, STOPPING=1.
And the journal: with JOURNAL_STREAM naming its stderr, every line starts
with a syslog priority.

Usage: test_service.py TEGRAWATCH SOURCE_ROOT
"""
import fcntl
import json
import os
import signal
import socket
import struct
import subprocess
import tempfile
import termios
import time
import unittest

import harness
from harness import clean_env, wait_until

BIN = None
SRC = None


class NotifyTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="tw-notify-")
        self.cfg = os.path.join(self.tmp.name, "tegrawatch.yaml")
        with open(self.cfg, "w") as f:
            f.write('agent:\n  state_file: ""\nweb:\n  listen: ""\n')
        self.sock_path = os.path.join(self.tmp.name, "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.sock_path)
        self.sock.settimeout(0.05)
        self.messages = []  # (monotonic time, text)

    def tearDown(self):
        self.sock.close()
        self.tmp.cleanup()

    def drain(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            self.messages.append((time.monotonic(), data.decode()))

    def wait_for(self, text, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if any(text in m for _, m in self.messages):
                return
            self.drain(0.05)
        self.fail("no %r in %s" % (text, [m for _, m in self.messages]))

    def test_lifecycle(self):
        p = harness.Agent(self.tmp.name, harness.demo_args(10) + ["-c", self.cfg], stdout=subprocess.DEVNULL,
                          env={"NOTIFY_SOCKET": self.sock_path, "WATCHDOG_USEC": "400000"})
        try:
            self.wait_for("READY=1", 10)
            self.assertTrue(self.messages[0][1].startswith("READY=1"), self.messages)
            self.drain(2.0)
            pings = [t for t, m in self.messages if m == "WATCHDOG=1"]
            # every 200 ms (half of WATCHDOG_USEC) while ticks come every 100 ms
            self.assertGreaterEqual(len(pings), 6, self.messages)
            gaps = [b - a for a, b in zip(pings, pings[1:])]
            self.assertLess(max(gaps), 0.6, gaps)

            # a stopped loop sends nothing: systemd would restart it
            os.kill(p.pid, signal.SIGSTOP)
            self.messages.clear()
            self.drain(1.5)
            stopped = list(self.messages)
            os.kill(p.pid, signal.SIGCONT)
            self.assertEqual(stopped, [])
            self.wait_for("WATCHDOG=1", 5)

            self.messages.clear()
            os.kill(p.pid, signal.SIGHUP)
            self.wait_for("READY=1", 5)
            texts = [m for _, m in self.messages]
            reloading = [i for i, m in enumerate(texts) if m.startswith("RELOADING=1")]
            ready = [i for i, m in enumerate(texts) if m.startswith("READY=1")]
            self.assertTrue(reloading and ready and reloading[0] < ready[0], texts)
            self.assertRegex(texts[reloading[0]], r"MONOTONIC_USEC=\d+")

            self.messages.clear()
            self.assertEqual(p.stop(), 0, p.stderr())
            self.wait_for("STOPPING=1", 10)  # sent before the end, still in the socket
        finally:
            p.kill()

    def run_briefly(self, **env):
        return subprocess.run([BIN, "run", "--replay", os.path.join(SRC, "configs/demo/tegrastats.log"),
                               "--root", os.path.join(SRC, "configs/demo/root"), "--speed", "10", "--count", "8",
                               "-c", self.cfg], capture_output=True, text=True, env=clean_env(env), timeout=60)

    def test_abstract_socket(self):
        # "@name" is a socket in the abstract namespace (no file), as systemd may hand out
        name = "tw-notify-%d-%d" % (os.getpid(), time.monotonic_ns())
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.bind("\0" + name)
            p = self.run_briefly(NOTIFY_SOCKET="@" + name)
            self.assertEqual(p.returncode, 0, p.stderr)
            # the agent has exited: all it said waits in the socket
            texts = []
            s.setblocking(False)
            try:
                while True:
                    texts.append(s.recv(4096).decode())
            except BlockingIOError:
                pass
        self.assertTrue(texts and texts[0].startswith("READY=1"), texts)
        self.assertEqual(texts[-1], "STOPPING=1")

    def test_watchdog_of_another_process(self):
        # WATCHDOG_PID names whom the watchdog is for: another process's is not ours to ping
        p = self.run_briefly(NOTIFY_SOCKET=self.sock_path, WATCHDOG_USEC="20000", WATCHDOG_PID="1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.drain(0.3)
        texts = [m for _, m in self.messages]
        self.assertIn("STOPPING=1", texts)
        self.assertNotIn("WATCHDOG=1", texts)
        mine = self.run_briefly(NOTIFY_SOCKET=self.sock_path, WATCHDOG_USEC="20000")
        self.assertEqual(mine.returncode, 0, mine.stderr)
        self.messages.clear()
        self.drain(0.3)
        self.assertIn("WATCHDOG=1", [m for _, m in self.messages])

    def test_unsupported_socket_kind(self):
        # vsock:... (a VM's service manager) is not spoken here: said once, and the agent runs on
        p = self.run_briefly(NOTIFY_SOCKET="vsock:2:1234")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("NOTIFY_SOCKET=vsock:2:1234", p.stderr)

    def test_no_socket_no_messages(self):
        p = subprocess.run([BIN, "run", "--replay", os.path.join(SRC, "configs/demo/tegrastats.log"),
                            "--root", os.path.join(SRC, "configs/demo/root"), "--speed", "0", "--count", "20",
                            "-c", self.cfg], capture_output=True, text=True, env=clean_env(), timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.drain(0.2)
        self.assertEqual(self.messages, [])


class JournalTest(unittest.TestCase):
    def test_priorities(self):
        with tempfile.TemporaryDirectory(prefix="tw-journal-") as d:
            cfg = os.path.join(d, "tegrawatch.yaml")
            with open(cfg, "w") as f:
                f.write('agent:\n  state_file: ""\n  log_level: info\nweb:\n  listen: ""\n'
                        'include: [%s/configs/rules.d/*.yaml]\n' % SRC)
            err_path = os.path.join(d, "stderr")
            with open(err_path, "w") as err:
                st = os.fstat(err.fileno())
                env = clean_env({"JOURNAL_STREAM": "%d:%d" % (st.st_dev, st.st_ino)})
                p = subprocess.run([BIN, "run", "--replay", os.path.join(SRC, "configs/demo/tegrastats.log"),
                                    "--root", os.path.join(SRC, "configs/demo/root"), "--speed", "0", "-c", cfg],
                                   stdout=subprocess.DEVNULL, stderr=err, env=env, timeout=60)
            self.assertEqual(p.returncode, 0)
            lines = open(err_path).read().splitlines()
            self.assertTrue(lines)
            for line in lines:
                self.assertRegex(line, r"^<[3467]>[^<]", line)
                self.assertNotIn("tegrawatch:", line[:20])
            self.assertTrue(any(line.startswith("<4>alert firing") for line in lines), lines[:5])

    def test_no_samples_into_the_journal(self):
        """stdout is the journal: no per-sample JSON unless asked for (--json); --no-json always wins."""
        with tempfile.TemporaryDirectory(prefix="tw-journal-") as d:
            cfg = os.path.join(d, "tegrawatch.yaml")
            with open(cfg, "w") as f:
                f.write('agent:\n  state_file: ""\nweb:\n  listen: ""\n')
            base = [BIN, "run", "--replay", os.path.join(SRC, "configs/demo/tegrastats.log"),
                    "--root", os.path.join(SRC, "configs/demo/root"), "--speed", "0", "--count", "5", "-c", cfg]
            counts = {}
            for name, extra, journal in (("auto-journal", [], True), ("json", ["--json"], True),
                                         ("auto-file", [], False), ("no-json", ["--no-json"], False)):
                out_path = os.path.join(d, name)
                with open(out_path, "w") as out:
                    st = os.fstat(out.fileno())
                    env = clean_env({"JOURNAL_STREAM": "%d:%d" % (st.st_dev, st.st_ino)}) if journal else clean_env()
                    p = subprocess.run(base + extra, stdout=out, stderr=subprocess.DEVNULL, env=env, timeout=30)
                self.assertEqual(p.returncode, 0)
                counts[name] = len(open(out_path).read().splitlines())
            self.assertEqual(counts, {"auto-journal": 0, "json": 5, "auto-file": 5, "no-json": 0})

    def test_fast_replay_waits_for_its_reader(self):
        """As fast as possible there is no clock to keep: a slow reader gets every line."""
        with tempfile.TemporaryDirectory(prefix="tw-slow-") as d:
            cfg = os.path.join(d, "tegrawatch.yaml")
            with open(cfg, "w") as f:
                f.write('agent:\n  state_file: ""\nweb:\n  listen: ""\n')
            r, w = os.pipe()
            p = harness.Agent(d, ["--demo", "--speed", "0", "-c", cfg], stdout=w)
            self.addCleanup(p.kill)
            os.close(w)

            def queued():
                return struct.unpack("i", fcntl.ioctl(r, termios.FIONREAD, b"\0\0\0\0"))[0]
            # the pipe full: the agent waits for its reader. A pipe holds its bytes in pages and a write of a
            # ~5.3 KB demo line takes pages of its own, so a full 64 KiB pipe holds ~51 KB of them: wait for half
            room = fcntl.fcntl(r, fcntl.F_GETPIPE_SZ) // 2
            self.assertTrue(wait_until(lambda: queued() >= room, 30), (queued(), room, p.stderr()))
            self.assertTrue(p.running())
            with os.fdopen(r, "rb") as f:
                lines = f.read().splitlines()
            self.assertEqual(p.wait(60), 0)
            self.assertEqual(len(lines), 900)
            self.assertEqual(json.loads(lines[-1])["metrics"]["agent.json_lines_dropped_total"], 0)


class UnreadableTest(unittest.TestCase):
    """As a user other than root the agent says once at start what it cannot read, and why."""

    def test_says_what_root_only_files_hide(self):
        import shutil
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root to drop to another user")
        with tempfile.TemporaryDirectory(prefix="tw-denied-") as d:
            os.chmod(d, 0o755)
            root = os.path.join(d, "board")
            shutil.copytree(os.path.join(SRC, "tests/fixtures/boards/agx-orin-jp5"), root, symlinks=True)
            hidden = 0
            for dp, _, files in os.walk(root):
                for f in files:
                    if f == "cpuinfo_cur_freq":
                        os.chmod(os.path.join(dp, f), 0o400)
                        hidden += 1
            self.assertGreater(hidden, 0)
            # the fixture is a root view: its debugfs has the EMC clock; closed to others as on a board
            self.assertTrue(os.path.exists(os.path.join(root, "sys/kernel/debug/bpmp/debug/clk/emc/rate")))
            os.chmod(os.path.join(root, "sys/kernel/debug"), 0o700)
            cfg = os.path.join(d, "tegrawatch.yaml")
            with open(cfg, "w") as f:
                f.write('agent:\n  state_file: ""\nweb:\n  listen: ""\n')
            os.chmod(cfg, 0o644)
            args = [BIN, "run", "--root", root, "--count", "2", "--interval", "100", "--no-json", "-c", cfg]
            nobody = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] + args,
                                    capture_output=True, text=True, env=clean_env(), timeout=30)
            self.assertEqual(nobody.returncode, 0, nobody.stderr)
            said = [line for line in nobody.stderr.splitlines() if "not root" in line]
            self.assertEqual(len(said), 1, nobody.stderr)
            self.assertIn("running as uid 65534", said[0])
            self.assertIn("the EMC clock (emc.freq_mhz: debugfs is root only)", said[0])
            self.assertIn("cpuinfo_cur_freq is root only", said[0])
            as_root = subprocess.run(args, capture_output=True, text=True, env=clean_env(), timeout=30)
            self.assertEqual(as_root.returncode, 0, as_root.stderr)
            self.assertNotIn("not root", as_root.stderr)


if __name__ == "__main__":
    BIN, SRC = harness.init()
    harness.main()
