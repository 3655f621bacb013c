#!/usr/bin/env python3
"""The remote-write sink end to end, with Prometheus itself as the receiver and the decoder: Debian's
prometheus with --web.enable-remote-write-receiver on a free 127.0.0.1 port.

- every series of every sample exactly once, with the agent's timestamps, through a receiver restart;
  the latest sample's series equal a scrape of /metrics (names, labels, values), which promtool accepts;
- wrong basic-auth credentials are refused (401), counted, logged once and never retried; right ones work;
- a receiver that answers 413 to large requests: batches split and sent again, nothing lost;
- headers: (X-Scope-OrgID, Mimir's tenant) on every request, a retried one included, through a proxy that refuses
  requests without it;
- kill -9 during an outage with a spool file: what was synced arrives after the restart;
- libcurl and libsnappy are mapped only when remote_write is configured (/proc/PID/maps);
- with --slow-receiver: a receiver that takes 3 s to answer: sampling keeps its pace (real time: it measures it);
- with --outage: a 2-minute receiver outage in the middle of a run.

The agents of the demo runs, the kill -9 and the outage run on a clock the test drives (tegrawatch-driven: their
ticks, batches and back-offs in a fraction of their time); Prometheus keeps real time.

Usage: test_remote_write.py TEGRAWATCH SOURCE_ROOT [--slow-receiver | --outage]   (exit 77 without prometheus)
"""
import os
import signal
import subprocess
import sys
import urllib.request

import harness
from harness import fleet as fp
from harness import free_port, wait_until, write_file

SRC = None
OUTAGE = False
BOARD = "tests/fixtures/boards/orin-nano-jp6"
# families of /metrics that remote write leaves out: the process's own figures, alerts and the scrape's time
SCRAPE_ONLY = ("process_", "tegrawatch_alerts", "tegrawatch_sample_timestamp_seconds")
PACE_MS = 5  # real ms a wait of a driven agent's loop lasts (its sockets served meanwhile)


def rw_config(url, extra="", web='""', board="rw-lab-1"):
    return """agent:
  state_file: ""
  board_name: %s
web:
  listen: %s
remote_write:
  url: %s
  backoff_base: 200ms
  backoff_cap: 1s
%s""" % (board, web, url, extra)


def demo_args(count, speed=20):
    return ["--demo", "--speed", str(speed), "--count", str(count)]


def live_args(interval=100):
    return ["--root", os.path.join(SRC, BOARD), "--no-tegrastats", "--interval", str(interval)]


class Case(harness.TestCase):
    def prometheus(self, **kw):
        p = fp.Prometheus(self.d, **kw).start()
        self.addCleanup(p.stop)
        return p

    def fleet_agent(self, name, text, args, env=None, driven=False):
        return self.agent(["--json"] + list(args), name=name, config=text, env=env, driven=driven)

    def assert_every_sample_once(self, prom, samples, instance, families_min=50):
        """Every series of INSTANCE holds exactly the samples' timestamps, once each."""
        times = [s["time_ms"] for s in samples]
        self.assertEqual(len(times), len(set(times)))
        series = prom.raw('{instance="%s"}' % instance, times[-1] / 1000 + 1)
        families = {dict(k)["__name__"] for k in series}
        self.assertGreaterEqual(len(families), families_min, sorted(families))
        for key, points in series.items():
            got = [t for t, _ in points]
            if dict(key)["__name__"] in fp.SOMETIMES:
                self.assertTrue(set(got) <= set(times) and got == sorted(set(got)), dict(key)["__name__"])
                continue
            self.assertEqual(got, times, "%s: %d points for %d samples; missing %s, extra %s" % (
                dict(key)["__name__"], len(got), len(times), sorted(set(times) - set(got))[:5],
                sorted(set(got) - set(times))[:5]))
        return series


