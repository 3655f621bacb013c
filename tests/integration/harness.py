"""What the integration tests share: the agent under test, a mosquitto broker and an MQTT subscriber, a webhook
receiver, free loopback ports, waiting for a condition, files, HTTP on loopback, and a TestCase that owns a
temporary directory and stops everything its test started.

A test file runs as `test_X.py TEGRAWATCH SOURCE_ROOT [--flag ...] [unittest arguments]`:

    if __name__ == "__main__":
        BIN, SRC = harness.init(needs=("mosquitto",))   # exit 77 (skipped) when a need is missing
        harness.main()

The rules every test keeps (tests/README.md):
- servers listen on 127.0.0.1, on a port the kernel chose (free_port); nothing is sent anywhere else;
- a test waits for a condition with a generous timeout (wait_until, Agent.next_sample, Receiver.wait), never
  for a fixed time; time itself is waited for only where it is the subject: an outage's length (hold) or a
  window in which something must not happen (stays);
- one start and stop policy for the agent (Agent): stderr to a file, stdout (JSON Lines) to a file read as it
  grows, SIGTERM then a bounded wait, SIGKILL at cleanup.
"""
import http.client
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from collections import namedtuple

try:
    import paho.mqtt.client as mqtt
except ImportError:
    # Debian's python3-paho-mqtt is pure Python: usable from another python3 too
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import paho.mqtt.client as mqtt
    except ImportError:
        mqtt = None

BIN = None  # the tegrawatch binary under test (init)
SRC = None  # the source tree (init)
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
FIXTURE_BOARD = "tests/fixtures/boards/orin-nano-jp6"
with open("/proc/sys/kernel/random/boot_id") as _f:
    BOOT_ID = _f.read().strip()


# ---------------------------------------------------------------------------------------------------------------
# Running a test file


def init(needs=()):
    """Takes TEGRAWATCH and SOURCE_ROOT off the command line; exits 77 (meson: skipped) when one of NEEDS is
    missing: a program on PATH, "mosquitto" (the broker and python3-paho-mqtt) or "module:NAME"."""
    global BIN, SRC
    if len(sys.argv) < 3:
        sys.exit("usage: %s TEGRAWATCH SOURCE_ROOT [unittest arguments]" % sys.argv[0])
    BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    del sys.argv[1:3]
    missing = [n for n in needs if not _have(n)]
    if missing:
        print("skipped: needs " + ", ".join(missing))
        sys.exit(77)
    return BIN, SRC


def _have(need):
    if need == "mosquitto":
        return mqtt is not None and os.path.exists(MOSQUITTO)
    if need.startswith("module:"):
        try:
            __import__(need[len("module:"):])
            return True
        except ImportError:
            return False
    return shutil.which(need) is not None


def flag(name):
    """True when NAME (say "--slow") is on the command line; it is taken off, so unittest never sees it."""
    if name in sys.argv:
        sys.argv.remove(name)
        return True
    return False


def main():
    unittest.main(verbosity=2)


def src(*parts):
    return os.path.join(SRC, *parts)


# ---------------------------------------------------------------------------------------------------------------
# Waiting and time


def wait_until(cond, timeout=10.0, step=0.05):
    """Calls COND until it returns something true (returned) or TIMEOUT seconds pass (its last value)."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() >= end:
            return v
        time.sleep(step)


def stays(cond, seconds, step=0.05):
    """True when COND holds on every look for SECONDS: a window in which something must not happen (an
    absence cannot be waited for). Returns False at the first look it fails."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not cond():
            return False
        time.sleep(step)
    return bool(cond())


def hold(seconds):
    """Lets SECONDS of real time pass where time is what the test is about (an outage's length, a rate
    measured over a window). Everything else waits for a condition."""
    time.sleep(seconds)


