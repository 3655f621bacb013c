#!/usr/bin/env python3
"""MQTT end to end against a real mosquitto broker started here on a free
127.0.0.1 port (never any other address): topics and payloads, retained
availability and info, the last will, a clean stop, a 30 s broker outage at
10 Hz, the spool file across an agent crash and after damage, TLS, username
and password, Home Assistant discovery.

Usage: test_mqtt.py TEGRAWATCH SOURCE_ROOT
Needs: mosquitto, mosquitto_passwd, openssl, python3-paho-mqtt (exit 77 = skipped without them).
"""
import json
import re
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import zlib

try:
    import paho.mqtt.client as mqtt
except ImportError:
    # Debian's python3-paho-mqtt is pure Python: usable from another python3 too
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import paho.mqtt.client as mqtt
    except ImportError:
        mqtt = None

BIN = None
SRC = None
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
with open("/proc/sys/kernel/random/boot_id") as _f:
    BOOT_ID = _f.read().strip()
STATE_KEYS = ["ts", "time_ms", "boot_id", "seq", "power_mode", "metrics", "throttle"]
AGENT_COUNTERS = ["agent.mqtt_connected", "agent.mqtt_connects_total", "agent.mqtt_disconnects_total",
                  "agent.mqtt_publishes_total", "agent.mqtt_spool_depth", "agent.mqtt_dropped_total",
                  "agent.mqtt_spool_corrupt_total"]
