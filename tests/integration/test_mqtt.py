#!/usr/bin/env python3
"""MQTT end to end against a real mosquitto broker started here on a free
127.0.0.1 port (never any other address): topics and payloads, retained
availability and info, Home Assistant discovery (PublishTest, meson test
`mqtt`); the last will, a clean stop, TLS, username and password
(SessionTest, `mqtt-sessions`). What an outage and the spool keep:
test_mqtt_spool.py.

Where a test is about the agent's time (a demo's samples, the delay of a
rediscovery) the agent runs on a clock the test drives (tegrawatch-driven);
mosquitto, the subscribers and libmosquitto keep real time.

Usage: test_mqtt.py TEGRAWATCH SOURCE_ROOT [PublishTest | SessionTest]
Needs: mosquitto, mosquitto_passwd, openssl, python3-paho-mqtt, tegrawatch-driven (exit 77 = skipped without them).
"""
import json
import os
import re
import signal
import socket
import subprocess
import time

import harness
from harness import BOOT_ID, EARLY_RULE, mqtt_keys, wait_until, write_file

# the demo at speed 10 samples every 100 ms of a driven agent's time; each wait of its loop lasts PACE_MS real ms
# (the broker and the subscriber keep up with 500 states a second)
DEMO_TICK_MS, PACE_MS = 100, 2
STATE_KEYS = ["ts", "time_ms", "boot_id", "seq", "power_mode", "metrics", "throttle"]
AGENT_COUNTERS = ["agent.mqtt_connected", "agent.mqtt_connects_total", "agent.mqtt_disconnects_total",
                  "agent.mqtt_publishes_total", "agent.mqtt_spool_depth", "agent.mqtt_dropped_total",
                  "agent.mqtt_spool_corrupt_total"]