class RemoteWriteTest(Case):
    def test_every_series_every_sample_once_through_a_receiver_restart(self):
        # the agent on the driven clock: its 300 ticks of 50 ms (the demo at 20 times) pass PACE_MS real ms each,
        # and it stands still while Prometheus stops and starts (Prometheus keeps real time)
        prom = self.prometheus()
        web = free_port()
        a = self.fleet_agent("a", rw_config(prom.url("/api/v1/write"), "  batch_samples: 20\n  batch_interval: 500ms\n",
                                      web="127.0.0.1:%d" % web), demo_args(300), driven=True)
        t0 = a.now()[0]
        a.pace(PACE_MS)
        # a scrape of /metrics while the run stands: the latest sample's series, as a scraper sees them
        self.assertTrue(wait_until(lambda: len(a.samples()) >= 60, 60), a.stderr())
        a.pause()
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % web, timeout=10) as r:
            scrape_text = r.read().decode()
        # the receiver goes away for 60 ticks (3 s of the agent's time: its back-off of 200 ms to 1 s retries),
        # then comes back on the same data
        prom.stop()
        a.run(60 * 50, PACE_MS)
        prom.start()
        self.assertEqual(a.run_to_end(300, 50, t0, PACE_MS), 0, a.stderr())
        samples = a.samples()
        self.assertEqual(len(samples), 300)
        last = samples[-1]["metrics"]
        self.assertGreater(last["agent.remote_write_retries_total"], 0, "the outage was seen")
        series = self.assert_every_sample_once(prom, samples, "rw-lab-1")

        # the values: two metrics of every sample, scaled as /metrics scales them
        def values(name, labels):
            for key, points in series.items():
                d = dict(key)
                if d["__name__"] == name and all(d.get(k) == v for k, v in labels.items()):
                    return points
            self.fail("no series %s %s" % (name, labels))
        cpu = values("tegrawatch_temperature_celsius", {"sensor": "cpu"})
        self.assertEqual(cpu, [(s["time_ms"], s["metrics"]["temp.cpu_c"]) for s in samples])
        vdd = values("tegrawatch_power_watts", {"rail": "vdd_in"})
        self.assertEqual([v for _, v in vdd], [round(s["metrics"]["power.vdd_in.mw"] * 0.001, 12) for s in samples])
        self.assertEqual({dict(k)["job"] for k in series}, {"tegrawatch"})
        self.assertEqual({dict(k)["board"] for k in series}, {"rw-lab-1"})

        # the scrape: promtool accepts it, and every series in it is in Prometheus with the same value
        check = subprocess.run([fp.PROMTOOL, "check", "metrics"], input=scrape_text, capture_output=True,
                               text=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        scraped = fp.parse_exposition(scrape_text)
        at_ms = int(round(scraped[frozenset({("__name__", "tegrawatch_sample_timestamp_seconds")})] * 1000))
        pushed = {}
        for key, points in series.items():
            d = dict(key)
            for k in ("job", "instance", "board"):
                del d[k]
            v = [val for t, val in points if t == at_ms]
            if not v and d["__name__"] in fp.SOMETIMES:
                continue  # no forecast in the scraped sample: absent from both
            pushed[frozenset(d.items())] = v[0] if v else None
        compared = 0
        for key, value in scraped.items():
            name = dict(key)["__name__"]
            if name.startswith(SCRAPE_ONLY):
                continue
            self.assertIn(key, pushed, "%s of /metrics is not pushed" % sorted(key))
            self.assertEqual(pushed[key], value, sorted(key))
            compared += 1
        self.assertEqual({k for k in pushed}, {k for k in scraped if not dict(k)["__name__"].startswith(SCRAPE_ONLY)},
                         "remote write has series /metrics has not")
        self.assertGreater(compared, 100)

    def test_wrong_credentials_refused_counted_logged_once_never_retried(self):
        prom = self.prometheus(web_config=fp.bcrypt_web_config("fleet", "right"))
        for name, pw in (("wrong", "nope"), ("right", "right")):
            write_file(os.path.join(self.d, name + ".pw"), pw + "\n")
        extra = "  username: fleet\n  password_file: %s\n  batch_samples: 10\n  batch_interval: 200ms\n"
        # on the driven clock: 60 ticks of 100 ms each
        bad = self.fleet_agent("bad", rw_config(prom.url("/api/v1/write"), extra % os.path.join(self.d, "wrong.pw"),
                                          board="bad-1"), demo_args(60, 10), driven=True)
        good = self.fleet_agent("good", rw_config(prom.url("/api/v1/write"), extra % os.path.join(self.d, "right.pw"),
                                            board="good-1"), demo_args(60, 10), driven=True)
        for a in (bad, good):
            self.assertEqual(a.run_to_end(60, 100, a.now()[0], PACE_MS), 0, a.stderr())
        m = bad.last()
        self.assertGreater(m["agent.remote_write_samples_rejected_total"], 0)
        self.assertEqual(m["agent.remote_write_samples_sent_total"], 0)
        self.assertEqual(m["agent.remote_write_retries_total"], 0, "a 401 is not retried")
        err = bad.stderr()
        self.assertEqual(err.count("HTTP 401"), 1, err)
        self.assertIn("check username, password_file or bearer_token_file", err)
        self.assertNotIn("nope", err)
        self.assertEqual(prom.api("/api/v1/series", **{"match[]": '{board="bad-1"}'}), [])
        self.assert_every_sample_once(prom, good.samples(), "good-1")

    def test_413_splits_the_batch_and_loses_nothing(self):
        prom = self.prometheus()
        limit = 6000  # bytes: about 8 samples of the demo, compressed

        def answer(req):
            return (413, {}) if len(req.body) > limit else None
        px = self.receiver(target=prom.url("/api/v1/write"), answer=answer)
        a = self.fleet_agent("a", rw_config(px.url("/api/v1/write"), "  batch_samples: 64\n  batch_interval: 2s\n"),
                       ["-v"] + demo_args(200, 50), driven=True)
        self.assertEqual(a.run_to_end(200, 20, a.now()[0], PACE_MS), 0, a.stderr())  # driven: 200 ticks of 20 ms
        got = px.got()
        statuses = [r.status for r in got]
        self.assertIn(413, statuses)
        self.assertGreater(statuses.count(204), 10)
        self.assertIn("too large (HTTP 413): sending", a.stderr())
        self.assertEqual(a.last()["agent.remote_write_samples_rejected_total"], 0)
        self.assert_every_sample_once(prom, a.samples(), "rw-lab-1")

    def test_headers_on_every_request_retries_included(self):
        # Mimir-style multi-tenancy in front of Prometheus: a request without the tenant is refused (401, not retried)
        prom = self.prometheus()

        def tenant(req):
            ids = [v for k, v in req.raw_headers if k.lower() == "x-scope-orgid"]
            return None if ids == ["board-fleet-7"] else (401, {})
        px = self.receiver(target=prom.url("/api/v1/write"), answer=tenant, script=[(503, {})])
        extra = "  batch_samples: 5\n  batch_interval: 200ms\n  headers:\n    X-Scope-OrgID: board-fleet-7\n"
        a = self.fleet_agent("a", rw_config(px.url("/api/v1/push"), extra), demo_args(20))
        self.assertEqual(a.wait(), 0, a.stderr())
        got = px.got()
        self.assertEqual(got[0].status, 503)
        self.assertGreaterEqual(len(got), 4)
        for r in got:  # the retry of the refused batch too; the sink's own headers once each, beside it
            names = [k.lower() for k, _ in r.raw_headers]
            self.assertEqual(r.headers.get("x-scope-orgid"), "board-fleet-7")
            for h in ("x-scope-orgid", "content-type", "content-encoding", "x-prometheus-remote-write-version"):
                self.assertEqual(names.count(h), 1, (h, r.raw_headers))
        # every sample once: the refused first batch came again, and no request lacked the tenant
        self.assert_every_sample_once(prom, a.samples(), "rw-lab-1")

    def test_kill9_during_outage_then_restart_delivers_what_was_synced(self):
        # both agents on the driven clock: their ticks of 100 ms and the sync once a second of their time pass
        # PACE_MS real ms a tick, so what kill -9 loses is the same on a loaded machine
        port = free_port()  # nothing listens yet
        spool = os.path.join(self.d, "rw.spool")
        cfg = rw_config("http://127.0.0.1:%d/api/v1/write" % port, "  spool_file: %s\n" % spool)
        a = self.fleet_agent("a", cfg, live_args(100), driven=True)
        a.pace(PACE_MS)
        self.assertTrue(wait_until(lambda: len(a.samples()) >= 35, 60), a.stderr())
        a.stop(signal.SIGKILL)
        synced = fp.spool_records(spool)
        self.assertGreaterEqual(len(synced), 20, "synced once a second")
        made = a.samples()
        lost = len(made) - len(synced)
        self.assertLessEqual(lost, 12, "at most a second of 100 ms ticks (and a little) is lost to kill -9")
        self.assertEqual([t for _, t in synced], [s["time_ms"] for s in made[:len(synced)]])
        # a new agent, then the receiver: the synced samples arrive, once, with their own times
        prom = fp.Prometheus(self.d)
        prom.port = port
        a2 = self.fleet_agent("a2", cfg, live_args(100), driven=True)
        a2.advance(max(0, made[-1]["time_ms"] + 1000 - a2.now()[1]))  # it starts after the first one's last tick
        a2.pace(PACE_MS)
        self.assertTrue(wait_until(lambda: len(a2.samples()) >= 5, 60), a2.stderr())
        prom.start()
        self.addCleanup(prom.stop)
        a2.real()  # the backlog drains at the real pace of its ticks (a paced agent may outrun a starved machine)
        a2.wait_metric("agent.remote_write_spool_depth", lambda v: v < 3, 60)
        self.assertIn("samples waiting in the spool from an earlier run", a2.stderr())
        a2.stop()
        times = [t for _, t in synced] + [s["time_ms"] for s in a2.samples()]
        got = prom.raw('tegrawatch_agent_samples_total{instance="rw-lab-1"}', times[-1] / 1000 + 1)
        (points,) = got.values()
        have = [t for t, _ in points]
        self.assertEqual(len(have), len(set(have)), "each sample once")
        self.assertEqual(sorted(set(t for _, t in synced) - set(have)), [], "every synced sample arrived")

    def test_libraries_mapped_only_with_the_sink(self):
        def mapped(cfg_text):
            a = self.fleet_agent("maps", cfg_text, live_args(100))  # stopped at once: its receiver answers
            wait_until(lambda: len(a.samples()) >= 3, 30)
            libs = harness.mapped(a.pid, ("libcurl", "libsnappy", "libz.so", "libstdc++", "libasan", "libtsan"))
            a.stop()
            # a sanitizer's runtime brings libstdc++ itself: then it says nothing about libsnappy's
            if libs & {"libasan", "libtsan"}:
                libs -= {"libstdc++"}
            return libs - {"libasan", "libtsan"}
        without = mapped('agent: {state_file: ""}\nweb: {listen: ""}\n')
        self.assertEqual(without, set())
        with_rw = mapped(rw_config(self.receiver().url("/api/v1/write")))
        self.assertTrue({"libcurl", "libsnappy"} <= with_rw, with_rw)


class SlowReceiverTest(Case):
    """--slow-receiver only (meson test remote-write-slow): a real-time measure of the ticks, apart so that it runs
    beside the rest."""

    def test_slow_receiver_leaves_sampling_on_time(self):
        prom = self.prometheus()
        px = self.receiver(target=prom.url("/api/v1/write"), delay=3.0)
        # what the machine does beside it, the bounds' allowance on a loaded machine, for as long as the agent runs:
        # a plain sleeping process (harness.PROBE) and the same agent without the sink (the same work a tick)
        probe = subprocess.Popen([sys.executable, harness.PROBE, "300"], stdout=subprocess.PIPE, text=True)
        self.addCleanup(probe.kill)
        control = self.fleet_agent("control", rw_config(px.url("/api/v1/write")).split("remote_write:")[0],
                                   live_args(100))
        a = self.fleet_agent("a", rw_config(px.url("/api/v1/write"), "  batch_samples: 5\n  batch_interval: 100ms\n"),
                       live_args(100))
        # three requests answered (1 sample, then 5 and 5: 9 s) while sampling goes on; then the end: a clean stop
        # would flush the backlog at 3 s a request for up to 10 s, which is not what this test is about
        a.wait_metric("agent.remote_write_samples_sent_total", lambda v: v >= 10, 60)
        a.stop(signal.SIGKILL)
        control.stop()
        probe.terminate()

        def lateness(samples):
            t0 = samples[0]["time_ms"]
            return sorted(s["time_ms"] - (t0 + i * 100) for i, s in enumerate(samples))
        samples = a.samples()
        late = lateness(samples)
        self.assertGreater(len(samples), 60)
        p99 = late[int(len(late) * 0.99) - 1]
        c_late = lateness(control.samples())
        p_p99, p_max = (int(x) for x in probe.communicate(timeout=60)[0].split())
        machine_p99 = max(p_p99, c_late[int(len(c_late) * 0.99) - 1])
        machine_max = max(p_max, c_late[-1])
        what = "ticks p99 %d ms, max %d ms late next to a 3 s receiver (beside it, the agent without the sink and a " \
            "plain process: %d, %d)" % (p99, late[-1], machine_p99, machine_max)
        sys.stderr.write(what + "\n")
        # a sink that held the loop would make ticks seconds late (the receiver takes 3 s): in every build
        self.assertLess(p99, 1000 + machine_p99, what)
        # the agent as it ships keeps its ticks within a few tens of ms of the machine's own; under a sanitizer or
        # qemu-user the encoding of a batch on the loop costs many times more, and that is the tool's
        if not harness.SANITIZED and not harness.UNDER_QEMU:
            self.assertLess(p99, 60 + machine_p99, what)
            self.assertLess(late[-1], 250 + machine_max, what)
        self.assertEqual([s["seq"] for s in samples], list(range(1, len(samples) + 1)))
        self.assertGreaterEqual(len(px.got()), 2)


class OutageTest(Case):
    PACE_MS = 20  # real ms a wait of the driven agent's loop lasts: 25 times real time at 500 ms ticks

    def test_two_minute_receiver_outage(self):
        """Prometheus down for two minutes of the agent's time (the driven clock: its 240 ticks, batches and
        back-offs in a few seconds of real time): the retries go on, and after the receiver is back every
        series holds every sample, once."""
        prom = self.prometheus()
        a = self.fleet_agent("a", rw_config(prom.url("/api/v1/write"), "  batch_interval: 2s\n"), live_args(500),
                             driven=True)
        a.pace(self.PACE_MS)
        self.assertTrue(wait_until(lambda: len(a.samples()) >= 20, 60), a.stderr())
        prom.stop()
        n_down = len(a.samples())
        a.run(120000, self.PACE_MS)  # the outage
        prom.start()
        n_back = len(a.samples())
        a.pace(self.PACE_MS)
        self.assertTrue(wait_until(lambda: len(a.samples()) >= n_back + 20, 60), a.stderr())
        a.wait_metric("agent.remote_write_spool_depth", lambda v: v < 8, 60)
        a.stop()
        samples = a.samples()
        self.assertGreaterEqual(n_back - n_down, 240, "a tick every 500 ms through the outage")
        self.assertGreater(samples[-1]["metrics"]["agent.remote_write_retries_total"], 2)
        # a clean stop sends what still waits: every series holds every sample
        self.assert_every_sample_once(prom, samples, "rw-lab-1")


def main():
    global SRC, OUTAGE
    _, SRC = harness.init(needs=() if "--slow-receiver" in sys.argv else ("driven",))
    OUTAGE = harness.flag("--outage")
    slow = harness.flag("--slow-receiver")
    os.chdir(SRC)
    if not os.path.exists(fp.PROMETHEUS):
        print("prometheus not installed: skipped")
        sys.exit(77)
    if not any(not a.startswith("-") for a in sys.argv[1:]):
        sys.argv.append("OutageTest" if OUTAGE else "SlowReceiverTest" if slow else "RemoteWriteTest")
    harness.main()


if __name__ == "__main__":
    main()
