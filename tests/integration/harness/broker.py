"""MQTT: a real mosquitto, a subscriber, and what the spool file and TLS tests share."""
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib

from .base import end_process, MOSQUITTO, free_port, read_bytes, read_text, wait_until, write_file

try:
    import paho.mqtt.client as mqtt
except ImportError:
    # Debian's python3-paho-mqtt is pure Python: usable from another python3 too
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import paho.mqtt.client as mqtt
    except ImportError:
        mqtt = None


# ---------------------------------------------------------------------------------------------------------------
# MQTT: a real mosquitto and a subscriber


class Broker:
    """mosquitto on a free 127.0.0.1 port (or PORT) with a configuration written to D/NAME.conf; EXTRA is
    appended to it (listeners, TLS, passwords). Its log is D/NAME.log."""

    def __init__(self, d, name="broker", extra="", persistence=False, port=None):
        self.d, self.name = d, name
        self.port = port or free_port()
        self.store = None
        self.conf = os.path.join(d, name + ".conf")
        self.log = os.path.join(d, name + ".log")
        lines = ["per_listener_settings false", "user root", "max_queued_messages 100000",
                 "listener %d 127.0.0.1" % self.port]
        if persistence:
            store = self.store = os.path.join(d, name + "-store")
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

    def wait_saved(self, timeout=20.0):
        """With persistence: waits until the broker has saved its state as it is now (its next autosave, within
        a second): the sessions and subscriptions made so far survive a SIGKILL."""
        db = os.path.join(self.store, "mosquitto.db")
        since = time.time()
        if not wait_until(lambda: os.path.exists(db) and os.stat(db).st_mtime > since, timeout):
            raise AssertionError("mosquitto did not save its state in %.0f s: %s" % (timeout, self.log_text()))

    def stop(self):
        end_process(self.proc, 10)
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

    def sync(self, topic, timeout=20.0):
        """Publishes a marker to TOPIC (inside the subscription) and waits for it: every message the broker
        queued for this subscriber before it (the retained ones at subscribe time, say) has arrived."""
        marker = b"sync %d" % time.monotonic_ns()
        self.c.publish(topic, marker, qos=1)
        self.wait(lambda s: marker in [m[2] for m in s.all(topic)], timeout, "the sync marker on " + topic)

    def clear(self):
        with self.lock:
            self.msgs = []

    def close(self):
        # DISCONNECT first: it wakes paho's loop thread, which then ends at once (stopped first, it finishes its
        # 1 s select)
        self.c.disconnect()
        self.c.loop_stop()


def publish(port, topic, payload, retain=False):
    """One QoS 1 message, acknowledged by the broker."""
    pub = mqtt.Client()
    pub.connect("127.0.0.1", port)
    pub.loop_start()
    pub.publish(topic, payload, qos=1, retain=retain).wait_for_publish()
    pub.disconnect()  # then the loop thread ends at once (Subscriber.close)
    pub.loop_stop()


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


def dedup_seqs(states):
    """The state seqs in arrival order without repeats, and the repeat count."""
    seen, order, dups = set(), [], 0
    for s in states:
        if (s["boot_id"], s["seq"]) in seen:
            dups += 1
            continue
        seen.add((s["boot_id"], s["seq"]))
        order.append(s["seq"])
    return order, dups


def parse_spool(path):
    """Valid, not yet acknowledged data records of a spool file (layout: core/spool_priv.h)."""
    data = read_bytes(path)
    off, recs, ack = 0, [], 0
    while off + 12 <= len(data):
        magic, length, crc = struct.unpack_from("<III", data, off)
        end = off + 12 + length
        if magic in (0x445053FE, 0x415053FE) and end <= len(data) and \
                zlib.crc32(data[off + 4:off + 8] + data[off + 12:end]) == crc:
            body = data[off + 12:end]
            if magic == 0x445053FE:
                rid, _qos, _retain, tlen = struct.unpack_from("<QBBH", body)
                recs.append({"off": off, "len": end - off, "id": rid, "topic": body[12:12 + tlen].decode(),
                             "payload": body[12 + tlen:]})
            else:
                ack = max(ack, struct.unpack("<Q", body)[0])
            off = end
        else:
            off += 1
    return [r for r in recs if r["id"] > ack]


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
