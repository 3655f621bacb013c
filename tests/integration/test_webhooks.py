#!/usr/bin/env python3
"""Alert webhooks end to end: the real agent on a fixture board whose
temperature the test raises and lowers, and every peer started here on a free
127.0.0.1 port (never any other address) and stopped again:

- a real Alertmanager (`format: alertmanager-api`): the alert in its API with
  our labels and annotations, at Alertmanager's own webhook receiver, then
  resolved;
- a local receiver: the `alertmanager`, `alertmanager-api` and `json` bodies
  field by field, and the Standard Webhooks signature checked with hmac;
- faults through the real binary: 500 x3 then 200 (one webhook-id, the
  counters in JSON Lines and /metrics, promtool), 429 with Retry-After, a
  tarpit next to a healthy action while sampling keeps its pace, a full
  queue, kill -9 with a queue_file; with --slow only: a receiver down for
  two minutes.

Retries use TEGRAWATCH_WEBHOOK_BACKOFF_MS (the test-only back-off, see
docs/webhooks.md) so they come in a second, not after the production 5 s
doubling. With WEBHOOK_EXAMPLES=DIR the bodies received are written there
(docs/webhooks.md shows them).

Usage: test_webhooks.py TEGRAWATCH SOURCE_ROOT [--slow]
Needs: prometheus-alertmanager for the Alertmanager test, promtool for the
/metrics check (missing: that test is skipped, the rest runs).
"""
import base64
import hashlib
import hmac
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
SLOW = False
ALERTMANAGER = shutil.which("prometheus-alertmanager") or "/usr/bin/prometheus-alertmanager"
ZONES = {  # metric -> the fixture's thermal zone file
    "temp.cpu_c": "sys/devices/virtual/thermal/thermal_zone0/temp",
    "temp.gpu_c": "sys/devices/virtual/thermal/thermal_zone1/temp",
    "temp.soc0_c": "sys/devices/virtual/thermal/thermal_zone5/temp",
}
COOL, HOT = 45000, 70000
# 24 random bytes, as Standard Webhooks asks
SECRET = "whsec_" + base64.b64encode(bytes(range(1, 25))).decode()
TOKEN = "s3cr3t-token"


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


def verify_signature(secret, headers, body):
    """Standard Webhooks, written from the spec: v1,<b64 HMAC-SHA256(key, "id.timestamp.body")>."""
    key = base64.b64decode(secret[len("whsec_"):])
    msg_id, ts = headers["webhook-id"], headers["webhook-timestamp"]
    want = base64.b64encode(hmac.new(key, b"%s.%s.%s" % (msg_id.encode(), ts.encode(), body),
                                     hashlib.sha256).digest()).decode()
    sigs = [s.split(",", 1)[1] for s in headers["webhook-signature"].split() if s.startswith("v1,")]
    return any(hmac.compare_digest(want, s) for s in sigs)


class Receiver:
    """A threaded HTTP receiver on 127.0.0.1. Each POST gets the next answer of
    the script, (status, {header: value}) or "tarpit" (never answered), then
    200 once the script is used up; every request is kept."""

    def __init__(self, port=None, script=()):
        self.port = port or free_port()
        self.script = list(script)
        self.requests = []  # (monotonic time, path, {lower-case header: value}, body bytes)
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
                    rec.requests.append((time.monotonic(), self.path,
                                         {k.lower(): v for k, v in self.headers.items()}, body))
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
            return [r for r in self.requests if path is None or r[1] == path]

    def bodies(self, path=None):
        return [json.loads(r[3]) for r in self.got(path)]

    def wait(self, n, path=None, timeout=15):
        if not wait_until(lambda: len(self.got(path)) >= n, timeout):
            raise AssertionError("%s: %d requests, expected %d" % (path, len(self.got(path)), n))
        return self.got(path)


MACHINE_ID = "8d3f0c6a2b9e4f17a5c1d0e2b3f4a596"


class Board:
    """A copy of a fixture board whose thermal zones the test writes."""

    def __init__(self, d):
        self.root = os.path.join(d, "root")
        shutil.copytree(os.path.join(SRC, "tests/fixtures/boards/orin-nano-jp6"), self.root, symlinks=True)
        write_file(os.path.join(self.root, "etc/machine-id"), MACHINE_ID + "\n", 0o644)
        for metric in ZONES:
            self.set(metric, COOL)

    def set(self, metric, mc):
        write_file(os.path.join(self.root, ZONES[metric]), "%d\n" % mc, 0o644)


