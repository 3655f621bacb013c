#!/usr/bin/env python3
"""Two agents on one host (issue 35 item 5): the service and a hand-run `tegrawatch run`, or two demos.

- A listener the second cannot have (web.listen, work.listen) stops it at start with one clear line and exit 75
  (EX_TEMPFAIL: the service's unit restarts it, so it comes back once the port is free), or 78 for an address this
  host cannot give; the demo takes the next free port instead and says where.
- Each agent has its own MQTT client id unless mqtt.client_id pins one: two agents of one board stay connected side
  by side. Two that pin the same id knock each other off; the broker's "session taken over" (MQTT 5 reason 0x8E), or
  a 3.1.1 broker closing the connection again and again right after accepting it, is said once with what to change.

Usage: test_two_agents.py TEGRAWATCH SOURCE_ROOT
"""
import os
import re
import socket
import unittest

import harness
from harness import mqtt_keys, mqtt_section, stays, wait_until

EX_TEMPFAIL, EX_CONFIG = 75, 78


def held_port(test, kind=socket.SOCK_STREAM):
    """A 127.0.0.1 port this test holds (bound, and listening for TCP) until its end: the first agent."""
    s = socket.socket(socket.AF_INET, kind)
    test.addCleanup(s.close)
    s.bind(("127.0.0.1", 0))
    if kind == socket.SOCK_STREAM:
        s.listen(1)
    return s.getsockname()[1]


class Listeners(harness.TestCase):
    def run_second(self, config):
        cfg = self.path("second.yaml", 'agent:\n  state_file: ""\n' + config)
        board = harness.copy_board(self.d)
        return harness.tegrawatch(["run", "-c", cfg, "--root", board, "--no-tegrastats", "--json"], timeout=60)

    def test_web_port_taken_stops_the_second(self):
        port = held_port(self)
        p = self.run_second('web:\n  listen: "127.0.0.1:%d"\n' % port)
        self.assertEqual(p.returncode, EX_TEMPFAIL, p.stderr)
        errors = [line for line in p.stderr.splitlines() if ": error: " in line]
        self.assertEqual(len(errors), 1, p.stderr)
        self.assertIn("web: cannot listen on 127.0.0.1:%d: Address already in use" % port, errors[0])
        self.assertIn("TEGRAWATCH_WEB_LISTEN", errors[0])  # and how to run a second one anyway
        self.assertEqual(p.stdout, "")  # not a sample: it never ran

    def test_work_port_taken_stops_the_second(self):
        port = held_port(self, socket.SOCK_DGRAM)
        p = self.run_second('web:\n  listen: ""\nwork:\n  listen: "127.0.0.1:%d"\n' % port)
        self.assertEqual(p.returncode, EX_TEMPFAIL, p.stderr)
        self.assertIn("work: cannot listen on 127.0.0.1:%d: Address already in use" % port, p.stderr)
        self.assertIn("TEGRAWATCH_WORK_LISTEN", p.stderr)

    def test_address_not_of_this_host_is_a_configuration_mistake(self):
        """An address no interface has (192.0.2.1, TEST-NET-1: bind() fails at once, nothing is sent): 78, no
        restart. A token file first, so that the address gets past the check for authentication on it."""
        token = self.path("token", "0123456789abcdef0123456789abcdef\n")
        p = self.run_second('web:\n  listen: "192.0.2.1:9999"\n  token_file: %s\n' % token)
        self.assertEqual(p.returncode, EX_CONFIG, p.stderr)
        self.assertIn("web: cannot listen on 192.0.2.1:9999: Cannot assign requested address", p.stderr)
        self.assertIn("an address of this host", p.stderr)

    @unittest.skipIf(os.geteuid() == 0, "root may listen on port 1")
    def test_privileged_port_is_a_configuration_mistake(self):
        p = self.run_second('web:\n  listen: "127.0.0.1:1"\n')
        self.assertEqual(p.returncode, EX_CONFIG, p.stderr)
        self.assertIn("web: cannot listen on 127.0.0.1:1", p.stderr)

    def test_second_demo_takes_the_next_free_port(self):
        port = held_port(self)
        a = self.agent(["--demo", "--speed", "10"], env={"TEGRAWATCH_WEB_LISTEN": "127.0.0.1:%d" % port,
                                                         "TEGRAWATCH_MQTT_HOST": ""})
        line = a.wait_stderr("demo: dashboard")
        url = re.search(r"demo: dashboard +http://127\.0\.0\.1:(\d+)/", a.stderr())
        self.assertIsNotNone(url, a.stderr())
        taken = int(url.group(1))
        self.assertGreater(taken, port)
        self.assertIn("127.0.0.1:%d is taken" % port, a.stderr())
        a.port = taken
        a.wait_web()
        self.assertEqual(a.get("/healthz")[0], 200, line)
        a.next_sample()  # and it samples
        self.assertEqual(a.stop(), 0)


