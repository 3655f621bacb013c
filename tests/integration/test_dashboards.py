#!/usr/bin/env python3
"""The shipped dashboards against a running agent (docs/dashboards.md): live on the Orin Nano fixture board with
the stand-in tegrastats (fake_tegrastats.sh), as the demo's board would be, since a replay takes no work reports.

- Grafana (dashboards/grafana/tegrawatch.json): every panel target, its template variables substituted, returns at
  least one series from a real Prometheus, both the one that scrapes the agent's /metrics (its `instance` set to the
  device id, as docs/dashboards.md says) and the one the same agent pushes to with remote write; each panel's unit
  fits the unit suffix of the families it shows; every family is documented; the `board` variable lists the device
  id in both; docs/dashboards.md lists every panel and query.
- Home Assistant (dashboards/home-assistant/tegrawatch.yaml): every entity the Lovelace YAML names is one that the
  agent's discovery creates, its entity_id derived as Home Assistant derives it (device name + entity name).
  The agent is named as the demo (`demo-orin-nano`), the dashboards' placeholder.

The scenario makes what only some samples have: work is posted (joules per unit) and a rule fires from sample 20
(tegrawatch_alerts). The host's panels and entities (file systems, network, memory, OOM kills) come from a second
agent on this machine's real root (the host source never reads a fixture tree), named as the demo in Home Assistant
(`agent.board_name`) with a device id of its own (`demo-orin-nano-host`, its `instance`): `/` and `lo` watched, so
that both exist on any machine (the Lovelace YAML's eth0 stands for lo here, as its board name stands for the
test's). `$board` is both. Usage: test_dashboards.py TEGRAWATCH SOURCE_ROOT (exit 77 without
prometheus, mosquitto or python3-yaml).
"""
import json
import os
import re
import shutil
import tempfile
import time
import unittest

import harness
from harness import fleet as fp
from harness import mqtt_keys, mqtt_section, wait_until, write_file

DEVICE = "demo-orin-nano"  # the demo's device id and board name, the dashboards' placeholder
HOST_DEVICE = DEVICE + "-host"  # the agent on this machine's real root, for the host's panels
BOARD = "tests/fixtures/boards/orin-nano-jp6"
SUBST = {"$board": DEVICE + "|" + HOST_DEVICE, "$__rate_interval": "1m", "$__range": "1m", "$__interval": "15s"}

# A Grafana unit -> the kinds of series it may show: a family's unit suffix, or "rate" + the suffix of a counter
# that rate() turns into another unit (joules a second are watts, seconds a second a share of time).
UNITS = {
    "celsius": {"_celsius"},
    "watt": {"_watts", "rate_joules"},
    "hertz": {"_hertz"},
    "joule": {"_joules"},
    "percentunit": {"_ratio", "rate_seconds"},
    "s": {"_seconds"},
    "bytes": {"_bytes"},
    "Bps": {"rate_bytes"},
    "cps": {"_per_second", "rate"},
    "none": {"plain"},
    "short": {"plain"},
    "bool_on_off": {"plain"},
}
SUFFIXES = ("_celsius", "_watts", "_hertz", "_joules", "_ratio", "_seconds", "_bytes", "_volts", "_amperes",
            "_per_second")
FAMILY = re.compile(r"\b((?:tegrawatch|process)_[a-z0-9_]+)\b")

# Targets allowed no series, one line each on why: (panel title, refId, path)
ALLOWED_EMPTY = {
    # tegrawatch_alerts is scrape-only: remote write does not push it (docs/fleet.md, "What is sent")
    ("Alerts pending or firing", "A", "remote-write"),
    # process_* are read from /proc at each scrape: scrape-only (docs/fleet.md, "What is sent")
    ("Agent memory", "A", "remote-write"),
    # absent while no file system fills (docs/metrics.md): this machine's / does not; test_host.py makes one fill
    ("Time to full, where a file system fills", "A", "scrape"),
    ("Time to full, where a file system fills", "A", "remote-write"),
}


def load_dashboard():
    with open(harness.src("dashboards/grafana/tegrawatch.json")) as f:
        return json.load(f)


def panels(dash):
    """The panels with targets (rows hold none), also inside collapsed rows."""
    out = []
    for p in dash["panels"]:
        out.extend(p.get("panels", []) if p["type"] == "row" else [p])
    return out


def substitute(expr):
    for k in sorted(SUBST, key=len, reverse=True):
        expr = expr.replace(k, SUBST[k])
    return expr