class Agent:
    """`tegrawatch run` on BOARD in live sysfs mode, 200 ms interval; JSON Lines kept, stderr to a file."""

    def __init__(self, d, board, config, name="agent", backoff="200,1000", interval=200, env=None):
        self.cfg = os.path.join(d, name + ".yaml")
        self.errpath = os.path.join(d, name + ".err")
        write_file(self.cfg, config)
        extra_env = env
        env = dict(os.environ, TZ="UTC")
        for k in list(env):
            if k.startswith("TEGRAWATCH_"):
                del env[k]
        if backoff:
            env["TEGRAWATCH_WEBHOOK_BACKOFF_MS"] = backoff
        env.update(extra_env or {})
        self.samples = []
        self.lock = threading.Lock()
        with open(self.errpath, "wb") as err:
            self.proc = subprocess.Popen([BIN, "run", "--root", board.root, "--interval", str(interval),
                                          "--no-tegrastats", "-c", self.cfg],
                                         stdout=subprocess.PIPE, stderr=err, env=env)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            doc = json.loads(line)
            with self.lock:
                self.samples.append((time.monotonic(), doc))

    def stderr(self):
        with open(self.errpath, errors="replace") as f:
            return f.read()

    def last(self):
        with self.lock:
            return self.samples[-1][1]["metrics"] if self.samples else {}

    def wait_metrics(self, pred, what, timeout=15):
        def ok():
            m = self.last()
            return m if m and pred(m) else None
        m = wait_until(ok, timeout)
        if not m:
            raise AssertionError("no sample with %s; last: %s\nstderr:\n%s" % (
                what, {k: v for k, v in self.last().items() if k.startswith(("webhook.", "agent."))}, self.stderr()))
        return m

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        self.reader.join(5)
        self.proc.stdout.close()
        return rc


def config(actions, rules, board_name="jetson-lab-01", web=""):
    return """agent:
  board_name: %s
  state_file: ""
web:
  listen: "%s"
actions:
%s
rules:
%s
""" % (board_name, web, actions, rules)


def rule(name, metric, actions, labels="{}", extra=""):
    return """  - name: %s
    metric: %s
    warning: 60
    clear: 2
    labels: %s
    summary: "{{board}}: {{metric}} at {{value}} C (threshold {{threshold}})"
    description: "{{rule}} {{severity}} on {{board}}, team {{labels.team}}"
    actions: {warning: [%s]}
%s""" % (name, metric, labels, ", ".join(actions), extra)


def read_text(path):
    with open(path, errors="replace") as f:
        return f.read()


def save_example(name, data):
    d = os.environ.get("WEBHOOK_EXAMPLES")
    if d:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


class WebhookCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tw-webhook-")
        self.board = Board(self.tmp)
        self.peers = []
        self.agents = []
        self.t0 = time.monotonic()

    def tearDown(self):
        for a in self.agents:
            if a.proc.poll() is None:
                a.proc.kill()
                a.proc.wait()
        for p in self.peers:
            p.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)
        sys.stderr.write("[%.1f s] " % (time.monotonic() - self.t0))

    def receiver(self, **kw):
        r = Receiver(**kw)
        self.peers.append(r)
        return r

    def agent(self, *args, **kw):
        a = Agent(self.tmp, self.board, *args, **kw)
        self.agents.append(a)
        return a

    def path(self, name, text=None, mode=0o600):
        p = os.path.join(self.tmp, name)
        if text is not None:
            write_file(p, text, mode)
        return p


# ---------------------------------------------------------------------------------------------------------------
# 1. A real Alertmanager


class Alertmanager:
    def __init__(self, d, hook_url):
        self.port = free_port()
        self.d = d
        self.cfg = os.path.join(d, "alertmanager.yml")
        write_file(self.cfg, """route:
  receiver: hook
  group_by: [alertname, instance]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs:
      - url: %s
        send_resolved: true
""" % hook_url, 0o644)
        self.log = os.path.join(d, "alertmanager.log")
        self.proc = None

    def start(self):
        store = os.path.join(self.d, "am-data")
        os.makedirs(store, exist_ok=True)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([ALERTMANAGER, "--config.file=" + self.cfg, "--storage.path=" + store,
                                          "--web.listen-address=127.0.0.1:%d" % self.port,
                                          "--cluster.listen-address="],
                                         stdout=log, stderr=subprocess.STDOUT)

        def ready():
            try:
                with urllib.request.urlopen(self.url("/-/ready"), timeout=1) as r:
                    return r.status == 200
            except OSError:
                return False
        if not wait_until(ready, 30, 0.1):
            raise AssertionError("alertmanager did not start:\n" + read_text(self.log))
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

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def alerts(self):
        with urllib.request.urlopen(self.url("/api/v2/alerts"), timeout=5) as r:
            return json.load(r)


