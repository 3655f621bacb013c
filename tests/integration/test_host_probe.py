#!/usr/bin/env python3
"""host.probes (docs/metrics.md#probes) on real sockets, between two network namespaces this test makes: the
agent's (tw-pa, 10.99.0.1/24) and a peer's (tw-pb, 10.99.0.2/24), joined by a veth pair. The peer listens on
TCP port 8077 (accepts and closes); nothing listens on 8078 (the peer's kernel answers with a reset); the agent's
namespace listens on 8079 for a name looked up, localhost (/etc/hosts). 10.99.0.77 is a black hole: a permanent
neighbour entry sends its frames to a MAC no interface has, so the peer's kernel drops them without a word (no
reset, no ICMP error).

TcpTest: the open port is up with a round-trip time, the closed one down as fast as the open one answers, the
black hole down with every attempt lost, localhost up, a name no resolver knows down, the agent's ticks on time
meanwhile (no late tick, no gap), the shipped rule probe-down fires naming the probe, /metrics has
tegrawatch_probe_up{name} and tegrawatch_probe_rtt_seconds. CheckTest: a bad host entry is refused with its
place by `check` as by `run`.
IcmpTest (--icmp): ICMP echo through an unprivileged ping socket. A new namespace starts with
net.ipv4.ping_group_range "1 0" (no group): the probe says so once and its metrics stay absent; the test then
allows every group, and the probe answers (and the black hole loses every echo). Exit 77 only where the kernel
refuses a ping socket even then. Needs root (namespaces); skipped otherwise. The namespaces are deleted in
cleanup, always (the veth pair with them).

Usage: test_host_probe.py TEGRAWATCH SOURCE_ROOT [--icmp]
"""
import os
import subprocess
import sys

import harness
from harness import free_port

OPEN, CLOSED, HOLE, PEER, LOCAL = 8077, 8078, "10.99.0.77", "10.99.0.2", 8079

# a listener: accepts and closes, says "ready" once it listens (on "::": IPv6 and IPv4 both)
LISTEN = r"""
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
if ":" in sys.argv[1]:
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(64)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    c.close()
"""

# GET /metrics from the agent's web server on its namespace's loopback
GET = r"""
import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode())
"""

# can this namespace open a ping socket? (exit 0 if so)
PING_SOCKET = r"""
import socket
socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP).close()
"""


def run(*argv, check=True):
    return subprocess.run(argv, check=check, capture_output=True, timeout=20, text=True)


class Namespaces(harness.TestCase):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.skipTest("network namespaces need root")
        self.ns, self.peer = "tw-pa-%d" % os.getpid(), "tw-pb-%d" % os.getpid()
        for ns in (self.ns, self.peer):
            try:
                run("ip", "netns", "add", ns)
            except (subprocess.CalledProcessError, FileNotFoundError) as e:
                self.skipTest("cannot make a network namespace here: %s" % e)
            self.addCleanup(subprocess.run, ["ip", "netns", "del", ns], capture_output=True, timeout=20)
            self.in_ns(ns, "ip", "link", "set", "lo", "up")
        run("ip", "link", "add", "tw-pa", "netns", self.ns, "type", "veth", "peer", "name", "tw-pb", "netns", self.peer)
        self.in_ns(self.ns, "ip", "addr", "add", "10.99.0.1/24", "dev", "tw-pa")
        self.in_ns(self.peer, "ip", "addr", "add", PEER + "/24", "dev", "tw-pb")
        self.in_ns(self.ns, "ip", "link", "set", "tw-pa", "up")
        self.in_ns(self.peer, "ip", "link", "set", "tw-pb", "up")
        self.in_ns(self.ns, "ip", "neigh", "add", HOLE, "lladdr", "02:00:00:00:00:77", "dev", "tw-pa", "nud",
                   "permanent")
        self.listen(self.peer, PEER, OPEN)

    def listen(self, ns, address, port):
        listener = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", LISTEN, address, str(port)],
                                    stdout=subprocess.PIPE, text=True)
        self.addCleanup(listener.stdout.close)  # after the process ends (cleanups run last in, first out)
        self.addCleanup(harness.end_process, listener)
        self.assertEqual(listener.stdout.readline().strip(), "ready")

    def in_ns(self, ns, *argv, check=True):
        return run("ip", "netns", "exec", ns, *argv, check=check)

    def start(self, probes, port=None):
        rules = harness.src("configs", "rules.d", "host.yaml")
        web = 'web:\n  listen: "127.0.0.1:%d"\n' % port if port else ""
        items = "".join("    - {%s, interval: 1s, timeout: 500ms, window: 5}\n" % p for p in probes)
        config = ('agent:\n  state_file: ""\n%shost:\n  probes:\n%sinclude: ["%s"]\n' % (web, items, rules))
        return self.agent([], config=config, wrapper=("ip", "netns", "exec", self.ns))


