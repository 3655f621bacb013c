#!/usr/bin/env python3
"""The delivery and sampling goals of docs/reliability.md, each against the
real agent on a fixture board and a real mosquitto, on 127.0.0.1 only:

- A2  (--black-hole) a black-holed connection (a proxy that stops
      forwarding, sockets open)
- A3  no broker at start
- A8  20 rounds of kill -9 during an outage, with a spool file
- A10 the spool file on a full disk (a 1 MiB tmpfs)
- B1  (--jitter) tick lateness (p99, max) under a broker outage, CPU hogs,
      slowloris sockets and a webhook receiver that never answers
- A1  (--outage) a 10-minute broker outage with the default settings:
      ten minutes of the agent's time in a few seconds of real time

All but B1 run the agent on a clock the test drives (tegrawatch-driven): the
time it waits passes at once, and real time runs only where it is what the
test measures (libmosquitto's keepalive, a stretch of ticks' lateness).

Each test writes the figures it measured to stderr (docs/reliability.md
quotes them).

Usage: test_reliability.py TEGRAWATCH SOURCE_ROOT [--black-hole | --outage | --jitter]
(no flag: A3, A8, A10; --black-hole: A2; --jitter: B1; --outage: A1)
Needs: mosquitto and python3-paho-mqtt, and but for B1 tegrawatch-driven (exit 77 = skipped without them).
"""
import json
import os
import random
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest

import harness
from harness import dedup_seqs, free_port, parse_spool, wait_until
# The lateness bounds of goal B1 (p99, max). A tick is a poll() wake-up and a
# few sysfs reads (under 1 ms of CPU): against two busy loops on two cores the
# scheduler (CFS) wakes a task that slept at once, so 50 ms is a wide margin on
# a loaded CI VM; the max allows one long preemption or a page-in.
P99_MS, MAX_MS = 50, 250


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def lateness_ms(samples, interval_ms):
    """Lateness of each tick against the agent's schedule. The loop plans tick n at start + n x interval
    (core/loop.c); a tick that ran a whole interval late restarts the schedule from its end (counted in
    agent.late_ticks_total). Within one schedule, tick n ran late by time_ms - (t0 + n x interval), t0 the
    earliest tick of that schedule projected back (the on-time start). The tick that restarts a schedule is
    measured against the schedule it missed."""
    segments, cur, late_seen = [], [], None
    for s in samples:
        late = s["metrics"]["agent.late_ticks_total"]
        if cur and late != late_seen:
            segments.append(cur + [s])  # measured against the old schedule ...
            cur = []
        cur.append(s)  # ... and starts the new one
        late_seen = late
    segments.append(cur)
    out = []
    for seg in segments:
        base = min(s["time_ms"] - i * interval_ms for i, s in enumerate(seg))
        out.extend(s["time_ms"] - i * interval_ms - base for i, s in enumerate(seg))
    return out


class Proxy:
    """A loopback TCP proxy to the broker that can black-hole: it keeps every socket open and stops forwarding
    (what it reads is dropped, nothing is closed, no RST, and the broker closing its end is not passed on). A
    connection that saw a black hole never forwards again (its stream lost bytes); connections accepted after
    heal() forward normally."""

    def __init__(self, target_port, port=0):
        self.target = target_port
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", port))
        self.ls.listen(16)
        self.port = self.ls.getsockname()[1]
        self.holed = False
        self.lock = threading.Lock()
        self.conns = []  # [client, upstream, dead]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(("127.0.0.1", self.target), timeout=5)
                u.settimeout(None)
            except OSError:
                c.close()
                continue
            with self.lock:
                entry = [c, u, self.holed]
                self.conns.append(entry)
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pump, args=(entry, a, b), daemon=True).start()

    def _pump(self, entry, src, dst):
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                break
            if not data:
                break
            if entry[2]:
                continue  # the black hole: read and dropped
            try:
                dst.sendall(data)
            except OSError:
                break
        if entry[2] and src is entry[1]:
            # the broker's end closed in the hole (mosquitto drops a client it has not heard from for 1.5 x its
            # keepalive, in 1 s steps: close to when the agent's own keepalive gives up): the agent must see no
            # more of that than of the rest, or it would not be its keepalive that finds the hole
            return
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def black_hole(self):
        with self.lock:
            self.holed = True
            for e in self.conns:
                e[2] = True

    def heal(self):
        with self.lock:
            self.holed = False

    def close(self):
        self.closed = True
        self.ls.close()
        with self.lock:
            for c, u, _ in self.conns:
                c.close()
                u.close()