def kind(expr, family):
    """What FAMILY is in EXPR: its unit suffix ("plain" without one), or "rate" + it under rate()/irate()."""
    base = family[:-len("_total")] if family.endswith("_total") else family
    suffix = next((s for s in SUFFIXES if base.endswith(s)), "")
    if re.search(r"\b(rate|irate)\(\s*%s\b" % re.escape(family), expr):
        return "rate" + suffix
    return suffix or "plain"


def documented(family, docs):
    if family in docs:
        return True
    return family.startswith("tegrawatch_agent_") and "agent." + family[len("tegrawatch_agent_"):] in docs


def slug(text):
    """Home Assistant's slugify for entity ids (ASCII names): lower case, runs of anything else one '_'."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def discovered_entities(sub, prefix="homeassistant"):
    """entity_id -> unique_id for every retained discovery config: domain.slug(device name + entity name)."""
    out = {}
    for _, topic, payload, _ in sub.all():
        parts = topic.split("/")
        if len(parts) != 4 or parts[0] != prefix or parts[3] != "config" or not payload:
            continue
        cfg = json.loads(payload)
        out["%s.%s" % (parts[1], slug(cfg["device"]["name"] + " " + cfg["name"]))] = cfg["unique_id"]
    return out


def lovelace_entities(doc):
    """Every sensor and binary sensor entity id named anywhere in the Lovelace YAML (cards, rows, templates)."""
    found = set()

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, str):
            found.update(m.group(0) for m in re.finditer(r"\b(?:binary_sensor|sensor)\.[a-z0-9_]+", x))
    walk(doc)
    return found


# The interface in the Lovelace YAML is a placeholder, as the board's name is: eth0 there, lo on the machine this
# test runs on (the only interface every machine has)
INTERFACE = ("_link_eth0", "_link_lo")


def missing_entities(named, discovered):
    return sorted(set(n.replace(*INTERFACE) for n in named) - set(discovered))


class Static(unittest.TestCase):
    """The files alone: the dashboard's shape, units, documented families, the docs table, the YAML."""

    def test_dashboard_shape(self):
        d = load_dashboard()
        self.assertEqual(d["uid"], "tegrawatch-board")
        self.assertTrue(d["title"])
        self.assertGreaterEqual(d["schemaVersion"], 36)
        names = {v["name"]: v for v in d["templating"]["list"]}
        self.assertEqual(names["DS_PROMETHEUS"]["type"], "datasource")
        self.assertEqual(names["DS_PROMETHEUS"]["query"], "prometheus")
        self.assertIn("instance)", names["board"]["query"]["query"])
        ids = [p["id"] for p in d["panels"]]
        self.assertEqual(len(ids), len(set(ids)))
        ps = panels(d)
        self.assertGreaterEqual(len(ps), 15)
        for p in ps:
            self.assertTrue(p["targets"], p["title"])
            self.assertEqual(p["datasource"]["uid"], "${DS_PROMETHEUS}", p["title"])
            for t in p["targets"]:
                self.assertIn('instance=~"$board"', t["expr"], (p["title"], t["refId"]))
                self.assertEqual(t["datasource"]["uid"], "${DS_PROMETHEUS}")

    def test_units_fit_families(self):
        docs = "".join(harness.read_text(harness.src("docs", n)) for n in ("metrics.md", "http.md"))
        for p in panels(load_dashboard()):
            unit = p["fieldConfig"]["defaults"].get("unit")
            self.assertIn(unit, UNITS, "%s: a unit the test has no rule for" % p["title"])
            for t in p["targets"]:
                fams = FAMILY.findall(t["expr"])
                self.assertTrue(fams, t["expr"])
                for fam in fams:
                    self.assertTrue(documented(fam, docs), "%s: %s is in neither docs/metrics.md nor docs/http.md"
                                    % (p["title"], fam))
                    self.assertIn(kind(t["expr"], fam), UNITS[unit], "%s (%s): %s does not fit the unit %s"
                                  % (p["title"], t["refId"], fam, unit))

    def test_unit_rule_catches_a_mismatch(self):
        self.assertNotIn(kind("tegrawatch_power_watts", "tegrawatch_power_watts"), UNITS["celsius"])
        self.assertNotIn(kind("tegrawatch_energy_joules_total", "tegrawatch_energy_joules_total"), UNITS["watt"])
        self.assertIn(kind("rate(tegrawatch_energy_joules_total[1m])", "tegrawatch_energy_joules_total"),
                      UNITS["watt"])

    def test_docs_table_lists_every_panel(self):
        text = harness.read_text(harness.src("docs/dashboards.md"))
        rows = [l for l in text.splitlines() if l.startswith("| ")]
        for p in panels(load_dashboard()):
            row = [r for r in rows if ("| %s |" % p["title"]) in r]
            self.assertEqual(len(row), 1, "docs/dashboards.md: no row (or several) for the panel %r" % p["title"])
            for t in p["targets"]:
                self.assertIn("`%s`" % t["expr"], row[0], "docs/dashboards.md, %s: the query differs" % p["title"])
            self.assertIn("`%s`" % p["fieldConfig"]["defaults"]["unit"], row[0], p["title"])

    def test_lovelace_check_catches_a_missing_entity(self):
        import yaml
        with open(harness.src("dashboards/home-assistant/tegrawatch.yaml")) as f:
            named = lovelace_entities(yaml.safe_load(f))
        self.assertIn("binary_sensor.demo_orin_nano_throttled", named)
        self.assertIn("binary_sensor.demo_orin_nano_hot_surface", named)
        gone = set(n.replace(*INTERFACE) for n in named) - {"binary_sensor.demo_orin_nano_hot_surface"}
        self.assertEqual(missing_entities(named, gone), ["binary_sensor.demo_orin_nano_hot_surface"])
        # the host's: the disk use of /, the link (eth0 in the YAML, lo where the test runs), memory, OOM kills
        for e in ("sensor.demo_orin_nano_disk_used", "binary_sensor.demo_orin_nano_link_eth0",
                  "sensor.demo_orin_nano_memory_available", "sensor.demo_orin_nano_oom_kills"):
            self.assertIn(e, named)
        self.assertEqual(missing_entities(["binary_sensor.demo_orin_nano_link_eth0"], []),
                         ["binary_sensor.demo_orin_nano_link_lo"])
        self.assertEqual(slug("demo-orin-nano" + " " + "Disk / used"), "demo_orin_nano_disk_used")
        self.assertEqual(slug("demo-orin-nano" + " " + "Throttled: rail_alarm"), "demo_orin_nano_throttled_rail_alarm")


