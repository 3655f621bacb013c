"""HTTP on loopback: requests as a client, and a receiver for webhooks."""
import http.client
import http.server
import json
import re
import socket
import threading
import time
import urllib.parse

from . import base
from .base import free_port, wait_until


# ---------------------------------------------------------------------------------------------------------------
# HTTP on loopback


def demo_values(path):
    """Values of a demo recording by 1-based data line (= sample seq): temp.tj_c, power.vdd_in.mw, gpu.freq_mhz."""
    lines = {}
    seq = 0
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            seq += 1
            v = {}
            v["temp.tj_c"] = float(re.search(r"\btj@([0-9.]+)C", line).group(1))
            v["power.vdd_in.mw"] = float(re.search(r"\bVDD_IN (\d+)mW/", line).group(1))
            v["gpu.freq_mhz"] = float(max(re.search(r"GR3D_FREQ \d+%@\[([0-9,]+)\]", line).group(1).split(","),
                                          key=int))
            lines[seq] = v
    return lines


WEB_TIMEOUT_S = 3  # web.connection_timeout in web_config()
WEB_PER_IP = 8  # web.max_connections_per_ip in web_config()


def web_config(port, extra_web="", listen=None):
    """The web tests' configuration: the shipped rules, a rule that fires from sample 20, the server on
    127.0.0.1:PORT (or LISTEN) with EXTRA_WEB keys."""
    return f"""agent:
  board_name: web-test
  state_file: ""
include:
  - {base.SRC}/configs/rules.d/*.yaml
web:
  listen: "{listen or f"127.0.0.1:{port}"}"
  max_connections: 32
  max_connections_per_ip: {WEB_PER_IP}
  connection_timeout: {WEB_TIMEOUT_S}s
{extra_web}rules:
  - name: web-test-early
    metric: agent.samples_total
    warning: 20
    for: 1s
    repeat: 5s
    summary: "sample {{{{value}}}}"
"""


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
# Webhooks: a receiver


class Request:
    """One request a Receiver got: its monotonic arrival time, path, {lower-case header: value}, body, request
    line, [(header, value)] as sent, and the status it was answered with (None until then)."""

    def __init__(self, path, headers, body, line, raw_headers):
        self.time, self.path, self.headers, self.body = time.monotonic(), path, headers, body
        self.line, self.raw_headers, self.status = line, raw_headers, None


def forward(target, req):
    """REQ posted on to TARGET (a URL): (status, headers, body); 502 when nothing answers there."""
    u = urllib.parse.urlparse(target)
    keep = ("content-type", "content-encoding", "x-prometheus-remote-write-version", "authorization")
    try:
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        c.request("POST", u.path, body=req.body, headers={k: v for k, v in req.headers.items() if k in keep})
        r = c.getresponse()
        reply = r.read()
        c.close()
        return r.status, {}, reply
    except OSError:
        return 502, {}, b""  # the target is down (a test stopped it)


class Receiver:
    """A threaded HTTP receiver on 127.0.0.1 (a free port, or PORT) keeping every POST as a Request. Its answer:
    the next of SCRIPT, (status, {header: value}) or "tarpit" (held unanswered until stop); once the script is
    used up, ANSWER(request) when it returns (status, headers[, body]); else the answer of TARGET (a URL the
    request is forwarded to: a proxy that records); else 200. DELAY seconds pass before each answer."""

    def __init__(self, port=None, script=(), answer=None, target=None, delay=0.0):
        self.port = port or free_port()
        self.script = list(script)
        self.answer, self.target, self.delay = answer, target, delay
        self.requests = []
        self.lock = threading.Lock()
        self.released = threading.Event()
        self.server = None

    def respond(self, req):
        with self.lock:
            if self.script:
                return self.script.pop(0)
        got = self.answer(req) if self.answer else None
        if got is None and self.target:
            got = forward(self.target, req)
        return got or (200, {})

    def start(self):
        rec = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                req = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body, self.requestline,
                              list(self.headers.items()))
                with rec.lock:
                    rec.requests.append(req)
                if rec.delay:
                    time.sleep(rec.delay)  # a slow receiver: the delay is what it is about
                answer = rec.respond(req)
                if answer == "tarpit":
                    rec.released.wait(60)  # holds the connection; released at stop
                    return
                status, extra, reply = answer if len(answer) == 3 else (answer[0], answer[1], b"")
                req.status = status
                try:
                    self.send_response(status)
                    for k, v in extra.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except OSError:
                    pass  # the client gave up on this request (killed, or its timeout)

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            request_queue_size = 128  # a fleet of agents connects at once
            daemon_threads = True

        self.released.clear()
        self.server = Server(("127.0.0.1", self.port), Handler)
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
