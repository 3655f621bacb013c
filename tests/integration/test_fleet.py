#!/usr/bin/env python3
"""A fleet on one machine: 50 agents, each replaying the demo recording at 20x with its own device id
(fleet-01 ... fleet-50), push to one Prometheus (remote write, through a proxy that counts the bytes)
and one mosquitto broker (MQTT state). Every board's series must be complete in Prometheus (every
series, every sample, once, with the agent's timestamps) and every board's state messages at the
broker. Prints the bytes per sample per board of both ways (docs/fleet.md). In the `slow` suite
(about 2 minutes here).

Usage: test_fleet.py TEGRAWATCH SOURCE_ROOT [BOARDS]   (exit 77 without prometheus or mosquitto)
"""
import json
import os
import shutil
import sys

import harness
from harness import fleet as fp
from harness import wait_until

SRC = None
MOSQUITTO_SUB = shutil.which("mosquitto_sub") or "/usr/bin/mosquitto_sub"
BOARDS = 50
SAMPLES = 120


def board_config(name, rw_url, mqtt_port):
    return """agent:
  state_file: ""
  board_name: %s
web:
  listen: ""
mqtt:
  host: 127.0.0.1
  port: %d
  device_id: %s
  ha_discovery: false
remote_write:
  url: %s
  batch_samples: 30
  batch_interval: 1s
""" % (name, mqtt_port, name, rw_url)


class FleetTest(harness.TestCase):
    def test_fifty_boards_complete_in_prometheus_and_at_the_broker(self):
        prom = fp.Prometheus(self.d).start()
        self.addCleanup(prom.stop)
        px = self.receiver(target=prom.url("/api/v1/write"))  # a proxy that counts the bytes
        broker = self.broker()
        port = broker.port
        # mosquitto_sub (not a subscriber in this process: the proxy above shares its CPU) into a file, subscribed
        # once a marker published after its start has come through
        out_path = self.path("states.txt")
        with open(out_path, "wb") as out:
            self.spawn([MOSQUITTO_SUB, "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-v", "-t", "tegrawatch/+/state",
                        "-t", "tegrawatch/+/limits", "-t", "tegrawatch-test/ready"], stdout=out)
        self.assertTrue(wait_until(lambda: harness.publish(port, "tegrawatch-test/ready", b"1") or
                                   b"tegrawatch-test/ready" in harness.read_bytes(out_path), 30, step=0.5),
                        "mosquitto_sub never subscribed")

        names = ["fleet-%02d" % (i + 1) for i in range(BOARDS)]
        agents = []
        for n in names:
            agents.append(self.agent(["--json", "--demo", "--speed", "20", "--count", str(SAMPLES)], name=n,
                                     config=board_config(n, px.url("/api/v1/write"), port)))
        for n, a in zip(names, agents):
            self.assertEqual(a.wait(180), 0, n + a.stderr()[-2000:])
            self.assertEqual(len(a.samples()), SAMPLES, n)

        times = [s["time_ms"] for s in agents[0].samples()]
        at = times[-1] / 1000 + 1
        series = prom.raw('{job="tegrawatch"}', at)
        per_board = {}
        for key, pts in series.items():
            per_board.setdefault(dict(key)["instance"], []).append((key, pts))
        self.assertEqual(sorted(per_board), names)
        counts = {n: len(v) for n, v in per_board.items()}
        self.assertEqual(len(set(counts.values())), 1, "every board has the same series: %s" % counts)
        for n, a in zip(names, agents):
            want = [s["time_ms"] for s in a.samples()]
            for key, pts in per_board[n]:
                got = [t for t, _ in pts]
                if dict(key)["__name__"] in fp.SOMETIMES:  # a forecast only in the samples that have one
                    self.assertTrue(set(got) <= set(want) and got == sorted(set(got)), "%s %s" % (n, dict(key)))
                    continue
                self.assertEqual(got, want, "%s %s" % (n, dict(key)["__name__"]))

        def lines():
            return [line.split(b" ", 1) for line in harness.read_bytes(out_path).splitlines()
                    if line.startswith(b"tegrawatch/")]
        states = lambda: [(t.decode(), json.loads(p)) for t, p in lines() if t.endswith(b"/state")]  # noqa: E731
        wait_until(lambda: len(states()) >= BOARDS * SAMPLES, 60, step=0.5)
        got = states()
        for n in names:
            seqs = [doc["seq"] for topic, doc in got if topic == "tegrawatch/%s/state" % n]
            self.assertEqual(len(set(seqs)), SAMPLES, n)

        rw_bytes = sum(len(r.body) for r in px.got())
        mqtt_bytes = sum(len(t) + 1 + len(p) + 1 for t, p in lines())  # as mosquitto_sub -v prints them
        n_series = counts[names[0]]
        print("\n%d boards x %d samples, %d series a board: remote write %.0f bytes a sample a board "
              "(snappy bodies, %d requests); MQTT state + limits %.0f bytes a sample a board (payloads)"
              % (BOARDS, SAMPLES, n_series, rw_bytes / (BOARDS * SAMPLES), len(px.got()),
                 mqtt_bytes / (BOARDS * SAMPLES)))


def main():
    global SRC, BOARDS
    _, SRC = harness.init(needs=("mosquitto", "mosquitto_sub"))
    if len(sys.argv) > 1 and sys.argv[1].isdigit():
        BOARDS = int(sys.argv.pop(1))
    os.chdir(SRC)
    if not os.path.exists(fp.PROMETHEUS):
        print("prometheus missing: skipped")
        sys.exit(77)
    harness.main()


if __name__ == "__main__":
    main()
