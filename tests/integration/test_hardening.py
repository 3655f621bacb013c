#!/usr/bin/env python3
"""Process, privileges and secrets (docs/reliability.md, section F): files the
configuration names are never waited on, children the agent starts get a clean
signal state and environment and never outlive it, every rejected tegrastats
line counts once, secret files are private.

Every agent runs on a fixture board (no network), every wait is bounded, and
every process a test starts is stopped in tearDown.

Usage: test_hardening.py TEGRAWATCH SOURCE_ROOT
"""
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

BIN = None
SRC = None
EX_CONFIG = 78
ROOT = "tests/fixtures/boards/orin-nano-jp6"


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEGRAWATCH_")}
    env.update(extra or {})
    return env


def tegrawatch(args, env=None, timeout=10):
    return subprocess.run([BIN] + args, capture_output=True, text=True, timeout=timeout, env=clean_env(env))


def write_file(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


class Agent:
    """`tegrawatch run` in the background; samples (JSON Lines) and stderr collected by threads."""

    def __init__(self, args, env=None):
        self.proc = subprocess.Popen([BIN, "run"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=clean_env(env), errors="replace")
        self.samples = queue.Queue()
        self.err = []
        self.t_out = threading.Thread(target=self._out, daemon=True)
        self.t_err = threading.Thread(target=self._err, daemon=True)
        self.t_out.start()
        self.t_err.start()

    def _out(self):
        for line in self.proc.stdout:
            self.samples.put(json.loads(line))

    def _err(self):
        for line in self.proc.stderr:
            self.err.append(line)

    def wait_sample(self, pred=lambda s: True, timeout=8.0, what="a sample"):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                s = self.samples.get(timeout=0.2)
            except queue.Empty:
                continue
            if pred(s):
                return s
        raise AssertionError("no sample with %s; stderr: %s" % (what, "".join(self.err)))

    def count_samples(self, seconds):
        """Samples written in the next SECONDS."""
        while not self.samples.empty():
            self.samples.get_nowait()
        time.sleep(seconds)
        n = 0
        while not self.samples.empty():
            self.samples.get_nowait()
            n += 1
        return n

    def stop(self, timeout=5.0):
        """SIGTERM, then the time it took to exit (SIGKILL and an AssertionError past TIMEOUT)."""
        if self.proc.poll() is not None:
            return 0.0
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("the agent did not stop within %.1f s of SIGTERM" % timeout)
        took = time.monotonic() - t0
        self.close()
        return took

    def close(self):
        # a process left behind may hold the agent's stdout or stderr: then its reader stays (a daemon
        # thread), as closing a stream another thread reads from would wait for that read
        for t, stream in ((self.t_out, self.proc.stdout), (self.t_err, self.proc.stderr)):
            t.join(2)
            if not t.is_alive():
                stream.close()
        self.closed = True

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)
        if not getattr(self, "closed", False):
            self.close()


class FifoTest(unittest.TestCase):
    """Finding 3: a FIFO named where a file is expected is refused at once, with its location."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tw-fifo-")
        self.fifo = os.path.join(self.dir, "fifo")
        os.mkfifo(self.fifo, 0o600)
        self.cfg = os.path.join(self.dir, "tegrawatch.yaml")
        self.agent = None

    def tearDown(self):
        if self.agent:
            self.agent.kill()
        shutil.rmtree(self.dir)

    def check_refuses(self, body, where, words):
        write_file(self.cfg, 'agent:\n  state_file: ""\n' + body)
        t0 = time.monotonic()
        try:
            p = tegrawatch(["check", "-c", self.cfg], timeout=5)
        except subprocess.TimeoutExpired:
            self.fail("check waited on the FIFO for 5 s (%s)" % body.strip())
        took = time.monotonic() - t0
        self.assertEqual(p.returncode, EX_CONFIG, p.stderr)
        self.assertIn(where, p.stderr)
        self.assertIn(words, p.stderr)
        self.assertLess(took, 2.0)

    def test_fifo_as_the_configuration(self):
        t0 = time.monotonic()
        try:
            p = tegrawatch(["check", "-c", self.fifo], timeout=5)
        except subprocess.TimeoutExpired:
            self.fail("check waited on a FIFO given as the configuration")
        self.assertEqual(p.returncode, EX_CONFIG, p.stderr)
        self.assertIn("%s: a FIFO, not a regular file" % self.fifo, p.stderr)
        self.assertLess(time.monotonic() - t0, 2.0)

    def test_fifo_as_an_included_rule_file(self):
        self.check_refuses("include: fifo\n", "%s: " % self.fifo, "a FIFO, not a regular file")

    def test_fifo_as_secret_files(self):
        self.check_refuses("web:\n  token_file: %s\n" % self.fifo, self.cfg + ":4:15: ", "web.token_file")
        self.check_refuses("mqtt:\n  host: 127.0.0.1\n  password_file: %s\n" % self.fifo, self.cfg + ":5:18: ",
                           "a FIFO, not a regular file")
        self.check_refuses("mqtt:\n  host: 127.0.0.1\n  cert_file: %s\n  key_file: %s\n" % (self.fifo, self.fifo),
                           self.cfg + ":6:13: ", "mqtt.key_file: cannot read")
        hook = "actions:\n  hook:\n    type: webhook\n    url: http://127.0.0.1:9/\n    format: json\n    %s: %s\n"
        self.check_refuses(hook % ("secret_file", self.fifo), self.cfg + ":8:18: ", "not a regular file")
        self.check_refuses(hook % ("bearer_token_file", self.fifo), self.cfg + ":8:24: ", "not a regular file")

    def test_reload_with_a_fifo_include_keeps_sampling(self):
        rules = os.path.join(self.dir, "rules.d")
        os.mkdir(rules)
        write_file(os.path.join(rules, "a.yaml"), "rules:\n  - {name: hot, metric: temp.cpu_c, warning: 90}\n")
        write_file(self.cfg, 'agent:\n  state_file: ""\nweb:\n  listen: ""\ninclude: rules.d/*.yaml\n')
        self.agent = Agent(["--root", os.path.join(SRC, ROOT), "--no-tegrastats", "--interval", "100",
                            "-c", self.cfg])
        self.agent.wait_sample()
        before = self.agent.count_samples(1.0)
        os.mkfifo(os.path.join(rules, "b.yaml"), 0o600)
        self.agent.proc.send_signal(signal.SIGHUP)
        after = self.agent.count_samples(2.0)
        self.assertGreaterEqual(before, 5)
        # 100 ms ticks: about 20 in 2 s; none at all while a reload waits on the FIFO
        self.assertGreaterEqual(after, 12, "".join(self.agent.err))
        self.assertLess(self.agent.stop(), 2.0)
        err = "".join(self.agent.err)
        self.assertIn("rules.d/b.yaml: a FIFO, not a regular file", err)


def alive(pid):
    """True while PID runs (a zombie or no such process: not alive)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def group_members(pgid):
    """Live processes in process group PGID."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(name))
    return out


class FakeTegrastats:
    """An agent on the fixture board reading tests/integration/fake_tegrastats.sh."""

    def __init__(self, test, mode, interval_ms, env=None, extra=()):
        self.out = tempfile.mkdtemp(prefix="tw-fake-")
        test.addCleanup(self.cleanup)
        full = {"FAKE_TEGRASTATS_OUT": self.out, "FAKE_TEGRASTATS_MODE": mode}
        full.update(env or {})
        self.agent = Agent(["--root", os.path.join(SRC, ROOT), "--tegrastats",
                            os.path.join(SRC, "tests/integration/fake_tegrastats.sh"),
                            "--interval", str(interval_ms)] + list(extra), env=full)

    def wait_start(self, n, timeout=8.0):
        """The pid of start N, once it wrote its status and environment."""
        path = os.path.join(self.out, "pid.%d" % n)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if os.path.exists(path):
                with open(path) as f:
                    text = f.read()
                if text.endswith("\n"):
                    return int(text)
            time.sleep(0.05)
        raise AssertionError("tegrastats start %d not seen; stderr: %s" % (n, "".join(self.agent.err)))

    def status(self, n):
        with open(os.path.join(self.out, "status.%d" % n)) as f:
            return dict(l.split(":\t") for l in f.read().splitlines())

    def environment(self, n):
        """The names exported to start N (`export -p`: "export NAME='VALUE'")."""
        with open(os.path.join(self.out, "env.%d" % n)) as f:
            return [l[7:].split("=", 1)[0] for l in f.read().splitlines() if l.startswith("export ")]

    def cleanup(self):
        self.agent.kill()
        for name in os.listdir(self.out):
            if name.startswith("pid."):
                with open(os.path.join(self.out, name)) as f:
                    pid = int(f.read() or 0)
                for p in [pid] + group_members(pid):
                    try:
                        os.kill(p, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
        shutil.rmtree(self.out)


class TegrastatsChildTest(unittest.TestCase):
    """Finding 4: tegrastats starts with an empty signal mask and default dispositions, every time."""

    # glibc's posix_spawn leaves its two internal signals (32, 33: SIGCANCEL, SIGSETXID) ignored in the
    # child, whatever the attributes say (sigfillset leaves them out); a glibc program sets them up again
    GLIBC_INTERNAL = (1 << 31) | (1 << 32)

    def assertClean(self, status):
        self.assertEqual(int(status["SigBlk"], 16), 0, status)
        self.assertEqual(int(status["SigIgn"], 16) & ~self.GLIBC_INTERNAL, 0, status)

    def test_signal_state_on_first_start_and_after_a_restart(self):
        fake = FakeTegrastats(self, "restart", 200)
        fake.wait_start(1)
        fake.wait_start(2)  # the first one exits after a line: restarted 1 s later, from inside the loop
        self.assertClean(fake.status(1))
        self.assertClean(fake.status(2))
        fake.agent.wait_sample()
        self.assertLess(fake.agent.stop(), 1.0)

    def test_stop_is_quick_with_a_20s_interval(self):
        # tegrastats sleeping 20 s between lines; the agent ticks every 200 ms, so the restart comes at once
        fake = FakeTegrastats(self, "restart", 200, env={"FAKE_TEGRASTATS_SLEEP": "20"})
        fake.wait_start(1)
        pid = fake.wait_start(2)
        took = fake.agent.stop()
        # before: SIGTERM blocked in the restarted child, and the agent waited for it for good
        self.assertLess(took, 1.0)
        self.assertFalse(alive(pid))
        self.assertEqual(group_members(pid), [])  # its `sleep 20` went with it


class TegrastatsEnvironmentTest(unittest.TestCase):
    """Finding 6: no TEGRAWATCH_* variable (TEGRAWATCH_MQTT_PASSWORD is a secret) reaches tegrastats."""

    def test_no_tegrawatch_variable(self):
        env = {"TEGRAWATCH_MQTT_PASSWORD": "canary-5ecret", "TEGRAWATCH_AGENT_BOARD_NAME": "b1",
               "UNRELATED_VARIABLE": "kept"}
        fake = FakeTegrastats(self, "restart", 200, env=env)
        fake.wait_start(2)
        for n in (1, 2):
            names = fake.environment(n)
            self.assertIn("UNRELATED_VARIABLE", names)
            self.assertEqual([v for v in names if v.startswith("TEGRAWATCH_")], [], "start %d" % n)
            with open(os.path.join(fake.out, "env.%d" % n)) as f:
                self.assertNotIn("canary-5ecret", f.read())
        fake.agent.stop()


class ExecActionBoundTest(unittest.TestCase):
    """Finding 5: nothing an exec action starts outlives its timeout, its end, or the agent."""

    CONFIG = """agent:
  state_file: ""
web:
  listen: ""
actions:
  escape: {type: exec, command: [%(script)s, %(out)s, %(how)s], timeout: %(timeout)s}
notify:
  warning: [escape]
rules:
  - {name: always, metric: temp.cpu_c, warning: 1}
"""
    PIDS = ("action.pid", "group.pid", "setsid.pid")

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tw-exec-")
        self.out = os.path.join(self.dir, "out")
        os.mkdir(self.out)
        self.cfg = os.path.join(self.dir, "tegrawatch.yaml")
        self.agent = None

    def tearDown(self):
        if self.agent:
            self.agent.kill()
        for pid in self.pids(wait=False):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.dir)

    def start(self, how, timeout):
        write_file(self.cfg, self.CONFIG % {"script": os.path.join(SRC, "tests/integration/escaping_action.sh"),
                                            "out": self.out, "how": how, "timeout": timeout})
        self.agent = Agent(["--root", os.path.join(SRC, ROOT), "--no-tegrastats", "--interval", "100",
                            "-c", self.cfg])

    def pids(self, wait=True):
        out = []
        end = time.monotonic() + (8 if wait else 0)
        for name in self.PIDS:
            path = os.path.join(self.out, name)
            while wait and not os.path.exists(path) and time.monotonic() < end:
                time.sleep(0.05)
            if os.path.exists(path):
                with open(path) as f:
                    out.append(int(f.read()))
            elif wait:
                self.fail("%s not written; stderr: %s" % (name, "".join(self.agent.err)))
        return out

    def wait_gone(self, pids, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end and any(alive(p) for p in pids):
            time.sleep(0.1)
        return [p for p in pids if alive(p)]

    def test_leftovers_of_a_program_that_ended(self):
        self.start("exit", "5s")
        pids = self.pids()
        # the program ended at once; what it left (in its group and escaped) is stopped within the grace
        self.assertEqual(self.wait_gone(pids, 4.0), [], "".join(self.agent.err))
        s = self.agent.wait_sample(lambda s: s["metrics"].get("agent.action_leftovers_total") == 2,
                                   what="agent.action_leftovers_total = 2")
        self.assertEqual(s["metrics"]["agent.action_runs_total"], 1)
        self.assertLess(self.agent.stop(), 2.0)

    def test_escaped_processes_after_the_timeout(self):
        self.start("stay", "1s")
        pids = self.pids()
        # timeout 1 s, then SIGTERM to its group, SIGKILL 2 s later if needed, and the escaped one adopted
        self.assertEqual(self.wait_gone(pids, 5.0), [], "".join(self.agent.err))
        self.assertLess(self.agent.stop(), 2.0)

    def test_escaped_processes_at_agent_stop(self):
        self.start("stay", "60s")
        pids = self.pids()
        time.sleep(0.5)
        self.assertLess(self.agent.stop(timeout=8), 6.0)
        self.assertEqual([p for p in pids if alive(p)], [])


class ParseErrorsTest(unittest.TestCase):
    """Finding 7: every rejected tegrastats line counts exactly one agent.parse_errors_total, and the
    warnings about them are held back (core/log.c: 10 per call site and minute)."""

    GARBAGE = 3000

    def line(self):
        with open(os.path.join(SRC, "tests/fixtures/tegrastats/orin_nano_jetpack6_l4t_r36.txt")) as f:
            return [l for l in f if l.strip() and not l.startswith("#")][0].rstrip("\n")

    def test_live_source(self):
        # a 10 MB line, a line with a NUL byte, GARBAGE lines of garbage, a line cut off between tokens (EOF)
        fake = FakeTegrastats(self, "bad", 100, env={"FAKE_TEGRASTATS_GARBAGE": str(self.GARBAGE)})
        want = 1 + 1 + self.GARBAGE + 1
        s = fake.agent.wait_sample(lambda s: s["metrics"]["agent.parse_errors_total"] >= want and
                                   fake.agent.proc.poll() is None and os.path.exists(fake.out + "/pid.2"),
                                   timeout=15, what="the errors of the first start, after the restart")
        time.sleep(0.5)
        last = s
        while not fake.agent.samples.empty():
            last = fake.agent.samples.get_nowait()
        self.assertEqual(last["metrics"]["agent.parse_errors_total"], want)
        self.assertEqual(s["metrics"]["agent.parse_errors_total"], want)
        fake.agent.stop()
        warnings = [l for l in fake.agent.err if "warning: tegrastats" in l]
        # 10 per call site (the parse error, the long line) and minute: not 3000
        self.assertLessEqual(len(warnings), 12, "".join(warnings[:20]))
        self.assertTrue(any("longer than 8192 bytes" in l for l in warnings))
        self.assertTrue(any("NUL byte in the line" in l for l in warnings))

    def recording(self, d):
        path = os.path.join(d, "t.log")
        good = self.line()
        with open(path, "w") as f:
            f.write(good + "\n")
            f.write(good[:60] + "\0" + good[60:] + "\n")      # a NUL byte: 1 error
            f.write("x" * (10 * 1000 * 1000) + "\n")          # 10 MB: 1 error
            f.write(good + "\n")
            f.write("garbage with no tokens at all\n" * 50)   # 50 errors
            f.write(good + "\n")
            f.write(good[:good.index(" CPU")])                # cut between tokens: 1 error
        return path, 53

    def test_replay_and_parse(self):
        with tempfile.TemporaryDirectory() as d:
            path, want = self.recording(d)
            p = tegrawatch(["parse", path], timeout=30)
            self.assertEqual(p.returncode, 0, p.stderr)
            docs = [json.loads(l) for l in p.stdout.splitlines()]
            self.assertEqual(sum(1 for x in docs if "error" in x), want)
            self.assertEqual(sum(1 for x in docs if "metrics" in x), 3)
            self.assertIn("line cut off", docs[-1]["error"])
            self.assertIn("NUL byte", docs[1]["error"])
            p = tegrawatch(["run", "--replay", path, "--speed", "0", "--no-tegrastats"],
                           env={"TEGRAWATCH_WEB_LISTEN": ""}, timeout=30)
            self.assertEqual(p.returncode, 0, p.stderr)
            samples = [json.loads(l) for l in p.stdout.splitlines()]
            self.assertEqual(len(samples), 3)
            self.assertEqual(samples[-1]["metrics"]["agent.parse_errors_total"], want)
            self.assertLessEqual(len([l for l in p.stderr.splitlines() if "t.log:" in l]), 10)


class SecretModeTest(unittest.TestCase):
    """Finding 10: a secret file group or others can read is refused by `check` and `run` (exit 78), located,
    with the fix in the message; a systemd credential is systemd's business."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tw-secret-")
        self.cfg = os.path.join(self.dir, "tegrawatch.yaml")
        self.secret = os.path.join(self.dir, "secret")
        write_file(self.secret, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", 0o644)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def both(self, body, env=None):
        write_file(self.cfg, 'agent:\n  state_file: ""\n' + body)
        check = tegrawatch(["check", "-c", self.cfg], env)
        run = tegrawatch(["run", "-c", self.cfg, "--replay", os.path.join(SRC, "configs/demo/tegrastats.log"),
                          "--speed", "0", "--count", "1"], env)
        return check, run

    def refused(self, body, where, key):
        check, run = self.both(body)
        self.assertEqual(check.returncode, EX_CONFIG, check.stderr)
        self.assertEqual(run.returncode, EX_CONFIG, run.stderr)
        self.assertIn("%s:%s: %s" % (self.cfg, where, key), check.stderr)
        self.assertIn("(mode 0644): it holds a secret; chmod 600 it", check.stderr)

    CASES = [
        ("web:\n  listen: 127.0.0.1:0\n  token_file: %s\n", "5:15", "web.token_file"),
        ("web:\n  listen: 127.0.0.1:0\n  basic_auth_user: u\n  basic_auth_password_file: %s\n", "6:29",
         "web.basic_auth_password_file"),
        ("mqtt:\n  host: 127.0.0.1\n  password_file: %s\n", "5:18", "mqtt.password_file"),
        ("mqtt:\n  host: 127.0.0.1\n  cert_file: /dev/null\n  key_file: %s\n", "6:13", "mqtt.key_file"),
        ("actions:\n  hook:\n    type: webhook\n    url: http://127.0.0.1:9/\n    format: json\n"
         "    secret_file: %s\n", "8:18", "actions.hook.secret_file"),
        ("actions:\n  hook:\n    type: webhook\n    url: http://127.0.0.1:9/\n    format: json\n"
         "    bearer_token_file: %s\n", "8:24", "actions.hook.bearer_token_file"),
    ]

    def test_readable_by_others_is_refused(self):
        for body, where, key in self.CASES:
            with self.subTest(key=key):
                self.refused(body % self.secret, where, key)

    def test_private_and_credentials_pass(self):
        body = "web:\n  listen: 127.0.0.1:0\n  token_file: %s\n"
        os.chmod(self.secret, 0o600)
        check, _ = self.both(body % self.secret)
        self.assertEqual(check.returncode, 0, check.stderr)
        os.chmod(self.secret, 0o644)
        creds = os.path.join(self.dir, "credentials")
        os.mkdir(creds)
        shutil.copy(self.secret, os.path.join(creds, "tok"))
        os.chmod(os.path.join(creds, "tok"), 0o644)
        check, run = self.both(body % "credential:tok", env={"CREDENTIALS_DIRECTORY": creds})
        self.assertEqual(check.returncode, 0, check.stderr)
        self.assertEqual(run.returncode, 0, run.stderr)


if __name__ == "__main__":
    BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    del sys.argv[1:3]
    unittest.main(verbosity=2)
