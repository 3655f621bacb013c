#!/usr/bin/env python3
"""Goal F4, no secret leaks: every secret the configuration can hold is set to
its own canary, the real agent runs on the demo board at debug level with MQTT
(username and password, TLS with a client key, a broker outage with a spool
file), the web server (token and basic auth), a signed webhook with a bearer
token and a queue file, an alert state file, `check` of the configuration and
of a broken copy, a SIGTERM stop and a SIGABRT crash. Then every artefact
(each file under the temporary directory, the captured outputs, every MQTT
payload, HTTP response and webhook request) is searched, binary-safe, for each
canary and its base64, hex, URL and JSON encodings. Allowed: the secret files
themselves, and the bearer token in the Authorization header the webhook
receiver gets (that is where it is meant to go).

Everything runs on 127.0.0.1 only.

Usage: test_secrets.py TEGRAWATCH SOURCE_ROOT
(exit 77 = skipped without mosquitto, mosquitto_passwd, openssl, paho).
"""
import base64
import hashlib
import hmac
import http.client
import os
import resource
import signal
import subprocess
import time
import urllib.parse

import harness
from harness import EARLY_RULE, free_port, wait_until, write_file

# Distinct canaries; '+', '/' and '=' make their URL and JSON forms differ from the text.
MQTT_FILE_PW = b"CANARY+mqtt/file=Q7x2v"
MQTT_ENV_PW = b"CANARY+mqtt/env=K9p4w"
WEB_TOKEN = b"CANARY+web/token=R3m8y"
WEB_PASSWORD = b"CANARY+web/basic=W5n1z"
HOOK_TOKEN = b"CANARY+hook/bearer=T6v0a"
HOOK_KEY = b"CANARY+hook/signing=Z8c3b"  # the bytes a whsec_ secret encodes
HOOK_SECRET = b"whsec_" + base64.b64encode(HOOK_KEY)
# a webhook secret file the agent refuses (not base64): the error must not quote it
BAD_HOOK_SECRET = b"whsec_CANARY+hook/unparsable=M2j5c!"


def b64_forms(raw):
    """raw's base64 at each of the three alignments inside a longer base64 text."""
    forms = []
    for pad in range(3):
        enc = base64.b64encode(b"\0" * pad + raw)
        start = 4 if pad else 0
        end = (pad + len(raw)) // 3 * 4
        forms.append(enc[start:end])
    forms.append(base64.urlsafe_b64encode(raw).rstrip(b"="))
    return forms


def encodings(raw):
    """Every form of RAW searched for, by name."""
    forms = {"raw": [raw], "base64": b64_forms(raw), "hex": [raw.hex().encode(), raw.hex().upper().encode()],
             "url": [urllib.parse.quote(raw, safe="").encode(), urllib.parse.quote_plus(raw).encode()],
             "json": [raw.replace(b"/", b"\\/")]}
    return {name: sorted(set(f for f in fs if len(f) >= 8)) for name, fs in forms.items()}


def count(data, needle):
    n, i = 0, data.find(needle)
    while i >= 0:
        n += 1
        i = data.find(needle, i + 1)
    return n


