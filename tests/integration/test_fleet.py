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
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet_peers as fp  # noqa: E402

SRC = None
BOARDS = 50
SAMPLES = 120
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
MOSQUITTO_SUB = shutil.which("mosquitto_sub") or "/usr/bin/mosquitto_sub"


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


class FleetTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="tw-fleet-")
        self.d = self.tmp.name
        self.stops = []

    def tearDown(self):
        for stop in reversed(self.stops):
            try:
                stop()
            except Exception:
                pass
        self.tmp.cleanup()

    def test_fifty_boards_complete_in_prometheus_and_at_the_broker(self):
        prom = fp.Prometheus(self.d).start()
        self.stops.append(prom.stop)
        px = fp.Proxy(target=prom.url("/api/v1/write")).start()
        self.stops.append(px.stop)
        port = fp.free_port()
        conf = os.path.join(self.d, "mosquitto.conf")
        fp.write_file(conf, "listener %d 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n" % port, 0o644)
        broker = subprocess.Popen([MOSQUITTO, "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.stops.append(lambda: (broker.terminate(), broker.wait(10)))
        time.sleep(0.5)
        sub_out = open(os.path.join(self.d, "states.txt"), "wb")
        sub = subprocess.Popen([MOSQUITTO_SUB, "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-v",
                                "-t", "tegrawatch/+/state", "-t", "tegrawatch/+/limits"], stdout=sub_out)
        self.stops.append(lambda: (sub.terminate(), sub.wait(10)))
        time.sleep(1)

        names = ["fleet-%02d" % (i + 1) for i in range(BOARDS)]
        agents = []
        for n in names:
            agents.append(fp.Agent(self.d, n, board_config(n, px.url("/api/v1/write"), port),
                                   ["--demo", "--speed", "20", "--count", str(SAMPLES)]))
        for a in agents:
            self.stops.append(lambda a=a: a.stop(signal.SIGKILL))
        for n, a in zip(names, agents):
            self.assertEqual(a.wait_exit(180), 0, n + a.stderr()[-2000:])
            self.assertEqual(len(a.all()), SAMPLES, n)

        times = [s["time_ms"] for s in agents[0].all()]
        at = times[-1] / 1000 + 1
        series = prom.raw('{job="tegrawatch"}', at)
        per_board = {}
        for key, pts in series.items():
            per_board.setdefault(dict(key)["instance"], []).append((key, pts))
        self.assertEqual(sorted(per_board), names)
        counts = {n: len(v) for n, v in per_board.items()}
        self.assertEqual(len(set(counts.values())), 1, "every board has the same series: %s" % counts)
        for n, a in zip(names, agents):
            want = [s["time_ms"] for s in a.all()]
            for key, pts in per_board[n]:
                self.assertEqual([t for t, _ in pts], want, "%s %s" % (n, dict(key)["__name__"]))

        fp.wait_until(lambda: self.states(sub_out) >= BOARDS * SAMPLES, 60)
        states = self.read_states(sub_out)
        for n in names:
            seqs = [doc["seq"] for t, doc in states if t == "tegrawatch/%s/state" % n]
            self.assertEqual(len(set(seqs)), SAMPLES, n)

        rw_bytes = sum(len(r["body"]) for r in px.got())
        mqtt_bytes = sum(len(line) for line in open(sub_out.name, "rb"))
        n_series = counts[names[0]]
        print("\n%d boards x %d samples, %d series a board: remote write %.0f bytes a sample a board "
              "(snappy bodies, %d requests); MQTT state + limits %.0f bytes a sample a board (payloads)"
              % (BOARDS, SAMPLES, n_series, rw_bytes / (BOARDS * SAMPLES), len(px.got()),
                 mqtt_bytes / (BOARDS * SAMPLES)))

    def states(self, f):
        f.flush()
        with open(f.name, "rb") as r:
            return sum(1 for line in r if b"/state " in line)

    def read_states(self, f):
        f.flush()
        out = []
        with open(f.name, "rb") as r:
            for line in r:
                topic, payload = line.split(b" ", 1)
                if topic.endswith(b"/state"):
                    out.append((topic.decode(), json.loads(payload)))
        return out


def main():
    global SRC, BOARDS
    fp.BIN[0], SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if len(sys.argv) > 3:
        BOARDS = int(sys.argv[3])
    os.chdir(SRC)
    if not all(os.path.exists(p) for p in (fp.PROMETHEUS, MOSQUITTO, MOSQUITTO_SUB)):
        print("prometheus or mosquitto missing: skipped")
        sys.exit(77)
    r = unittest.TextTestRunner(verbosity=2).run(unittest.TestLoader().loadTestsFromTestCase(FleetTest))
    sys.exit(0 if r.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
