"""What the fleet tests (test_remote_write.py, test_otlp.py, test_fleet.py) start on 127.0.0.1 and read back:
a real Prometheus with its remote-write receiver, a proxy in front of it that can refuse, delay or record,
and parsers for the Prometheus text format and the fleet spool file. Free loopback ports only."""
import json
import os
import shutil
import struct
import subprocess
import urllib.parse
import urllib.request

from .base import end_process, free_port, read_text, wait_until, write_file

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
# Families absent by design in some samples: no forecast while the fit has too few blocks or the zone settles below
# its trip (docs/prediction.md). Their points are samples' points, once each, but not every sample has one.
SOMETIMES = frozenset({"tegrawatch_steady_temperature_celsius", "tegrawatch_throttle_eta_seconds",
                       "tegrawatch_throttle_eta_error_seconds"})


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
            raise AssertionError("prometheus did not start:\n" + read_text(self.log)[-3000:])
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
        end_process(self.proc, 60)
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
