"""The agent under test."""
import json
import os
import signal
import socket
import subprocess
import threading
import time

from . import base
from .base import clean_env, proc_status_kb, read_text, wait_until, write_file
from .web import request


# ---------------------------------------------------------------------------------------------------------------
# The agent


class Agent:
    """`tegrawatch [GLOBAL_ARGS] run ARGS [-c D/NAME.yaml]` in the background, one policy for every test:
    - CONFIG (text), when given, is written to D/NAME.yaml (mode 0600) and passed with -c;
    - stderr goes to D/NAME.err (stderr(): all of it so far, also after a crash);
    - stdout goes to D/NAME.jsonl, read as it grows (samples(), next_sample(), last()); STDOUT may name
      another target (subprocess.DEVNULL, a pipe's fd) for a test about stdout itself;
    - the environment is this one without TEGRAWATCH_*, in UTC, with ENV; without a web server unless the test
      names web.listen or runs the demo (base.no_default_web: the default port is one for the machine);
    - stop() sends SIGTERM (or SIG) and waits TIMEOUT seconds; a process still there is killed and the test
      fails with its stderr. kill() (the cleanup) is SIGKILL.
    PORT, when given, is the web server's: get(), snapshot(), metrics(), wait_web().
    DRIVEN: tegrawatch-driven instead, on a clock this test drives (advance(), run(), pace(), real(), now()): it
    starts still at the real time; stop() lets it run with the real clock first (the flushes of a clean stop)."""

    def __init__(self, d, args, name="agent", config=None, env=None, port=None, stdout=None, global_args=(),
                 preexec=None, wrapper=(), cwd=None, driven=False):
        self.d, self.name, self.port = d, name, port
        self.err_path = os.path.join(d, name + ".err")
        self.out_path = os.path.join(d, name + ".jsonl")
        self.cfg = None
        self.ctl, fds = None, ()
        if driven:
            self.ctl, theirs = socket.socketpair()
            fds = (theirs.fileno(),)
            env = dict(env or {}, TEGRAWATCH_DRIVEN_CLOCK=str(theirs.fileno()))
        argv = list(wrapper) + [base.driven_bin() if driven else base.BIN] + list(global_args) + ["run"] + list(args)
        if config is not None:
            self.cfg = os.path.join(d, name + ".yaml")
            write_file(self.cfg, config)
            argv += ["-c", self.cfg]
        env = base.no_default_web(list(args), env, config)
        self._samples, self._offset, self._cursor = [], 0, 0
        self._lock = threading.Lock()
        self.stop_s = None
        with open(self.err_path, "wb") as err:  # a name used again: a new run, new files
            if stdout is None:
                with open(self.out_path, "wb") as out:
                    self.proc = subprocess.Popen(argv, stdout=out, stderr=err, env=clean_env(env),
                                                 preexec_fn=preexec, cwd=cwd, pass_fds=fds)
            else:
                self.out_path = None
                self.proc = subprocess.Popen(argv, stdout=stdout, stderr=err, env=clean_env(env),
                                             preexec_fn=preexec, cwd=cwd, pass_fds=fds)
        if driven:
            theirs.close()
        self.pid = self.proc.pid

    # ---- its clock, when driven (tests/driven/driven_main.c) ----

    def clock(self, command, timeout=30.0):
        """Sends COMMAND to the driven clock; its answer after "ok" (an AssertionError on an error, no answer
        within TIMEOUT real seconds, or an agent that ended)."""
        self.ctl.settimeout(timeout)
        self.ctl.sendall(command.encode() + b"\n")
        data = b""
        try:
            while not data.endswith(b"\n"):
                chunk = self.ctl.recv(256)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            pass
        line = data.decode(errors="replace").strip()
        if not line.startswith("ok"):
            raise AssertionError("driven clock: %r answered %r (exit %s); stderr:\n%s"
                                 % (command, line, self.proc.poll(), self.stderr()[-4000:]))
        return line[2:].strip()

    def advance(self, ms):
        """Both clocks MS forward at once; every wait on them wakes."""
        self.clock("advance %d" % ms)

    def run(self, ms, pace_ms=0, timeout=120.0):
        """MS of the agent's time, tick after tick: each wait of its loop lasts PACE_MS real ms (its sockets and
        pipes served), then the clock jumps to the wait's end. Returns once the clock has moved MS and the loop
        waits again (the tick at the end written); the clock then stands still."""
        self.clock("run %d %d" % (ms, pace_ms), timeout)

    def pace(self, pace_ms):
        """As run() with no end: the agent's time runs on, a wait of its loop every PACE_MS real ms."""
        self.clock("pace %d" % pace_ms)

    def pause(self):
        self.clock("pause")

    def real(self):
        """The clock runs with the real one from where it stands."""
        self.clock("real")

    def now(self):
        """(monotonic, wall) of the driven clock, ms."""
        mono, wall = self.clock("now").split()
        return int(mono), int(wall)

    def run_to_end(self, count, tick_ms, start_ms, pace_ms):
        """An agent of --count COUNT, ticks of TICK_MS from START_MS of its clock, run (pace_ms as run()) to three
        ticks before its end; its clock then follows the real one for those and for the flushes of its end (a
        paced flush would jump past a request in flight). Returns its exit status."""
        left = start_ms + (count - 3) * tick_ms - self.now()[0]
        if left > 0:
            self.run(left, pace_ms)
        self.real()
        return self.wait()

    # ---- what it wrote ----

    def stderr(self):
        return read_text(self.err_path)

    def stderr_lines(self, text=""):
        return [line for line in self.stderr().splitlines() if text in line]

    def samples(self):
        """Every sample (a dict of its JSON line) written so far."""
        with self._lock:
            if self.out_path is not None:
                with open(self.out_path, "rb") as f:
                    f.seek(self._offset)
                    data = f.read()
                end = data.rfind(b"\n") + 1
                for line in data[:end].splitlines():
                    try:
                        self._samples.append(json.loads(line))
                    except ValueError:
                        pass
                self._offset += end
            return list(self._samples)

    def last(self):
        """The metrics of the latest sample ({} before the first)."""
        s = self.samples()
        return s[-1]["metrics"] if s else {}

    def skip(self):
        """next_sample() looks at samples written from now on."""
        self._cursor = len(self.samples())

    def next_sample(self, pred=lambda s: True, timeout=15.0, what="a sample"):
        """The first sample not looked at yet that satisfies PRED (those before it are passed); an
        AssertionError with the agent's stderr after TIMEOUT seconds."""
        def find():
            samples = self.samples()
            while self._cursor < len(samples):
                s = samples[self._cursor]
                self._cursor += 1
                if pred(s):
                    return s
            return None
        s = wait_until(find, timeout)
        if s is None:
            raise AssertionError("no sample with %s in %.0f s (exit %s); stderr:\n%s"
                                 % (what, timeout, self.proc.poll(), self.stderr()[-4000:]))
        return s

    def wait_metrics(self, pred, what, timeout=15.0):
        """The metrics of the latest sample, once they satisfy PRED."""
        def ok():
            m = self.last()
            return m if m and pred(m) else None
        m = wait_until(ok, timeout)
        if not m:
            raise AssertionError("no sample with %s in %.0f s; last: %s\nstderr:\n%s" % (
                what, timeout, {k: v for k, v in self.last().items() if k.startswith(("webhook.", "agent."))},
                self.stderr()[-4000:]))
        return m

    def wait_metric(self, name, pred, timeout=30.0):
        """The latest sample's value of metric NAME, once it satisfies PRED."""
        return self.wait_metrics(lambda m: name in m and pred(m[name]), name, timeout)[name]

    def wait_stderr(self, text, timeout=15.0, count=1):
        """Waits until stderr holds TEXT (COUNT times); an AssertionError with stderr after TIMEOUT seconds."""
        if not wait_until(lambda: self.stderr().count(text) >= count, timeout, step=0.1):
            raise AssertionError("%r not %d times in the agent's stderr in %.0f s:\n%s"
                                 % (text, count, timeout, self.stderr()[-4000:]))

    # ---- its web server ----

    def get(self, path, headers=None, timeout=10):
        """GET PATH from the agent's web server: (status, headers, body)."""
        status, hdrs, _, body = request(self.port, "GET", path, headers=headers, timeout=timeout)
        return status, hdrs, body

    def wait_web(self, path="/healthz", timeout=30.0):
        """Waits until the web server answers PATH (any status); fails at once when the agent has exited."""
        def up():
            if self.proc.poll() is not None:
                raise AssertionError("the agent exited (%d) before its web server answered:\n%s"
                                     % (self.proc.returncode, self.stderr()[-4000:]))
            try:
                request(self.port, "GET", path, timeout=5)
                return True
            except OSError:
                return False
        if not wait_until(up, timeout, step=0.1):
            raise AssertionError("the web server did not answer in %.0f s:\n%s" % (timeout, self.stderr()[-4000:]))
        return self

    def snapshot(self, headers=None):
        status, _, body = self.get("/api/v1/snapshot", headers)
        if status != 200:
            raise AssertionError("GET /api/v1/snapshot: %d %r" % (status, body[:300]))
        return json.loads(body)

    def metrics(self, headers=None):
        """The metrics of the latest sample, from /api/v1/snapshot."""
        return self.snapshot(headers)["metrics"]

    # ---- its process ----

    def running(self):
        return self.proc.poll() is None

    def send(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=60):
        """Waits for the exit of an agent that ends by itself (--count, a replay): its exit status."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("the agent did not end within %.0f s; stderr:\n%s" % (timeout, self.stderr()[-4000:]))

    def stop(self, sig=signal.SIGTERM, timeout=20.0):
        """SIG (SIGTERM), then its exit status; stop_s is how long it took. Past TIMEOUT it is killed and the
        test fails."""
        t0 = time.monotonic()
        if self.ctl is not None and self.proc.poll() is None and sig == signal.SIGTERM:
            try:
                self.real()  # a clean stop's flushes wait on its clock
            except (OSError, AssertionError):
                pass
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("the agent did not stop within %.1f s of signal %d; stderr:\n%s"
                                 % (timeout, sig, self.stderr()[-4000:]))
        self.stop_s = time.monotonic() - t0
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.ctl is not None:
            self.ctl.close()

    def rss_anon_kb(self):
        return proc_status_kb(self.pid, "RssAnon")

    def cpu_s(self):
        """User and system CPU seconds so far."""
        with open("/proc/%d/stat" % self.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
