"""What the webhook tests share: a fixture board whose temperatures they set, the agent on it with a fast
back-off, the configuration's pieces, and the Standard Webhooks signature checked from the spec."""
import base64
import hashlib
import hmac
import json
import os
import shutil
import subprocess
import urllib.request

from . import base
from .base import end_process, free_port, read_text, wait_until, write_file
from .case import TestCase

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
MACHINE_ID = "8d3f0c6a2b9e4f17a5c1d0e2b3f4a596"


def verify_signature(secret, headers, body):
    """Standard Webhooks, written from the spec: v1,<b64 HMAC-SHA256(key, "id.timestamp.body")>."""
    key = base64.b64decode(secret[len("whsec_"):])
    msg_id, ts = headers["webhook-id"], headers["webhook-timestamp"]
    want = base64.b64encode(hmac.new(key, b"%s.%s.%s" % (msg_id.encode(), ts.encode(), body),
                                     hashlib.sha256).digest()).decode()
    sigs = [s.split(",", 1)[1] for s in headers["webhook-signature"].split() if s.startswith("v1,")]
    return any(hmac.compare_digest(want, s) for s in sigs)


class Board:
    """A copy of a fixture board whose thermal zones the test writes."""

    def __init__(self, d):
        self.root = os.path.join(d, "root")
        shutil.copytree(base.src(base.FIXTURE_BOARD), self.root, symlinks=True)
        write_file(os.path.join(self.root, "etc/machine-id"), MACHINE_ID + "\n", 0o644)
        for metric in ZONES:
            self.set(metric, COOL)

    def set(self, metric, mc):
        write_file(os.path.join(self.root, ZONES[metric]), "%d\n" % mc, 0o644)


def hook_config(actions, rules, board_name="jetson-lab-01", web=""):
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


def hook_rule(name, metric, actions, labels="{}", extra=""):
    return """  - name: %s
    metric: %s
    warning: 60
    clear: 2
    labels: %s
    summary: "{{board}}: {{metric}} at {{value}} C (threshold {{threshold}})"
    description: "{{rule}} {{severity}} on {{board}}, team {{labels.team}}"
    actions: {warning: [%s]}
%s""" % (name, metric, labels, ", ".join(actions), extra)


def json_action(name, url, extra=""):
    return "  %s:\n    type: webhook\n    format: json\n    url: %s\n%s" % (name, url, extra)


def three_rules(actions):
    return "".join(hook_rule(m.split(".")[1][:-2] + "-hot", m, actions) for m in ZONES)


def events(reqs):
    return [(b["rule"], b["transition"]) for b in (json.loads(x.body) for x in reqs)]


def save_example(name, data):
    d = os.environ.get("WEBHOOK_EXAMPLES")
    if d:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


class Alertmanager:
    """A real prometheus-alertmanager on 127.0.0.1 (a free port, or PORT), its data in D/NAME (new: it knows no
    alert). With HOOK_URL it notifies that webhook receiver (grouped by alertname and instance, 1 s waits,
    resolved ones too); without, nobody."""

    def __init__(self, d, hook_url=None, port=None, name="alertmanager"):
        self.port = port or free_port()
        self.d = os.path.join(d, name)
        os.makedirs(self.d, exist_ok=True)
        self.cfg = os.path.join(self.d, "alertmanager.yml")
        if hook_url:
            route = """route:
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
""" % hook_url
        else:
            route = "route:\n  receiver: none\nreceivers:\n  - name: none\n"
        write_file(self.cfg, route, 0o644)
        self.log = os.path.join(self.d, "alertmanager.log")
        self.proc = None

    def start(self):
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([ALERTMANAGER, "--config.file=" + self.cfg, "--storage.path=" + self.d,
                                          "--web.listen-address=127.0.0.1:%d" % self.port,
                                          "--cluster.listen-address="],
                                         stdout=log, stderr=subprocess.STDOUT)
        if not wait_until(lambda: self.get("/-/ready") is not None, 30, 0.1):
            raise AssertionError("alertmanager did not start:\n" + read_text(self.log))
        return self

    def stop(self):
        end_process(self.proc, 10)
        self.proc = None

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def get(self, path):
        """The body of GET PATH, or None when it does not answer (200)."""
        try:
            with urllib.request.urlopen(self.url(path), timeout=5) as r:
                return r.read()
        except OSError:
            return None

    def alerts(self):
        return json.loads(self.get("/api/v2/alerts") or b"[]")

    def active(self, name):
        """The active alerts named NAME."""
        body = self.get("/api/v2/alerts?active=true")
        return [a for a in json.loads(body or b"[]") if a["labels"].get("alertname") == name]


class WebhookCase(TestCase):
    """A board copy (self.board) and hook_agent(): `tegrawatch run` on it in live sysfs mode, 200 ms interval,
    with a fast test back-off (TEGRAWATCH_WEBHOOK_BACKOFF_MS); on the driven clock with DRIVEN."""

    def setUp(self):
        super().setUp()
        self.tmp = self.d
        self.board = Board(self.d)

    def hook_agent(self, config, name="agent", backoff="200,1000", interval=200, env=None, driven=False):
        extra = {"TEGRAWATCH_WEBHOOK_BACKOFF_MS": backoff} if backoff else {}
        extra.update(env or {})
        return self.agent(["--root", self.board.root, "--interval", str(interval), "--no-tegrastats"], name=name,
                          config=config, env=extra, driven=driven)
