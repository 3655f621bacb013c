#!/usr/bin/env python3
"""What a sample costs the machine besides the loop's own work (bench/README.md, "Issue 34"): with everything on
(the shipped rules, MQTT with Home Assistant discovery to a real mosquitto, the web server, JSON Lines) and nobody
asking the web server anything, no other thread of the agent wakes for a sample; and a feature that is not
configured maps no library of its own.

Usage: test_tick_cost.py TEGRAWATCH SOURCE_ROOT

Counts, not times: a thread's context switches (/proc/PID/task/TID/status) only grow when it runs, so a loaded
machine does not change them for a thread that sleeps.
"""
import glob
import os

import harness
from harness import free_port, mqtt_keys, mqtt_section

SAMPLES = 100  # counted between two looks at the threads
INTERVAL_MS = 20


def switches(pid):
    """{tid: voluntary + involuntary context switches} of every thread of PID but the loop's (tid = pid)."""
    out = {}
    for status in glob.glob("/proc/%d/task/*/status" % pid):
        tid = int(status.split("/")[4])
        if tid == pid:
            continue
        try:
            with open(status) as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except FileNotFoundError:
            continue  # a thread that ended meanwhile
        out[tid] = int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])
    return out


class IdleThreadsTest(harness.TestCase):
    """The agent at 20 ms with every output on; the web server is never asked (no connection at all)."""

    def test_no_thread_wakes_per_sample(self):
        broker = self.broker()
        web = free_port()
        config = ('agent:\n  state_file: ""\ninclude:\n  - %s\nweb:\n  listen: "127.0.0.1:%d"\n' %
                  (harness.src("configs/rules.d/*.yaml"), web) + mqtt_section(mqtt_keys(broker.port, "cost")))
        agent = self.agent(["--root", harness.src("tests/fixtures/boards/agx-orin-jp5"), "--no-tegrastats",
                            "--interval", str(INTERVAL_MS)], config=config)
        # connected: the discovery and the first state went out, the session is steady
        first = agent.next_sample(lambda s: s["metrics"].get("agent.mqtt_connected") == 1, timeout=30,
                                  what="a sample with MQTT connected")
        agent.next_sample(lambda s: s["seq"] >= first["seq"] + 5, what="five more samples")
        before = switches(agent.pid)
        start = agent.samples()[-1]["seq"]
        agent.next_sample(lambda s: s["seq"] >= start + SAMPLES, timeout=60, what="%d more samples" % SAMPLES)
        after = switches(agent.pid)
        woke = {tid: after[tid] - before.get(tid, 0) for tid in after}
        self.assertTrue(before, "the agent runs no thread besides the loop: nothing measured")
        # the web server's notifier used to wake for every sample (about SAMPLES times); now a thread may wake
        # for its own timers (libmicrohttpd's, a second's housekeeping), not per sample
        self.assertLessEqual(sum(woke.values()), SAMPLES // 10,
                             "threads woke %s times in %d samples (by thread id)" % (woke, SAMPLES))
        agent.stop()


class IdleLibrariesTest(harness.TestCase):
    """An idle feature costs nothing: libmosquitto and libmicrohttpd, and what they pull in (OpenSSL, GnuTLS), are
    mapped only by an agent that has MQTT or the web server configured (bench/README.md: about 880 KiB of
    RssAnon for both); ncursesw (with libtinfo) by `tegrawatch top`'s screen only (test_top.py)."""

    LIBS = ("libmosquitto", "libmicrohttpd", "libcrypto", "libssl", "libgnutls", "libncursesw", "libtinfo")

    def libs_of(self, config):
        agent = self.agent(["--root", harness.src("tests/fixtures/boards/agx-orin-jp5"), "--no-tegrastats",
                            "--interval", "100"], config='agent:\n  state_file: ""\n' + config)
        agent.next_sample(lambda s: s["seq"] >= 3, what="three samples")
        libs = harness.mapped(agent.pid, self.LIBS)
        agent.stop()
        return libs

    def test_libraries_only_with_their_feature(self):
        self.assertEqual(self.libs_of('web:\n  listen: ""\n'), set())
        web = self.libs_of('web:\n  listen: "127.0.0.1:%d"\n' % free_port())
        self.assertIn("libmicrohttpd", web)
        self.assertNotIn("libmosquitto", web)
        broker = self.broker()
        mqtt = self.libs_of('web:\n  listen: ""\n' + mqtt_section(mqtt_keys(broker.port, "libs")))
        self.assertIn("libmosquitto", mqtt)
        self.assertNotIn("libmicrohttpd", mqtt)


if __name__ == "__main__":
    harness.init(needs=("mosquitto",))
    harness.main()