class SecretsTest(harness.TestCase):
    def setUp(self):
        super().setUp()
        self.artefacts = {}  # name -> bytes captured outside the files (responses, payloads, requests)

    def secret(self, name, data):
        p = self.path(name, data + b"\n")
        self.secret_files.append(p)
        return p

    def make_tls(self):
        """A CA, a broker certificate for 127.0.0.1 and the agent's client certificate and key."""
        d = self.d
        harness.make_tls(d)
        self.secret_files.append(d + "/client.key")
        with open(d + "/client.key", "rb") as f:
            pem = f.read()
        body = b"".join(line.strip() for line in pem.splitlines() if line and not line.startswith(b"-----"))
        der = base64.b64decode(body)
        # the key's private scalar (in PKCS#8 or SEC1 DER: ECPrivateKey's 02 01 01 04 20 <32 bytes>) and its PEM text
        at = der.find(b"\x02\x01\x01\x04\x20")
        self.assertGreater(at, 0)
        # the scalar's own characters of the PEM text, cut where PEM wraps its lines (64)
        first, last = -(-(at + 5) // 3) * 4, (at + 37) // 3 * 4
        cuts = sorted({first, last} | set(range(64, last, 64)) - set(range(0, first)))
        pem = [body[a:b] for a, b in zip(cuts, cuts[1:]) if b - a >= 12]
        self.assertTrue(pem)
        return der[at + 5:at + 37], pem

    def config(self, mqtt_port, web_port, hook_url, password_file=True, broken=False):
        c = self.path
        mqtt = ("  host: 127.0.0.1\n  port: %d\n  device_id: canary\n  keepalive: 5s\n"
                "  backoff_base: 100ms\n  backoff_cap: 1s\n  tls: true\n  ca_file: %s\n"
                "  cert_file: %s\n  key_file: %s\n  spool_file: %s\n"
                % (mqtt_port, c("ca.pem"), c("client.pem"), c("client.key"), c("mqtt.spool")))
        if password_file:
            mqtt += "  username: agent1\n  password_file: %s\n" % c("mqtt.password")
        else:
            mqtt += "  username: agent2\n"
        token, hook_secret = c("web.token"), c("hook.secret")
        if broken:
            # a typo next to a secret, a token file others can read, a secret that is not base64
            mqtt = mqtt.replace("password_file", "pasword_file")
            token, hook_secret = c("web.token.0644"), c("hook.secret.bad")
        return ("agent:\n  log_level: debug\n  state_file: %s\n  board_name: canary-board\n"
                "web:\n  listen: 127.0.0.1:%d\n  token_file: %s\n  basic_auth_user: admin\n"
                "  basic_auth_password_file: %s\n"
                "mqtt:\n%s"
                "actions:\n  hook:\n    type: webhook\n    format: json\n    url: %s\n    secret_file: %s\n"
                "    bearer_token_file: %s\n    queue_file: %s\n"
                "notify:\n  warning: [log, hook]\n  critical: [log, hook]\n%s"
                % (c("alerts.state"), web_port, token, c("web.password"), mqtt, hook_url, hook_secret,
                   c("hook.token"), c("hook.queue"), EARLY_RULE))

    def start_agent(self, name, cfg, env_pw=True, speed="20"):
        env = {"TEGRAWATCH_MQTT_PASSWORD": MQTT_ENV_PW.decode()} if env_pw else {}
        return self.agent(["--demo", "--speed", speed, "-c", cfg], name=name, global_args=("-v", "-v"), env=env,
                          cwd=self.d,
                          # as the unit's LimitCORE=0: a core file is the process's memory
                          preexec=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))

    def web(self, port, path, headers, read_s=None):
        """One request; the status line, headers and body (an event stream is read for READ_S seconds)."""
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            conn.request("GET", path, headers=headers)
            r = conn.getresponse()
            head = ("%d %s\n" % (r.status, r.reason)).encode() + str(r.headers).encode()
            if read_s is None or r.status != 200:
                return r.status, head + r.read()
            body, end = b"", time.monotonic() + read_s
            conn.sock.settimeout(0.5)
            while time.monotonic() < end and body.count(b"\n\n") < 5:
                try:
                    chunk = r.read1(65536)
                except OSError:
                    continue
                if not chunk:
                    break
                body += chunk
            return r.status, head + body
        finally:
            conn.close()

    def check_cmd(self, cfg):
        r = subprocess.run([BIN, "-v", "-v", "check", "-c", cfg], capture_output=True, timeout=60)
        return r.returncode, r.stdout + r.stderr

    def test_no_canary_in_any_artefact(self):
        self.secret_files = []
        scalar, key_pem = self.make_tls()
        self.secret("mqtt.password", MQTT_FILE_PW)
        self.secret("web.token", WEB_TOKEN)
        self.secret("web.password", WEB_PASSWORD)
        self.secret("hook.token", HOOK_TOKEN)
        self.secret("hook.secret", HOOK_SECRET)
        self.secret("hook.secret.bad", BAD_HOOK_SECRET)
        open_token = self.secret("web.token.0644", WEB_TOKEN)
        os.chmod(open_token, 0o644)

        # the broker: a plain listener for the watcher, TLS with client certificates for the agent
        pw = self.path("broker.passwd")
        subprocess.run(["mosquitto_passwd", "-b", "-c", pw, "agent1", MQTT_FILE_PW.decode()], check=True)
        subprocess.run(["mosquitto_passwd", "-b", pw, "agent2", MQTT_ENV_PW.decode()], check=True)
        subprocess.run(["mosquitto_passwd", "-b", pw, "watcher", "watcher-pw"], check=True)
        os.chmod(pw, 0o644)
        tls_port = free_port()
        broker = self.broker(extra="allow_anonymous false\npassword_file %s\n"
                                   "listener %d 127.0.0.1\ncafile %s\ncertfile %s\nkeyfile %s\n"
                                   "require_certificate true\n"
                             % (pw, tls_port, self.path("ca.pem"), self.path("server.pem"), self.path("server.key")))
        sub = self.sub(broker.port, ["#"], client_id="watcher", clean=False, user="watcher", password="watcher-pw")
        receiver = self.receiver()
        hook_url = receiver.url("/hook")

        web_port = free_port()
        cfg = self.path("tegrawatch.yaml")
        write_file(cfg, self.config(tls_port, web_port, hook_url))
        broken = self.path("broken.yaml")
        write_file(broken, self.config(tls_port, web_port, hook_url, broken=True))
        rc, out = self.check_cmd(cfg)
        self.assertEqual(rc, 0, out)
        self.artefacts["check"] = out
        rc, out = self.check_cmd(broken)
        self.assertEqual(rc, 78, out)
        for word in (b"pasword_file", b"chmod 600", b"hook.secret.bad"):
            self.assertIn(word, out)
        self.artefacts["check-broken"] = out

        agent = self.start_agent("run", cfg)
        self.assertTrue(wait_until(lambda: sub.all("tegrawatch/canary/state"), 30), "no state over TLS")
        receiver.wait(1)  # a webhook request

        # every endpoint with the token, basic auth, wrong credentials and none
        good = {"Authorization": "Bearer " + WEB_TOKEN.decode()}
        basic = {"Authorization": "Basic " + base64.b64encode(b"admin:" + WEB_PASSWORD).decode()}
        wrong = [{"Authorization": "Bearer " + WEB_TOKEN.decode()[:-1]},
                 {"Authorization": "Bearer " + WEB_TOKEN.decode() + "x"},
                 {"Authorization": "Basic " + base64.b64encode(b"admin:" + WEB_PASSWORD[:-1]).decode()},
                 {"Authorization": "Basic " + base64.b64encode(b"root:" + WEB_PASSWORD).decode()},
                 {"Authorization": "Bearer " + MQTT_FILE_PW.decode()}, {}]
        paths = ["/", "/api/v1/snapshot", "/api/v1/history?metric=temp.cpu_c", "/api/v1/history",
                 "/api/v1/alerts", "/api/v1/events", "/metrics", "/healthz", "/no-such-page"]
        for i, h in enumerate([good, basic] + wrong):
            for p in paths:
                status, data = self.web(web_port, p, h, 3 if p == "/api/v1/events" else None)
                # after 10 failed logins from one address the answer is 429 (docs/http.md)
                expect = [{"/api/v1/history": 400, "/no-such-page": 404}.get(p, 200)] if i < 2 else [401, 429]
                self.assertIn(status, expect, (p, h, data[:300]))
                self.artefacts["GET %s #%d" % (p, i)] = data
        self.assertIn(b"401 ", self.artefacts["GET / #2"])
        self.assertIn(b"429 ", self.artefacts["GET /healthz #6"])
        self.assertIn(b"event:", self.artefacts["GET /api/v1/events #0"])

        # a broker outage: the spool file and its .seq fill, then drain
        broker.stop()
        self.assertTrue(wait_until(lambda: os.path.exists(self.path("mqtt.spool.seq")) and
                                   os.path.getsize(self.path("mqtt.spool")) > 0, 30), agent.stderr())
        broker.start()
        self.assertTrue(wait_until(lambda: any(x["metrics"]["agent.mqtt_connects_total"] >= 2
                                               for x in sub.json("tegrawatch/canary/state")), 30), agent.stderr())
        self.assertEqual(agent.stop(timeout=15), 0)
        self.assertTrue(os.path.getsize(self.path("mqtt.spool")) > 0)
        self.assertTrue(os.path.exists(self.path("alerts.state")))
        self.assertTrue(os.path.exists(self.path("hook.queue")))

        # the password from the environment (no password_file), then a crash: the agent installs no
        # handler for SIGABRT or SIGSEGV, so whatever it printed before is the crash output
        env_cfg = self.path("env.yaml")
        write_file(env_cfg, self.config(tls_port, web_port, hook_url, password_file=False))
        before = len(sub.all("tegrawatch/canary/state"))
        crash = self.start_agent("crash", env_cfg)
        self.assertTrue(wait_until(lambda: len(sub.all("tegrawatch/canary/state")) > before + 5, 20),
                        "no state with the environment's password")
        n = len(sub.all("tegrawatch/canary/status"))
        self.assertEqual(crash.stop(signal.SIGABRT, timeout=15), -signal.SIGABRT)
        sub.wait_payload("tegrawatch/canary/status", "offline", after=n)  # its last will

        # the webhook: signed with the secret (the signature verifies), the bearer token where it belongs
        for req in receiver.got():
            line, headers, body = req.line, req.raw_headers, req.body
            h = {k.lower(): v for k, v in headers}
            self.assertEqual(h["authorization"], "Bearer " + HOOK_TOKEN.decode())
            signed = ("%s.%s." % (h["webhook-id"], h["webhook-timestamp"])).encode() + body
            sig = base64.b64encode(hmac.new(HOOK_KEY, signed, hashlib.sha256).digest()).decode()
            self.assertIn("v1," + sig, h["webhook-signature"].split())
            kept = [(k, v) for k, v in headers if not (k.lower() == "authorization" and
                                                       v == "Bearer " + HOOK_TOKEN.decode())]
            self.artefacts["webhook %s #%d" % (line, len(self.artefacts))] = \
                (line + "\n" + "".join("%s: %s\n" % kv for kv in kept)).encode() + body
        for i, (_t, topic, payload, retain) in enumerate(sub.all()):
            self.artefacts["mqtt #%d %s%s" % (i, topic, " (retained)" if retain else "")] = \
                topic.encode() + b"\n" + payload
        sub.close()
        retained = self.sub(broker.port, ["#"], user="watcher", password="watcher-pw")
        retained.sync("tegrawatch-test/sync")  # the retained messages came before the marker
        for i, (_t, topic, payload, _r) in enumerate(retained.all()):
            self.artefacts["mqtt retained #%d %s" % (i, topic)] = topic.encode() + b"\n" + payload
        retained.close()
        broker.stop()

        self.scan(scalar, key_pem)

    def scan(self, scalar, key_pem):
        canaries = {"mqtt password_file": MQTT_FILE_PW, "TEGRAWATCH_MQTT_PASSWORD": MQTT_ENV_PW,
                    "web token_file": WEB_TOKEN, "web basic_auth_password_file": WEB_PASSWORD,
                    "webhook bearer_token_file": HOOK_TOKEN, "webhook signing key": HOOK_KEY,
                    "webhook secret_file text": HOOK_SECRET, "webhook refused secret": BAD_HOOK_SECRET,
                    "mqtt key_file scalar": scalar}
        needles = {name: encodings(raw) for name, raw in canaries.items()}
        needles["mqtt key_file scalar"]["PEM"] = key_pem
        skip = set(os.path.realpath(p) for p in self.secret_files)
        items = dict(self.artefacts)
        for root, _dirs, files in os.walk(self.d):
            for f in files:
                p = os.path.join(root, f)
                if os.path.realpath(p) in skip or os.path.islink(p):
                    continue
                with open(p, "rb") as fh:
                    items["file " + os.path.relpath(p, self.d)] = fh.read()
        for must in ("file run.err", "file run.jsonl", "file crash.err", "file mqtt.spool", "file mqtt.spool.seq",
                     "file hook.queue", "file alerts.state", "file broker.log"):
            self.assertIn(must, items)
        # the most verbose level was in force, and the crash left its output
        self.assertIn(b"tegrawatch: debug: ", items["file run.err"])
        self.assertIn(b"tegrawatch: debug: ", items["file crash.err"])
        total = sum(len(v) for v in items.values())
        kinds = ("file ", "GET ", "mqtt ", "webhook ", "check")
        print("F4: " + ", ".join("%s%d" % (k.strip() + " ", sum(1 for a in items if a.startswith(k))) for k in kinds))
        hits, where = {}, []
        for name, forms in needles.items():
            hits[name] = 0
            for enc, fs in forms.items():
                for needle in fs:
                    for art, data in items.items():
                        n = count(data, needle)
                        if n:
                            hits[name] += n
                            where.append("%s (%s) in %s: %d" % (name, enc, art, n))
        print("F4: %d artefacts checked (%d files, %d outputs, payloads, responses and requests), %d bytes scanned, "
              "%d canaries in %d forms" % (len(items), sum(1 for k in items if k.startswith("file ")),
                                           len(self.artefacts), total, len(needles),
                                           sum(len(fs) for f in needles.values() for fs in f.values())))
        for name, n in hits.items():
            print("F4:   %-30s %d hits" % (name, n))
        self.assertEqual(where, [], "canaries found:\n" + "\n".join(where))


if __name__ == "__main__":
    BIN, SRC = harness.init(needs=("mosquitto", "mosquitto_passwd", "openssl"))
    harness.main()