class Base(harness.TestCase):
    def rel_agent(self, name, keys, interval_ms=None, extra="", web="", tegrastats=False, preexec=None, **kw):
        """tegrawatch run on the fixture Orin Nano (sysfs; fake tegrastats when asked) publishing with the
        mqtt KEYS; its stdout (one JSON line a sample, written at the tick) kept in a file, so what it produced
        before a kill -9 is known. KW: more of Agent's (driven, env)."""
        config = 'agent:\n  state_file: ""\nweb:\n  listen: "%s"\n' % web + harness.mqtt_section(keys) + extra
        args = ["-v", "--root", harness.src(harness.FIXTURE_BOARD)]
        if interval_ms:
            args += ["--interval", str(interval_ms)]
        if tegrastats:
            args += ["--tegrastats", harness.src("tests/integration/fake_tegrastats.sh")]
        else:
            args += ["--no-tegrastats"]
        a = self.agent(args, name=name, config=config, preexec=preexec, **kw)
        a.interval_ms = interval_ms or 1000
        return a

    def stopped(self, a, s, device):
        """Stops A cleanly and waits for its offline status at S (subscribed to it): every message it sent
        before has arrived."""
        topic = "tegrawatch/%s/status" % device
        n = len(s.all(topic))
        self.assertEqual(a.stop(), 0)
        s.wait_payload(topic, "offline", after=n)

    def check_no_gap(self, states, what):
        order, dups = dedup_seqs(states)
        self.assertTrue(order, what + ": nothing delivered")
        self.assertEqual(order, sorted(order), what + ": out of order after dedup")
        missing = sorted(set(range(order[0], order[-1] + 1)) - set(order))
        self.assertEqual(missing, [], what + ": gaps in seq")
        return order, dups

    def check_cadence(self, a, what, p99_ms=P99_MS, max_ms=MAX_MS, machine=(0, 0), on_real_time=None):
        """Every tick ran (stdout seq 1..N, no late tick) and on time; returns (p99, max) lateness. MACHINE: the
        (p99, max) lateness measured beside it (harness.PROBE; in B1 also the agent without the faults), added to
        the bounds: on a machine loaded beyond its cores the scheduler's lateness is nobody's fault. ON_REAL_TIME:
        the samples of an agent on the driven clock that it took on real time, whose lateness is measured (on
        the driven clock each tick comes on its schedule by construction)."""
        samples = a.samples()
        self.assertEqual([s["seq"] for s in samples], list(range(1, len(samples) + 1)), what + ": samples missing")
        # the first tick runs at start, before the schedule
        late = lateness_ms(samples[1:] if on_real_time is None else on_real_time, a.interval_ms)
        p99, mx = percentile(late, 99), max(late)
        sys.stderr.write("\n%s: %d ticks at %d ms, lateness p50 %d ms, p99 %d ms, max %d ms, %d late ticks\n" %
                         (what, len(late), a.interval_ms, percentile(late, 50), p99, mx,
                          samples[-1]["metrics"]["agent.late_ticks_total"]))
        if machine != (0, 0):
            sys.stderr.write("%s: beside it, lateness p99 %d ms, max %d ms\n" % (what, *machine))
        if not harness.UNDER_QEMU:  # under qemu-user (the arm64 run) the lateness would be the emulator's
            self.assertLessEqual(p99, p99_ms + machine[0], what + ": tick lateness p99")
            self.assertLessEqual(mx, max_ms + machine[1], what + ": tick lateness max")
        return p99, mx


def keys(port, device, **more):
    """The mqtt keys with the agent's defaults (keepalive, back-off) unless MORE says otherwise."""
    cfg = {"host": "127.0.0.1", "port": port, "device_id": device}
    cfg.update(more)
    return cfg


