#!/usr/bin/env python3
"""The host source's network interfaces (docs/metrics.md#the-host) on real
kernel files, inside a network namespace this test makes: a veth pair
tw-a / tw-b.1 in it (the second name has a '.', so its metric segment is
tw_b_1 and /metrics carries the real name as the `device` label). The agent
runs in the namespace (`ip netns exec`) with host.network.include naming
both ends; raw Ethernet frames sent out of tw-a arrive on tw-b.1 (two
addresses in one namespace would talk over its loopback, not the veth).
A second pair tw-c / tw-d is never up: tw-c set up without a carrier (its
peer down, as a USB gadget bridge without a host), tw-d left down (as an
unconfigured CAN bus). Then `ip link set tw-a down`: network.tw_a.up goes to
0, network.tw_a.link_lost to 1 and the shipped network-link-down rule fires
for tw-a and tw-b.1 only: tw-c and tw-d show up 0 and link_lost 0, and raise
nothing. A reload keeps the links' history and the alerts; tw-a up again
resolves them; the pair deleted and made again: up again (the link files
the agent keeps open are the old devices'). No packet leaves the namespace. Needs root; skipped
otherwise. The namespace is deleted in cleanup, always (its veth pairs with
it).

Usage: test_host_net.py TEGRAWATCH SOURCE_ROOT
"""
import json
import os
import signal
import subprocess
import sys

import harness
from harness import free_port

A, B = "tw-a", "tw-b.1"
SEG_A, SEG_B = "tw_a", "tw_b_1"
C, D = "tw-c", "tw-d"  # never up: SEG_C, SEG_D are tw_c, tw_d
SEG_C, SEG_D = "tw_c", "tw_d"

# three broadcast Ethernet frames out of tw-a (local experimental EtherType 0x88b5, IEEE 802)
SEND = r"""
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + b"tegrawatch".ljust(50, b"\0")
for _ in range(3):
    s.send(frame)
"""

# GET PATH (/metrics by default) from the agent's web server on the namespace's loopback
GET = r"""
import sys, urllib.request
path = sys.argv[2] if len(sys.argv) > 2 else "/metrics"
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:%s%s" % (sys.argv[1], path), timeout=10).read().decode())
"""


def run(*argv):
    return subprocess.run(argv, check=True, capture_output=True, timeout=20, text=True).stdout