@unittest.skipUnless(os.access(ALERTMANAGER, os.X_OK), "prometheus-alertmanager is not installed")
class AlertmanagerTest(WebhookCase):
    def test_alert_reaches_alertmanager_and_its_receiver_then_resolves(self):
        hook = self.receiver().start()
        am = Alertmanager(self.tmp, hook.url("/am-hook")).start()
        self.peers.append(am)
        agent = self.agent(config(
            """  am:
    type: webhook
    format: alertmanager-api
    url: %s
    resend: 1s
""" % am.url("/api/v2/alerts"),
            rule("cpu-hot", "temp.cpu_c", ["am"], labels="{team: robots, site: lab}")))
        agent.wait_metrics(lambda m: "webhook.am.sent_total" in m, "the webhook counters")
        self.board.set("temp.cpu_c", HOT)
        agent.wait_metrics(lambda m: m.get("agent.alerts_firing") == 1, "the alert firing")

        # in Alertmanager's API, with our labels and annotations
        listed = wait_until(lambda: [a for a in am.alerts() if a["labels"].get("alertname") == "cpu-hot"], 15, 0.2)
        self.assertTrue(listed, "not in /api/v2/alerts:\n" + agent.stderr())
        a = listed[0]
        self.assertEqual(a["labels"], {"alertname": "cpu-hot", "severity": "warning", "instance": "jetson-lab-01",
                                       "board": "jetson-lab-01", "metric": "temp.cpu_c", "team": "robots",
                                       "site": "lab"})
        self.assertEqual(a["annotations"]["summary"], "jetson-lab-01: temp.cpu_c at 70 C (threshold 60)")
        self.assertEqual(a["annotations"]["description"], "cpu-hot warning on jetson-lab-01, team robots")
        self.assertEqual(a["annotations"]["value"], "70")
        self.assertEqual(a["annotations"]["threshold"], "60")
        self.assertEqual(a["status"]["state"], "active")
        self.assertTrue(a["startsAt"].endswith("Z"), a["startsAt"])

        # Alertmanager notified its own webhook receiver: a version 4 body, firing
        def am_says(status):
            return [b for b in hook.bodies("/am-hook") if b["status"] == status]
        fired = wait_until(lambda: am_says("firing"), 20, 0.1)
        self.assertTrue(fired, "alertmanager sent nothing:\n" + read_text(am.log))
        b = fired[0]
        self.assertEqual(b["version"], "4")
        self.assertEqual(b["receiver"], "hook")
        self.assertEqual(b["groupLabels"], {"alertname": "cpu-hot", "instance": "jetson-lab-01"})
        self.assertEqual(b["commonLabels"]["board"], "jetson-lab-01")
        self.assertEqual(len(b["alerts"]), 1)
        self.assertEqual(b["alerts"][0]["labels"]["team"], "robots")
        self.assertEqual(b["alerts"][0]["annotations"]["value"], "70")
        save_example("alertmanager-v4-from-alertmanager.json", hook.got("/am-hook")[0][3])

        # the resend keeps it there (resend: 1s), without new notifications from Alertmanager
        sent = agent.wait_metrics(lambda m: m["webhook.am.sent_total"] >= 3, "re-sends")["webhook.am.sent_total"]
        self.assertGreaterEqual(sent, 3)

        # cooled down: resolved in the API (gone from the active alerts), and at the receiver
        self.board.set("temp.cpu_c", COOL)
        agent.wait_metrics(lambda m: m.get("agent.alerts_firing") == 0, "the alert resolved")
        gone = wait_until(lambda: not [a for a in am.alerts() if a["labels"].get("alertname") == "cpu-hot"], 15, 0.2)
        self.assertTrue(gone, am.alerts())
        resolved = wait_until(lambda: am_says("resolved"), 20, 0.1)
        self.assertTrue(resolved, "no resolved notification:\n" + read_text(am.log))
        r = resolved[0]["alerts"][0]
        self.assertEqual(r["status"], "resolved")
        self.assertEqual(r["labels"]["alertname"], "cpu-hot")
        self.assertNotEqual(r["endsAt"], "0001-01-01T00:00:00Z")
        self.assertEqual(r["startsAt"], b["alerts"][0]["startsAt"])
        m = agent.last()
        self.assertEqual(m["webhook.am.failed_total"], 0)
        self.assertEqual(m["webhook.am.dropped_total"], 0)
        self.assertEqual(agent.stop(), 0)


# ---------------------------------------------------------------------------------------------------------------
# 2. The bodies and headers as the agent sends them


def rfc3339_ms(text):
    """"2026-11-23T09:12:03Z" -> epoch milliseconds (whole seconds: the agent writes no fraction)."""
    import calendar
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")) * 1000