# rules that fire at once: critical at samples 1-2, warning 3-5, resolved at 6
EARLY_RULE = """rules:
  - name: early
    metric: agent.samples_total
    op: below
    warning: 5
    critical: 2
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(pred, timeout, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return bool(pred())


def write_file(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


class Broker:
    """mosquitto with a generated configuration in DIR."""

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

    def start(self):
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([MOSQUITTO, "-c", self.conf], stdout=subprocess.DEVNULL, stderr=log)

        def up():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return True
            except OSError:
                return False
        if not wait_until(up, 10):
            raise RuntimeError("mosquitto did not start: " + open(self.log).read())
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


class Sub:
    """A paho subscriber keeping every message with its arrival time."""

    def __init__(self, port, topics, client_id="", clean=True, user=None, password=None):
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
        if not self.subscribed.wait(10):
            raise RuntimeError("subscriber not subscribed")

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

    def clear(self):
        with self.lock:
            self.msgs = []

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


class Agent:
    """tegrawatch run on the demo recording (or ARGS) with an MQTT configuration."""

    def __init__(self, d, name, mqtt_cfg, args=("--demo", "--speed", "10"), env=None, extra=""):
        self.cfg = os.path.join(d, name + ".yaml")
        self.errpath = os.path.join(d, name + ".err")
        text = 'agent:\n  state_file: ""\nweb:\n  listen: ""\nmqtt:\n'
        for k, v in mqtt_cfg.items():
            text += "  %s: %s\n" % (k, v)
        write_file(self.cfg, text + extra)
        e = dict(os.environ, TZ="UTC")
        e.update(env or {})
        with open(self.errpath, "wb") as err:
            self.proc = subprocess.Popen([BIN, "run", "-v"] + list(args) + ["-c", self.cfg],
                                         stdout=subprocess.DEVNULL, stderr=err, env=e)

    def stderr(self):
        with open(self.errpath, errors="replace") as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)

    def rss_anon_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
        return 0

    def cpu_s(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def publish_once(port, topic, payload):
    pub = mqtt.Client()
    pub.connect("127.0.0.1", port)
    pub.loop_start()
    pub.publish(topic, payload, qos=1).wait_for_publish()
    pub.loop_stop()
    pub.disconnect()


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def base_cfg(port, device, **more):
    cfg = {"host": "127.0.0.1", "port": port, "device_id": device, "keepalive": "5s",
           "backoff_base": "100ms", "backoff_cap": "1s"}
    cfg.update(more)
    return cfg


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
    """Valid, not yet acknowledged data records of a spool file (layout: core/spool.h)."""
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


class MqttTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="tw-mqtt-")
        self.cleanup = []

    def tearDown(self):
        for fn in reversed(self.cleanup):
            try:
                fn()
            except Exception:
                pass
        shutil.rmtree(self.d, ignore_errors=True)

    def broker(self, **kw):
        b = Broker(self.d, **kw).start()
        self.cleanup.append(b.stop)
        return b

    def sub(self, port, topics, **kw):
        s = Sub(port, topics, **kw)
        self.cleanup.append(s.close)
        return s

    def agent(self, name, cfg, **kw):
        a = Agent(self.d, name, cfg, **kw)
        self.cleanup.append(lambda: a.stop(signal.SIGKILL))
        return a

    def wait_status(self, sub, topic, value, timeout):
        self.assertTrue(wait_until(lambda: value in sub.payloads(topic), timeout),
                        "no %s on %s; got %s" % (value, topic, sub.payloads(topic)))

    # ---- topics, payloads, retained ----

    def test_topics_and_payloads(self):
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/#", "homeassistant/#"])
        a = self.agent("a", base_cfg(b.port, "t1", metric_topics='[temp.tj_c, "gpu.*_pct"]'),
                       args=("--demo", "--speed", "10", "--count", "40"), extra=EARLY_RULE)
        self.assertEqual(a.proc.wait(30), 0, a.stderr())
        wait_until(lambda: "offline" in s.payloads("tegrawatch/t1/status"), 5)

        self.assertEqual(s.payloads("tegrawatch/t1/status"), ["online", "offline"])
        # info: the demo board, its power modes, the agent
        info = s.json("tegrawatch/t1/info")[-1]
        version = subprocess.run([BIN, "version"], capture_output=True, text=True).stdout.split()[1]
        self.assertEqual(info["device_id"], "t1")
        self.assertEqual(info["model"], "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super")
        self.assertEqual((info["soc"], info["l4t"], info["jetpack"]), ("tegra234", "36.4.3", "6.2"))
        self.assertEqual([m["name"] for m in info["power_modes"]], ["15W", "25W", "MAXN_SUPER", "7W"])
        self.assertEqual(info["agent_version"], version)
        self.assertEqual(info["boot_id"], BOOT_ID)
        # state: one per sample, the documented keys, one seq counter shared with alerts
        states = s.json("tegrawatch/t1/state")
        self.assertEqual(len(states), 40)
        # limits: once for the 40 samples (the demo's limits never change), with the first state's seq
        limits = s.json("tegrawatch/t1/limits")
        self.assertEqual([x["seq"] for x in limits], [states[0]["seq"]])
        self.assertEqual(limits[0]["metrics"]["trip.tj.passive_c"], 95)
        for st in states:
            self.assertEqual(list(st), STATE_KEYS)
            self.assertNotIn("trip.tj.passive_c", st["metrics"])
            self.assertEqual(st["boot_id"], BOOT_ID)
            self.assertEqual(st["power_mode"], "MAXN_SUPER")
            for c in AGENT_COUNTERS:
                self.assertIn(c, st["metrics"])
        self.assertEqual(states[0]["ts"], "2025-03-14T10:00:00")
        self.assertEqual(states[0]["time_ms"], 1741946400000)
        self.assertEqual(states[0]["metrics"]["agent.samples_total"], 1)
        self.assertEqual(states[-1]["metrics"]["agent.mqtt_connected"], 1)
        self.assertEqual(states[-1]["metrics"]["agent.mqtt_connects_total"], 1)
        self.assertEqual(states[-1]["metrics"]["agent.mqtt_dropped_total"], 0)
        self.assertEqual(states[0]["throttle"], {"active": False, "reasons": {}, "context": "power mode MAXN_SUPER",
                                                 "causes": []})
        # alerts: one event per transition (pending/cancelled never), QoS 1, not retained
        alerts = s.json("tegrawatch/t1/alerts")
        self.assertEqual([(x["transition"], x["severity"]) for x in alerts],
                         [("firing", "critical"), ("deescalated", "warning"), ("resolved", "warning")])
        for x in alerts:
            self.assertEqual((x["boot_id"], x["rule"], x["metric"]), (BOOT_ID, "early", "agent.samples_total"))
        seqs = sorted([x["seq"] for x in alerts] + [x["seq"] for x in states])
        self.assertEqual(seqs, list(range(seqs[0], seqs[0] + 43)))
        # alerts/active: the alert while it fires, then an empty list
        active = s.json("tegrawatch/t1/alerts/active")
        self.assertEqual(active[-1], [])
        self.assertIn(["early"], [[x["rule"] for x in lst] for lst in active])
        # throttle: retained, on change only (the first 40 demo samples never throttle)
        self.assertEqual(s.json("tegrawatch/t1/throttle"),
                         [{"active": False, "reasons": {}, "context": "power mode MAXN_SUPER", "causes": []}])
        # per-metric topics: only the allow-listed metrics, plain numbers
        metric_topics = sorted({m[1] for m in s.all() if "/metric/" in m[1]})
        self.assertEqual(metric_topics, ["tegrawatch/t1/metric/gpu.load_pct", "tegrawatch/t1/metric/temp.tj_c"])
        tj = s.payloads("tegrawatch/t1/metric/temp.tj_c")
        self.assertGreaterEqual(len(tj), 35)
        self.assertTrue(all(40 < float(v) < 50 for v in tj), tj)

        # a subscriber arriving later gets the retained topics
        late = self.sub(b.port, ["tegrawatch/#", "homeassistant/#"])
        wait_until(lambda: len(late.all()) >= 5, 3)
        retained = {m[1]: m[2].decode() for m in late.all() if m[3]}
        self.assertEqual(retained["tegrawatch/t1/status"], "offline")
        self.assertEqual(json.loads(retained["tegrawatch/t1/info"])["device_id"], "t1")
        self.assertEqual(json.loads(retained["tegrawatch/t1/alerts/active"]), [])
        self.assertIn("tegrawatch/t1/throttle", retained)
        self.assertEqual(json.loads(retained["tegrawatch/t1/limits"]), limits[0])
        self.assertIn("homeassistant/sensor/t1_temp_tj_c/config", retained)
        self.assertIn("tegrawatch/t1/ha", retained)  # the view Home Assistant reads: the present at once
        self.assertNotIn("tegrawatch/t1/state", retained)
        self.assertNotIn("tegrawatch/t1/alerts", retained)

    # ---- Home Assistant ----

    def test_unread_stdout_pipe(self):
        """A stdout pipe nobody reads never stops sampling, alerts, MQTT or the dashboard."""
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/#"])
        web_port = free_port()
        cfg = os.path.join(self.d, "pipe.yaml")
        text = ('agent:\n  state_file: ""\nweb:\n  listen: 127.0.0.1:%d\nmqtt:\n' % web_port +
                "".join("  %s: %s\n" % kv for kv in base_cfg(b.port, "pipe").items()) +
                "include: [%s/configs/rules.d/*.yaml]\n" % SRC)
        write_file(cfg, text)
        r, w = os.pipe()  # we keep the read end and never read it
        self.cleanup.append(lambda: os.close(r))
        with open(os.path.join(self.d, "pipe.err"), "wb") as err:
            p = subprocess.Popen([BIN, "run", "--demo", "--speed", "15", "-c", cfg], stdout=w, stderr=err)
        os.close(w)
        self.cleanup.append(lambda: p.poll() is None and (p.kill(), p.wait()))
        time.sleep(45)  # three quarters of the demo, far past what the pipe holds (~16 samples)
        with socket.create_connection(("127.0.0.1", web_port), timeout=5) as c:
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            reply = c.recv(4096).decode(errors="replace")
        self.assertTrue(reply.startswith("HTTP/1.1 200"), reply)
        self.assertEqual(p.wait(60), 0)
        states = s.json("tegrawatch/pipe/state")
        last = states[-1]["metrics"]
        self.assertEqual(last["agent.samples_total"], 900)
        self.assertGreater(last["agent.json_lines_dropped_total"], 500)
        self.assertGreaterEqual(len(states), 890)
        self.assertTrue([x for x in s.json("tegrawatch/pipe/alerts") if x["transition"] == "firing"])

    def render_every_template(self, configs, views=()):
        """Every template renders in a strict Jinja2 environment, with its metric present and absent, on a
        made-up payload and on each real view in VIEWS."""
        import jinja2
        env = jinja2.Environment(undefined=jinja2.StrictUndefined)
        env.filters.setdefault("tojson", lambda v: json.dumps(v))
        state = {"ts": "2025-03-14T10:00:00", "time_ms": 1, "boot_id": BOOT_ID, "seq": 1, "power_mode": "MAXN",
                 "metrics": {"agent.alerts_firing": 2, "temp.tj_c": 61.5, "power.vdd_in.mw": 7543},
                 "throttle": {"active": True, "reasons": {"thermal": "tj at 95.2 C"}, "context": ""}}
        rendered = 0
        for topic, c in configs.items():
            for key in ("value_template", "json_attributes_template"):
                if key not in c:
                    continue
                tmpl = env.from_string(c[key])
                names = [m for m in re.findall(r"metrics\['([^']+)'\]", c[key])]
                present = json.loads(json.dumps(state))
                for m in names:
                    present["metrics"].setdefault(m, 1234.5)
                out = tmpl.render(value_json=present)
                self.assertNotEqual(out, "None", (topic, key))
                absent = json.loads(json.dumps(state))
                absent["power_mode"] = None
                for m in names:
                    absent["metrics"].pop(m, None)
                out = tmpl.render(value_json=absent)  # raises on anything undefined
                if names or "power_mode" in c[key]:
                    self.assertEqual(out, "None", (topic, key))  # HA shows "unknown"
                rendered += 1
        self.assertGreater(rendered, 10)
        power = env.from_string(configs["homeassistant/sensor/ha1_power_vdd_in_mw/config"]["value_template"])
        self.assertEqual(power.render(value_json=state), "7.543")
        thr = configs["homeassistant/binary_sensor/ha1_throttled_thermal/config"]["value_template"]
        self.assertEqual(env.from_string(thr).render(value_json=state), "ON")
        thr = configs["homeassistant/binary_sensor/ha1_throttled_freq_cap/config"]["value_template"]
        self.assertEqual(env.from_string(thr).render(value_json=state), "OFF")
        # the real view: every template renders; a metric the view carries gives its value, one it lacks None
        self.assertTrue(views)
        for view in views:
            for topic, c in configs.items():
                for key in ("value_template", "json_attributes_template"):
                    if key not in c:
                        continue
                    out = env.from_string(c[key]).render(value_json=view)
                    names = re.findall(r"metrics\['([^']+)'\]", c[key])
                    for m in names:
                        self.assertEqual(out == "None", m not in view["metrics"], (topic, out))

    def test_throttle_topic_on_change_only(self):
        """The retained throttle topic follows the reasons and their sources, not every temperature."""
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/thr/throttle", "tegrawatch/thr/state"])
        a = self.agent("thr", base_cfg(b.port, "thr"), args=("--demo", "--speed", "0"))
        self.assertEqual(a.proc.wait(120), 0, a.stderr())
        self.assertTrue(wait_until(lambda: len(s.json("tegrawatch/thr/state")) >= 900, 30))
        states = s.json("tegrawatch/thr/state")
        throttled = [x for x in states if x["throttle"]["active"]]
        self.assertGreater(len(throttled), 60)  # the demo's episode lasts minutes
        pubs = s.json("tegrawatch/thr/throttle")
        self.assertLessEqual(len(pubs), 12, [p["causes"] for p in pubs])
        self.assertGreaterEqual(len(pubs), 3)  # calm, throttled, calm again at least
        causes = [c for p in pubs for c in p["causes"]]
        self.assertTrue(causes)
        for c in causes:
            self.assertEqual(set(c), {"reason", "kind", "source", "value", "limit"})
            self.assertIn(c["reason"], ("thermal", "overcurrent", "rail_alarm", "freq_cap"))
        self.assertIn(("thermal", "trip", "tj"), {(c["reason"], c["kind"], c["source"]) for c in causes})
        self.assertFalse(pubs[-1]["active"])

    def test_late_metrics_get_entities(self):
        """tegrastats starting after sysfs: its metrics get entities without a reconnect."""
        b = self.broker()
        s = self.sub(b.port, ["homeassistant/#"])
        root = os.path.join(self.d, "board")
        shutil.copytree(os.path.join(SRC, "tests/fixtures/boards/orin-nano-jp6"), root, symlinks=True)
        fake = os.path.join(self.d, "late-tegrastats")
        write_file(fake, "#!/bin/sh\nsleep 3\nwhile :; do\n"
                   "echo 'RAM 2000/7620MB (lfb 4x4MB) CPU [5%@729,4%@729] AO@45.5C'\nsleep 0.2\ndone\n", 0o755)
        a = self.agent("late", base_cfg(b.port, "late"),
                       args=("--root", root, "--interval", "200", "--tegrastats", fake))
        topic = "homeassistant/sensor/late_temp_ao_c/config"
        self.assertTrue(wait_until(lambda: s.all("homeassistant/sensor/late_temp_tj_c/config"), 10), a.stderr())
        self.assertEqual(s.all(topic), [])  # not yet: tegrastats waits 3 s
        self.assertTrue(wait_until(lambda: s.all(topic), 10), a.stderr())
        self.assertEqual(a.stop(), 0)

    def test_ha_discovery_and_republish(self):
        b = self.broker()
        s = self.sub(b.port, ["homeassistant/#", "tegrawatch/ha1/status", "tegrawatch/ha1/ha"])
        a = self.agent("a", base_cfg(b.port, "ha1", protocol="5"))  # MQTT 5 here, 3.1.1 elsewhere
        temp_topic = "homeassistant/sensor/ha1_temp_tj_c/config"
        self.assertTrue(wait_until(lambda: s.all(temp_topic), 10), a.stderr())
        wait_until(lambda: s.all("homeassistant/binary_sensor/ha1_throttled/config"), 3)
        configs = {m[1]: json.loads(m[2]) for m in s.all() if m[1].endswith("/config")}
        self.assertTrue(wait_until(lambda: s.all("tegrawatch/ha1/ha"), 10))
        # the main metrics of the demo board, each checked against the documented schema (anchors 4.2)
        for metric in ["temp_cpu_c", "temp_gpu_c", "temp_tj_c", "cpu_load_pct", "gpu_load_pct", "gpu_freq_mhz",
                       "emc_freq_mhz", "ram_used_mb", "swap_used_mb", "power_vdd_in_mw", "fan_0_rpm", "power_mode"]:
            self.assertIn("homeassistant/sensor/ha1_%s/config" % metric, configs)
        for topic, c in configs.items():
            uid = topic.split("/")[2]
            self.assertEqual(c["unique_id"], uid)
            self.assertEqual(c["state_topic"], "tegrawatch/ha1/ha")  # the view, not every sample
            self.assertEqual(c["expire_after"], 90)  # three refreshes of the view (30 s) missed
            self.assertEqual(c["availability_topic"], "tegrawatch/ha1/status")
            self.assertEqual((c["payload_available"], c["payload_not_available"]), ("online", "offline"))
            self.assertEqual(c["device"]["identifiers"], ["tegrawatch_ha1"])
            self.assertEqual(c["device"]["manufacturer"], "NVIDIA")
            self.assertEqual(c["device"]["name"], socket.gethostname())  # the id is mqtt.device_id, the name the host's
            self.assertEqual(c["device"]["sw_version"], "L4T 36.4.3 (JetPack 6.2)")
            self.assertEqual(c["origin"]["name"], "tegrawatch")
            self.assertTrue(c["value_template"].startswith("{{ ") and c["value_template"].endswith(" }}"))
        t = configs[temp_topic]
        self.assertEqual((t["device_class"], t["state_class"], t["unit_of_measurement"]),
                         ("temperature", "measurement", "\u00b0C"))
        self.assertEqual(t["value_template"],
                         "{{ value_json.metrics['temp.tj_c'] if 'temp.tj_c' in value_json.metrics else none }}")
        p = configs["homeassistant/sensor/ha1_power_vdd_in_mw/config"]
        self.assertEqual((p["device_class"], p["unit_of_measurement"]), ("power", "W"))
        thr = configs["homeassistant/binary_sensor/ha1_throttled/config"]
        self.assertEqual((thr["device_class"], thr["payload_on"], thr["payload_off"]), ("problem", "ON", "OFF"))
        self.assertEqual(thr["json_attributes_topic"], "tegrawatch/ha1/ha")
        for reason in ("thermal", "overcurrent", "rail_alarm", "freq_cap"):
            self.assertIn("homeassistant/binary_sensor/ha1_throttled_%s/config" % reason, configs)
        self.assertIn("homeassistant/sensor/ha1_alerts_firing/config", configs)
        self.render_every_template(configs, s.json("tegrawatch/ha1/ha"))

        # Home Assistant's birth message: the configs come again, 0-5 s later
        s.clear()
        t0 = time.monotonic()
        publish_once(b.port, "homeassistant/status", "online")
        self.assertTrue(wait_until(lambda: s.all(temp_topic), 8), "no rediscovery after the birth message")
        delay = s.all(temp_topic)[0][0] - t0
        self.assertLess(delay, 6.5)
        # the rest of the burst follows the first config; give it a moment to arrive
        wait_until(lambda: len([m for m in s.all() if m[1].endswith("/config")]) >= len(configs), 3)
        self.assertGreaterEqual(len([m for m in s.all() if m[1].endswith("/config")]), len(configs) - 1)
        # something else on the birth topic changes nothing
        s.clear()
        publish_once(b.port, "homeassistant/status", "offline")
        time.sleep(1)
        self.assertEqual([m for m in s.all() if m[1].endswith("/config")], [])
        self.assertEqual(a.stop(), 0)
        with open(b.log) as f:
            self.assertIn("as tegrawatch-ha1 (p5,", f.read())

    # ---- availability ----

    def test_last_will_after_kill9(self):
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/lw/status"])
        a = self.agent("a", base_cfg(b.port, "lw"))
        self.wait_status(s, "tegrawatch/lw/status", "online", 10)
        time.sleep(0.5)
        t0 = time.monotonic()
        a.stop(signal.SIGKILL)
        self.wait_status(s, "tegrawatch/lw/status", "offline", 7.5)
        took = [m[0] for m in s.all() if m[2] == b"offline"][0] - t0
        self.assertLess(took, 1.5 * 5)
        # retained: a late subscriber sees it
        late = self.sub(b.port, ["tegrawatch/lw/status"])
        self.assertTrue(wait_until(lambda: late.payloads("tegrawatch/lw/status") == ["offline"], 3))

    def test_offline_before_clean_stop(self):
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/cs/#"])
        a = self.agent("a", base_cfg(b.port, "cs"))
        self.wait_status(s, "tegrawatch/cs/status", "online", 10)
        wait_until(lambda: len(s.all("tegrawatch/cs/state")) >= 5, 5)
        t0 = time.monotonic()
        self.assertEqual(a.stop(), 0)
        self.assertLess(time.monotonic() - t0, 3)
        wait_until(lambda: "offline" in s.payloads("tegrawatch/cs/status"), 3)
        time.sleep(0.5)
        # exactly one offline (ours, not the will: DISCONNECT was clean), after the last state
        self.assertEqual(s.payloads("tegrawatch/cs/status"), ["online", "offline"])
        topics = [m[1] for m in s.all()]
        self.assertEqual(topics[-1], "tegrawatch/cs/status")
        self.assertNotIn("offline was not acknowledged", a.stderr())

    def test_restored_alert_in_alerts_active(self):
        """An alert restored from the state file is in alerts/active at once, without a second firing event."""
        b = self.broker()
        root = os.path.join(self.d, "root")
        shutil.copytree(os.path.join(SRC, "tests/fixtures/boards/orin-nano-jp6"), root, symlinks=True)
        with open(os.path.join(root, "sys/devices/virtual/thermal/thermal_zone0/temp"), "w") as f:
            f.write("70000\n")
        env = {"TEGRAWATCH_AGENT_STATE_FILE": os.path.join(self.d, "alerts.state")}
        rules = "rules:\n  - name: cpu-hot\n    metric: temp.cpu_c\n    warning: 60\n"
        args = ("--root", root, "--interval", "100", "--no-tegrastats")
        s1 = self.sub(b.port, ["tegrawatch/rs/#"])
        a1 = self.agent("a1", base_cfg(b.port, "rs"), args=args, env=env, extra=rules)
        self.assertTrue(wait_until(lambda: any(a.get("rule") == "cpu-hot" for p in s1.json("tegrawatch/rs/alerts/active")
                                               for a in p), 10), s1.all())
        self.assertEqual(a1.stop(), 0)
        # forget the retained list, so only the new agent can bring it back
        pub = mqtt.Client()
        pub.connect("127.0.0.1", b.port)
        pub.loop_start()
        pub.publish("tegrawatch/rs/alerts/active", b"", qos=1, retain=True).wait_for_publish()
        pub.loop_stop()
        pub.disconnect()
        a2 = self.agent("a2", base_cfg(b.port, "rs"), args=args, env=env, extra=rules)
        s2 = self.sub(b.port, ["tegrawatch/rs/#"])
        self.assertTrue(wait_until(lambda: any(a.get("rule") == "cpu-hot"
                                               for p in s2.payloads("tegrawatch/rs/alerts/active") if p
                                               for a in json.loads(p)), 10), s2.all())
        time.sleep(0.5)
        self.assertEqual(s2.payloads("tegrawatch/rs/alerts"), [])  # the firing was announced once, by a1
        self.assertEqual(a2.stop(), 0)

    # ---- nothing lost ----

    def test_broker_outage_30s_at_10hz(self):
        b = self.broker(persistence=True)
        s = self.sub(b.port, ["tegrawatch/out/state"], client_id="tw-h8-persistent", clean=False)
        a = self.agent("a", base_cfg(b.port, "out"))
        self.assertTrue(wait_until(lambda: len(s.all()) >= 30, 10), a.stderr())
        b.stop()
        t_down = time.monotonic()
        time.sleep(30)
        b.start()
        # the backlog (about 300 samples) and live data arrive; then a clean stop
        time.sleep(8)
        self.assertEqual(a.stop(), 0)
        time.sleep(1.5)
        states = s.json("tegrawatch/out/state")
        order, dups = dedup_seqs(states)
        self.assertEqual(order, sorted(order), "out of order after dedup")
        self.assertEqual(order, list(range(order[0], order[-1] + 1)), "gaps in seq")
        produced_in_outage = [x for x in states if x["metrics"]["agent.mqtt_connected"] == 0]
        self.assertGreaterEqual(len({x["seq"] for x in produced_in_outage}), 280)
        self.assertLessEqual(dups, 100)
        last = states[-1]["metrics"]
        self.assertEqual(last["agent.mqtt_disconnects_total"], 1)
        self.assertGreaterEqual(last["agent.mqtt_connects_total"], 2)
        self.assertEqual(last["agent.mqtt_dropped_total"], 0)
        self.assertLess(time.monotonic() - t_down, 60)

    def test_outage_beyond_spool_records_with_file(self):
        """Finding 1: with spool_file, an outage holds what the file holds, not spool_records, and memory stays
        bounded. Two agents sample at 50 Hz through a 30 s outage (about 1,500 messages, 4-5 MB each): one with
        spool_records 10 (the old limit dropped all but 10), one with spool_records 100000 (the old spool held
        everything in RAM). Both deliver every state message; neither grows its anonymous memory by 2.5 MB."""
        b = self.broker(persistence=True)
        s = self.sub(b.port, ["tegrawatch/+/state"], client_id="tw-spill-persistent", clean=False)
        root = os.path.join(self.d, "root")
        shutil.copytree(os.path.join(SRC, "tests/fixtures/boards/orin-nano-jp6"), root, symlinks=True)
        args = ("--root", root, "--interval", "20", "--no-tegrastats")
        agents = {}
        for name, records in (("small", 10), ("big", 100000)):
            cfg = base_cfg(b.port, name, spool_file=os.path.join(self.d, name + ".spool"), spool_records=records)
            agents[name] = self.agent(name, cfg, args=args)
        for name, a in agents.items():
            self.assertTrue(wait_until(lambda: len(s.all("tegrawatch/%s/state" % name)) >= 50, 15), a.stderr())
        time.sleep(2)
        base = {name: a.rss_anon_kb() for name, a in agents.items()}
        peak = dict(base)
        b.stop()
        for _ in range(30):
            time.sleep(1)
            for name, a in agents.items():
                peak[name] = max(peak[name], a.rss_anon_kb())
        b.start()
        for name in agents:
            sys.stderr.write("\n%s: RssAnon %d -> %d kB during the outage" % (name, base[name], peak[name]))

        def all_delivered():
            for name in agents:
                states = s.json("tegrawatch/%s/state" % name)
                order, _ = dedup_seqs(states)
                # a sample taken after the reconnect, and nothing missing before it
                if order[-1] - order[0] + 1 != len(order) or states[-1]["metrics"]["agent.mqtt_connects_total"] < 2:
                    return False
            return True
        def summary():
            out = {}
            for name in agents:
                states = s.json("tegrawatch/%s/state" % name)
                order, dups = dedup_seqs(states)
                missing = sorted(set(range(order[0], order[-1] + 1)) - set(order))
                out[name] = (len(states), len(order), order[0], order[-1], len(missing), missing[:5], dups,
                             states[-1]["metrics"]["agent.mqtt_connects_total"])
            return out
        self.assertTrue(wait_until(all_delivered, 30, step=0.5), summary())
        for name, a in agents.items():
            self.assertEqual(a.stop(), 0)
        time.sleep(1)
        for name in agents:
            states = s.json("tegrawatch/%s/state" % name)
            order, dups = dedup_seqs(states)
            self.assertEqual(order, sorted(order), name + ": out of order after dedup")
            self.assertEqual(order, list(range(order[0], order[-1] + 1)), name + ": gaps in seq")
            held = {x["seq"] for x in states if x["metrics"]["agent.mqtt_connected"] == 0}
            self.assertGreaterEqual(len(held), 1000, name)
            self.assertEqual(states[-1]["metrics"]["agent.mqtt_dropped_total"], 0, name)
            grew = peak[name] - base[name]
            sys.stderr.write("\n%s: %d messages held through the outage, all delivered\n" % (name, len(held)))
            # under ASan (scripts/test.sh sets ASAN_OPTIONS) freed memory sits in its quarantine: RSS says
            # nothing there; the normal build checks the bound
            if "ASAN_OPTIONS" not in os.environ:
                self.assertLess(grew, 2560, "%s: RssAnon grew by %d kB during the outage" % (name, grew))

    def test_spool_file_survives_agent_crash(self):
        b = self.broker(persistence=True)
        s = self.sub(b.port, ["tegrawatch/sp/state"], client_id="tw-h8-spool", clean=False)
        spool = os.path.join(self.d, "spool.bin")
        cfg = base_cfg(b.port, "sp", spool_file=spool)
        a = self.agent("a", cfg)
        self.assertTrue(wait_until(lambda: len(s.all()) >= 5, 10), a.stderr())
        b.stop()
        time.sleep(3.5)  # about 35 samples queued; synced once a second
        a.stop(signal.SIGKILL)
        last_seq = int(read_bytes(spool + ".seq").split()[1])
        synced = parse_spool(spool)
        synced_seqs = [json.loads(r["payload"])["seq"] for r in synced]
        self.assertGreaterEqual(len(synced_seqs), 20)
        # a new agent during the outage: it reloads the file and continues the count
        a2 = self.agent("a2", cfg)
        time.sleep(1.5)
        b.start()
        self.assertTrue(wait_until(lambda: set(synced_seqs) <= {x["seq"] for x in s.json("tegrawatch/sp/state")},
                                   15), a2.stderr())
        time.sleep(2)
        self.assertEqual(a2.stop(), 0)
        time.sleep(1)
        states = s.json("tegrawatch/sp/state")
        order, dups = dedup_seqs(states)
        self.assertEqual(order, sorted(order))
        second = [x for x in order if x > last_seq]
        self.assertEqual(second[0], last_seq + 1, "the restarted agent continues the seq of this boot")
        self.assertEqual(second, list(range(second[0], second[-1] + 1)))
        self.assertIn("messages waiting in the spool from an earlier run", a2.stderr())

    def test_damaged_spool_file_recovered(self):
        spool = os.path.join(self.d, "spool.bin")
        port = free_port()
        # fill the spool while no broker listens, stop cleanly: the file holds everything
        a = self.agent("a", base_cfg(port, "dmg", spool_file=spool))
        time.sleep(2.5)
        self.assertEqual(a.stop(), 0)
        # the limits went into the spool too, once, right before the first state (same seq)
        topics = [r["topic"] for r in parse_spool(spool)]
        self.assertEqual(topics[:2], ["tegrawatch/dmg/limits", "tegrawatch/dmg/state"])
        self.assertEqual(topics.count("tegrawatch/dmg/limits"), 1)
        recs = [r for r in parse_spool(spool) if r["topic"] == "tegrawatch/dmg/state"]
        self.assertGreaterEqual(len(recs), 15)
        seqs = [json.loads(r["payload"])["seq"] for r in recs]
        # a flipped byte inside state record 3, and a torn last record
        data = bytearray(read_bytes(spool))
        data[recs[3]["off"] + recs[3]["len"] // 2] ^= 0x55
        data = data[:recs[-1]["off"] + recs[-1]["len"] // 2]
        with open(spool, "wb") as f:
            f.write(bytes(data))
        expected = [q for i, q in enumerate(seqs) if i != 3 and i != len(seqs) - 1]

        b = self.broker(port=port)
        s = self.sub(b.port, ["tegrawatch/dmg/state"])
        a2 = self.agent("a2", base_cfg(port, "dmg", spool_file=spool))
        self.assertTrue(wait_until(lambda: set(expected) <= {x["seq"] for x in s.json("tegrawatch/dmg/state")},
                                   10), a2.stderr())
        time.sleep(1)
        self.assertEqual(a2.stop(), 0)
        states = s.json("tegrawatch/dmg/state")
        got = [x["seq"] for x in states]
        self.assertEqual(got[:len(expected)], expected)  # the intact records first, in order
        self.assertNotIn(seqs[3], got)
        self.assertEqual(states[-1]["metrics"]["agent.mqtt_spool_corrupt_total"], 2)

    def test_host_name_looked_up_without_blocking(self):
        addrs = {a[4][0] for a in socket.getaddrinfo("localhost", 1883, type=socket.SOCK_STREAM)}
        if addrs != {"127.0.0.1"}:
            self.skipTest("localhost is not 127.0.0.1 alone here: %s" % sorted(addrs))
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/dns/#"])
        a = self.agent("a", base_cfg(b.port, "dns", host="localhost"))
        self.wait_status(s, "tegrawatch/dns/status", "online", 10)
        self.assertTrue(wait_until(lambda: len(s.all("tegrawatch/dns/state")) >= 3, 5))
        self.assertEqual(a.stop(), 0)

    # ---- security ----

    def test_tls_wrong_ca_then_right_ca(self):
        d = self.d

        def ossl(*args):
            subprocess.run(["openssl"] + list(args), check=True, capture_output=True)
        for ca in ("ca", "wrongca"):
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
        tls_port = free_port()
        b = self.broker(extra="listener %d 127.0.0.1\ncafile %s/ca.pem\ncertfile %s/server.pem\n"
                              "keyfile %s/server.key\nrequire_certificate true\n" % (tls_port, d, d, d))
        s = self.sub(b.port, ["tegrawatch/tls/#"])
        agent_ca = os.path.join(d, "agent-ca.pem")
        shutil.copy("%s/wrongca.pem" % d, agent_ca)
        a = self.agent("a", base_cfg(tls_port, "tls", tls="true", ca_file=agent_ca,
                                     cert_file="%s/client.pem" % d, key_file="%s/client.key" % d))
        # refused: no status, TLS named in the log, and it keeps trying
        self.assertTrue(wait_until(lambda: "TLS" in a.stderr() or "certificate" in a.stderr(), 10), a.stderr())
        time.sleep(2.5)
        self.assertEqual(s.payloads("tegrawatch/tls/status"), [])
        attempts = a.stderr().count("retrying in")
        self.assertGreaterEqual(attempts, 3, a.stderr())
        # the right CA appears at the same path: the next attempt connects
        shutil.copy("%s/ca.pem" % d, agent_ca)
        self.wait_status(s, "tegrawatch/tls/status", "online", 5)
        self.assertTrue(wait_until(lambda: s.all("tegrawatch/tls/state"), 5))
        self.assertEqual(a.stop(), 0)
        self.assertIn("offline", s.payloads("tegrawatch/tls/status"))

    def test_username_password(self):
        pw = os.path.join(self.d, "passwd")
        subprocess.run(["mosquitto_passwd", "-b", "-c", pw, "agent1", "canary-right-7Q"], check=True)
        subprocess.run(["mosquitto_passwd", "-b", pw, "agent2", "canary-other-3Z"], check=True)
        subprocess.run(["mosquitto_passwd", "-b", pw, "watcher", "watcher-pw"], check=True)
        os.chmod(pw, 0o644)
        b = self.broker(extra="allow_anonymous false\npassword_file %s\n" % pw)
        s = self.sub(b.port, ["tegrawatch/#"], user="watcher", password="watcher-pw")
        pwfile = os.path.join(self.d, "agent1.pw")
        write_file(pwfile, "canary-right-7Q\n")
        good = self.agent("good", base_cfg(b.port, "pw1", username="agent1", password_file=pwfile, protocol="5"))
        bad = self.agent("bad", base_cfg(b.port, "pw2", username="agent2"),
                         env={"TEGRAWATCH_MQTT_PASSWORD": "canary-wrong-9X"})
        self.wait_status(s, "tegrawatch/pw1/status", "online", 10)
        self.assertTrue(wait_until(lambda: "refused" in bad.stderr(), 10), bad.stderr())
        time.sleep(2)
        self.assertEqual(s.payloads("tegrawatch/pw2/status"), [])
        self.assertIn("not authori", bad.stderr())
        # the broker is fixed: agent2's password becomes the one it sends; it keeps trying and gets in
        subprocess.run(["mosquitto_passwd", "-b", pw, "agent2", "canary-wrong-9X"], check=True)
        b.reload()
        self.wait_status(s, "tegrawatch/pw2/status", "online", 5)
        self.assertEqual(good.stop(), 0)
        self.assertEqual(bad.stop(), 0)
        # secrets never reach the log
        for a in (good, bad):
            for secret in ("canary-right-7Q", "canary-wrong-9X"):
                self.assertNotIn(secret, a.stderr())


def main_with_helpers(case):
    """Runs the tests of another MQTT test file: CASE gets MqttTest's broker, subscriber and agent helpers."""
    global BIN, SRC
    for name in ("setUp", "tearDown", "broker", "sub", "agent", "wait_status"):
        setattr(case, name, getattr(MqttTest, name))
    BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    del sys.argv[1:3]
    if mqtt is None or not os.path.exists(MOSQUITTO):
        print("skipped: needs mosquitto and python3-paho-mqtt")
        sys.exit(77)
    unittest.main(verbosity=2)


if __name__ == "__main__":
    BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    del sys.argv[1:3]
    if mqtt is None or not os.path.exists(MOSQUITTO) or not shutil.which("openssl") \
            or not shutil.which("mosquitto_passwd"):
        print("skipped: needs mosquitto, mosquitto_passwd, openssl and python3-paho-mqtt")
        sys.exit(77)
    unittest.main(verbosity=2)