class TcpTest(Namespaces):
    def test_open_closed_black_hole(self):
        port = free_port()
        self.listen(self.ns, "::", LOCAL)  # for a name looked up: localhost, from the namespace's /etc/hosts
        a = self.start(["name: open, host: %s, port: %d" % (PEER, OPEN),
                        "name: closed, host: %s, port: %d" % (PEER, CLOSED),
                        "name: hole, host: %s, port: %d" % (HOLE, OPEN),
                        "name: byname, host: localhost, port: %d" % LOCAL,
                        "name: nowhere, host: nowhere.invalid, port: %d" % LOCAL], port=port)
        sample = a.next_sample(lambda s: "probe.open.up" in s["metrics"], timeout=20, what="probe.open.up")
        first, first_seq = sample["metrics"], sample["seq"]
        self.assertEqual(first["probe.open.up"], 1)
        self.assertGreater(first["probe.open.rtt_ms"], 0)
        # refused: down as soon as the open port answered, not after a timeout
        self.assertEqual(first["probe.closed.up"], 0)
        self.assertNotIn("probe.closed.rtt_ms", first)

        # a whole window each (five attempts, one a second): the black hole lost them all, the closed port too,
        # the open one none
        m = a.next_sample(lambda s: s["seq"] >= first_seq + 6, timeout=30, what="six more samples")["metrics"]
        self.assertEqual((m["probe.hole.loss_pct"], m["probe.closed.loss_pct"], m["probe.open.loss_pct"]), (100, 100, 0))
        self.assertEqual(m["probe.hole.up"], 0)
        self.assertNotIn("probe.hole.rtt_ms", m)
        self.assertEqual(m["probe.open.up"], 1)
        self.assertGreater(m["probe.open.rtt_ms"], 0)
        self.assertLess(m["probe.open.rtt_ms"], 500)
        # names, looked up off the loop (getaddrinfo_a): one the namespace knows, one no resolver does
        self.assertEqual((m["probe.byname.up"], m["probe.byname.loss_pct"]), (1, 0))
        self.assertEqual((m["probe.nowhere.up"], m["probe.nowhere.loss_pct"]), (0, 100))
        self.assertIn("probe hole (10.99.0.77:8077): no answer: nothing came back within the timeout (500ms)",
                      a.stderr())
        self.assertIn("probe closed (10.99.0.2:8078): no answer: Connection refused", a.stderr())
        self.assertEqual(len(a.stderr_lines("probe hole")), 1, "said once, not at every attempt")

        # the shipped rule, naming the probe in its metric (the alert's label) and its summary
        a.wait_stderr("alert firing probe-down", timeout=60, count=2)
        lines = a.stderr_lines("alert firing probe-down")
        self.assertTrue(any("probe.hole.up" in line and "[warning]" in line for line in lines), lines)
        self.assertTrue(any("probe probe.closed.up gets no answer" in line for line in lines), lines)
        self.assertFalse(any("probe.open.up" in line for line in lines), lines)

        # sampling kept its pace while the black hole swallowed an attempt every second
        samples = a.samples()
        self.assertGreaterEqual(len(samples), 15)
        self.assertEqual(samples[-1]["metrics"]["agent.late_ticks_total"], 0)
        gaps = [b["time_ms"] - p["time_ms"] for p, b in zip(samples, samples[1:])]
        self.assertLess(max(gaps), 1900, "a tick waited on a probe: %s" % gaps)

        text = self.in_ns(self.ns, sys.executable, "-c", GET, str(port)).stdout
        self.assertIn('tegrawatch_probe_up{name="open"} 1', text)
        self.assertIn('tegrawatch_probe_up{name="hole"} 0', text)
        self.assertIn('tegrawatch_probe_rtt_seconds{name="open"}', text)
        self.assertIn('tegrawatch_probe_loss_ratio{name="hole"} 1', text)
        self.assertEqual(a.stop(), 0)