class PublishTest(harness.TestCase):
    """What the agent publishes (meson test `mqtt`)."""

    # ---- topics, payloads, retained ----

    def test_topics_and_payloads(self):
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/#", "homeassistant/#"])
        a = self.mqtt_agent("a", mqtt_keys(b.port, "t1", metric_topics='[temp.tj_c, "gpu.*_pct"]'),
                            args=("--demo", "--speed", "10", "--count", "40"), extra=EARLY_RULE, driven=True)
        s.wait_payload("tegrawatch/t1/status", "online")  # sample 1 taken at the start, the clock still since
        a.run(38 * DEMO_TICK_MS, PACE_MS)  # samples 2-39
        a.real()  # the 40th and the clean stop on the real clock: `offline` waits for its acknowledgement in real time
        self.assertEqual(a.wait(60), 0, a.stderr())
        s.wait_payload("tegrawatch/t1/status", "offline")  # the agent's last message: everything arrived

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
        self.assertEqual(limits[0]["metrics"]["trip.gpu.passive_c"], 99)
        self.assertEqual(limits[0]["metrics"]["trip.gpu.hot_surface_c"], 70)
        for st in states:
            self.assertEqual(list(st), STATE_KEYS)
            self.assertNotIn("trip.gpu.passive_c", st["metrics"])
            self.assertEqual(st["boot_id"], BOOT_ID)
            self.assertEqual(st["power_mode"], "MAXN_SUPER")
            for c in AGENT_COUNTERS:
                self.assertIn(c, st["metrics"])
        self.assertEqual(states[0]["ts"], "2025-03-14T10:00:00Z")
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
        self.assertTrue(all(44 < float(v) < 54 for v in tj), tj)

        # a subscriber arriving later gets the retained topics
        late = self.sub(b.port, ["tegrawatch/#", "homeassistant/#"])
        expected = {"tegrawatch/t1/" + t for t in ("status", "info", "alerts/active", "throttle", "limits", "ha")}
        expected.add("homeassistant/sensor/t1_temp_tj_c/config")
        late.wait(lambda late: expected <= {m[1] for m in late.all() if m[3]}, what="the retained topics")
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

    def test_unread_stdout_pipe(self):
        """A stdout pipe nobody reads never stops sampling, alerts, MQTT or the dashboard."""
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/#"])
        r, w = os.pipe()  # we keep the read end and never read it
        self.addCleanup(os.close, r)
        web_port = harness.free_port()
        p = self.mqtt_agent("pipe", mqtt_keys(b.port, "pipe"), args=("--demo", "--speed", "10", "--count", "900"),
                            stdout=w, web="127.0.0.1:%d" % web_port, port=web_port,
                            extra="include: [%s/configs/rules.d/*.yaml]\n" % SRC, driven=True)
        os.close(w)
        # three quarters of the demo, far past what the pipe holds (~16 samples), on the agent's time
        p.run(674 * DEMO_TICK_MS, PACE_MS)
        s.wait_count("tegrawatch/pipe/state", 675, timeout=60)
        status, _, body = p.get("/healthz")
        self.assertEqual(status, 200, body)
        p.run(224 * DEMO_TICK_MS, PACE_MS)  # samples 676-899
        p.real()  # the 900th and the clean stop on the real clock
        self.assertEqual(p.wait(120), 0, p.stderr())
        s.wait_payload("tegrawatch/pipe/status", "offline")
        states = s.json("tegrawatch/pipe/state")
        last = states[-1]["metrics"]
        self.assertEqual(last["agent.samples_total"], 900)
        self.assertGreater(last["agent.json_lines_dropped_total"], 500)
        self.assertGreaterEqual(len(states), 890)
        self.assertTrue([x for x in s.json("tegrawatch/pipe/alerts") if x["transition"] == "firing"])

    # ---- Home Assistant ----

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
        # Orin's hot-surface alert: a heat warning of its own, OFF where the view lacks it
        hot = configs["homeassistant/binary_sensor/ha1_hot_surface/config"]
        self.assertEqual(hot["device_class"], "heat")
        tmpl = env.from_string(hot["value_template"])
        self.assertEqual(tmpl.render(value_json=dict(state, metrics={"thermal.hot_surface": 1})), "ON")
        self.assertEqual(tmpl.render(value_json=state), "OFF")
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
        a = self.mqtt_agent("thr", mqtt_keys(b.port, "thr"), args=("--demo", "--speed", "0"))
        self.assertEqual(a.wait(240), 0, a.stderr())
        self.assertTrue(wait_until(lambda: len(s.json("tegrawatch/thr/state")) >= 900, 60))
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
        self.assertIn(("thermal", "trip", "gpu"), {(c["reason"], c["kind"], c["source"]) for c in causes})
        self.assertFalse(pubs[-1]["active"])

    def test_late_metrics_get_entities(self):
        """tegrastats starting after sysfs: its metrics get entities without a reconnect."""
        b = self.broker()
        s = self.sub(b.port, ["homeassistant/#"])
        root = harness.copy_board(self.d)
        # a tegrastats that prints nothing until the test opens its gate
        gate, fake = self.path("gate"), self.path("late-tegrastats")
        write_file(fake, "#!/bin/sh\nwhile [ ! -e %s ]; do sleep 0.1; done\nwhile :; do\n"
                   "echo 'RAM 2000/7620MB (lfb 4x4MB) CPU [5%%@729,4%%@729] AO@45.5C'\nsleep 0.2\ndone\n" % gate,
                   0o755)
        a = self.mqtt_agent("late", mqtt_keys(b.port, "late"),
                            args=("--root", root, "--interval", "200", "--tegrastats", fake))
        topic = "homeassistant/sensor/late_temp_ao_c/config"
        self.assertTrue(wait_until(lambda: s.all("homeassistant/sensor/late_temp_tj_c/config"), 20), a.stderr())
        self.assertEqual(s.all(topic), [])  # not yet: tegrastats is silent
        write_file(gate, "")
        self.assertTrue(wait_until(lambda: s.all(topic), 20), a.stderr())
        self.assertEqual(a.stop(), 0)

    def test_ha_discovery_and_republish(self):
        b = self.broker()
        s = self.sub(b.port, ["homeassistant/#", "tegrawatch/ha1/status", "tegrawatch/ha1/ha", "tegrawatch/ha1/state"])
        # MQTT 5 here, 3.1.1 elsewhere. On a clock the test drives: the rediscovery's delay is the agent's time. Its
        # samples kept: the state of the latest one says that everything sent before it has arrived.
        a = self.mqtt_agent("a", mqtt_keys(b.port, "ha1", protocol="5"), driven=True, stdout=None)
        a.pace(PACE_MS)
        temp_topic = "homeassistant/sensor/ha1_temp_tj_c/config"
        # the main metrics of the demo board, each checked against the documented schema (anchors 4.2)
        main = ["homeassistant/sensor/ha1_%s/config" % metric for metric in [
            "temp_cpu_c", "temp_gpu_c", "temp_tj_c", "cpu_load_pct", "gpu_load_pct", "gpu_freq_mhz", "emc_freq_mhz",
            "ram_used_mb", "swap_used_mb", "power_vdd_in_mw", "fan_0_rpm", "power_mode", "alerts_firing"]]
        main += ["homeassistant/binary_sensor/ha1_throttled%s/config" % reason for reason in [
            "", "_thermal", "_overcurrent", "_rail_alarm", "_freq_cap"]]
        s.wait(lambda s: set(main) <= {m[1] for m in s.all()} and s.all("tegrawatch/ha1/ha"), 30,
               "the discovery burst and the view")
        a.pause()
        configs = {m[1]: json.loads(m[2]) for m in s.all() if m[1].endswith("/config")}
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
        self.render_every_template(configs, s.json("tegrawatch/ha1/ha"))

        # Home Assistant's birth message: the configs come again, 0-5 s of the agent's time later
        self.birth(b, s, "online")
        a.run(5000 + DEMO_TICK_MS, PACE_MS)
        self.assertTrue(wait_until(lambda: s.all(temp_topic), 20), "no rediscovery within 5 s of the birth message")
        # the rest of the burst follows the first config
        s.wait(lambda s: {m[1] for m in s.all() if m[1].endswith("/config")} >= set(configs), 20, "the whole burst")
        # something else on the birth topic changes nothing (over the 0-5 s a rediscovery may wait, and more)
        self.birth(b, s, "offline")
        a.run(7000, PACE_MS)
        last = a.samples()[-1]["time_ms"]  # its state comes after whatever was sent with an earlier sample
        s.wait(lambda s: last in [x["time_ms"] for x in s.json("tegrawatch/ha1/state")], 20, "the latest state")
        self.assertEqual([m[1] for m in s.all() if m[1].endswith("/config")], [],
                         "configs sent again for a birth topic message that is not 'online'")
        self.assertEqual(a.stop(), 0)
        self.assertIn("as tegrawatch-ha1-%d (p5," % a.pid, b.log_text())

    def birth(self, b, s, payload):
        """Home Assistant's birth topic at broker B says PAYLOAD; S is cleared, then sees it (and so does the agent,
        at the same moment: its clock stands still meanwhile, so it reads it at the time it stands at)."""
        s.clear()
        harness.publish(b.port, "homeassistant/status", payload)
        s.wait_payload("homeassistant/status", payload)



