#!/usr/bin/env python3
"""Alerts restored from the state file after a restart reach the actions as they reach the sinks.

An alert fires and the agent stops; the next agent restores it from the state file. Then:
- an `alertmanager-api` action sends it again at once (Alertmanager forgets what it is not told about: a real
  Alertmanager, restarted empty while the agent was down, lists it again), with its first `startsAt`;
- a `json` action does not (its receiver heard of it before), nor does an `exec` action run again.
The `resend` is an hour, so nothing but the restore can send it within the test.

Usage: test_restored_alerts.py TEGRAWATCH SOURCE_ROOT
Needs libcurl (webhook delivery); prometheus-alertmanager for the Alertmanager test. Loopback only.
"""
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

BIN = None
SRC = None
ALERTMANAGER = shutil.which("prometheus-alertmanager") or "/usr/bin/prometheus-alertmanager"
CPU_ZONE = "sys/devices/virtual/thermal/thermal_zone0/temp"  # temp.cpu_c on the fixture


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


class Receiver:
    """HTTP on 127.0.0.1 that answers 200 to every POST and keeps (path, parsed body)."""

    def __init__(self):
        self.posts = []
        self.lock = threading.Lock()
        rec = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with rec.lock:
                    rec.posts.append((self.path, json.loads(body)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.server.server_address[1], path)

    def bodies(self, path):
        with self.lock:
            return [b for p, b in self.posts if p == path]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Alertmanager:
    """prometheus-alertmanager on PORT (else a free one) of loopback, its data in DIR (new: it knows no alert)."""

    def __init__(self, d, port=None):
        os.makedirs(d)
        self.port = port or free_port()
        cfg = os.path.join(d, "alertmanager.yml")
        with open(cfg, "w") as f:
            f.write("route:\n  receiver: none\nreceivers:\n  - name: none\n")
        self.log = os.path.join(d, "alertmanager.log")
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([ALERTMANAGER, "--config.file=" + cfg, "--storage.path=" + d,
                                          "--web.listen-address=127.0.0.1:%d" % self.port,
                                          "--cluster.listen-address="], stdout=log, stderr=subprocess.STDOUT)
        if not wait_until(lambda: self.get("/-/ready") is not None, 30, 0.1):
            raise AssertionError("alertmanager did not start:\n" + read(self.log))

    def get(self, path):
        try:
            with urllib.request.urlopen(self.url(path), timeout=2) as r:
                return r.read()
        except OSError:
            return None

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def active(self, name):
        body = self.get("/api/v2/alerts?active=true")
        return [a for a in json.loads(body or b"[]") if a["labels"].get("alertname") == name]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


class Agent:
    """`tegrawatch run` on the board ROOT (sysfs only, 200 ms), its last sample's metrics kept."""

    def __init__(self, root, cfg, err):
        env = {k: v for k, v in os.environ.items() if not k.startswith("TEGRAWATCH_")}
        self.err = err
        self.metrics = {}
        self.samples = 0
        with open(err, "ab") as f:
            self.proc = subprocess.Popen([BIN, "run", "--root", root, "--interval", "200", "--no-tegrastats",
                                          "-c", cfg], stdout=subprocess.PIPE, stderr=f, env=env)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.metrics = json.loads(line)["metrics"]
            self.samples += 1

    def wait(self, pred, what, timeout=20):
        if not wait_until(lambda: self.metrics and pred(self.metrics), timeout):
            raise AssertionError("no sample with %s\nstderr:\n%s" % (what, read(self.err)))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.reader.join(5)
        self.proc.stdout.close()
        return rc


class RestoredAlertsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tw-restored-")
        self.root = os.path.join(self.tmp, "root")
        shutil.copytree(os.path.join(SRC, "tests/fixtures/boards/orin-nano-jp6"), self.root, symlinks=True)
        with open(os.path.join(self.root, CPU_ZONE), "w") as f:
            f.write("70000\n")  # hot from the first sample to the last
        self.state = os.path.join(self.tmp, "alerts.state")
        self.ran = os.path.join(self.tmp, "exec-ran")
        self.stops = []

    def tearDown(self):
        for stop in reversed(self.stops):
            stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def config(self, am_url, json_url):
        cfg = os.path.join(self.tmp, "tegrawatch.yaml")
        with open(cfg, "w") as f:
            f.write("""agent:
  board_name: jetson-lab-01
  state_file: %s
web:
  listen: ""
actions:
  am:
    type: webhook
    format: alertmanager-api
    url: %s
    resend: 1h
  hook:
    type: webhook
    format: json
    url: %s
  note:
    type: exec
    command: ["/bin/sh", "-c", "echo \\"$TEGRAWATCH_TRANSITION\\" >> %s"]
rules:
  - name: cpu-hot
    metric: temp.cpu_c
    warning: 60
    actions: {warning: [am, hook, note]}
""" % (self.state, am_url, json_url, self.ran))
        return cfg

    def agent(self, cfg):
        a = Agent(self.root, cfg, os.path.join(self.tmp, "agent.err"))
        self.stops.append(a.stop)
        return a

    def fire_then_restart(self, cfg, sent_before_stop, while_down=None):
        """The first agent fires the alert and stops; returns the second agent, running on the state file."""
        first = self.agent(cfg)
        first.wait(lambda m: m.get("agent.alerts_firing") == 1, "the alert firing")
        if not wait_until(sent_before_stop, 20, 0.1):
            raise AssertionError("the firing alert was not delivered\nstderr:\n" + read(first.err))
        self.assertEqual(first.stop(), 0, read(first.err))
        self.assertIn("cpu-hot", read(self.state))
        if while_down:
            while_down()
        second = self.agent(cfg)
        second.wait(lambda m: m.get("agent.alerts_firing") == 1, "the restored alert")
        return second

    def test_restored_alert_is_sent_again_to_alertmanager_api_only(self):
        rec = Receiver()
        self.stops.append(rec.stop)
        cfg = self.config(rec.url("/api/v2/alerts"), rec.url("/json"))
        second = self.fire_then_restart(cfg, lambda: rec.bodies("/api/v2/alerts") and rec.bodies("/json"))
        fired = rec.bodies("/api/v2/alerts")[0][0]

        again = wait_until(lambda: rec.bodies("/api/v2/alerts")[1:], 15)
        self.assertTrue(again, "the restored alert was not sent again\nstderr:\n" + read(second.err))
        alert = again[0][0]
        self.assertEqual(alert["labels"], fired["labels"])
        self.assertEqual(alert["startsAt"], fired["startsAt"], "the alert as it started before the restart")
        self.assertNotIn("endsAt", alert)
        # the other actions heard of it before: a few samples later, still once each
        n = second.samples
        second.wait(lambda m: second.samples >= n + 5, "five more samples")
        self.assertEqual(len(rec.bodies("/json")), 1, rec.bodies("/json"))
        self.assertEqual(read(self.ran).split(), ["firing"])
        self.assertEqual(second.metrics["agent.action_runs_total"], 0)
        self.assertEqual(second.stop(), 0, read(second.err))

    @unittest.skipUnless(os.access(ALERTMANAGER, os.X_OK), "prometheus-alertmanager is not installed")
    def test_alertmanager_that_forgot_lists_the_restored_alert(self):
        ams = [Alertmanager(os.path.join(self.tmp, "am1"))]
        self.stops.append(lambda: ams[-1].stop())
        rec = Receiver()
        self.stops.append(rec.stop)
        cfg = self.config(ams[0].url("/api/v2/alerts"), rec.url("/json"))
        listed = []

        def delivered():
            listed[:] = ams[0].active("cpu-hot")
            return listed

        def forget():
            # Alertmanager restarts with no memory of the alert (new storage), on the same port
            ams[0].stop()
            ams.append(Alertmanager(os.path.join(self.tmp, "am2"), ams[0].port))
            self.assertEqual(ams[1].active("cpu-hot"), [])
        second = self.fire_then_restart(cfg, delivered, forget)
        back = wait_until(lambda: ams[1].active("cpu-hot"), 15, 0.2)
        self.assertTrue(back, "the restored alert did not reach Alertmanager\nstderr:\n" + read(second.err))
        self.assertEqual(back[0]["startsAt"], listed[0]["startsAt"], "the alert as it started before the restart")
        self.assertEqual(second.stop(), 0, read(second.err))


def main():
    global BIN, SRC
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    BIN = os.path.abspath(sys.argv[1])
    SRC = os.path.abspath(sys.argv[2])
    del sys.argv[1:3]
    unittest.main(verbosity=2)


if __name__ == "__main__":
    sys.exit(main())