class BlackHoleTest(Base):
    def test_a2_black_hole(self):
        """A2: the proxy stops forwarding with every socket open, until the agent has seen it and its first
        reconnect has gone into the hole too (a CONNECT never answered). With keepalive 5 s the agent sees it
        within 2 x keepalive + 2 s, spools, reconnects once the proxy forwards again and delivers every sample of
        the black hole; sampling stays on time. The agent runs on the driven clock (tegrawatch-driven), on real
        time up to the heal (libmosquitto's keepalive is real time: the detection and the ticks' lateness are
        measured there), then 10 times as fast: its CONNECT timeout and back-off after the heal are its own."""
        b = self.broker(persistence=True)
        s = self.sub(b.port, ["tegrawatch/bh/state", "tegrawatch/bh/status"], client_id="tw-rel-bh", clean=False)
        px = Proxy(b.port)
        self.addCleanup(px.close)
        a = self.rel_agent("bh", keys(px.port, "bh", keepalive="5s", backoff_cap="4s"), interval_ms=100,
                           driven=True)
        a.real()
        s.wait_count("tegrawatch/bh/state", 10, timeout=30)
        px.black_hole()
        t_hole = a.now()[1]
        self.assertTrue(wait_until(lambda: a.last().get("agent.mqtt_connected") == 0, 20), "never noticed")
        first_down = next(x for x in a.samples()
                          if x["time_ms"] >= t_hole and x["metrics"]["agent.mqtt_connected"] == 0)
        detect_s = (first_down["time_ms"] - t_hole) / 1000.0
        # the reconnect (a second after) is accepted into the hole: the agent must give it up on its own
        self.assertTrue(wait_until(lambda: len(px.conns) >= 2, 10), a.stderr())
        px.heal()
        t_heal = a.now()[1]
        on_real_time = a.samples()
        a.pace(10)
        self.assertTrue(wait_until(lambda: a.last().get("agent.mqtt_connected") == 1, 30), a.stderr())
        t_back = a.now()[1]
        first_up = next(x for x in a.samples() if x["time_ms"] >= t_heal and x["metrics"]["agent.mqtt_connected"])
        reconnect_s = (first_up["time_ms"] - t_heal) / 1000.0
        held = max(x["metrics"]["agent.mqtt_spool_depth"] for x in a.samples())

        def all_in():
            order, _ = dedup_seqs(s.json("tegrawatch/bh/state"))
            return order and order[-1] - order[0] + 1 == len(order) and \
                s.json("tegrawatch/bh/state")[-1]["metrics"]["agent.mqtt_connected"] == 1
        self.assertTrue(wait_until(all_in, 30, step=0.2), a.stderr())
        self.stopped(a, s, "bh")
        states = s.json("tegrawatch/bh/state")
        order, dups = self.check_no_gap(states, "black hole")
        # the samples taken from the black hole to the reconnect: in flight (lost with the connection) or spooled
        in_hole = {x["seq"] for x in states if t_hole <= x["time_ms"] <= t_back}
        last = states[-1]["metrics"]
        sys.stderr.write("\nblack hole: detected after %.1f s, healed %.1f s after it began, reconnected %.1f s "
                         "after the heal, %d samples held (spool depth up to %d), %d duplicates, %d dropped\n" %
                         (detect_s, (t_heal - t_hole) / 1000.0, reconnect_s, len(in_hole), held, dups,
                          last["agent.mqtt_dropped_total"]))
        self.assertLessEqual(detect_s, 2 * 5 + 2)
        self.assertGreaterEqual(len(in_hole), 0.9 * (t_back - t_hole) / 100)
        self.assertEqual(last["agent.mqtt_dropped_total"], 0)
        self.assertLessEqual(dups, 100)
        self.assertIn("keepalive", a.stderr())
        self.check_cadence(a, "black hole", on_real_time=on_real_time[1:])


