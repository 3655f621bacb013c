#!/usr/bin/env python3
"""`tegrawatch check` refuses every configuration that `run` refuses, with
FILE:LINE:COL and exit 78, because both run the same validate() of each
module's section (web, mqtt).

Usage: test_check.py TEGRAWATCH SOURCE_ROOT
"""
import os
import re

import harness
from harness import tegrawatch

EX_CONFIG = 78


class CheckMatchesRun(harness.TestCase):
    def setUp(self):
        super().setUp()
        self.dir = self.d
        self.cfg = os.path.join(self.dir, "tegrawatch.yaml")
        self.secret = os.path.join(self.dir, "secret")
        with open(self.secret, "w") as f:
            f.write("s3cret\n")
        os.chmod(self.secret, 0o600)

    def write(self, body):
        with open(self.cfg, "w") as f:
            f.write('agent:\n  state_file: ""\n' + body)

    def both(self, env=None):
        check = tegrawatch(["check", "-c", self.cfg], env)
        run = tegrawatch(["run", "-c", self.cfg, "--replay", harness.src("configs/demo/tegrastats.log"),
                          "--speed", "0", "--count", "1"], env)
        return check, run

    def refused(self, body, line, col, words, env=None, where=None):
        """check and run both exit 78, and check names WHERE:LINE:COL and WORDS."""
        self.write(body)
        check, run = self.both(env)
        self.assertEqual(check.returncode, EX_CONFIG, check.stdout + check.stderr)
        self.assertEqual(run.returncode, EX_CONFIG, run.stdout + run.stderr)
        loc = "%s:%d:%d: " % (where or self.cfg, line, col) if line else "%s: " % where
        self.assertIn(loc, check.stderr)
        self.assertIn(words, check.stderr)
        # run says the same, from the same code
        self.assertIn(loc, run.stderr)
        self.assertIn(words, run.stderr)
        return check.stderr

    def test_listen_not_an_address(self):
        self.refused("web:\n  listen: jetson.lan:9474\n", 4, 11, "web.listen: expected HOST:PORT")

    def test_listen_everywhere_without_auth(self):
        self.refused("web:\n  listen: 0.0.0.0:9474\n", 4, 11, "without authentication")

    def test_missing_token_file(self):
        missing = os.path.join(self.dir, "no-token")
        self.refused("web:\n  listen: 127.0.0.1:0\n  token_file: %s\n" % missing, 5, 15,
                     "web.token_file %s: No such file or directory" % missing)

    def test_basic_auth_missing_password_file(self):
        missing = os.path.join(self.dir, "no-password")
        self.refused("web:\n  listen: 127.0.0.1:0\n  basic_auth_user: admin\n  basic_auth_password_file: %s\n"
                     % missing, 6, 29, "web.basic_auth_password_file %s" % missing)

    def test_basic_auth_user_without_password_file(self):
        self.refused("web:\n  listen: 127.0.0.1:0\n  basic_auth_user: admin\n", 5, 20, "must be set together")

    def test_mqtt_certificate_without_key(self):
        self.refused("mqtt:\n  host: 127.0.0.1\n  tls: true\n  cert_file: %s\n" % self.secret, 6, 14,
                     "mqtt.cert_file and mqtt.key_file go together")

    def test_mqtt_missing_password_file(self):
        missing = os.path.join(self.dir, "no-mqtt-password")
        self.refused("mqtt:\n  host: 127.0.0.1\n  password_file: %s\n" % missing, 5, 18,
                     "mqtt.password_file: cannot read %s" % missing)

    def test_bad_processes_entry(self):
        # the regex is checked when the file is read, never when a scan meets it
        self.refused("processes:\n  - name: recorder\n    cmdline: 'python3 (record'\n", 5, 14,
                     "processes[0].cmdline: 'python3 (record' is no regular expression")
        self.refused("processes:\n  - name: app\n    pidfile: run/app.pid\n", 5, 14,
                     "processes[0].pidfile: 'run/app.pid' is no absolute path")

    def test_environment_override_is_located(self):
        self.refused("web:\n  token_file: \"\"\n", 0, 0, "without authentication",
                     env={"TEGRAWATCH_WEB_LISTEN": "0.0.0.0:9474"}, where="environment:TEGRAWATCH_WEB_LISTEN")

    def test_every_mistake_in_one_run(self):
        missing = os.path.join(self.dir, "missing")
        err = self.refused("web:\n  listen: 0.0.0.0:9474\n  token_file: %s\n"
                           "mqtt:\n  host: 127.0.0.1\n  key_file: %s\n" % (missing, self.secret),
                           5, 15, "web.token_file")
        self.assertIn("mqtt.cert_file and mqtt.key_file go together", err)
        self.assertEqual(len(re.findall(r"^%s:\d+:\d+: " % re.escape(self.cfg), err, re.M)), 2, err)

    def test_secrets_as_systemd_credentials(self):
        creds = os.path.join(self.dir, "credentials")
        os.mkdir(creds)
        with open(os.path.join(creds, "web-token"), "w") as f:
            f.write("tok3n\n")
        self.write("web:\n  listen: 0.0.0.0:0\n  token_file: credential:web-token\n")
        ok = tegrawatch(["check", "-c", self.cfg], {"CREDENTIALS_DIRECTORY": creds})
        self.assertEqual(ok.returncode, 0, ok.stderr)
        # the credential is looked up where systemd put it, and must exist there
        self.refused("web:\n  listen: 0.0.0.0:0\n  token_file: credential:other\n", 5, 15,
                     "web.token_file %s/other: No such file or directory" % creds,
                     env={"CREDENTIALS_DIRECTORY": creds})
        self.refused("web:\n  listen: 0.0.0.0:0\n  token_file: credential:web-token\n", 5, 15,
                     "$CREDENTIALS_DIRECTORY is not set")
        self.refused("mqtt:\n  host: 127.0.0.1\n  password_file: credential:../etc/shadow\n", 5, 18,
                     "a credential is named without '/'", env={"CREDENTIALS_DIRECTORY": creds})

    def test_good_configuration_passes(self):
        self.write("web:\n  listen: 0.0.0.0:0\n  token_file: %s\nmqtt:\n  host: \"\"\n" % self.secret)
        check = tegrawatch(["check", "-c", self.cfg])
        self.assertEqual(check.returncode, 0, check.stderr)
        self.assertIn(": ok,", check.stdout)


    # ---- finding 9: the memory budget against agent.memory_max ----

    def test_history_over_memory_max_is_refused(self):
        """A week of every sample at 1 Hz for up to 512 metrics (1.2 GiB) cannot fit 64 MiB: located at web.history."""
        err = self.refused("  memory_max: 64M\nweb:\n  listen: 127.0.0.1:0\n  history: 7d\n", 6, 12,
                           "web.history: the memory budget, 1200.1 MiB")
        self.assertIn("exceeds agent.memory_max, 64.0 MiB", err)
        # the default hour and day fit 24 MiB; without the day, or at a slower interval, 16 MiB
        for body in ("  memory_max: 24M\nweb:\n  listen: 127.0.0.1:0\n  history: 1h\n",
                     "  memory_max: 16M\nweb:\n  listen: 127.0.0.1:0\n  history: 1h\n  minute_history: 0\n",
                     "  memory_max: 16M\n  interval: 10m\nweb:\n  listen: 127.0.0.1:0\n  history: 7d\n"):
            self.write(body)
            ok = tegrawatch(["check", "-c", self.cfg])
            self.assertEqual(ok.returncode, 0, body + ok.stderr)
        self.refused("  memory_max: 16M\nweb:\n  listen: 127.0.0.1:0\n  history: 1h\n", 6, 12,
                     "web.history: the memory budget, 21.3 MiB")

    def test_memory_spool_over_memory_max_is_refused(self):
        self.refused("  memory_max: 24M\nmqtt:\n  host: 127.0.0.1\n  spool_records: 10000\n", 6, 18,
                     "mqtt.spool_records: the memory budget")
        # with a spool file, spool_records costs no memory
        self.write("  memory_max: 24M\nmqtt:\n  host: 127.0.0.1\n  spool_records: 10000\n"
                   "  spool_file: %s/spool\n" % self.dir)
        ok = tegrawatch(["check", "-c", self.cfg])
        self.assertEqual(ok.returncode, 0, ok.stderr)

    def test_memory_max_syntax(self):
        self.refused("  memory_max: 64 megs\n", 3, 15, "agent.memory_max: expected a size like 64M")
        for value in ("none", "auto", "64M", "64MiB", "1G", "67108864"):
            self.write("  memory_max: %s\n" % value)
            ok = tegrawatch(["check", "-c", self.cfg])
            self.assertEqual(ok.returncode, 0, value + ok.stderr)

    def test_bad_host_globs_are_refused_at_their_place(self):
        # a mount point glob starts with '/'; an interface glob holds no '/', ':' or blank
        self.refused("host:\n  filesystems:\n    include: [\"/\", \"data/*\"]\n", 5, 14,
                     "host.filesystems.include: 'data/*' is no mount point")
        self.refused("host:\n  filesystems:\n    exclude:\n      - relative\n", 6, 7,
                     "host.filesystems.exclude: 'relative' is no mount point")
        self.refused("host:\n  network:\n    include: [\"eth0\", \"eth0:1\"]\n", 5, 14,
                     "host.network.include: 'eth0:1' is no interface name")
        self.refused("host:\n  network:\n    exclude: [\"wlan 0\"]\n", 5, 14,
                     "host.network.exclude: 'wlan 0' is no interface name")
        self.refused("host:\n  filesystems:\n    trend: 10s\n", 5, 12, "trend: must be between 1m and 1d")
        # the same globs, written right, pass
        self.write("host:\n  filesystems:\n    include: [\"/\", \"/data/*\"]\n    trend: 2h\n"
                   "  network:\n    include: [\"eth0\", \"wlan*\", \"eth0.100\"]\n    exclude: [\"ifb*\"]\n")
        ok = tegrawatch(["check", "-c", self.cfg])
        self.assertEqual(ok.returncode, 0, ok.stderr)

    def test_budget_in_log_and_metrics(self):
        self.write("  memory_max: 64M\nweb:\n  listen: \"\"\nmqtt:\n  host: 127.0.0.1\n  port: 1\n")
        run = tegrawatch(["run", "-v", "-c", self.cfg, "--demo", "--speed", "0", "--count", "2", "--json"])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("memory budget: 18.5 MiB (base 4.0, web history and connections 0.0, MQTT spool and "
                      "messages in flight 14.5, webhook queues 0.0) of 64.0 MiB (agent.memory_max)", run.stderr)
        import json
        m = json.loads(run.stdout.splitlines()[-1])["metrics"]
        self.assertEqual(m["agent.memory_max_bytes"], 64 << 20)
        self.assertEqual(m["agent.memory_budget_mqtt_bytes"], (3600 + 100) * 4096)
        self.assertEqual(m["agent.memory_budget_web_bytes"], 0)
        self.assertEqual(m["agent.memory_budget_bytes"], (4 << 20) + (3600 + 100) * 4096)


if __name__ == "__main__":
    harness.init()
    harness.main()
