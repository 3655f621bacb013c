#!/usr/bin/env python3
"""The HTTP server, an agent of its own for each test (on a free 127.0.0.1
port): configurations it refuses (exit 78), token and basic authentication,
a slow agent's first event and its late /healthz.

Usage: test_web_setups.py TEGRAWATCH SOURCE_ROOT
"""
import base64
import http.client
import json
import os
import subprocess
import time

import harness
from harness import free_port, request, wait_until, web_config, write_file


class StartupTest(harness.TestCase):
    """Configurations the server refuses (exit 78) and authentication."""

    def setUp(self):
        super().setUp()
        self.dir = self.d
        self.cfg = self.path("tegrawatch.yaml")

    def run_refused(self, listen, extra=""):
        write_file(self.cfg, web_config(0, extra_web=extra, listen=listen))
        p = harness.tegrawatch(["run"] + harness.demo_args(10) + ["-c", self.cfg], timeout=60)
        self.assertEqual(p.returncode, 78, p.stderr)
        self.assertEqual(p.stdout, "", "no sample before the refusal")
        return p.stderr

    def test_non_loopback_without_auth(self):
        # never bound: the refusal comes before the socket
        for listen in ("0.0.0.0:9474", "[::]:9474", "192.0.2.10:9474"):
            err = self.run_refused(listen)
            self.assertIn("refusing to listen on " + listen + " without authentication", err)
            self.assertIn("web.token_file", err)

    def test_bad_web_settings(self):
        self.assertIn("listen: expected HOST:PORT", self.run_refused("jetson.lan:9474"))
        self.assertIn("must be set together", self.run_refused("127.0.0.1:0", "  basic_auth_user: admin\n"))
        missing = os.path.join(self.dir, "missing-token")
        self.assertIn("token_file " + missing, self.run_refused("127.0.0.1:0", f"  token_file: {missing}\n"))

    def test_token_and_basic_auth(self):
        token = os.path.join(self.dir, "token")
        password = os.path.join(self.dir, "password")
        for path, text in ((token, "t0ken-for-tests\n"), (password, "pa55word\n")):
            write_file(path, text)
        port = free_port()
        config = web_config(port, extra_web=f"  token_file: {token}\n  basic_auth_user: admin\n"
                                            f"  basic_auth_password_file: {password}\n")
        agent = self.agent(harness.demo_args(10), config=config, port=port, stdout=subprocess.DEVNULL)
        try:
            agent.wait_web("/api/v1/snapshot")
            status, hdrs, multi, body = request(port, "GET", "/api/v1/snapshot")
            self.assertEqual(status, 401)
            self.assertEqual(sorted(multi["www-authenticate"]),
                             ['Basic realm="tegrawatch", charset="UTF-8"', 'Bearer realm="tegrawatch"'])
            self.assertEqual(hdrs["x-content-type-options"], "nosniff")
            basic = lambda u, p: {"Authorization": "Basic " + base64.b64encode(f"{u}:{p}".encode()).decode()}
            cases = [
                ({}, 401),
                ({"Authorization": "Bearer t0ken-for-tests"}, 200),
                ({"Authorization": "bearer t0ken-for-tests"}, 200),
                ({"Authorization": "Bearer t0ken-for-test"}, 401),
                ({"Authorization": "Bearer t0ken-for-tests2"}, 401),
                ({"Authorization": "Bearer "}, 401),
                (basic("admin", "pa55word"), 200),
                (basic("admin", "pa55wore"), 401),
                (basic("admim", "pa55word"), 401),
                (basic("admin", ""), 401),
            ]
            # failed logins are limited per address (test_web_limits.py): each case from its own
            for i, (headers, code) in enumerate(cases):
                for path in ("/api/v1/snapshot", "/metrics", "/", "/healthz"):
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10,
                                                      source_address=(f"127.0.0.{20 + i}", 0))
                    conn.request("GET", path, headers=headers)
                    status = conn.getresponse().status
                    conn.close()
                    self.assertEqual(status, code, (headers, path))
        finally:
            agent.stop()

    def test_healthz_late(self):
        # one sample every 10 s against an interval of 1 s: late after 3 x 1 s + 1 s
        port = free_port()
        agent = self.agent(harness.demo_args(0.1), config=web_config(port), port=port, stdout=subprocess.DEVNULL)
        try:
            agent.wait_web("/api/v1/snapshot")
            self.assertEqual(request(port, "GET", "/healthz")[0], 200)
            # the next sample is 10 s away: late after 4 s, whenever the agent started
            def late_answer():
                answer = agent.get("/healthz")
                return answer if answer[0] == 503 else None
            late = wait_until(late_answer, 30, step=0.2)
            self.assertTrue(late, "/healthz never said late")
            status, hdrs, body = late
            self.assertEqual(status, 503)
            self.assertTrue(body.startswith(b"late: no sample for "), body)
            self.assertEqual(hdrs["content-type"], "text/plain; charset=utf-8")
        finally:
            agent.stop()


class FirstEventTest(harness.TestCase):
    """A slow agent (a sample every 5 s) whose stream had no reader: a new reader still gets the latest sample at
    once (rendered for it then), not the next one seconds later."""

    def test_new_reader_gets_latest_sample_at_once(self):
        port = free_port()
        agent = self.agent(harness.demo_args(0.2), config=web_config(port), port=port, stdout=subprocess.DEVNULL)
        agent.wait_web("/api/v1/snapshot")
        try:
            seq = wait_until(lambda: agent.snapshot()["seq"], 30, step=0.1)
            self.assertGreaterEqual(seq, 1)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            t0 = time.time()
            conn.request("GET", "/api/v1/events")
            resp = conn.getresponse()
            data = None
            while data is None:
                line = resp.readline().decode()
                self.assertTrue(line, "stream ended")
                if line.startswith("data: {\"seq\""):
                    data = json.loads(line[len("data: "):])
            took = time.time() - t0
            conn.close()
            # the next sample is up to 5 s away; the latest one comes at once
            self.assertLess(took, 2.5)
            self.assertIn(data["seq"], (seq, seq + 1))
        finally:
            agent.stop()


if __name__ == "__main__":
    harness.init()
    harness.main()
