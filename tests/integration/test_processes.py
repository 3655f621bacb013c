#!/usr/bin/env python3
"""The processes source on this machine's real /proc (docs/metrics.md#processes): programs the test starts, kills
and starts again, watched by name (comm) and by pid file, their up/down and restarts, the shipped rule
process-down firing and resolving with the process named in its summary and labels, and /metrics naming it as
written. Then what was running: an alert that fires carries the top processes by CPU and memory, and a
multi-threaded burner the test starts is among them, the same in the log line, a json webhook's body, the MQTT
alert message, the event's sample in the recording and the report of that recording.

Usage: test_processes.py TEGRAWATCH SOURCE_ROOT
"""
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys

import harness
from harness import Broker, free_port, mqtt_keys, mqtt_section, tegrawatch, wait_until

BURNER = r"""
import hashlib, sys, threading
with open("/proc/self/comm", "w") as f:  # the name /proc/PID/stat shows
    f.write(sys.argv[1])
data = b"x" * (1 << 20)
def burn():
    while True:
        hashlib.sha256(data).digest()  # large buffers: hashlib lets the GIL go, so the threads run at once
ts = [threading.Thread(target=burn, daemon=True) for _ in range(4)]
[t.start() for t in ts]
sys.stdout.write("ready\n")
sys.stdout.flush()
threading.Event().wait()
"""