class SessionTest(harness.TestCase):
    """The session around it: availability, name lookup, TLS, passwords (meson test `mqtt-sessions`)."""

    # ---- availability ----

    def test_last_will_after_kill9(self):
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/lw/#"])
        a = self.mqtt_agent("a", mqtt_keys(b.port, "lw"))
        s.wait_payload("tegrawatch/lw/status", "online")
        s.wait_count("tegrawatch/lw/state", 3)  # connected and publishing
        t0 = time.monotonic()
        a.stop(signal.SIGKILL)
        s.wait_payload("tegrawatch/lw/status", "offline")
        took = [m[0] for m in s.all("tegrawatch/lw/status") if m[2] == b"offline"][0] - t0
        self.assertLess(took, 1.5 * 5)  # the broker's keepalive check: 1.5 x 5 s
        # retained: a late subscriber sees it
        late = self.sub(b.port, ["tegrawatch/lw/status"])
        self.assertTrue(wait_until(lambda: late.payloads("tegrawatch/lw/status") == ["offline"], 20))

    def test_offline_before_clean_stop(self):
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/cs/#"])
        a = self.mqtt_agent("a", mqtt_keys(b.port, "cs"))
        s.wait_payload("tegrawatch/cs/status", "online")
        s.wait_count("tegrawatch/cs/state", 5)
        self.assertEqual(a.stop(), 0)
        self.assertLess(a.stop_s, 3)
        s.wait_payload("tegrawatch/cs/status", "offline")
        # exactly one offline (ours, not the will: DISCONNECT was clean), after the last state
        self.assertStays(lambda: s.payloads("tegrawatch/cs/status") == ["online", "offline"], 1.0,
                         lambda: "status: %s" % s.payloads("tegrawatch/cs/status"))
        topics = [m[1] for m in s.all()]
        self.assertEqual(topics[-1], "tegrawatch/cs/status")
        self.assertNotIn("offline was not acknowledged", a.stderr())

    def test_restored_alert_in_alerts_active(self):
        """An alert restored from the state file is in alerts/active at once, without a second firing event."""
        b = self.broker()
        root = harness.copy_board(self.d)
        write_file(os.path.join(root, "sys/devices/virtual/thermal/thermal_zone0/temp"), "70000\n", 0o644)
        env = {"TEGRAWATCH_AGENT_STATE_FILE": os.path.join(self.d, "alerts.state")}
        rules = "rules:\n  - name: cpu-hot\n    metric: temp.cpu_c\n    warning: 60\n"
        args = ("--root", root, "--interval", "100", "--no-tegrastats")
        s1 = self.sub(b.port, ["tegrawatch/rs/#"])
        a1 = self.mqtt_agent("a1", mqtt_keys(b.port, "rs"), args=args, env=env, extra=rules)
        self.assertTrue(wait_until(lambda: any(a.get("rule") == "cpu-hot"
                                               for p in s1.json("tegrawatch/rs/alerts/active") for a in p), 20),
                        s1.all())
        self.assertEqual(a1.stop(), 0)
        # forget the retained list, so only the new agent can bring it back
        harness.publish(b.port, "tegrawatch/rs/alerts/active", b"", retain=True)
        s2 = self.sub(b.port, ["tegrawatch/rs/#"])  # before a2: it sees everything a2 sends
        # a2 on a clock the test drives, its samples kept: the state of the latest says what came before it
        a2 = self.mqtt_agent("a2", mqtt_keys(b.port, "rs"), args=args, env=env, extra=rules, stdout=None,
                             driven=True)
        self.assertTrue(wait_until(lambda: any(a.get("rule") == "cpu-hot"
                                               for p in s2.payloads("tegrawatch/rs/alerts/active") if p
                                               for a in json.loads(p)), 20), s2.all())
        # the firing was announced once, by a1: no event in a2's first ten samples (an event goes out before the
        # state of its sample)
        a2.run(900, 5)
        last = a2.samples()[-1]["time_ms"]
        s2.wait(lambda s: last in [x["time_ms"] for x in s.json("tegrawatch/rs/state")], 20, "a2's tenth state")
        self.assertEqual(len(a2.samples()), 10)
        self.assertEqual(s2.payloads("tegrawatch/rs/alerts"), [])
        self.assertEqual(a2.stop(), 0)

    def test_host_name_looked_up_without_blocking(self):
        addrs = {a[4][0] for a in socket.getaddrinfo("localhost", 1883, type=socket.SOCK_STREAM)}
        if addrs != {"127.0.0.1"}:
            self.skipTest("localhost is not 127.0.0.1 alone here: %s" % sorted(addrs))
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/dns/#"])
        a = self.mqtt_agent("a", mqtt_keys(b.port, "dns", host="localhost"))
        s.wait_payload("tegrawatch/dns/status", "online")
        s.wait_count("tegrawatch/dns/state", 3)
        self.assertEqual(a.stop(), 0)

    # ---- security ----

    def test_tls_wrong_ca_then_right_ca(self):
        d = self.d
        harness.make_tls(d, wrong_ca=True)
        tls_port = harness.free_port()
        b = self.broker(extra="listener %d 127.0.0.1\ncafile %s/ca.pem\ncertfile %s/server.pem\n"
                              "keyfile %s/server.key\nrequire_certificate true\n" % (tls_port, d, d, d))
        s = self.sub(b.port, ["tegrawatch/tls/#"])
        agent_ca = os.path.join(d, "agent-ca.pem")
        write_file(agent_ca, harness.read_bytes("%s/wrongca.pem" % d), 0o644)
        a = self.mqtt_agent("a", mqtt_keys(tls_port, "tls", tls="true", ca_file=agent_ca,
                                           cert_file="%s/client.pem" % d, key_file="%s/client.key" % d))
        # refused: no status, TLS named in the log, and it keeps trying (three attempts, however long they take)
        self.assertTrue(wait_until(lambda: "TLS" in a.stderr() or "certificate" in a.stderr(), 20), a.stderr())
        a.wait_stderr("retrying in", count=3, timeout=30)
        self.assertEqual(s.payloads("tegrawatch/tls/status"), [])
        # the right CA appears at the same path (whole, by rename): the next attempt connects
        write_file(agent_ca, harness.read_bytes("%s/ca.pem" % d), 0o644)
        s.wait_payload("tegrawatch/tls/status", "online")
        s.wait_count("tegrawatch/tls/state", 1)
        self.assertEqual(a.stop(), 0)
        s.wait_payload("tegrawatch/tls/status", "offline")  # sent before the agent ended, delivered a moment later

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
        good = self.mqtt_agent("good", mqtt_keys(b.port, "pw1", username="agent1", password_file=pwfile,
                                                 protocol="5"))
        bad = self.mqtt_agent("bad", mqtt_keys(b.port, "pw2", username="agent2"),
                              env={"TEGRAWATCH_MQTT_PASSWORD": "canary-wrong-9X"})
        s.wait_payload("tegrawatch/pw1/status", "online")
        # refused, and it stays out while its retries go on: three attempts, each refused
        bad.wait_stderr("the broker refused the connection", count=3)
        self.assertEqual(s.payloads("tegrawatch/pw2/status"), [], "pw2 got in with a wrong password")
        self.assertIn("not authori", bad.stderr())
        # the broker is fixed: agent2's password becomes the one it sends; it keeps trying and gets in
        subprocess.run(["mosquitto_passwd", "-b", pw, "agent2", "canary-wrong-9X"], check=True)
        b.reload()
        s.wait_payload("tegrawatch/pw2/status", "online")
        self.assertEqual(good.stop(), 0)
        self.assertEqual(bad.stop(), 0)
        # secrets never reach the log
        for a in (good, bad):
            for secret in ("canary-right-7Q", "canary-wrong-9X"):
                self.assertNotIn(secret, a.stderr())

if __name__ == "__main__":
    BIN, SRC = harness.init(needs=("mosquitto", "mosquitto_passwd", "openssl", "driven"))
    harness.main()