# ---------------------------------------------------------------------------------------------------------------
# Files, ports, environment


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_file(path, text, mode=0o600):
    """Writes TEXT (str or bytes) to PATH whole (a new file renamed over the old: a reader sees one or the
    other), with MODE."""
    tmp = path + ".new"
    with open(tmp, "wb" if isinstance(text, bytes) else "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def read_text(path):
    with open(path, errors="replace") as f:
        return f.read()


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def read_jsonl(path):
    """The complete JSON lines of PATH (a line cut off at the end, or one that is not JSON, is left out)."""
    out = []
    with open(path, "rb") as f:
        for line in f:
            if line.endswith(b"\n"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def clean_env(extra=None):
    """This process's environment without TEGRAWATCH_* (a developer's setting must not leak into a test), in
    UTC, with EXTRA."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEGRAWATCH_")}
    env["TZ"] = "UTC"
    env.update(extra or {})
    return env


def copy_board(d, fixture=FIXTURE_BOARD, name="root"):
    """A copy of a fixture board in D that a test may write (its thermal zones, its machine id)."""
    root = os.path.join(d, name)
    shutil.copytree(src(fixture), root, symlinks=True)
    return root


def tegrawatch(args, env=None, timeout=60, **kw):
    """`tegrawatch ARGS` to its end: the CompletedProcess, text output."""
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=timeout,
                          env=clean_env(env), **kw)


def pid_alive(pid):
    """True while PID runs (a zombie or no such process: not alive)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def proc_status_kb(pid, key):
    """A "kB" line of /proc/PID/status (RssAnon, VmHWM...), 0 when absent."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


# ---------------------------------------------------------------------------------------------------------------
# HTTP on loopback


def request(port, method, path, headers=None, body=None, timeout=10):
    """One request on a fresh connection: (status, {header: value, repeats joined}, {header: [values]}, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        hdrs = {}
        for k, v in resp.getheaders():
            hdrs.setdefault(k.lower(), []).append(v)
        return resp.status, {k: ", ".join(v) for k, v in hdrs.items()}, hdrs, data
    finally:
        conn.close()


def raw_exchange(port, payload, timeout=5):
    """Sends PAYLOAD on a fresh socket and returns what comes back until close (b"" on reset)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out = b""
    try:
        try:
            s.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
            if b"\r\n\r\n" in out:
                head, _, rest = out.partition(b"\r\n\r\n")
                m = re.search(rb"(?i)content-length: (\d+)", head)
                if m and len(rest) >= int(m.group(1)):
                    break
    finally:
        s.close()
    return out


def status_of(raw):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", raw)
    return int(m.group(1)) if m else None


def header_of(raw, name):
    head = raw.partition(b"\r\n\r\n")[0].decode("latin-1")
    for line in head.split("\r\n")[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == name.lower():
            return v.strip()
    return None


# ---------------------------------------------------------------------------------------------------------------
# The agent


class Agent:
    """`tegrawatch [GLOBAL_ARGS] run ARGS [-c D/NAME.yaml]` in the background, one policy for every test:
    - CONFIG (text), when given, is written to D/NAME.yaml (mode 0600) and passed with -c;
    - stderr goes to D/NAME.err (stderr(): all of it so far, also after a crash);
    - stdout goes to D/NAME.jsonl, read as it grows (samples(), next_sample(), last()); STDOUT may name
      another target (subprocess.DEVNULL, a pipe's fd) for a test about stdout itself;
    - the environment is this one without TEGRAWATCH_*, in UTC, with ENV;
    - stop() sends SIGTERM (or SIG) and waits TIMEOUT seconds; a process still there is killed and the test
      fails with its stderr. kill() (the cleanup) is SIGKILL.
    PORT, when given, is the web server's: get(), snapshot(), metrics(), wait_web()."""

    def __init__(self, d, args, name="agent", config=None, env=None, port=None, stdout=None, global_args=(),
                 preexec=None, wrapper=()):
        self.d, self.name, self.port = d, name, port
        self.err_path = os.path.join(d, name + ".err")
        self.out_path = os.path.join(d, name + ".jsonl")
        self.cfg = None
        argv = list(wrapper) + [BIN] + list(global_args) + ["run"] + list(args)
        if config is not None:
            self.cfg = os.path.join(d, name + ".yaml")
            write_file(self.cfg, config)
            argv += ["-c", self.cfg]
        self._samples, self._offset, self._cursor = [], 0, 0
        self._lock = threading.Lock()
        self.stop_s = None
        with open(self.err_path, "ab") as err:
            if stdout is None:
                with open(self.out_path, "ab") as out:
                    self.proc = subprocess.Popen(argv, stdout=out, stderr=err, env=clean_env(env),
                                                 preexec_fn=preexec)
            else:
                self.out_path = None
                self.proc = subprocess.Popen(argv, stdout=stdout, stderr=err, env=clean_env(env),
                                             preexec_fn=preexec)
        self.pid = self.proc.pid

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

    def stop(self, sig=signal.SIGTERM, timeout=15.0):
        """SIG (SIGTERM), then its exit status; stop_s is how long it took. Past TIMEOUT it is killed and the
        test fails."""
        t0 = time.monotonic()
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

    def rss_anon_kb(self):
        return proc_status_kb(self.pid, "RssAnon")

    def cpu_s(self):
        """User and system CPU seconds so far."""
        with open("/proc/%d/stat" % self.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------------------------------------------------------
# MQTT: a real mosquitto and a subscriber


class Broker:
    """mosquitto on a free 127.0.0.1 port (or PORT) with a configuration written to D/NAME.conf; EXTRA is
    appended to it (listeners, TLS, passwords). Its log is D/NAME.log."""

    def __init__(self, d, name="broker", extra="", persistence=False, port=None):
        self.d, self.name = d, name
        self.port = port or free_port()
        self.conf = os.path.join(d, name + ".conf")
        self.log = os.path.join(d, name + ".log")
        lines = ["per_listener_settings false", "user root", "max_queued_messages 100000",
                 "listener %d 127.0.0.1" % self.port]
        if persistence:
            store = os.path.join(d, name + "-store")
            os.makedirs(store, exist_ok=True)
            lines += ["persistence true", "persistence_location %s/" % store, "autosave_interval 1"]
        else:
            lines += ["persistence false"]
        if "allow_anonymous" not in extra:
            lines.append("allow_anonymous true")
        write_file(self.conf, "\n".join(lines) + "\n" + extra, 0o644)
        self.proc = None

    def start(self, timeout=20.0):
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([MOSQUITTO, "-c", self.conf], stdout=subprocess.DEVNULL, stderr=log)

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError("mosquitto exited: " + read_text(self.log))
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return True
            except OSError:
                return False
        if not wait_until(up, timeout):
            raise RuntimeError("mosquitto did not listen in %.0f s: %s" % (timeout, read_text(self.log)))
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def reload(self):
        self.proc.send_signal(signal.SIGHUP)

    def log_text(self):
        return read_text(self.log)


class Subscriber:
    """A paho client subscribed to TOPICS (QoS 1) keeping every message: (arrival monotonic time, topic,
    payload bytes, retained)."""

    def __init__(self, port, topics, client_id="", clean=True, user=None, password=None, timeout=20.0):
        self.topics = topics
        self.msgs = []
        self.lock = threading.Lock()
        self.subscribed = threading.Event()
        self.c = mqtt.Client(client_id=client_id, clean_session=clean)
        if user:
            self.c.username_pw_set(user, password)
        self.c.on_connect = self._on_connect
        self.c.on_subscribe = lambda c, u, mid, q: self.subscribed.set()
        self.c.on_message = self._on_message
        self.c.reconnect_delay_set(min_delay=1, max_delay=1)
        self.c.connect("127.0.0.1", port, keepalive=10)
        self.c.loop_start()
        if not self.subscribed.wait(timeout):
            self.close()
            raise RuntimeError("subscriber not subscribed in %.0f s" % timeout)

    def _on_connect(self, c, userdata, flags, rc):
        if rc == 0:
            c.subscribe([(t, 1) for t in self.topics])

    def _on_message(self, c, userdata, m):
        with self.lock:
            self.msgs.append((time.monotonic(), m.topic, bytes(m.payload), bool(m.retain)))

    def all(self, topic=None):
        with self.lock:
            return [m for m in self.msgs if topic is None or m[1] == topic]

    def payloads(self, topic):
        return [m[2].decode() for m in self.all(topic)]

    def json(self, topic):
        return [json.loads(p) for p in self.payloads(topic)]

    def wait(self, cond, timeout=20.0, what=None):
        """Waits until COND(self) is true; an AssertionError naming WHAT (and what arrived) after TIMEOUT."""
        if not wait_until(lambda: cond(self), timeout):
            raise AssertionError("%s not seen in %.0f s; topics: %s" % (
                what or "the messages", timeout, sorted({m[1] for m in self.all()})))

    def wait_count(self, topic, n, timeout=20.0):
        """Waits until TOPIC has N messages; they are returned (parsed JSON)."""
        self.wait(lambda s: len(s.all(topic)) >= n, timeout, "%d messages on %s (got %d)"
                  % (n, topic, len(self.all(topic))))
        return self.json(topic)

    def wait_payload(self, topic, value, timeout=20.0, after=0):
        """Waits until VALUE (text) arrived on TOPIC, as one of its messages from number AFTER on."""
        if not wait_until(lambda: value in self.payloads(topic)[after:], timeout):
            raise AssertionError("no %s on %s in %.0f s; got %s" % (value, topic, timeout, self.payloads(topic)))

    def clear(self):
        with self.lock:
            self.msgs = []

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


def publish(port, topic, payload, retain=False):
    """One QoS 1 message, acknowledged by the broker."""
    pub = mqtt.Client()
    pub.connect("127.0.0.1", port)
    pub.loop_start()
    pub.publish(topic, payload, qos=1, retain=retain).wait_for_publish()
    pub.loop_stop()
    pub.disconnect()


def mqtt_keys(port, device, **more):
    """The `mqtt:` keys for a broker on 127.0.0.1:PORT with fast reconnects, and MORE keys (a dict)."""
    keys = {"host": "127.0.0.1", "port": port, "device_id": device, "keepalive": "5s", "backoff_base": "100ms",
            "backoff_cap": "1s"}
    keys.update(more)
    return keys


def mqtt_section(keys):
    return "mqtt:\n" + "".join("  %s: %s\n" % kv for kv in keys.items())


# a rule that fires at once: critical at samples 1-2, warning 3-5, resolved at 6
EARLY_RULE = """rules:
  - name: early
    metric: agent.samples_total
    op: below
    warning: 5
    critical: 2
"""


def make_tls(d, wrong_ca=False):
    """In D: ca.pem/ca.key, a broker certificate for 127.0.0.1 (server.pem/key) and a client certificate
    (client.pem/key, mode 0600) it signed; with WRONG_CA, wrongca.pem, a CA that signed neither."""
    def ossl(*args):
        subprocess.run(["openssl"] + list(args), check=True, capture_output=True)
    for ca in ("ca", "wrongca") if wrong_ca else ("ca",):
        ossl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", "%s/%s.key" % (d, ca), "-out", "%s/%s.pem" % (d, ca), "-days", "2",
             "-subj", "/CN=tegrawatch test %s" % ca)
    write_file("%s/server.ext" % d, "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for who, cn in (("server", "127.0.0.1"), ("client", "tegrawatch-client")):
        ossl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", "%s/%s.key" % (d, who), "-out", "%s/%s.csr" % (d, who), "-subj", "/CN=" + cn)
        ext = ["-extfile", "%s/server.ext" % d] if who == "server" else []
        ossl("x509", "-req", "-in", "%s/%s.csr" % (d, who), "-CA", "%s/ca.pem" % d, "-CAkey", "%s/ca.key" % d,
             "-CAcreateserial", "-out", "%s/%s.pem" % (d, who), "-days", "2", *ext)
    os.chmod("%s/client.key" % d, 0o600)


# ---------------------------------------------------------------------------------------------------------------
# Webhooks: a receiver


Request = namedtuple("Request", "time path headers body line raw_headers")


class Receiver:
    """A threaded HTTP receiver on 127.0.0.1 (a free port, or PORT). Each POST gets the next answer of SCRIPT,
    (status, {header: value}) or "tarpit" (held unanswered until stop), then 200 once the script is used up.
    Every request is kept as a Request: (monotonic arrival time, path, {lower-case header: value}, body, the
    request line, [(header, value)] as sent)."""

    def __init__(self, port=None, script=()):
        self.port = port or free_port()
        self.script = list(script)
        self.requests = []
        self.lock = threading.Lock()
        self.released = threading.Event()
        self.server = None

    def start(self):
        rec = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with rec.lock:
                    rec.requests.append(Request(time.monotonic(), self.path,
                                                {k.lower(): v for k, v in self.headers.items()}, body,
                                                self.requestline, list(self.headers.items())))
                    answer = rec.script.pop(0) if rec.script else (200, {})
                if answer == "tarpit":
                    rec.released.wait(60)  # holds the connection; released at stop
                    return
                status, extra = answer
                self.send_response(status)
                for k, v in extra.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.released.clear()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.server:
            self.released.set()
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def url(self, path="/"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def got(self, path=None):
        with self.lock:
            return [r for r in self.requests if path is None or r.path == path]

    def bodies(self, path=None):
        return [json.loads(r.body) for r in self.got(path)]

    def wait(self, n, path=None, timeout=20.0):
        """Waits until N requests (to PATH) arrived; they are returned."""
        if not wait_until(lambda: len(self.got(path)) >= n, timeout):
            raise AssertionError("%s: %d requests in %.0f s, expected %d" % (path, len(self.got(path)), timeout, n))
        return self.got(path)


# ---------------------------------------------------------------------------------------------------------------
# A test case that cleans up after itself


class TestCase(unittest.TestCase):
    """self.d: a temporary directory, removed after the test; agent(), broker(), sub() and receiver() start
    what they name and stop it after the test (last started, first stopped)."""

    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="tw-%s-" % type(self).__name__.lower())
        self.addCleanup(shutil.rmtree, self.d, True)

    def path(self, name, text=None, mode=0o600):
        """D/NAME; written with TEXT when given."""
        p = os.path.join(self.d, name)
        if text is not None:
            write_file(p, text, mode)
        return p

    def agent(self, args, **kw):
        a = Agent(self.d, args, **kw)
        self.addCleanup(a.kill)
        return a

    def broker(self, **kw):
        b = Broker(self.d, **kw).start()
        self.addCleanup(b.stop)
        return b

    def sub(self, port, topics, **kw):
        s = Subscriber(port, topics, **kw)
        self.addCleanup(s.close)
        return s

    def mqtt_agent(self, name, keys, args=("--demo", "--speed", "10"), extra="", web="", stdout=subprocess.DEVNULL,
                   **kw):
        """An agent (-v) publishing with the mqtt KEYS (mqtt_keys()), no state file; EXTRA: more
        configuration; WEB: web.listen. Its stdout is not kept unless STDOUT is None (kept in a file)."""
        config = 'agent:\n  state_file: ""\nweb:\n  listen: "%s"\n' % web + mqtt_section(keys) + extra
        return self.agent(["-v"] + list(args), name=name, config=config, stdout=stdout, **kw)

    def receiver(self, **kw):
        r = Receiver(**kw).start()
        self.addCleanup(r.stop)
        return r

    def spawn(self, argv, **kw):
        """Another program in the background, killed after the test."""
        p = subprocess.Popen(argv, **kw)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        return p

    def assertStays(self, cond, seconds, msg=None):
        """COND holds for SECONDS (see stays())."""
        if not stays(cond, seconds):
            self.fail(msg() if callable(msg) else (msg or "the condition stopped holding within %.1f s" % seconds))
