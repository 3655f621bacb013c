"""What the fleet tests (test_remote_write.py, test_otlp.py, test_fleet.py) start on 127.0.0.1 and read back:
a real Prometheus with its remote-write receiver, a proxy in front of it that can refuse, delay or record,
the agent, and parsers for the Prometheus text format and the fleet spool file. Free loopback ports only."""
import http.client
import http.server
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
import urllib.parse
import urllib.request

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(pred, timeout, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def write_file(path, text, mode=0o600):
    with open(path + ".new", "w") as f:
        f.write(text)
    os.chmod(path + ".new", mode)
    os.replace(path + ".new", path)


class Prometheus:
    """Debian's prometheus with --web.enable-remote-write-receiver and an out-of-order window of 30 days,
    on a data directory that survives stop() and start() (a receiver outage)."""

    def __init__(self, d, web_config=None):
        self.d = d
        self.port = free_port()
        self.data = os.path.join(d, "prom-data")
        self.cfg = os.path.join(d, "prometheus.yml")
        write_file(self.cfg, "global: {}\nstorage:\n  tsdb:\n    out_of_order_time_window: 30d\n", 0o644)
        self.web_config = None
        if web_config:
            self.web_config = os.path.join(d, "prom-web.yml")
            write_file(self.web_config, web_config, 0o644)
        self.proc = None
        self.log = os.path.join(d, "prometheus.log")

    def start(self):
        args = [PROMETHEUS, "--config.file=" + self.cfg, "--storage.tsdb.path=" + self.data,
                "--web.listen-address=127.0.0.1:%d" % self.port, "--web.enable-remote-write-receiver",
                "--storage.tsdb.retention.time=100y"]
        if self.web_config:
            args.append("--web.config.file=" + self.web_config)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=log)
        if not wait_until(self.ready, 60, 0.2):
            raise AssertionError("prometheus did not start:\n" + open(self.log).read()[-3000:])
        return self

    def ready(self):
        try:
            req = urllib.request.Request(self.url("/-/ready"))
            if self.web_config:
                req.add_header("Authorization", "Basic " + AUTH_OK)
            with urllib.request.urlopen(req, timeout=2) as r:
                return r.status == 200
        except Exception:
            return False

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def api(self, path, **params):
        req = urllib.request.Request(self.url(path) + "?" + urllib.parse.urlencode(params))
        if self.web_config:
            req.add_header("Authorization", "Basic " + AUTH_OK)
        with urllib.request.urlopen(req, timeout=30) as r:
            doc = json.loads(r.read())
        assert doc["status"] == "success", doc
        return doc["data"]

    def raw(self, selector, at_s, window="30d"):
        """Every raw sample of SELECTOR up to AT_S: {frozenset(labels): [(ts_ms, value)]}."""
        out = {}
        for r in self.api("/api/v1/query", query="%s[%s]" % (selector, window), time="%.3f" % at_s)["result"]:
            key = frozenset(r["metric"].items())
            out[key] = [(int(round(float(t) * 1000)), float(v)) for t, v in r["values"]]
        return out


# user "fleet", password "right" (bcrypt, made with crypt's METHOD_BLOWFISH; Prometheus's basic_auth_users)
AUTH_OK = "ZmxlZXQ6cmlnaHQ="


def bcrypt_web_config(user, password):
    import warnings
    warnings.simplefilter("ignore", DeprecationWarning)
    import crypt  # deprecated but present in 3.11; libxcrypt does bcrypt
    h = crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16))  # cost 4: fast
    return "basic_auth_users:\n  %s: '%s'\n" % (user, h)