class Live(unittest.TestCase):
    """One live agent: scraped by one Prometheus, pushing remote write to another, publishing to mosquitto."""

    @classmethod
    def setUpClass(cls):
        cls.d = tempfile.mkdtemp(prefix="tw-dashboards-")
        cls.addClassCleanup(shutil.rmtree, cls.d, True)
        cls.broker = harness.Broker(cls.d).start()
        cls.addClassCleanup(cls.broker.stop)
        cls.sub = harness.Subscriber(cls.broker.port, ["homeassistant/#"])
        cls.addClassCleanup(cls.sub.close)
        web = harness.free_port()
        # two stores, so that a series only one way in has cannot stand in for the other's
        for name in ("scrape", "pushed"):
            os.makedirs(os.path.join(cls.d, name))
        host_web = harness.free_port()
        cls.scrape = fp.Prometheus(os.path.join(cls.d, "scrape"))
        write_file(cls.scrape.cfg, """global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: tegrawatch
    static_configs:
      - targets: ["127.0.0.1:%d"]
        labels: {instance: %s}
      - targets: ["127.0.0.1:%d"]
        labels: {instance: %s}
""" % (web, DEVICE, host_web, HOST_DEVICE), 0o644)
        cls.pushed = fp.Prometheus(os.path.join(cls.d, "pushed"))
        for p in (cls.scrape, cls.pushed):
            p.start()
            cls.addClassCleanup(p.stop)
        config = """agent:
  board_name: %s
  state_file: ""
web:
  listen: "127.0.0.1:%d"
remote_write:
  url: %s
  batch_samples: 10
  batch_interval: 500ms
rules:
  - name: dashboard-test
    metric: agent.samples_total
    warning: 20
    summary: "fires from sample 20 on, for the alerts panels"
""" % (DEVICE, web, cls.pushed.url("/api/v1/write")) + mqtt_section(mqtt_keys(cls.broker.port, DEVICE))
        cls.agent = harness.Agent(cls.d, ["--json", "--root", harness.src(BOARD), "--interval", "200", "--tegrastats",
                                          harness.src("tests/integration/fake_tegrastats.sh")],
                                  config=config, port=web)
        cls.addClassCleanup(cls.agent.kill)
        host_config = """agent:
  board_name: %s
  state_file: ""
web:
  listen: "127.0.0.1:%d"
remote_write:
  url: %s
  batch_samples: 10
  batch_interval: 500ms
host:
  filesystems:
    interval: 1s
    include: ["/"]
  network:
    include: ["lo"]
""" % (DEVICE, host_web, cls.pushed.url("/api/v1/write")) + mqtt_section(mqtt_keys(cls.broker.port, HOST_DEVICE))
        cls.host_agent = harness.Agent(cls.d, ["--json", "--interval", "500"], name="host", config=host_config,
                                       port=host_web)
        cls.addClassCleanup(cls.host_agent.kill)
        cls.agent.wait_web()
        cls.host_agent.wait_web()

        def worked():
            harness.request(web, "POST", "/api/v1/work", {"Content-Type": "application/json"},
                            b'{"name": "inference", "count": 5}')
            m = cls.agent.last()
            return ("work.inference.joules_per_unit" in m and "work.inference.vdd_soc.joules_per_unit" in m
                    and m.get("agent.alerts_firing", 0) >= 1)
        if not wait_until(worked, 90, 0.3):
            raise AssertionError("no work figures or no alert firing:\n" + cls.agent.stderr()[-3000:])
        cls.host_agent.wait_metrics(lambda m: "filesystem.root.used_pct" in m and "network.lo.up" in m,
                                    "the host's file system and interface", timeout=30)

    def query(self, prom, expr, at):
        return prom.api("/api/v1/query", query=expr, time="%.3f" % at)["result"]

    def assert_every_target(self, prom, path):
        """Every target, less the allowed ones, returns a series at some query within the timeout (a stand-in
        tegrastats line late for one sample leaves its series out of that scrape: Prometheus marks them stale)."""
        unanswered = [(p["title"], t["refId"], substitute(t["expr"])) for p in panels(load_dashboard())
                for t in p["targets"] if (p["title"], t["refId"], path) not in ALLOWED_EMPTY]

        def all_seen():
            unanswered[:] = [t for t in unanswered if not self.query(prom, t[2], time.time())]
            return not unanswered
        wait_until(all_seen, 90, 1.0)
        self.assertEqual(unanswered, [], "%s: panel targets without a series" % path)

    def test_every_target_on_the_scrape(self):
        self.assert_every_target(self.scrape, "scrape")

    def test_every_target_on_remote_write(self):
        self.assert_every_target(self.pushed, "remote-write")

    def test_allowed_empty_are_needed(self):
        """An allowance no longer needed is taken out: the remote-write store still lacks each one."""
        for title, ref, _ in ALLOWED_EMPTY:
            t = [t for p in panels(load_dashboard()) if p["title"] == title for t in p["targets"] if t["refId"] == ref]
            self.assertEqual(len(t), 1, (title, ref))
            self.assertEqual(self.query(self.pushed, substitute(t[0]["expr"]), time.time()), [], (title, ref))

    def test_board_variable_lists_the_device(self):
        q = load_dashboard()["templating"]["list"][1]["query"]["query"]
        m = re.fullmatch(r"label_values\((\w+), (\w+)\)", q)
        self.assertTrue(m, q)
        for prom in (self.scrape, self.pushed):
            got = []
            wait_until(lambda: got.append(prom.api("/api/v1/label/%s/values" % m.group(2), **{"match[]": m.group(1)}))
                       or {DEVICE, HOST_DEVICE} <= set(got[-1]), 60, 0.5)  # both agents' first samples in
            self.assertEqual(got[-1], [DEVICE, HOST_DEVICE])

    def test_lovelace_entities_are_discovered(self):
        import yaml
        with open(harness.src("dashboards/home-assistant/tegrawatch.yaml")) as f:
            named = lovelace_entities(yaml.safe_load(f))
        self.assertGreaterEqual(len(named), 15)
        found = {}

        def complete():
            found.update(discovered_entities(self.sub))
            return not missing_entities(named, found)
        wait_until(complete, 60, 0.2)
        self.assertEqual(missing_entities(named, found), [],
                         "entities the Lovelace YAML names that the discovery does not create (it creates %s)"
                         % sorted(found))


if __name__ == "__main__":
    harness.init(needs=("prometheus", "mosquitto", "module:yaml"))
    harness.main()