class DeliveryTest(Base):
    def test_a3_no_broker_at_start(self):
        """A3: the agent starts with nothing listening on the broker's port: it starts, samples and spools;
        20 s later the broker starts there and gets everything, within the back-off cap + 5 s (default back-off:
        base 1 s, cap 60 s). The agent runs on the driven clock (tegrawatch-driven): the 20 s, its back-off and
        its CONNECT timeout are its own time, which runs flat out while nothing listens and 20 times as fast
        as real time once the broker is there; mosquitto and the subscriber keep real time."""
        port = free_port()
        a = self.rel_agent("nb", keys(port, "nb"), interval_ms=100, driven=True)
        a.run(20000, 0)  # nothing listens for 20 s of the agent's time (nothing to serve: flat out)
        self.assertIsNone(a.proc.poll(), a.stderr())
        before = a.samples()
        self.assertEqual(len(before), 201, "the first sample at start, then every tick")
        self.assertEqual(before[-1]["metrics"]["agent.mqtt_connected"], 0)
        # the broker comes up behind a proxy on the agent's port, opened once the subscriber is in (the agent's
        # clock stands still meanwhile): the agent may connect the moment something listens, and what it sends
        # before anyone subscribed would be lost
        b = self.broker(persistence=True)
        s = self.sub(b.port, ["tegrawatch/nb/state", "tegrawatch/nb/status"], client_id="tw-rel-nb", clean=False)
        px = Proxy(b.port, port=port)
        self.addCleanup(px.close)
        up_ms = a.now()[1]
        a.pace(5)
        self.assertTrue(wait_until(lambda: a.last().get("agent.mqtt_connected") == 1, 60), a.stderr())
        first_up = next(x for x in a.samples() if x["time_ms"] >= up_ms and x["metrics"]["agent.mqtt_connected"])
        connect_s = (first_up["time_ms"] - up_ms) / 1000.0
        self.assertTrue(wait_until(lambda: len({x["seq"] for x in s.json("tegrawatch/nb/state")}) >= len(before),
                                   30, step=0.2))
        self.stopped(a, s, "nb")
        states = s.json("tegrawatch/nb/state")
        order, dups = self.check_no_gap(states, "no broker at start")
        first = min(states, key=lambda x: x["seq"])
        self.assertEqual(first["metrics"]["agent.samples_total"], 1, "the first sample, taken before any broker")
        self.assertEqual(states[-1]["metrics"]["agent.mqtt_dropped_total"], 0)
        sys.stderr.write("\nno broker at start: %d samples spooled in 20 s, connected %.1f s after the broker "
                         "started, all %d delivered\n" % (len(before), connect_s, len(order)))
        self.assertLessEqual(connect_s, 60 + 5)

    def test_a8_kill9_loop(self):
        """A8: 20 rounds of kill -9 at a random time (0.5-1.9 s after a run's first sample) while the broker is
        away, spool file on. Each restart reloads the file. Once the broker is back, every sample is delivered
        except, per kill, at most those of the last sync interval (1 s, mqtt/mqtt_conn.c SYNC_INTERVAL_MS) and
        the tick in progress. Samples are matched by time_ms (each run's stdout holds what it produced). The
        agents run on the driven clock (tegrawatch-driven), 2 ms of real time a tick: a run goes to its random
        time less two ticks, then on, and the kill comes once one or two more samples are written (which of the
        two is random), while the loop goes on: it lands anywhere in the loop's work (a tick, a spool write, a
        sync) or in its wait. Each run's wall clock
        starts a second after the previous run's last sample: stamps stay apart, as on the real clock."""
        rounds, interval, pace = 20, 50, 2
        port = free_port()
        spool = os.path.join(self.d, "k9.spool")
        cfg = keys(port, "k9", spool_file=spool, backoff_cap="1s")
        rng = random.Random(12)
        produced, lost = [], []
        wall_ms = int(time.time() * 1000)

        def agent(name):
            return self.rel_agent(name, cfg, interval_ms=interval, driven=True,
                                  env={"TEGRAWATCH_DRIVEN_WALL_MS": str(wall_ms)})
        for r in range(rounds):
            a = agent("k9-%d" % r)
            a.next_sample(what="the first sample")  # taken at start; then the kill at a random time of the run
            a.run(rng.randrange(500, 1900) - 2 * interval, pace)
            a.skip()
            a.pace(pace)
            for _ in range(rng.randint(1, 2)):  # the kill's moment: within the next two ticks
                a.next_sample(what="a sample before the kill")
            a.stop(signal.SIGKILL)
            mine = [x["time_ms"] for x in a.samples()]
            self.assertTrue(mine, a.stderr())
            synced = {json.loads(rec["payload"])["time_ms"] for rec in parse_spool(spool)
                      if rec["topic"] == "tegrawatch/k9/state"}
            produced.append(mine)
            lost.append([t for t in mine if t not in synced])
            wall_ms = mine[-1] + 1000  # past the tick that may have been cut off by the kill
        # the broker returns; one more agent delivers the file
        b = self.broker(port=port)
        s = self.sub(b.port, ["tegrawatch/k9/state", "tegrawatch/k9/status"])
        final = agent("k9-final")
        final.pace(5)
        wanted = {t for run, gone in zip(produced, lost) for t in run if t not in gone}
        got = lambda: {x["time_ms"] for x in s.json("tegrawatch/k9/state")}  # noqa: E731
        self.assertTrue(wait_until(lambda: wanted <= got(), 30, step=0.2),
                        "%d of %d synced samples not delivered" % (len(wanted - got()), len(wanted)))
        self.stopped(final, s, "k9")
        delivered = got()
        per_kill = [len([t for t in run if t not in delivered]) for run in produced]
        bound = 1000 // interval + 2
        total = sum(len(run) for run in produced)
        sys.stderr.write("\nkill -9 x %d: %d samples produced, %d lost (per kill: max %d, mean %.1f; bound %d = "
                         "1 s sync interval at %d ms + 2)\n" % (rounds, total, sum(per_kill), max(per_kill),
                                                                sum(per_kill) / len(per_kill), bound, interval))
        self.assertLessEqual(max(per_kill), bound, per_kill)
        # the seq counter survives the kills: no seq is used twice with different samples
        states = s.json("tegrawatch/k9/state")
        by_seq = {}
        for x in states:
            self.assertEqual(by_seq.setdefault(x["seq"], x["time_ms"]), x["time_ms"], "seq reused")
        # what a kill lost is only the unsynced tail of each run
        for run, gone in zip(produced, lost):
            self.assertEqual(gone, run[len(run) - len(gone):], "a loss not at the end of a run")

    def full_disk(self, size_kb):
        """A tmpfs of SIZE_KB mounted on a fresh directory; (path, how). Without the right to mount, a file size
        limit (RLIMIT_FSIZE, SIGXFSZ ignored so writes fail with EFBIG) stands in for it."""
        d = os.path.join(self.d, "disk")
        os.mkdir(d)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dk,mode=0700" % size_kb, "tegrawatch-test", d],
                           capture_output=True)
        if r.returncode == 0:
            self.addCleanup(subprocess.run, ["umount", "-l", d])
            return d, "tmpfs", None

        def limit():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (size_kb * 1024, size_kb * 1024))
        return d, "RLIMIT_FSIZE", limit

    def test_a10_full_disk(self):
        """A10: the spool file (and its .seq) on a 1 MiB tmpfs, an outage at 20 ms samples (about 4 KB each) that
        fills it in a few seconds and goes on: the agent keeps sampling on time, counts the write failures, warns
        at most once a minute per kind, drops the oldest when memory is full, never exits; when the broker returns
        it delivers what it held and publishes live again. The agent runs on the driven clock (tegrawatch-driven):
        25 s of outage in its time, memory looked at every second of it; the stretch where the disk runs full
        (from 256 KiB before it is full to a second after the first failed write: a retry) runs on real time,
        and its ticks' lateness is measured."""
        disk, how, preexec = self.full_disk(1024)
        spool = os.path.join(disk, "spool")
        b = self.broker(persistence=True)
        s = self.sub(b.port, ["tegrawatch/fd/state", "tegrawatch/fd/status", "tegrawatch/fd/limits"],
                     client_id="tw-rel-fd", clean=False)
        a = self.rel_agent("fd", keys(b.port, "fd", spool_file=spool, keepalive="5s", backoff_cap="1s"),
                           interval_ms=20, preexec=preexec, driven=True)
        a.pace(5)
        s.wait_count("tegrawatch/fd/state", 50, timeout=30)
        a.pause()
        b.stop()
        start_ms = a.now()[0]
        rss = []

        def outage_until(cond, end_s):
            """The outage on, a second of the agent's time at a time (memory looked at after each), until COND
            holds or END_S seconds of it have passed."""
            while not cond() and a.now()[0] - start_ms < end_s * 1000:
                a.run(1000, 0)  # flat out: nothing to serve while the broker is away
                rss.append(a.rss_anon_kb())
        # the file takes a sync's records (~150 KB) a second: within 256 KiB of full, a write fails in two more
        outage_until(lambda: os.path.getsize(spool) >= 768 * 1024, 10)
        real_from = len(a.samples())
        a.real()
        errors = lambda: a.last().get("agent.mqtt_spool_write_errors_total", 0)  # noqa: E731
        self.assertTrue(wait_until(lambda: errors() > 0, 10), "the disk never filled: %s" % a.stderr())
        # a second more on real time, so that the first retry of the write (1 s later) is in the window
        t_full = next(x["time_ms"] for x in a.samples() if x["metrics"].get("agent.mqtt_spool_write_errors_total"))
        self.assertTrue(wait_until(lambda: a.samples()[-1]["time_ms"] >= t_full + 1200, 10), a.stderr())
        a.pause()
        on_real_time = a.samples()[real_from:]
        outage_until(lambda: False, 25)
        self.assertIsNone(a.proc.poll(), a.stderr())
        b.start()
        a.pace(5)
        self.assertTrue(wait_until(lambda: a.last().get("agent.mqtt_connected") == 1, 30), a.stderr())
        self.assertTrue(wait_until(lambda: a.last().get("agent.mqtt_spool_depth", 9) <= 2, 30),
                        [(x["seq"], {k[11:]: v for k, v in x["metrics"].items() if k.startswith("agent.mqtt")})
                         for x in a.samples()[::100]])
        n_before = len(s.json("tegrawatch/fd/state"))
        self.assertTrue(wait_until(lambda: len(s.json("tegrawatch/fd/state")) > n_before + 50, 20),
                        "live publishing after the outage")
        self.stopped(a, s, "fd")
        states = s.json("tegrawatch/fd/state")
        last = states[-1]["metrics"]
        order, dups = dedup_seqs(states)
        missing = len(set(range(order[0], order[-1] + 1)) - set(order))
        warnings = [ln for ln in a.stderr().splitlines() if "spool:" in ln and "failed" in ln and "warning" in ln]
        sys.stderr.write("\nfull disk (%s, 1 MiB): %d write errors, %d warnings, %d dropped, %d missing at the "
                         "subscriber, %d delivered, RssAnon %d -> %d kB\n" %
                         (how, last["agent.mqtt_spool_write_errors_total"], len(warnings),
                          last["agent.mqtt_dropped_total"], missing, len(order), rss[0], max(rss)))
        # every gap is a counted drop (the oldest, from the full spool); a drop that leaves no gap is a limits
        # message, spooled when a ceiling changed: on a loaded machine a ceiling read past the slow-read bound is
        # left out of a sample (tegra/sysfs_read.c), and its limits change twice. Without such a change, equal.
        limit_names = {k for x in s.json("tegrawatch/fd/limits") for k in x["metrics"]}
        ceilings = [{k: v for k, v in x["metrics"].items() if k in limit_names} for x in a.samples()]
        changes = sum(1 for was, now in zip(ceilings, ceilings[1:]) if was != now)
        self.assertGreaterEqual(last["agent.mqtt_dropped_total"], missing)
        self.assertLessEqual(last["agent.mqtt_dropped_total"] - missing, changes)
        self.assertGreater(last["agent.mqtt_spool_write_errors_total"], 0)
        self.assertLessEqual(len(warnings), 2, warnings)  # once a minute: the write and the compaction
        self.check_cadence(a, "full disk", on_real_time=on_real_time)
        if "ASAN_OPTIONS" not in os.environ:
            self.assertLess(max(rss) - rss[0], 4096, "memory grew under a full disk")


