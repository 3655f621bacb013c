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
import shutil
import socket
import subprocess
import sys

import harness
from harness import read_text, wait_until

VALGRIND = shutil.which("valgrind")
SAMPLES = 120


def get(port, path):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as c:
        c.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" % path).encode())
        data = b""
        while True:
            chunk = c.recv(65536)
            if not chunk:
                return data
            data += chunk


class ValgrindTest(harness.TestCase):
    def test_replay_with_mqtt_web_and_webhook(self):
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/vg/#"])
        hook = self.receiver()
        web_port = harness.free_port()
        config = """agent: {state_file: ""}
web: {listen: "127.0.0.1:%d"}
mqtt: {host: 127.0.0.1, port: %d, device_id: vg, keepalive: 5s}
rules:
  - {name: early, metric: agent.samples_total, op: below, warning: 5, critical: 2}
actions:
  hook: {type: webhook, format: json, url: "%s"}
notify:
  warning: [log, hook]
  critical: [log, hook]
include: [%s/configs/rules.d/*.yaml]
""" % (web_port, b.port, hook.url("/hook"), SRC)
        log = self.path("valgrind.log")
        # 1 s demo lines at speed 20: 120 samples in 6 s of replay time, however slow valgrind makes start-up
        memcheck = [VALGRIND, "--tool=memcheck", "--error-exitcode=99", "--leak-check=full",
                    "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite", "--track-fds=no",
                    "--log-file=" + log]
        p = self.agent(["--demo", "--speed", "20", "--count", str(SAMPLES)], config=config, wrapper=memcheck,
                       stdout=subprocess.DEVNULL)
        self.assertTrue(wait_until(lambda: s.all("tegrawatch/vg/state"), 120), read_text(log)[-3000:])
        answers = {}
        stream = socket.create_connection(("127.0.0.1", web_port), timeout=30)
        self.addCleanup(stream.close)
        stream.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        for path in ("/", "/healthz", "/api/v1/snapshot", "/api/v1/alerts", "/metrics",
                     "/api/v1/history?metric=temp.tj_c&seconds=60", "/nope", "/api/v1/history?metric=%00"):
            answers[path] = get(web_port, path).split(b"\r\n", 1)[0]
        events = stream.recv(65536)
        rc = p.wait(300)
        report = read_text(log)
        sys.stderr.write("\n" + "\n".join(line for line in report.splitlines() if "ERROR SUMMARY" in line or
                                          "definitely lost" in line or "in use at exit" in line) + "\n")
        self.assertEqual(rc, 0, report[-6000:])
        self.assertIn("ERROR SUMMARY: 0 errors", report)
        self.assertEqual(answers["/api/v1/snapshot"], b"HTTP/1.1 200 OK", answers)
        self.assertEqual(answers["/metrics"], b"HTTP/1.1 200 OK", answers)
        self.assertEqual(answers["/nope"], b"HTTP/1.1 404 Not Found", answers)
        self.assertIn(b"text/event-stream", events)
        s.wait_payload("tegrawatch/vg/status", "offline")  # the agent's last message: everything arrived
        self.assertEqual(len({x["seq"] for x in s.json("tegrawatch/vg/state")}), SAMPLES)
        hook.wait(1)  # a webhook delivered


if __name__ == "__main__":
    BIN, SRC = harness.init(needs=("mosquitto", "valgrind"))
    harness.main()
