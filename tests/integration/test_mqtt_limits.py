#!/usr/bin/env python3
"""The limits topic against a real mosquitto on a free 127.0.0.1 port: the state carries what changes,
PREFIX/ID/limits (retained) what rarely does; together they are the metrics of the full state (mqtt.state_full);
limits go out once, again when a limit changes (a cpufreq ceiling rewritten in place under a copied --root board)
and on every connect, and after an outage the backlog carries each change in its place.

The samples and the outage take the agents' time: they run on a clock the test drives (tegrawatch-driven), each
wait of their loop PACE_MS of real time for 100 ms of theirs; the reconnects go on the real clock.

Usage: test_mqtt_limits.py TEGRAWATCH SOURCE_ROOT (exit 77 = skipped without mosquitto or tegrawatch-driven).
"""
import json
import os
import re

import harness
from harness import mqtt_keys, wait_until

# the shapes docs/mqtt.md lists for the limits topic
LIMIT = re.compile(r"^(trip\..*|agent\.memory_.*|nvpmodel\.id|cpu\.[^.]+\.online|power\..*\.crit_ma"
                   r"|oc\..*\.throttle_enabled|.*\.(max_freq_mhz|min_freq_mhz|hw_max_freq_mhz|total_mb|total_kb"
                   r"|max_state))$")
POLICY0 = "sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq"
CEILING = "cpu.0.max_freq_mhz"
PACE_MS = 5


def by_seq(msgs):
    """Messages without repeats (the same boot_id and seq), in arrival order."""
    seen, out = set(), []
    for m in msgs:
        if (m["boot_id"], m["seq"]) not in seen:
            seen.add((m["boot_id"], m["seq"]))
            out.append(m)
    return out