class ProcessesTest(harness.TestCase):
    def setUp(self):
        super().setUp()
        self.tag = "%04d" % random.randrange(10000)  # names no other process on the machine has
        self.app_bin = os.path.join(self.d, "twapp" + self.tag)  # comm = the file's name (15 characters at most)
        shutil.copy("/bin/sleep", self.app_bin)

    def start_app(self):
        return self.spawn([self.app_bin, "600"])

    def start_daemon(self, pidfile):
        p = self.spawn(["/bin/sleep", "600"])
        with open(pidfile, "w") as f:
            f.write("%d\n" % p.pid)
        return p

    def stop(self, p):
        p.kill()
        p.wait()

    def config(self, port, body):
        return ('agent:\n  state_file: ""\n  board_name: proc-board\nweb:\n  listen: "127.0.0.1:%d"\n'
                'sources:\n  processes_interval: 1s\n%s' % (port, body))

    def test_comm_and_pidfile_down_restart(self):
        port = free_port()
        pidfile = os.path.join(self.d, "daemon.pid")
        app, daemon = self.start_app(), self.start_daemon(pidfile)
        rules = harness.src("configs", "rules.d", "processes.yaml")
        a = self.agent([], port=port, config=self.config(port, (
            'processes:\n  - name: App Server\n    comm: twapp%s\n  - name: daemon\n    pidfile: %s\n'
            'include: ["%s"]\n') % (self.tag, pidfile, rules)))
        m = a.wait_metrics(lambda m: m.get("process.app_server.up") == 1 and m.get("process.daemon.up") == 1,
                           "both up")
        self.assertEqual(m["process.app_server.count"], 1)
        self.assertGreater(m["process.app_server.resident_mb"], 0)
        self.assertGreater(m["process.app_server.open_fds"], 0)  # root reads every fd directory
        self.assertEqual(m["process.app_server.restarts_total"], 0)

        # the name as written, on /metrics, with process-exporter's and node's conventions
        a.wait_web()
        text = a.get("/metrics")[2]
        text = text.decode() if isinstance(text, bytes) else text
        self.assertIn('tegrawatch_process_up{name="App Server"} 1\n', text)
        self.assertIn('tegrawatch_process_resident_memory_bytes{name="App Server"} ', text)
        self.assertIn('tegrawatch_process_restarts_total{name="App Server"} 0\n', text)
        self.assertIn('tegrawatch_process_num_procs{name="daemon"} 1\n', text)

        # killed: down, and the shipped rule fires, critical, naming the process
        self.stop(app)
        a.wait_metric("process.app_server.up", lambda v: v == 0, timeout=15)
        a.wait_stderr("alert firing process-down", timeout=15)
        line = a.stderr_lines("alert firing process-down")[0]
        self.assertIn("[critical]", line)
        self.assertIn("process.app_server.up", line)
        self.assertIn("proc-board: process App Server is down", line)
        alerts = json.loads(a.get("/api/v1/alerts")[2])
        active = [x for x in alerts["active"] if x["rule"] == "process-down"]
        self.assertEqual(len(active), 1, alerts)
        self.assertEqual(active[0]["labels"], {"process": "App Server"})
        self.assertEqual(active[0]["severity"], "critical")

        # started again: up, one restart, the alert resolved
        app = self.start_app()
        m = a.wait_metrics(lambda m: m.get("process.app_server.up") == 1, "the app back")
        self.assertEqual(m["process.app_server.restarts_total"], 1)
        a.wait_stderr("alert resolved process-down", timeout=15)

        # the pid file's program restarted with another pid: a restart of its own
        old = daemon.pid
        self.stop(daemon)
        daemon = self.start_daemon(pidfile)
        self.assertNotEqual(daemon.pid, old)
        a.wait_metric("process.daemon.restarts_total", lambda v: v == 1, timeout=15)
        # garbage in the pid file: down, said with the file and the entry's place, counted
        with open(pidfile, "w") as f:
            f.write("garbage\n")
        a.wait_metric("process.daemon.up", lambda v: v == 0, timeout=15)
        a.wait_metric("agent.process_errors_total", lambda v: v >= 1, timeout=15)
        a.wait_stderr("holds no pid ('garbage?')", timeout=15)
        self.assertIn("%s:" % a.cfg, a.stderr_lines("holds no pid")[0])  # where the entry is
        a.stop()

    def start_burner(self):
        comm = "twburn" + self.tag
        burner = self.spawn([sys.executable, "-c", BURNER, comm], stdout=subprocess.PIPE)
        self.addCleanup(burner.stdout.close)
        self.assertEqual(burner.stdout.readline(), b"ready\n")
        return burner, comm

    def check_top(self, top, burner, comm):
        """TOP is a well-formed top processes list that has the burner among the CPU users."""
        by_cpu, by_memory = top["by_cpu"], top["by_memory"]
        self.assertTrue(1 <= len(by_cpu) <= 5 and 1 <= len(by_memory) <= 5, top)
        mine = [p for p in by_cpu if p["pid"] == burner.pid]
        self.assertEqual(len(mine), 1, "the burner is not among the top CPU users: %s" % by_cpu)
        self.assertEqual(mine[0]["comm"], comm)
        self.assertGreater(mine[0]["cpu_pct"], 5)  # four threads hashing (what a shared machine gives them)
        self.assertGreater(mine[0]["rss_bytes"], 1 << 20)
        for lst, key in ((by_cpu, "cpu_pct"), (by_memory, "rss_bytes")):
            values = [p[key] for p in lst]
            self.assertEqual(values, sorted(values, reverse=True), lst)
            self.assertTrue(all(p["pid"] > 0 and p["comm"] for p in lst), lst)

    def test_alert_carries_what_ran(self):
        if not shutil.which("mosquitto"):
            self.skipTest("no mosquitto")
        broker = self.broker()
        sub = self.sub(broker.port, ["tegrawatch/+/alerts"])
        hook = self.receiver()
        burner, comm = self.start_burner()
        port = free_port()
        record = os.path.join(self.d, "run.jsonl")
        # no `for`: the recording's replay fires on the same sample (its value), whatever the sample times
        # exec's environment, kept in a file (the alerts stage runs it off the fan-out)
        envs = os.path.join(self.d, "envs")
        os.mkdir(envs)
        rec = os.path.join(self.d, "rec.sh")
        with open(rec, "w") as f:
            f.write('#!/bin/sh\nenv | grep "^TEGRAWATCH_TOP_" > "$1/$$.tmp" && mv "$1/$$.tmp" "$1/$$.env"\n')
        os.chmod(rec, 0o755)
        rules = ('processes:\n  - name: burner\n    comm: %s\n'
                 'actions:\n  hook:\n    type: webhook\n    format: json\n    url: %s\n'
                 '  am:\n    type: webhook\n    format: alertmanager-api\n    url: %s\n'
                 '  rec: {type: exec, command: [%s, %s], timeout: 5s}\n'
                 'rules:\n  - name: burner-busy\n    metric: process.burner.cpu_seconds_total\n'
                 '    warning: 0.5\n    actions: {warning: [hook, am, rec, log]}\n'
                 % (comm, hook.url("/hook"), hook.url("/am"), rec, envs))
        cfg = self.config(port, mqtt_section(mqtt_keys(broker.port, "proc-test")) + rules)
        a = self.agent(["--record", record], port=port, config=cfg)
        body = json.loads(hook.wait(1, "/hook", timeout=40)[0].body)
        self.assertEqual((body["rule"], body["transition"]), ("burner-busy", "firing"))
        top = body["processes"]
        self.assertGreater(top["cpu_window_s"], 0)  # the processes source's scan before is the baseline
        self.check_top(top, burner, comm)

        # the same on MQTT's alerts topic, and in the log line
        msg = wait_until(lambda: next((m for m in sub.json("tegrawatch/proc-test/alerts")
                                       if m["rule"] == "burner-busy" and m["transition"] == "firing"), None), 20)
        self.assertTrue(msg, "no firing burner-busy on MQTT")
        self.assertEqual(msg["processes"], top)
        line = a.stderr_lines("alert firing burner-busy")[0]
        self.assertIn("top CPU: ", line)
        self.assertIn("%s[%d] " % (comm, burner.pid), line)

        # Alertmanager's annotations and exec's variables: the same lists as one line each
        am = json.loads(hook.wait(1, "/am", timeout=20)[0].body)[0]["annotations"]
        self.assertIn("%s[%d] " % (comm, burner.pid), am["top_cpu"])
        self.assertTrue(am["top_memory"], am)
        env_files = wait_until(lambda: glob.glob(os.path.join(envs, "*.env")), 20)
        self.assertTrue(env_files, "the exec action did not run")
        with open(env_files[0]) as f:
            env = dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l)
        self.assertEqual(env["TEGRAWATCH_TOP_CPU"], am["top_cpu"])
        self.assertEqual(env["TEGRAWATCH_TOP_MEMORY"], am["top_memory"])

        # the recording keeps it on the sample the alert fired on, and the report of it names it again
        a.stop()
        fired = [s for s in harness.read_jsonl(record) if "processes" in s]
        self.assertEqual(len(fired), 1, "one sample carries what ran")
        self.assertEqual(fired[0]["processes"], top)
        out = os.path.join(self.d, "report.json")
        r = tegrawatch(["report", record, "-c", a.cfg, "--json", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            report = json.load(f)
        firing = [x for x in report["alerts"] if x["rule"] == "burner-busy" and x["transition"] == "firing"]
        self.assertEqual(len(firing), 1, report["alerts"])
        self.assertEqual(firing[0]["processes"], top)

    def test_pending_alert_is_the_baseline(self):
        """Without a processes: section nothing scans /proc until an alert starts pending: that scan is the
        baseline, and the CPU shares the firing event carries are over the pending time."""
        hook = self.receiver()
        burner, comm = self.start_burner()
        port = free_port()
        rules = ('actions:\n  hook:\n    type: webhook\n    format: json\n    url: %s\n'
                 'rules:\n  - name: early\n    metric: agent.samples_total\n    warning: 2\n    for: 2s\n'
                 '    actions: {warning: [hook]}\n' % hook.url("/hook"))
        self.agent([], port=port, config=self.config(port, rules))
        body = json.loads(hook.wait(1, "/hook", timeout=30)[0].body)
        self.assertEqual((body["rule"], body["transition"]), ("early", "firing"))
        top = body["processes"]
        self.assertGreaterEqual(top["cpu_window_s"], 1.5, top)  # about `for`, on a loaded machine a bit more
        self.assertLess(top["cpu_window_s"], 10, top)
        self.check_top(top, burner, comm)


if __name__ == "__main__":
    harness.init()
    harness.main()