class BodiesTest(WebhookCase):
    def test_three_formats_field_by_field_with_signatures(self):
        r = self.receiver().start()
        web = "127.0.0.1:%d" % free_port()
        secret = self.path("secret", SECRET + "\n")
        # the `am` action reads its secret and token as systemd credentials (credential:NAME)
        creds = self.path("credentials")
        os.mkdir(creds)
        write_file(os.path.join(creds, "hook-secret"), SECRET + "\n")
        write_file(os.path.join(creds, "hook-token"), TOKEN + "\n")
        agent = self.agent(config("""  am:
    type: webhook
    format: alertmanager
    url: %s
    secret_file: credential:hook-secret
    bearer_token_file: credential:hook-token
    headers: {X-Team: robots}
  api:
    type: webhook
    format: alertmanager-api
    url: %s
    resend: 1h
  js:
    type: webhook
    format: json
    url: %s
    secret_file: %s
""" % (r.url("/am"), r.url("/api"), r.url("/json"), secret),
            rule("cpu-hot", "temp.cpu_c", ["am", "api", "js"], labels="{team: robots}"), web=web),
            env={"CREDENTIALS_DIRECTORY": creds})
        agent.wait_metrics(lambda m: "webhook.js.sent_total" in m, "the webhook counters")
        self.board.set("temp.cpu_c", HOT)
        for path in ("/am", "/api", "/json"):
            r.wait(1, path)
        self.board.set("temp.cpu_c", COOL)
        for path in ("/am", "/api", "/json"):
            r.wait(2, path)
        m = agent.wait_metrics(lambda m: m["webhook.am.sent_total"] == 2 and m["webhook.api.sent_total"] == 2 and
                               m["webhook.js.sent_total"] == 2, "every notification counted")
        self.assertEqual(agent.stop(), 0)
        now = time.time()
        for name in ("am", "api", "js"):
            self.assertEqual(m["webhook.%s.failed_total" % name], 0)
            self.assertEqual(m["webhook.%s.retried_total" % name], 0)
            self.assertEqual(m["webhook.%s.queue_depth" % name], 0)
            self.assertLessEqual(abs(m["webhook.%s.last_success_s" % name] - now), 60)
        self.assertEqual(len(r.got()), 6, [x[1] for x in r.got()])  # nothing else: resend 1h, no retries

        # ---- json: the core event, one per request
        js = r.got("/json")
        fire, res = [json.loads(x[3]) for x in js]
        keys = ["rule", "metric", "transition", "status", "severity", "previous_severity", "value", "threshold",
                "absent", "fingerprint", "at", "at_ms", "starts_at", "starts_at_ms", "ends_at", "ends_at_ms",
                "summary", "description", "labels", "throttle", "throttle_causes", "power_mode", "board"]
        self.assertEqual(list(fire), keys)
        self.assertEqual(list(res), keys)
        # the device id MQTT uses: made from the board's machine-id (docs/mqtt.md, Device id), not its name
        device_id = "jetson-" + hmac.new(MACHINE_ID.encode(), b"tegrawatch device id", hashlib.sha256).hexdigest()[:16]
        board = {"name": "jetson-lab-01", "device_id": device_id}
        self.assertEqual({k: fire[k] for k in keys if not k.startswith(("at", "starts_at", "ends_at"))}, {
            "rule": "cpu-hot", "metric": "temp.cpu_c", "transition": "firing", "status": "firing",
            "severity": "warning", "previous_severity": "none", "value": 70, "threshold": 60, "absent": False,
            "fingerprint": fire["fingerprint"], "summary": "jetson-lab-01: temp.cpu_c at 70 C (threshold 60)",
            "description": "cpu-hot warning on jetson-lab-01, team robots", "labels": {"team": "robots"},
            "throttle": "", "throttle_causes": [], "power_mode": "MAXN_SUPER", "board": board})
        self.assertRegex(fire["fingerprint"], "^[0-9a-f]{16}$")
        self.assertEqual(fire["starts_at_ms"], fire["at_ms"])
        self.assertIsNone(fire["ends_at"])
        self.assertIsNone(fire["ends_at_ms"])
        self.assertEqual(rfc3339_ms(fire["at"]), fire["at_ms"] // 1000 * 1000)
        self.assertLessEqual(abs(fire["at_ms"] / 1000 - now), 60)
        self.assertEqual((res["transition"], res["status"], res["previous_severity"], res["value"]),
                         ("resolved", "resolved", "warning", 45))
        self.assertEqual(res["fingerprint"], fire["fingerprint"])
        self.assertEqual(res["starts_at_ms"], fire["at_ms"])
        self.assertEqual(res["ends_at_ms"], res["at_ms"])
        self.assertGreater(res["at_ms"], fire["at_ms"])
        self.assertEqual(rfc3339_ms(res["ends_at"]), res["ends_at_ms"] // 1000 * 1000)
        self.assertEqual(res["board"], board)

        # ---- alertmanager: Alertmanager's own webhook body (version 4)
        am_fire, am_res = r.bodies("/am")
        labels = {"alertname": "cpu-hot", "board": "jetson-lab-01", "instance": "jetson-lab-01",
                  "metric": "temp.cpu_c", "severity": "warning", "team": "robots"}
        ann = {"description": "cpu-hot warning on jetson-lab-01, team robots",
               "summary": "jetson-lab-01: temp.cpu_c at 70 C (threshold 60)", "threshold": "60", "value": "70"}
        self.assertEqual(am_fire, {
            "version": "4", "groupKey": '{}:{instance="jetson-lab-01"}', "truncatedAlerts": 0, "status": "firing",
            "receiver": "am", "groupLabels": {"instance": "jetson-lab-01"}, "commonLabels": labels,
            "commonAnnotations": ann, "externalURL": "http://%s/" % web,
            "alerts": [{"status": "firing", "labels": labels, "annotations": ann, "startsAt": fire["starts_at"],
                        "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://%s/" % web,
                        "fingerprint": fire["fingerprint"]}]})
        ann_res = dict(ann, summary="jetson-lab-01: temp.cpu_c at 45 C (threshold 60)", value="45")
        self.assertEqual(am_res["status"], "resolved")
        self.assertEqual(am_res["commonAnnotations"], ann_res)
        self.assertEqual(am_res["alerts"], [{
            "status": "resolved", "labels": labels, "annotations": ann_res, "startsAt": fire["starts_at"],
            "endsAt": res["ends_at"], "generatorURL": "http://%s/" % web, "fingerprint": fire["fingerprint"]}])
        # labels as Alertmanager writes them: sorted by name
        self.assertEqual(list(json.loads(r.got("/am")[0][3])["commonLabels"]), sorted(labels))

        # ---- alertmanager-api: what POST /api/v2/alerts takes (no endsAt while firing)
        api_fire, api_res = r.bodies("/api")
        self.assertEqual(api_fire, [{"labels": labels, "annotations": ann, "startsAt": fire["starts_at"],
                                     "generatorURL": "http://%s/" % web}])
        self.assertEqual(api_res, [{"labels": labels, "annotations": ann_res, "startsAt": fire["starts_at"],
                                    "endsAt": res["ends_at"], "generatorURL": "http://%s/" % web}])

        # ---- headers and signatures
        version = subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout.split()[-1]
        ids = set()
        for t, path, h, body in r.got():
            self.assertEqual(h["content-type"], "application/json")
            self.assertEqual(h["user-agent"], "tegrawatch/" + version)
            self.assertEqual(int(h["content-length"]), len(body))
            if path == "/api":  # no secret, no token: none of these
                for k in ("webhook-id", "webhook-timestamp", "webhook-signature", "authorization", "x-team"):
                    self.assertNotIn(k, h)
                continue
            self.assertRegex(h["webhook-id"], "^msg_[0-9a-f]{32}$")
            ids.add(h["webhook-id"])
            self.assertLessEqual(abs(int(h["webhook-timestamp"]) - now), 60)
            self.assertRegex(h["webhook-signature"], "^v1,[A-Za-z0-9+/]{43}=$")
            self.assertTrue(verify_signature(SECRET, h, body), (path, h))
            # the verifier itself: another key, another body or another id fail
            other = "whsec_" + base64.b64encode(bytes(range(2, 26))).decode()
            self.assertFalse(verify_signature(other, h, body))
            self.assertFalse(verify_signature(SECRET, h, body + b" "))
            self.assertFalse(verify_signature(SECRET, dict(h, **{"webhook-id": "msg_x"}), body))
            if path == "/am":
                self.assertEqual(h["authorization"], "Bearer " + TOKEN)
                self.assertEqual(h["x-team"], "robots")
            else:
                self.assertNotIn("authorization", h)
        self.assertEqual(len(ids), 4, "one webhook-id per notification")
        # neither the secret nor the token is ever logged
        self.assertNotIn(TOKEN, agent.stderr())
        self.assertNotIn(SECRET[6:], agent.stderr())
        for path, name in (("/json", "json"), ("/am", "alertmanager"), ("/api", "alertmanager-api")):
            for i, (t, p, h, body) in enumerate(r.got(path)):
                save_example("%s-%s.json" % (name, ("firing", "resolved")[i]), body)


# ---------------------------------------------------------------------------------------------------------------
# 3. Faults through the real agent (the delivery logic itself: tests/unit/test_webhook_delivery.c)


def json_action(name, url, extra=""):
    return "  %s:\n    type: webhook\n    format: json\n    url: %s\n%s" % (name, url, extra)


def three_rules(actions):
    return "".join(rule(m.split(".")[1][:-2] + "-hot", m, actions) for m in ZONES)


def events(reqs):
    return [(b["rule"], b["transition"]) for b in (json.loads(x[3]) for x in reqs)]


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        return r.read()


class FaultsTest(WebhookCase):
    def test_500_three_times_then_200_same_id_counters_and_metrics(self):
        r = self.receiver(script=[(500, {})] * 3).start()
        secret = self.path("secret", SECRET)
        web_port = free_port()
        agent = self.agent(config(json_action("flaky", r.url("/hook"), "    secret_file: %s\n" % secret),
                                  rule("cpu-hot", "temp.cpu_c", ["flaky"]), web="127.0.0.1:%d" % web_port))
        self.board.set("temp.cpu_c", HOT)
        reqs = r.wait(4)
        m = agent.wait_metrics(lambda m: m["webhook.flaky.sent_total"] == 1, "the notification delivered")
        self.assertEqual((m["webhook.flaky.retried_total"], m["webhook.flaky.failed_total"],
                          m["webhook.flaky.dropped_total"], m["webhook.flaky.queue_depth"]), (3, 0, 0, 0))
        self.assertLessEqual(abs(m["webhook.flaky.last_success_s"] - time.time()), 60)
        # one notification, four attempts: the same id and body each time, each signed for its own timestamp
        self.assertEqual(len({x[2]["webhook-id"] for x in reqs}), 1)
        self.assertEqual(len({x[3] for x in reqs}), 1)
        for x in reqs:
            self.assertTrue(verify_signature(SECRET, x[2], x[3]))
        stamps = [int(x[2]["webhook-timestamp"]) for x in reqs]
        self.assertEqual(stamps, sorted(stamps))
        self.assertEqual(events(reqs[:1]), [("cpu-hot", "firing")])

        # /metrics: proper families with an action label, and promtool agrees
        text = scrape(web_port).decode()
        for line in ("# TYPE tegrawatch_webhook_sent_total counter", 'tegrawatch_webhook_sent_total{action="flaky"} 1',
                     "# TYPE tegrawatch_webhook_retried_total counter",
                     'tegrawatch_webhook_retried_total{action="flaky"} 3',
                     'tegrawatch_webhook_failed_total{action="flaky"} 0',
                     'tegrawatch_webhook_dropped_total{action="flaky"} 0',
                     "# TYPE tegrawatch_webhook_queue_depth gauge", 'tegrawatch_webhook_queue_depth{action="flaky"} 0',
                     "# TYPE tegrawatch_webhook_last_success_timestamp_seconds gauge"):
            self.assertIn(line + "\n", text)
        for family in ("sent_total", "failed_total", "retried_total", "dropped_total", "queue_depth",
                       "last_success_timestamp_seconds"):
            self.assertIn("# HELP tegrawatch_webhook_%s " % family, text)
        self.assertNotIn("tegrawatch_webhook_flaky", text)
        promtool = shutil.which("promtool")
        self.assertIsNotNone(promtool, "promtool is missing: apt-get install prometheus (scripts/deps.txt)")
        p = subprocess.run([promtool, "check", "metrics"], input=text.encode(), capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, (p.stdout + p.stderr).decode())
        self.assertEqual(agent.stop(), 0)
        err = agent.stderr()
        self.assertIn("webhook flaky: delivery failed (HTTP 500); retrying with back-off", err)
        self.assertIn("webhook flaky: the receiver takes notifications again", err)

    def test_redirect_is_not_followed(self):
        # goal F6: a 302 is the receiver's answer, not an address to go to: counted as refused, never followed
        other = self.receiver().start()
        r = self.receiver(script=[(302, {"Location": other.url("/elsewhere")})]).start()
        agent = self.agent(config(json_action("moved", r.url("/hook")), rule("cpu-hot", "temp.cpu_c", ["moved"])),
                           backoff="100,1000")
        self.board.set("temp.cpu_c", HOT)
        r.wait(1)
        m = agent.wait_metrics(lambda m: m["webhook.moved.failed_total"] == 1, "the redirect counted as refused")
        self.assertEqual((m["webhook.moved.sent_total"], m["webhook.moved.retried_total"]), (0, 0))
        time.sleep(1)
        self.assertEqual(len(r.got()), 1)  # not retried
        self.assertEqual(other.got(), [])  # not followed
        self.assertEqual(agent.stop(), 0)
        self.assertIn("webhook moved: the receiver refused a notification", agent.stderr())

    def test_429_retry_after_is_honoured(self):
        r = self.receiver(script=[(429, {"Retry-After": "2"})]).start()
        # a plain back-off would retry within 100 ms; Retry-After is honoured up to the cap (10 s here)
        agent = self.agent(config(json_action("hook", r.url("/hook")), rule("cpu-hot", "temp.cpu_c", ["hook"])),
                           backoff="100,10000")
        self.board.set("temp.cpu_c", HOT)
        first, second = r.wait(2)
        self.assertGreaterEqual(second[0] - first[0], 1.9)
        self.assertLess(second[0] - first[0], 4)
        self.assertEqual(first[3], second[3])
        m = agent.wait_metrics(lambda m: m["webhook.hook.sent_total"] == 1, "the notification delivered")
        self.assertEqual((m["webhook.hook.retried_total"], m["webhook.hook.failed_total"]), (1, 0))
        self.assertEqual(agent.stop(), 0)

    def test_tarpit_holds_neither_the_other_action_nor_sampling(self):
        tarpit = self.receiver(script=["tarpit"] * 100).start()
        good = self.receiver().start()
        agent = self.agent(config(json_action("slow", tarpit.url("/tarpit"), "    timeout: 1s\n") +
                                  json_action("good", good.url("/good")),
                                  rule("cpu-hot", "temp.cpu_c", ["slow", "good"])))
        agent.wait_metrics(lambda m: "webhook.good.sent_total" in m, "the webhook counters")
        t0 = time.monotonic()
        for i in range(2):
            self.board.set("temp.cpu_c", HOT)
            good.wait(2 * i + 1)
            self.board.set("temp.cpu_c", COOL)
            good.wait(2 * i + 2)
        # the healthy action got every transition while the tarpit holds its own slot
        self.assertEqual(events(good.got()), [("cpu-hot", "firing"), ("cpu-hot", "resolved")] * 2)
        m = agent.wait_metrics(lambda m: m["webhook.slow.retried_total"] >= 2, "the tarpit timed out and retried",
                               timeout=10)
        self.assertEqual((m["webhook.slow.sent_total"], m["webhook.slow.queue_depth"]), (0, 4))
        self.assertEqual(m["webhook.good.sent_total"], 4)
        # sampling kept its pace: every tick on time, five samples a second
        self.assertEqual(m["agent.late_ticks_total"], 0)
        with agent.lock:
            window = [t for t, _ in agent.samples if t >= t0]
        span = window[-1] - window[0]
        self.assertGreater(span, 2)
        self.assertGreaterEqual(len(window) - 1, span / 0.2 * 0.8, "samples kept coming")
        self.assertGreaterEqual(len(tarpit.got()), 3)  # each attempt reached it and was cut after 1 s
        self.assertEqual(agent.stop(), 0)  # within the stop grace, the notification in flight cut
        self.assertIn("webhook slow: delivery failed", agent.stderr())
        self.assertIn("timed out", agent.stderr().lower())

    def test_full_queue_drops_the_oldest(self):
        port = free_port()  # the receiver is down: nothing listens there yet
        agent = self.agent(config(json_action("ops", "http://127.0.0.1:%d/hook" % port, "    queue_max: 3\n"),
                                  three_rules(["ops"])), backoff="300,600")
        agent.wait_metrics(lambda m: "webhook.ops.sent_total" in m, "the webhook counters")
        # six notifications, one tick each: three firings, then three resolves
        for i, (metric, mc) in enumerate([(m, HOT) for m in ZONES] + [(m, COOL) for m in ZONES]):
            self.board.set(metric, mc)
            firing = i + 1 if i < 3 else 5 - i
            agent.wait_metrics(lambda m: m["agent.alerts_firing"] == firing, "%d alerts firing" % firing)
        m = agent.wait_metrics(lambda m: m["webhook.ops.dropped_total"] == 3, "three dropped")
        self.assertEqual((m["webhook.ops.queue_depth"], m["webhook.ops.sent_total"]), (3, 0))
        self.assertGreater(m["webhook.ops.retried_total"], 0)
        r = self.receiver(port=port).start()
        reqs = r.wait(3)
        m = agent.wait_metrics(lambda m: m["webhook.ops.sent_total"] == 3, "the rest delivered")
        self.assertEqual((m["webhook.ops.queue_depth"], m["webhook.ops.dropped_total"]), (0, 3))
        self.assertEqual(agent.stop(), 0)
        # the oldest three (the firings) went; the newest three came, in order
        self.assertEqual(events(r.got()), [("cpu-hot", "resolved"), ("gpu-hot", "resolved"),
                                           ("soc0-hot", "resolved")])
        at = [json.loads(x[3])["at_ms"] for x in reqs]
        self.assertEqual(at, sorted(at))

    def test_kill9_with_queue_file_then_restart_delivers_in_order(self):
        port = free_port()
        queue = self.path("ops.queue")
        secret = self.path("secret", SECRET)
        cfg = config(json_action("ops", "http://127.0.0.1:%d/hook" % port,
                                 "    queue_file: %s\n    secret_file: %s\n" % (queue, secret)),
                     three_rules(["ops"]))
        agent = self.agent(cfg, name="first")
        agent.wait_metrics(lambda m: "webhook.ops.sent_total" in m, "the webhook counters")
        steps = [("temp.cpu_c", HOT, 1), ("temp.gpu_c", HOT, 2), ("temp.cpu_c", COOL, 1), ("temp.gpu_c", COOL, 0)]
        for metric, mc, firing in steps:
            self.board.set(metric, mc)
            agent.wait_metrics(lambda m: m["agent.alerts_firing"] == firing, "%d alerts firing" % firing)
        agent.wait_metrics(lambda m: m["webhook.ops.queue_depth"] == 4, "four queued")
        self.assertEqual(agent.stop(signal.SIGKILL), -signal.SIGKILL)

        r = self.receiver(port=port).start()
        again = self.agent(cfg, name="second")
        reqs = r.wait(4)
        m = again.wait_metrics(lambda m: m["webhook.ops.sent_total"] == 4, "the queue delivered")
        self.assertEqual((m["webhook.ops.queue_depth"], m["webhook.ops.dropped_total"]), (0, 0))
        self.assertEqual(again.stop(), 0)
        self.assertIn("webhook ops: 4 notifications waiting from an earlier run go first", again.stderr())
        self.assertEqual(events(reqs), [("cpu-hot", "firing"), ("gpu-hot", "firing"), ("cpu-hot", "resolved"),
                                        ("gpu-hot", "resolved")])
        for x in reqs:
            self.assertTrue(verify_signature(SECRET, x[2], x[3]))
        self.assertEqual(len({x[2]["webhook-id"] for x in reqs}), 4)
        # delivered once: a third start finds the queue empty
        third = self.agent(cfg, name="third")
        third.wait_metrics(lambda m: m.get("agent.samples_total", 0) >= 5, "five samples")
        self.assertEqual(third.last()["webhook.ops.queue_depth"], 0)
        self.assertEqual(third.stop(), 0)
        self.assertEqual(len(r.got()), 4)


class LazyLibcurlTest(WebhookCase):
    """libcurl is loaded by the first webhook action only: an agent without one never maps it."""

    def mapped(self, agent):
        with open("/proc/%d/maps" % agent.proc.pid) as f:
            return f.read()

    def test_mapped_only_with_a_webhook_action(self):
        plain = self.agent(config("  {}\n", rule("cpu-hot", "temp.cpu_c", ["log"])),
                           name="plain")
        plain.wait_metrics(lambda m: True, "a sample")
        self.assertFalse("libcurl" in self.mapped(plain), "libcurl mapped without a webhook action")
        plain.stop()

        r = self.receiver().start()
        hooked = self.agent(config(json_action("hook", r.url("/hook")), rule("cpu-hot", "temp.cpu_c", ["hook"])),
                            name="hooked")
        hooked.wait_metrics(lambda m: True, "a sample")
        self.assertTrue("libcurl" in self.mapped(hooked), "libcurl not mapped with a webhook action")
        self.board.set("temp.cpu_c", HOT)
        self.assertEqual(events(r.wait(1)), [("cpu-hot", "firing")])
        hooked.stop()


class SignalsTest(WebhookCase):
    def test_sighup_reloads_and_sigterm_stops_with_webhooks(self):
        """The delivery thread must not take the signals the loop reads (it once did: SIGHUP killed the agent)."""
        r = self.receiver().start()
        agent = self.agent(config(json_action("ops", r.url("/hook")), rule("cpu-hot", "temp.cpu_c", ["ops"])))
        agent.wait_metrics(lambda m: "webhook.ops.sent_total" in m, "the webhook counters")
        for n in (1, 2, 3):
            agent.proc.send_signal(signal.SIGHUP)
            agent.wait_metrics(lambda m: m["agent.config_reloads_total"] == n, "reload %d" % n)
        self.board.set("temp.cpu_c", HOT)
        self.assertEqual(events(r.wait(1)), [("cpu-hot", "firing")])  # the action survived the reloads
        self.assertEqual(agent.stop(), 0)


class SlowOutageTest(WebhookCase):
    """--slow only (suite `slow`): a receiver down for two minutes."""

    OUTAGE_S = 120

    @unittest.skipUnless(SLOW or "--slow" in sys.argv, "the two-minute outage runs with --slow (suite slow)")
    def test_receiver_down_two_minutes_then_everything_in_order(self):
        port = free_port()
        # retries from 1 s doubling to 15 s (production: 5 s to 10 min): the test ends soon after the receiver is back
        agent = self.agent(config(json_action("ops", "http://127.0.0.1:%d/hook" % port),
                                  rule("cpu-hot", "temp.cpu_c", ["ops"])), backoff="1000,15000")
        agent.wait_metrics(lambda m: "webhook.ops.sent_total" in m, "the webhook counters")
        down_at = time.monotonic()
        # three alerts, fired and resolved 15 s apart during the outage: six notifications queued
        for i in range(6):
            self.board.set("temp.cpu_c", HOT if i % 2 == 0 else COOL)
            agent.wait_metrics(lambda m: m["webhook.ops.queue_depth"] == i + 1, "%d queued" % (i + 1))
            time.sleep(15 - (time.monotonic() - down_at) % 15)  # paces the story; nothing to wait for
        m = agent.wait_metrics(lambda m: m["webhook.ops.retried_total"] >= 5, "retries during the outage",
                               timeout=self.OUTAGE_S)
        remaining = self.OUTAGE_S - (time.monotonic() - down_at)
        if remaining > 0:
            time.sleep(remaining)  # the outage itself: two minutes of real time
        m = agent.last()
        self.assertEqual((m["webhook.ops.queue_depth"], m["webhook.ops.sent_total"], m["webhook.ops.dropped_total"],
                          m["webhook.ops.failed_total"]), (6, 0, 0, 0))
        self.assertEqual(m["agent.late_ticks_total"], 0)
        with agent.lock:
            during = [t for t, _ in agent.samples if t >= down_at]
        self.assertGreaterEqual(len(during), self.OUTAGE_S / 0.2 * 0.9, "sampling went on")
        r = self.receiver(port=port).start()
        back_at = time.monotonic()
        reqs = r.wait(6, timeout=30)
        took = reqs[-1][0] - back_at
        m = agent.wait_metrics(lambda m: m["webhook.ops.sent_total"] == 6 and m["webhook.ops.queue_depth"] == 0,
                               "the queue delivered")
        self.assertEqual((m["webhook.ops.dropped_total"], m["webhook.ops.failed_total"]), (0, 0))
        self.assertEqual(events(reqs), [("cpu-hot", "firing"), ("cpu-hot", "resolved")] * 3)
        at = [json.loads(x[3])["at_ms"] for x in reqs]
        self.assertEqual(at, sorted(at))
        self.assertEqual(len(set(at)), 6)
        self.assertEqual(agent.stop(), 0)
        sys.stderr.write("[%d retries in %d s; all six delivered %.1f s after the receiver came back] " % (
            m["webhook.ops.retried_total"], self.OUTAGE_S, took))


if __name__ == "__main__":
    BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    SLOW = "--slow" in sys.argv
    del sys.argv[1:3]
    if SLOW:
        # the slow suite runs the outage alone; the rest is in the integration suite
        sys.argv.remove("--slow")
        sys.argv.append("SlowOutageTest")
    unittest.main(verbosity=2)