# B1's ticks and how long the faults last: 600 ticks, as many as 60 s at 100 ms gave, in half the time. Not
# shorter: a tick later than its interval restarts the schedule and costs a tick, and the ticks' count is held to
# 95 %; at 50 ms, what costs a tick is beyond the p99 bound anyway.
JITTER_INTERVAL_MS, JITTER_S = 50, 30


class JitterTest(Base):
    def test_b1_jitter_under_faults(self):
        """B1: 600 ticks (30 s at 50 ms) while the broker is away (reconnects every 0.1-1 s), two busy loops hog
        both cores, 100 slowloris sockets hold the web server, event streams are read, and a webhook receiver
        accepts and never answers. Lateness of each tick against its schedule: p99 <= 50 ms, max <= 250 ms."""
        tarpit = socket.socket()
        tarpit.bind(("127.0.0.1", 0))
        tarpit.listen(64)
        self.addCleanup(tarpit.close)
        web_port, mqtt_port = free_port(), free_port()
        rule = ("rules:\n  - {name: always, metric: agent.samples_total, op: above, warning: 0}\n"
                "actions:\n  hook:\n    type: webhook\n    format: json\n    url: http://127.0.0.1:%d/hook\n"
                "notify:\n  warning: [hook]\n" % tarpit.getsockname()[1])
        a = self.rel_agent("jit", keys(mqtt_port, "jit", backoff_base="100ms", backoff_cap="1s"),
                           interval_ms=JITTER_INTERVAL_MS, web="127.0.0.1:%d" % web_port, extra=rule)
        self.assertTrue(wait_until(lambda: len(a.samples()) >= 5, 20), a.stderr())
        # what the machine does beside it (the bounds' allowance): a plain sleeping process (harness.PROBE) and the
        # same agent on the same board without the faults (the same work a tick)
        control = self.agent(["--root", harness.src(harness.FIXTURE_BOARD), "--no-tegrastats", "--interval",
                              str(JITTER_INTERVAL_MS)],
                             name="jit-control", config='agent:\n  state_file: ""\nweb:\n  listen: ""\n')
        control.interval_ms = JITTER_INTERVAL_MS
        self.assertTrue(wait_until(lambda: len(control.samples()) >= 2, 20), control.stderr())
        hogs = [self.spawn([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        probe = subprocess.Popen([sys.executable, harness.PROBE, str(JITTER_S), str(JITTER_INTERVAL_MS)],
                                 stdout=subprocess.PIPE, text=True)
        self.addCleanup(probe.kill)
        socks = []
        for _ in range(100):
            try:
                c = socket.create_connection(("127.0.0.1", web_port), timeout=2)
                c.sendall(b"GET /api/v1/snapshot HTTP/1.1\r\nHo")
                socks.append(c)
            except OSError:
                pass
        self.addCleanup(lambda: [c.close() for c in socks])
        streams = []
        for _ in range(4):
            c = socket.create_connection(("127.0.0.1", web_port), timeout=2)
            c.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            streams.append(c)
        self.addCleanup(lambda: [c.close() for c in streams])
        n_before = len(a.samples())
        end = time.monotonic() + JITTER_S  # the faults, the event streams read five times a second
        while time.monotonic() < end:
            for c in streams:
                c.settimeout(0.01)
                try:
                    c.recv(65536)
                except OSError:
                    pass
            harness.hold(0.2)
        m = a.last()
        n_faulted = len(a.samples()) - n_before
        machine = tuple(int(x) for x in probe.communicate(timeout=60)[0].split())
        self.assertEqual(control.stop(), 0)
        c_late = lateness_ms(control.samples()[1:], JITTER_INTERVAL_MS)
        machine = (max(machine[0], percentile(c_late, 99)), max(machine[1], max(c_late)))
        for h in hogs:
            h.kill()
        self.assertIsNone(a.proc.poll(), a.stderr())
        self.assertEqual(a.stop(), 0)
        # the faults were there: the broker refused (retried), the webhook reached the tarpit and hangs there
        self.assertEqual(m["agent.mqtt_connected"], 0)
        self.assertIn("Connection refused", a.stderr())
        tarpit.settimeout(0)
        conn, _ = tarpit.accept()  # BlockingIOError: the webhook never came
        conn.close()
        self.assertGreater(m["agent.alerts_firing"], 0)
        self.check_cadence(a, "B1 under faults", machine=machine)
        # 600 ticks of faults: a late tick restarts the schedule (and costs the time it was late), hence 95 %
        self.assertGreaterEqual(n_faulted, 0.95 * JITTER_S * 1000 / JITTER_INTERVAL_MS)


# A1 on the driven clock, one second of the agent's time after another: the test writes a tegrastats line into the
# fake's pipe, then the loop jumps to the next tick, which reads that line (in the pipe before the jump): a
# tegrastats at the agent's interval, on the agent's time. While the broker is there, a tick's wait lasts
# CONNECT_PACE_MS of real time, the sockets served: the CONNECT timeout (5 s) is the agent's time, mosquitto's
# answer real time; while it is away, nothing (PACE_MS).
PACE_MS, CONNECT_PACE_MS = 0, 50


class TegrastatsPipe:
    """The stdout of a fake tegrastats in mode quiet (fake_tegrastats.sh, its pid in OUT/pid.1): write() puts one
    real Orin Nano line (the fake's own) into the pipe the agent reads."""

    def __init__(self, test, out):
        pid_file = os.path.join(out, "pid.1")
        test.assertTrue(wait_until(lambda: os.path.exists(pid_file) and harness.read_text(pid_file).endswith("\n"),
                                   20), "the fake tegrastats did not start")
        with open(harness.src("tests/integration/fake_tegrastats.sh")) as f:
            self.line = re.search(r"^LINE='(.*)'$", f.read(), re.M).group(1).encode() + b"\n"
        self.f = open("/proc/%d/fd/1" % int(harness.read_text(pid_file)), "wb", buffering=0)
        test.addCleanup(self.f.close)

    def write(self):
        self.f.write(self.line)


class OutageTest(Base):
    def test_a1_ten_minute_outage(self):
        """A1: the broker killed (SIGKILL) for 10 minutes (TW_A1_OUTAGE_S) of the agent's time, the agent with its
        default settings (1 s interval, memory spool of 3,600, keepalive 30 s, back-off 1-60 s) and a fake
        tegrastats: every sample of the outage is delivered after the broker returns, no gap, nothing dropped,
        duplicates <= the in-flight window (100), RssAnon bounded (600 messages of ~4 KB in the memory spool),
        the reconnect within the back-off cap + 5 s. The agent runs on the driven clock (tegrawatch-driven): its
        600 ticks, back-off and spool live the ten minutes in a few seconds of real time, while mosquitto, the
        subscriber and libmosquitto's own timers keep real time. Tick lateness is B1's subject (real time):
        here every tick must run, on its schedule, each with a fresh tegrastats line."""
        outage = int(os.environ.get("TW_A1_OUTAGE_S", "600"))
        b = self.broker(persistence=True)
        s = self.sub(b.port, ["tegrawatch/a1/state", "tegrawatch/a1/status"], client_id="tw-rel-a1", clean=False)
        out = os.path.join(self.d, "tegrastats")
        os.mkdir(out)
        a = self.rel_agent("a1", keys(b.port, "a1"), tegrastats=True, driven=True,
                           env={"FAKE_TEGRASTATS_MODE": "quiet", "FAKE_TEGRASTATS_OUT": out})
        tegrastats = TegrastatsPipe(self, out)

        def tick(pace_ms=PACE_MS):
            tegrastats.write()
            a.run(1000, pace_ms)

        def ticks_until(cond, limit, what):
            """Ticks (CONNECT_PACE_MS each) until COND holds, at most LIMIT of them (seconds of the agent's time)."""
            for _ in range(limit):
                if cond():
                    return
                tick(CONNECT_PACE_MS)
            self.assertTrue(cond(), "%s: not within %d s of the agent's time\n%s" % (what, limit, a.stderr()[-4000:]))

        ticks_until(lambda: len(s.all("tegrawatch/a1/state")) >= 5, 60, "five samples delivered")
        for _ in range(5):  # the memory after start-up settles: the baseline
            tick()
        base = a.rss_anon_kb()
        b.wait_saved()  # the subscriber's session survives the kill (ten minutes of real time made sure of it)
        lost = a.stderr().count("lost the connection")
        b.proc.kill()
        b.proc.wait()
        # the agent reads the closed socket in real time, between the driven ticks: the outage's ticks start once it
        # has (ticks sent before would be samples still marked connected: CI-like run 34, under ASan and load)
        self.assertTrue(wait_until(lambda: a.stderr().count("lost the connection") > lost, 30), a.stderr()[-4000:])
        t_down, down_ms = time.monotonic(), a.now()[1]
        rss = [base]
        for i in range(outage):  # the outage, memory looked at every 5 s of the agent's time
            tick()
            if i % 5 == 4:
                rss.append(a.rss_anon_kb())
        outage_real_s = time.monotonic() - t_down
        self.assertIsNone(a.proc.poll(), a.stderr())
        depth = a.last()["agent.mqtt_spool_depth"]
        b.start()
        up_ms = a.now()[1]
        ticks_until(lambda: a.last().get("agent.mqtt_connected") == 1, 75, "reconnected")
        first_up = next(x for x in a.samples() if x["time_ms"] >= up_ms and x["metrics"]["agent.mqtt_connected"])
        connect_s = (first_up["time_ms"] - up_ms) / 1000.0

        def drained():
            states = s.json("tegrawatch/a1/state")
            return states and states[-1]["metrics"]["agent.mqtt_connected"] == 1 and \
                states[-1]["metrics"]["agent.mqtt_spool_depth"] == 0
        ticks_until(drained, 120, "the spool delivered")
        self.stopped(a, s, "a1")
        states = s.json("tegrawatch/a1/state")
        order, dups = self.check_no_gap(states, "10-minute outage")
        held = {x["seq"] for x in states if x["metrics"]["agent.mqtt_connected"] == 0}
        last = states[-1]["metrics"]
        sys.stderr.write("\n%d s outage at 1 Hz (%.1f s of real time): %d samples held (spool depth %d), all "
                         "delivered, %d duplicates, %d dropped, reconnected %.1f s after the broker returned; "
                         "RssAnon %d kB before, peak %d kB (+%d kB)\n" %
                         (outage, outage_real_s, len(held), depth, dups, last["agent.mqtt_dropped_total"], connect_s,
                          base, max(rss), max(rss) - base))
        self.assertGreaterEqual(len(held), outage)
        self.assertEqual(last["agent.mqtt_dropped_total"], 0)
        self.assertLessEqual(dups, 100)
        self.assertLessEqual(connect_s, 60 + 5)
        # tegrastats' own metrics (the rails' averages: sysfs has only their readings) in every sample of the
        # outage: every tick read the line written before it
        outage_samples = [x for x in states if down_ms < x["time_ms"] <= up_ms]
        self.assertGreaterEqual(len(outage_samples), outage)
        self.assertEqual([x["seq"] for x in outage_samples if "power.vdd_in.avg_mw" not in x["metrics"]], [])
        if "ASAN_OPTIONS" not in os.environ:
            # the memory spool's own budget: 4 KiB a message (docs/configuration.md), plus 1 MiB of slack
            self.assertLess(max(rss) - base, outage * 4 + 1024)
        self.check_cadence(a, "10-minute outage")


if __name__ == "__main__":
    harness.init(needs=("mosquitto",) if "--jitter" in sys.argv else ("mosquitto", "driven"))
    outage, jitter, black_hole = harness.flag("--outage"), harness.flag("--jitter"), harness.flag("--black-hole")
    only = sys.argv[1:]  # Class.test_name, to run some only
    classes = [OutageTest] if outage else [JitterTest] if jitter else [BlackHoleTest] if black_hole else [DeliveryTest]
    if only:
        suite = unittest.defaultTestLoader.loadTestsFromNames(only, sys.modules[__name__])
    else:
        suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(c) for c in classes)
    sys.exit(0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1)
