#!/usr/bin/env python3
"""Goal G: the agent under valgrind memcheck for a replay with every module
on: MQTT to a real mosquitto on 127.0.0.1, the web server (requests to every
endpoint and an event stream while it runs), the shipped rules and a webhook
to a local receiver. Any memcheck error, or a definitely lost block, fails the
run (--error-exitcode); so does a replay that did not reach MQTT, the web
clients or the webhook.

Usage: test_valgrind.py TEGRAWATCH SOURCE_ROOT
Needs: valgrind, mosquitto, python3-paho-mqtt (exit 77 = skipped without them).
"""
import http.server
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_mqtt as tm  # noqa: E402
from test_mqtt import free_port, wait_until, write_file  # noqa: E402

BIN = SRC = None
VALGRIND = shutil.which("valgrind")
SAMPLES = 120


class Receiver(http.server.BaseHTTPRequestHandler):
    bodies = []

    def do_POST(self):
        Receiver.bodies.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def get(port, path):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as c:
        c.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" % path).encode())
        data = b""
        while True:
            chunk = c.recv(65536)
            if not chunk:
                return data
            data += chunk


class ValgrindTest(unittest.TestCase):
    setUp, tearDown = tm.MqttTest.setUp, tm.MqttTest.tearDown
    broker, sub = tm.MqttTest.broker, tm.MqttTest.sub

    def test_replay_with_mqtt_web_and_webhook(self):
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/vg/#"])
        hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=hook.serve_forever, daemon=True).start()
        self.cleanup.append(hook.shutdown)
        web_port = free_port()
        cfg = os.path.join(self.d, "vg.yaml")
        write_file(cfg, """agent: {state_file: ""}
web: {listen: "127.0.0.1:%d"}
mqtt: {host: 127.0.0.1, port: %d, device_id: vg, keepalive: 5s}
rules:
  - {name: early, metric: agent.samples_total, op: below, warning: 5, critical: 2}
actions:
  hook: {type: webhook, format: json, url: "http://127.0.0.1:%d/hook"}
notify:
  warning: [log, hook]
  critical: [log, hook]
include: [%s/configs/rules.d/*.yaml]
""" % (web_port, b.port, hook.server_address[1], SRC))
        log = os.path.join(self.d, "valgrind.log")
        # 1 s demo lines at speed 20: 120 samples in 6 s of replay time, however slow valgrind makes start-up
        args = [VALGRIND, "--tool=memcheck", "--error-exitcode=99", "--leak-check=full",
                "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite", "--track-fds=no",
                "--log-file=" + log, BIN, "run", "--demo", "--speed", "20", "--count", str(SAMPLES), "-c", cfg]
        with open(os.path.join(self.d, "agent.err"), "wb") as err:
            p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err)
        self.cleanup.append(lambda: p.poll() is None and (p.kill(), p.wait()))
        self.assertTrue(wait_until(lambda: s.all("tegrawatch/vg/state"), 120), read(log)[-3000:])
        answers = {}
        stream = socket.create_connection(("127.0.0.1", web_port), timeout=30)
        self.cleanup.append(stream.close)
        stream.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        for path in ("/", "/healthz", "/api/v1/snapshot", "/api/v1/alerts", "/metrics",
                     "/api/v1/history?metric=temp.tj_c&seconds=60", "/nope", "/api/v1/history?metric=%00"):
            answers[path] = get(web_port, path).split(b"\r\n", 1)[0]
        events = stream.recv(65536)
        rc = p.wait(300)
        report = read(log)
        sys.stderr.write("\n" + "\n".join(line for line in report.splitlines() if "ERROR SUMMARY" in line or
                                          "definitely lost" in line or "in use at exit" in line) + "\n")
        self.assertEqual(rc, 0, report[-6000:])
        self.assertIn("ERROR SUMMARY: 0 errors", report)
        self.assertEqual(answers["/api/v1/snapshot"], b"HTTP/1.1 200 OK", answers)
        self.assertEqual(answers["/metrics"], b"HTTP/1.1 200 OK", answers)
        self.assertEqual(answers["/nope"], b"HTTP/1.1 404 Not Found", answers)
        self.assertIn(b"text/event-stream", events)
        time.sleep(1)
        self.assertEqual(len({x["seq"] for x in s.json("tegrawatch/vg/state")}), SAMPLES)
        self.assertTrue(wait_until(lambda: len(Receiver.bodies) >= 1, 5), "no webhook delivered")


if __name__ == "__main__":
    BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tm.BIN, tm.SRC = BIN, SRC
    del sys.argv[1:3]
    if tm.mqtt is None or not os.path.exists(tm.MOSQUITTO) or not VALGRIND:
        print("skipped: needs valgrind, mosquitto and python3-paho-mqtt")
        sys.exit(77)
    unittest.main(verbosity=2)