class ClientIds(harness.TestCase):
    # Keepalive 5 s (the least allowed). Two agents with one id knock each other off at once: the broker closes the
    # older connection when the newer one connects, and the older sees it at its next read (test_pinned_...: six
    # knock-offs in two or three seconds, none waits for a keepalive); then again at every reconnect, within
    # backoff_cap (1 s). 5 s are five reconnect periods and a keepalive.
    WINDOW_S = 5
    PROTOCOLS = ("3.1.1", "5")

    def pairs(self, **more):
        """For each MQTT protocol, a broker and two agents of one board publishing to it, all side by side:
        [(protocol, broker, (first, second))] once each agent has connected."""
        out = []
        for protocol in self.PROTOCOLS:
            b = self.broker(name="broker-" + protocol)  # a log of its own
            keys = mqtt_keys(b.port, "same-board", keepalive="5s", protocol=protocol, ha_discovery="false", **more)
            config = 'agent:\n  state_file: ""\nweb:\n  listen: ""\n' + mqtt_section(keys)
            agents = tuple(self.agent(["-v", "--demo", "--speed", "10"], name="%s-%s" % (n, protocol),
                                      config=config) for n in ("first", "second"))
            out.append((protocol, b, agents))
        for _, _, agents in out:
            for a in agents:
                if "client_id" in more:
                    # one id for two: each knocks the other off, so a sample may catch either one between connects
                    a.wait_metric("agent.mqtt_connects_total", lambda v: v >= 1)
                else:
                    a.wait_metric("agent.mqtt_connected", lambda v: v == 1)
        return out

    def disconnects(self, a):
        return a.last().get("agent.mqtt_disconnects_total", 0)

    def test_unpinned_ids_stay_connected_side_by_side(self):
        pairs = self.pairs()
        every = [a for _, _, agents in pairs for a in agents]
        self.assertStays(lambda: all(self.disconnects(a) == 0 for a in every), self.WINDOW_S,
                         lambda: "an agent lost its connection:\n" + "\n".join(
                             "%s: %s\n%s\nbroker:\n%s" % (p, f.stderr(), s.stderr(), b.log_text())
                             for p, b, (f, s) in pairs))
        for protocol, b, (first, second) in pairs:
            self.assertNotIn("session", first.stderr() + second.stderr(), protocol)
            # the ids the broker saw: tegrawatch-ID-PID, one per agent
            seen = set(re.findall(r"as (tegrawatch-same-board-\d+)", b.log_text()))
            self.assertEqual(seen, {"tegrawatch-same-board-%d" % first.pid, "tegrawatch-same-board-%d" % second.pid},
                             b.log_text())
        for a in every:
            self.assertEqual(a.stop(), 0)

    def test_pinned_id_taken_over_is_said_once(self):
        # mosquitto 2.0 closes the first one's connection without a word for 3.1.1, and for MQTT 5 too (its
        # DISCONNECT 0x8E never gets out: test_mqtt_signals has a broker that sends it)
        words = "client uses the client id 'pinned' on this broker"
        for protocol, b, (first, second) in self.pairs(client_id="pinned"):
            told = lambda: [line for a in (first, second) for line in a.stderr_lines(words)]  # noqa: E731
            self.assertTrue(wait_until(told, 30), "MQTT %s: no word of the session taken over:\n%s\n%s"
                            % (protocol, first.stderr(), second.stderr()))
            self.assertIn("give each agent its own mqtt.client_id", told()[0])
            # once per agent, however often they knock each other off
            self.assertTrue(wait_until(lambda: self.disconnects(first) + self.disconnects(second) >= 6, 30))
            for a in (first, second):
                self.assertLessEqual(len(a.stderr_lines(words)), 1, a.stderr())
                self.assertEqual(a.stop(), 0)


if __name__ == "__main__":
    BIN, SRC = harness.init(needs=("mosquitto",))
    harness.main()