class IcmpTest(Namespaces):
    def test_ping_socket(self):
        self.assertEqual(self.in_ns(self.ns, "sysctl", "-n", "net.ipv4.ping_group_range").stdout.split(), ["1", "0"])
        a = self.start(["name: ping, host: " + PEER, "name: pinghole, host: " + HOLE,
                        "name: open, host: %s, port: %d" % (PEER, OPEN)])
        # refused a ping socket: said once at start, the metrics absent (never 0) while the TCP probe reports
        a.wait_stderr("probe ping (10.99.0.2, ICMP echo): the kernel refuses this agent", timeout=20)
        a.wait_stderr("probe pinghole (10.99.0.77, ICMP echo): the kernel refuses", timeout=20)
        self.assertIn('ping_group_range is "1 0"', a.stderr())
        first = a.next_sample(lambda s: "probe.open.up" in s["metrics"], timeout=20, what="probe.open.up")
        a.next_sample(lambda s: s["seq"] >= first["seq"] + 2, timeout=20, what="two more samples")
        self.assertFalse([k for s in a.samples() for k in s["metrics"] if k.startswith("probe.ping")])

        self.in_ns(self.ns, "sysctl", "-w", "net.ipv4.ping_group_range=0 2147483647")
        m = a.wait_metrics(lambda m: m.get("probe.ping.up") == 1 and m.get("probe.pinghole.loss_pct") == 100,
                           "echo replies, and the black hole's losses", timeout=30)
        self.assertGreater(m["probe.ping.rtt_ms"], 0)
        self.assertLess(m["probe.ping.rtt_ms"], 500)
        self.assertEqual(m["probe.ping.loss_pct"], 0)
        self.assertEqual(m["probe.pinghole.up"], 0)
        self.assertNotIn("probe.pinghole.rtt_ms", m)
        self.assertEqual(a.stop(), 0)


class CheckTest(harness.TestCase):
    def test_bad_entry_refused_with_its_place(self):
        cfg = self.path("bad.yaml", 'host:\n  probes:\n    - {name: a, host: "foo bar", port: 1883}\n')
        for command in ("check", "run"):
            r = harness.tegrawatch([command, "-c", cfg])
            self.assertEqual(r.returncode, 78, r.stderr)  # EX_CONFIG
            self.assertIn("%s:3:23: host: 'foo bar' is no address or host name" % cfg, r.stderr)


def kernel_refuses_ping_sockets():
    """True where even a group range holding every group gives no ping socket (a kernel without them)."""
    ns = "tw-pq-%d" % os.getpid()
    if os.geteuid() != 0 or run("ip", "netns", "add", ns, check=False).returncode != 0:
        return False  # the test skips itself, saying why
    try:
        run("ip", "netns", "exec", ns, "sysctl", "-w", "net.ipv4.ping_group_range=0 2147483647", check=False)
        return run("ip", "netns", "exec", ns, sys.executable, "-c", PING_SOCKET, check=False).returncode != 0
    finally:
        run("ip", "netns", "del", ns, check=False)


if __name__ == "__main__":
    harness.init()
    icmp = harness.flag("--icmp")
    if icmp and kernel_refuses_ping_sockets():
        print("skipped: this kernel gives no ICMP echo socket (socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)) even to a "
              "group in net.ipv4.ping_group_range")
        sys.exit(77)
    sys.argv += ["IcmpTest"] if icmp else ["TcpTest", "CheckTest"]
    harness.main()