class Proxy:
    """A receiver on 127.0.0.1 in front of TARGET (a URL): each POST is recorded (time, headers, body
    size), then answered by ANSWER(request) if it returns (status, headers), else forwarded and the
    target's answer relayed. DELAY seconds before answering, if set."""

    def __init__(self, target=None, answer=None, delay=0.0):
        self.port = free_port()
        self.target = target
        self.answer = answer
        self.delay = delay
        self.requests = []
        self.lock = threading.Lock()
        self.server = None

    def start(self):
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                req = {"t": time.monotonic(), "path": self.path, "body": body,
                       "headers": {k.lower(): v for k, v in self.headers.items()}}
                with proxy.lock:
                    proxy.requests.append(req)
                if proxy.delay:
                    time.sleep(proxy.delay)
                got = proxy.answer(req) if proxy.answer else None
                if got is None and proxy.target:
                    got = forward(proxy.target, req)
                status, headers, reply = got if len(got) == 3 else (got[0], got[1], b"")
                req["status"] = status
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except OSError:
                    pass  # the agent gave up on this request (killed, or its timeout)

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            request_queue_size = 128  # a fleet connects at once
            daemon_threads = True
        self.server = Server(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def url(self, path="/"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def got(self):
        with self.lock:
            return list(self.requests)


def forward(target, req):
    u = urllib.parse.urlparse(target)
    keep = ("content-type", "content-encoding", "x-prometheus-remote-write-version", "authorization")
    try:
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        c.request("POST", u.path, body=req["body"], headers={k: v for k, v in req["headers"].items() if k in keep})
        r = c.getresponse()
        reply = r.read()
        c.close()
        return r.status, {}, reply
    except OSError:
        return 502, {}, b""  # the target is down (a test stopped it)


class Agent:
    """`tegrawatch run` with config TEXT and ARGS; JSON Lines kept (one dict per sample), stderr to a file."""

    def __init__(self, d, name, text, args, env=None):
        self.cfg = os.path.join(d, name + ".yaml")
        self.errpath = os.path.join(d, name + ".err")
        write_file(self.cfg, text)
        e = dict(os.environ, TZ="UTC")
        for k in list(e):
            if k.startswith("TEGRAWATCH_"):
                del e[k]
        e.update(env or {})
        self.samples = []
        self.lock = threading.Lock()
        with open(self.errpath, "wb") as err:
            self.proc = subprocess.Popen([BIN[0], "run", "-c", self.cfg, "--json"] + list(args),
                                         stdout=subprocess.PIPE, stderr=err, env=e)
        self.pid = self.proc.pid
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            doc = json.loads(line)
            with self.lock:
                self.samples.append(doc)

    def stderr(self):
        with open(self.errpath, errors="replace") as f:
            return f.read()

    def all(self):
        with self.lock:
            return list(self.samples)

    def last(self):
        with self.lock:
            return self.samples[-1]["metrics"] if self.samples else {}

    def wait_metric(self, name, pred, timeout=30):
        ok = wait_until(lambda: name in self.last() and pred(self.last()[name]), timeout)
        if not ok:
            raise AssertionError("%s never right: %s\nstderr:\n%s" % (name, self.last().get(name),
                                                                     self.stderr()[-3000:]))

    def wait_exit(self, timeout=120):
        rc = self.proc.wait(timeout)
        self.reader.join(10)
        self.proc.stdout.close()
        return rc

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait_exit(timeout)


BIN = [None]  # set by each test's main


def parse_exposition(text):
    """The Prometheus text format: {frozenset(labels with __name__): value}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, value = line.rsplit(" ", 1)
        labels = {}
        if "{" in head:
            name, rest = head.split("{", 1)
            rest = rest[:-1]
            i = 0
            while i < len(rest):
                eq = rest.index("=", i)
                key = rest[i:eq]
                j = eq + 2
                val = []
                while rest[j] != '"':
                    if rest[j] == "\\":
                        j += 1
                        val.append({"n": "\n"}.get(rest[j], rest[j]))
                    else:
                        val.append(rest[j])
                    j += 1
                labels[key] = "".join(val)
                i = j + 2 if j + 1 < len(rest) and rest[j + 1] == "," else j + 1
        else:
            name = head
        labels["__name__"] = name
        out[frozenset(labels.items())] = float(value)
    return out


def spool_records(path):
    """The data records of a spool file (core/spool.h), decoded as fleet sample records: [(seq, time_ms)]."""
    with open(path, "rb") as f:
        data = f.read()
    out, off = [], 0
    while off + 12 <= len(data):
        magic, length, _crc = struct.unpack_from("<III", data, off)
        body = data[off + 12:off + 12 + length]
        off += 12 + length
        if magic != 0x445053FE:
            continue
        topic_len = struct.unpack_from("<H", body, 10)[0]
        rec = body[12 + topic_len:]
        seq, i = varint(rec, 1)
        t, i = varint(rec, i)
        out.append((seq, (t >> 1) ^ -(t & 1)))
    return out


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i