class NetworkTest(harness.TestCase):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.skipTest("a network namespace needs root")
        self.ns = "tw-test-%d" % os.getpid()
        try:
            run("ip", "netns", "add", self.ns)
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            self.skipTest("cannot make a network namespace here: %s" % e)
        self.addCleanup(subprocess.run, ["ip", "netns", "del", self.ns], capture_output=True, timeout=20)
        self.ns_run("ip", "link", "set", "lo", "up")
        self.ns_run("ip", "link", "add", A, "type", "veth", "peer", "name", B)
        self.ns_run("ip", "link", "set", A, "up")
        self.ns_run("ip", "link", "set", B, "up")
        self.ns_run("ip", "link", "add", C, "type", "veth", "peer", "name", D)
        self.ns_run("ip", "link", "set", C, "up")

    def ns_run(self, *argv):
        return run("ip", "netns", "exec", self.ns, *argv)

    def test_counters_then_link_down(self):
        port = free_port()
        rules = harness.src("configs", "rules.d", "host.yaml")
        config = ('agent:\n  state_file: ""\nweb:\n  listen: "127.0.0.1:%d"\n'
                  'host:\n  network:\n    include: ["%s", "%s", "%s", "%s"]\n'
                  'include: ["%s"]\n' % (port, A, B, C, D, rules))
        a = self.agent([], config=config, wrapper=("ip", "netns", "exec", self.ns))

        def nets(m):
            return sorted({k.split(".")[1] for k in m if k.startswith("network.")})
        segs = (SEG_A, SEG_B, SEG_C, SEG_D)
        m = a.wait_metrics(lambda m: all("network.%s.up" % g in m for g in segs), "network.*.up of all four", timeout=20)
        self.assertEqual(nets(m), sorted(segs), "exactly the included interfaces (no lo)")
        a.wait_metric("network.%s.up" % SEG_B, lambda v: v == 1, timeout=15)
        m = a.last()
        for seg, up in ((SEG_A, 1), (SEG_B, 1), (SEG_C, 0), (SEG_D, 0)):
            self.assertEqual((m["network.%s.up" % seg], m["network.%s.link_lost" % seg]), (up, 0), seg)
        tx0 = m["network.%s.transmit_packets_total" % SEG_A]
        rx0 = m["network.%s.receive_packets_total" % SEG_B]
        rxb0 = m["network.%s.receive_bytes_total" % SEG_B]
        self.assertIn("network.%s.carrier_changes_total" % SEG_A, m)
        self.assertEqual(m["network.%s.receive_errors_total" % SEG_B], 0)

        self.ns_run(sys.executable, "-c", SEND, A)
        a.wait_metric("network.%s.transmit_packets_total" % SEG_A, lambda v: v >= tx0 + 3, timeout=15)
        a.wait_metric("network.%s.receive_packets_total" % SEG_B, lambda v: v >= rx0 + 3, timeout=15)
        a.wait_metric("network.%s.receive_bytes_total" % SEG_B, lambda v: v >= rxb0 + 3 * 60, timeout=15)

        # the real name as the device label
        text = self.ns_run(sys.executable, "-c", GET, str(port))
        self.assertIn('tegrawatch_network_receive_packets_total{device="%s"}' % B, text)
        self.assertIn('tegrawatch_network_up{device="%s"} 1' % A, text)
        self.assertIn('tegrawatch_network_up{device="%s"} 0' % C, text)
        self.assertIn('tegrawatch_network_link_lost{device="%s"} 0' % C, text)

        changes0 = a.last()["network.%s.carrier_changes_total" % SEG_B]
        self.ns_run("ip", "link", "set", A, "down")
        a.wait_metric("network.%s.up" % SEG_A, lambda v: v == 0, timeout=15)
        a.wait_metric("network.%s.up" % SEG_B, lambda v: v == 0, timeout=15)  # lowerlayerdown
        a.wait_metric("network.%s.link_lost" % SEG_A, lambda v: v == 1, timeout=15)
        a.wait_metric("network.%s.link_lost" % SEG_B, lambda v: v == 1, timeout=15)
        a.wait_metric("network.%s.carrier_changes_total" % SEG_B, lambda v: v > changes0, timeout=15)
        # one alert per interface, in the same sample or the next (each waits its own 5 s)
        a.wait_stderr("alert firing network-link-down", timeout=20, count=2)
        lines = a.stderr_lines("network-link-down")
        self.assertIn("[warning]", lines[0])
        self.assertTrue(any("network.%s.link_lost" % SEG_A in line for line in lines), lines)
        # the summary and a label name the interface as the kernel does (tw-b.1, not its segment tw_b_1)
        self.assertTrue(any("network interface %s is down" % B in line for line in lines), lines)
        a.wait_stderr("network interface %s is down" % A, timeout=10)
        # tw-c and tw-d were down longer than tw-a: under a rule on network.*.up they would have fired first
        self.assertEqual(self.link_alerts(port), sorted([A, B]))
        self.assertFalse([x for x in a.stderr_lines("network-link-down") if C in x or D in x], a.stderr())
        m = a.last()
        self.assertEqual([m["network.%s.link_lost" % g] for g in (SEG_C, SEG_D)], [0, 0])

        # a reload keeps the links' history (the host source stays) and the firing alerts
        a.send(signal.SIGHUP)
        s = a.next_sample(lambda s: s["metrics"].get("agent.config_reloads_total") == 1, what="the reload")
        self.assertEqual(s["metrics"]["network.%s.link_lost" % SEG_A], 1)
        self.assertEqual(self.link_alerts(port), sorted([A, B]))
        self.assertFalse(a.stderr_lines("alert resolved network-link-down"), a.stderr())
        self.assertEqual(len(a.stderr_lines("alert firing network-link-down")), 2, a.stderr())

        # up again: no longer lost, the alerts resolve
        self.ns_run("ip", "link", "set", A, "up")
        a.wait_metrics(lambda m: m.get("network.%s.link_lost" % SEG_A) == 0 and
                       m.get("network.%s.link_lost" % SEG_B) == 0, "tw-a and tw-b.1 up again", timeout=15)
        a.wait_stderr("alert resolved network-link-down", timeout=15, count=2)
        self.assertEqual(self.link_alerts(port), [])

        # the pair deleted and made again under the same names, most likely between two samples: the link files
        # the agent keeps open belong to the old devices (their reads fail), so it opens the new ones
        self.ns_run("sh", "-c", "ip link del %s && ip link add %s type veth peer name %s && ip link set %s up && "
                    "ip link set %s up" % (A, A, B, A, B))
        a.wait_metric("network.%s.up" % SEG_A, lambda v: v == 1, timeout=15)
        a.wait_metric("network.%s.up" % SEG_B, lambda v: v == 1, timeout=15)
        a.stop()

    def link_alerts(self, port):
        """the interfaces of the active network-link-down alerts, sorted"""
        active = json.loads(self.ns_run(sys.executable, "-c", GET, str(port), "/api/v1/alerts"))["active"]
        return sorted(x["labels"]["interface"] for x in active if x["rule"] == "network-link-down")


if __name__ == "__main__":
    harness.init()
    harness.main()