class LimitsTest(harness.TestCase):
    def board(self):
        return harness.copy_board(self.d, "tests/fixtures/boards/agx-orin-jp5")

    def set_ceiling(self, root, khz):
        # rewritten in place, as sysfs does: the agent keeps the file open and reads it again; never empty between
        # (written over, then cut to its length)
        with open(os.path.join(root, POLICY0), "r+") as f:
            f.write("%d\n" % khz)
            f.truncate()

    def test_split_once_and_on_change(self):
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/lim/#", "tegrawatch/full/#"])
        root = self.board()
        args = ("--root", root, "--interval", "100", "--no-tegrastats")
        lim = self.mqtt_agent("lim", mqtt_keys(b.port, "lim"), args=args, driven=True)
        full = self.mqtt_agent("full", mqtt_keys(b.port, "full", state_full="true"), args=args, driven=True)
        for a in (lim, full):
            a.run(3000, PACE_MS)  # 30 samples after the first
        self.assertTrue(wait_until(lambda: len(s.all("tegrawatch/lim/state")) >= 30
                                   and len(s.all("tegrawatch/full/state")) >= 30, 30), lim.stderr())
        states = s.json("tegrawatch/lim/state")
        limits = s.json("tegrawatch/lim/limits")
        # published once for 30 samples, retained, QoS 1 (the subscription's), before the first state it holds for
        self.assertEqual(len(limits), 1, [x["seq"] for x in limits])
        first = limits[0]
        self.assertEqual(list(first), ["ts", "time_ms", "boot_id", "seq", "metrics"])
        self.assertEqual(first["boot_id"], harness.BOOT_ID)
        self.assertEqual(first["seq"], states[0]["seq"])
        self.assertEqual(first["time_ms"], states[0]["time_ms"])
        arrival = [(m[1], m[2]) for m in s.all() if m[1] in ("tegrawatch/lim/state", "tegrawatch/lim/limits")]
        self.assertEqual(arrival[0][0], "tegrawatch/lim/limits")
        self.assertEqual(first["metrics"]["cpu.0.max_freq_mhz"], 2201.6)
        self.assertEqual(first["metrics"]["trip.tj.critical_c"], 105)
        # the state lacks every limit; the limits hold only limits; together they are the full state's metrics
        full_states = s.json("tegrawatch/full/state")
        for st in states:
            self.assertEqual([k for k in st["metrics"] if LIMIT.match(k)], [])
            self.assertIn("cpu.0.freq_mhz", st["metrics"])
        self.assertTrue(all(LIMIT.match(k) for k in first["metrics"]), first["metrics"])
        for st in full_states[2:]:
            union = list(states[-1]["metrics"]) + list(first["metrics"])
            self.assertEqual(sorted(union), sorted(st["metrics"]))
            self.assertEqual(len(union), len(set(union)))
            for k, v in first["metrics"].items():
                self.assertEqual(st["metrics"][k], v, k)
        # state_full still publishes the limits (retained) for subscribers that read them
        self.assertEqual(s.json("tegrawatch/full/limits")[0]["metrics"], first["metrics"])

        # a ceiling lowered (nvpmodel, a user): one more limits message, with the sample it was first seen in
        t_write = lim.now()[1]  # its clock stands still: the next sample is the first after the write
        self.set_ceiling(root, 1497600)
        lim.run(3000, PACE_MS)
        self.assertTrue(wait_until(lambda: len(s.all("tegrawatch/lim/limits")) >= 2, 20), lim.stderr())
        self.assertTrue(wait_until(lambda: len(s.all("tegrawatch/lim/state")) >= 61, 30))
        limits = s.json("tegrawatch/lim/limits")
        self.assertEqual(len(limits), 2, [x["seq"] for x in limits])
        new = limits[1]
        changed = {k for k in new["metrics"] if new["metrics"][k] != first["metrics"].get(k)}
        self.assertEqual(changed, {"cpu.%d.max_freq_mhz" % i for i in range(4)})
        self.assertEqual(new["metrics"]["cpu.0.max_freq_mhz"], 1497.6)
        self.assertEqual(new["time_ms"], t_write + 100)
        states = s.json("tegrawatch/lim/state")
        match = [x for x in states if x["seq"] == new["seq"]]
        self.assertEqual(len(match), 1)
        self.assertEqual(match[0]["time_ms"], new["time_ms"])
        # it arrived right before that state
        order = [(m[1], json.loads(m[2])["seq"]) for m in s.all() if m[1].startswith("tegrawatch/lim/")
                 and m[1].rsplit("/", 1)[1] in ("state", "limits")]
        i = order.index(("tegrawatch/lim/limits", new["seq"]))
        self.assertEqual(order[i + 1], ("tegrawatch/lim/state", new["seq"]))

        # a subscriber arriving later gets the latest limits at once (retained)
        late = self.sub(b.port, ["tegrawatch/lim/limits"])
        self.assertTrue(wait_until(lambda: late.all(), 20))
        self.assertTrue(late.all()[0][3])
        self.assertEqual(late.json("tegrawatch/lim/limits")[0], new)
        self.assertEqual(lim.stop(), 0)
        self.assertEqual(full.stop(), 0)

    def test_republished_on_connect(self):
        """A broker restarted without persistence forgets retained messages: the agent publishes the limits
        again on connect (nothing changed, so the same message, its seq included)."""
        b = self.broker()
        s = self.sub(b.port, ["tegrawatch/rc/limits"])
        a = self.mqtt_agent("rc", mqtt_keys(b.port, "rc"), args=("--root", self.board(), "--interval", "100",
                                                                  "--no-tegrastats"))
        self.assertTrue(wait_until(lambda: s.all(), 20), a.stderr())
        before = s.json("tegrawatch/rc/limits")
        self.assertEqual(len(before), 1)
        b.stop()
        a.wait_stderr("lost the connection")  # the agent saw the broker go
        b.start()
        self.wait_connects(a, b.port, 2)
        late = self.sub(b.port, ["tegrawatch/rc/limits"])
        self.assertTrue(wait_until(lambda: late.all(), 20), a.stderr())
        self.assertTrue(late.all()[0][3])
        self.assertEqual(late.json("tegrawatch/rc/limits"), before)
        self.assertEqual(a.stop(), 0)

    def wait_connects(self, a, port, n):
        probe = self.sub(port, ["tegrawatch/rc/state"])
        self.assertTrue(wait_until(lambda: any(x["metrics"]["agent.mqtt_connects_total"] >= n
                                               for x in probe.json("tegrawatch/rc/state")), 30), a.stderr())

    def test_outage_keeps_changes_in_place(self):
        """A limit changed while the broker was away: the backlog delivers the states before the change, then the
        limits message, then the states after it; the latest is retained afterwards."""
        b = self.broker(persistence=True)
        s = self.sub(b.port, ["tegrawatch/og/state", "tegrawatch/og/limits", "tegrawatch/og/status"],
                     client_id="tw-limits-persistent", clean=False)
        root = self.board()
        # its stdout kept: what it sampled while the broker was away is known without the broker
        a = self.mqtt_agent("og", mqtt_keys(b.port, "og"), args=("--root", root, "--interval", "100",
                                                                 "--no-tegrastats"), stdout=None, driven=True)
        a.pace(PACE_MS)
        self.assertTrue(wait_until(lambda: len(s.all("tegrawatch/og/state")) >= 10, 20), a.stderr())
        b.stop()

        def offline(new_ceiling):
            """Samples taken offline, with the new ceiling or the old one (a sample without it, its file read past
            the slow-read bound on a loaded machine, is neither)."""
            return [x for x in a.samples() if x["metrics"]["agent.mqtt_connected"] == 0 and
                    CEILING in x["metrics"] and (x["metrics"][CEILING] == 1497.6) == new_ceiling]
        a.next_sample(lambda x: len(offline(False)) >= 10, what="10 samples in the outage")
        self.set_ceiling(root, 1497600)
        a.next_sample(lambda x: len(offline(True)) >= 10, what="10 samples with the new ceiling in the outage")
        b.start()
        a.real()  # the reconnect and the backlog on the real clock
        self.assertTrue(wait_until(lambda: len(s.all("tegrawatch/og/limits")) >= 2, 30), a.stderr())
        n0 = len(s.all("tegrawatch/og/state"))
        self.assertTrue(wait_until(lambda: len(s.all("tegrawatch/og/state")) >= n0 + 10, 20))
        n = len(s.all("tegrawatch/og/status"))
        self.assertEqual(a.stop(), 0)
        s.wait_payload("tegrawatch/og/status", "offline", after=n)  # the agent's last message: all arrived
        msgs = [(m[1].rsplit("/", 1)[1], json.loads(m[2])) for m in s.all() if not m[1].endswith("/status")]
        every = by_seq([x for t, x in msgs if t == "limits"])
        # a sample whose ceiling was not read has none, nor has the limits message it brings (CI-like run 38, arm64
        # under qemu: one such message; the file was then emptied while rewritten, or read past the slow-read bound
        # on a loaded machine): the ceilings are in the messages that have one
        limits = [x for x in every if CEILING in x["metrics"]]
        ceilings = [x["metrics"][CEILING] for x in limits]
        self.assertEqual([c for i, c in enumerate(ceilings) if i == 0 or c != ceilings[i - 1]], [2201.6, 1497.6])
        change = next(x for x in limits if x["metrics"][CEILING] == 1497.6)
        held = [x for t, x in msgs if t == "state" and x["metrics"]["agent.mqtt_connected"] == 0]
        self.assertGreater(len([x for x in held if x["seq"] < change["seq"]]), 5)
        self.assertGreater(len([x for x in held if x["seq"] >= change["seq"]]), 5)
        # a subscriber applying the latest limits it received to each state is exact: every state after the change
        # (and none before it) arrives after the new limits
        in_force, seen = None, set()
        for t, x in msgs:
            if t == "limits":
                in_force = x if CEILING in x["metrics"] else in_force
            elif (x["boot_id"], x["seq"]) not in seen:
                seen.add((x["boot_id"], x["seq"]))
                self.assertEqual(in_force["metrics"][CEILING] == 1497.6, x["seq"] >= change["seq"], x["seq"])
        late = self.sub(b.port, ["tegrawatch/og/limits"])
        self.assertTrue(wait_until(lambda: late.all(), 20))
        self.assertEqual(late.json("tegrawatch/og/limits")[0], every[-1])
        self.assertEqual(limits[-1]["metrics"][CEILING], 1497.6)


if __name__ == "__main__":
    harness.init(needs=("mosquitto", "driven"))
    harness.main()
