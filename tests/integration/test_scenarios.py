#!/usr/bin/env python3
"""Throttle scenarios end to end: the real agent samples a copy of the Orin
Nano (JetPack 6) fixture tree every 100 ms while the test changes files in
it the way the board would.

Usage: test_scenarios.py TEGRAWATCH SOURCE_ROOT
"""
import os
import time

import harness

GPU = "sys/devices/platform/17000000.gpu"
DEVFREQ = GPU + "/devfreq/17000000.gpu"
OC = "sys/devices/platform/soctherm-oc-event/hwmon/hwmon2"
CPU_ZONE = "sys/devices/virtual/thermal/thermal_zone0"
INA = "sys/devices/platform/bus@0/c240000.i2c/i2c-1/1-0040/hwmon/hwmon1"


def reasons(s):
    return s["throttle"]["reasons"]


class ScenarioTest(harness.TestCase):
    def setUp(self):
        super().setUp()
        self.root = harness.copy_board(self.d)
        self.live = self.agent(["--root", self.root, "--interval", "100", "--no-tegrastats"])
        base = self.live.next_sample(lambda s: s["seq"] >= 2, what="two samples")
        self.assertFalse(base["throttle"]["active"], base["throttle"])

    def tearDown(self):
        self.assertEqual(self.live.stop(), 0)

    def write(self, rel, value):
        # whole (write, then rename): the agent never sees a half-written file
        harness.write_file(os.path.join(self.root, rel), "%s\n" % value, 0o644)
        self.live.skip()

    def read(self, rel):
        with open(os.path.join(self.root, rel)) as f:
            return int(f.read())

    def test_oc_counter_increment(self):
        before = self.read(OC + "/oc3_event_cnt")
        self.write(OC + "/oc3_event_cnt", before + 2)
        s = self.live.next_sample(lambda s: s["throttle"]["active"], what="overcurrent")
        self.assertEqual(list(reasons(s)), ["overcurrent"])
        self.assertEqual(reasons(s)["overcurrent"], "oc3 event count %d -> %d (+2)" % (before, before + 2))
        self.assertEqual(s["metrics"]["throttle.overcurrent"], 1)
        # a counter that stays put is history, not a new event
        s = self.live.next_sample(lambda s: True, what="the next sample")
        self.assertFalse(s["throttle"]["active"])

    def test_trip_crossed(self):
        # past the 70 C hot-surface trip only: a warning, no throttle
        self.write(CPU_ZONE + "/temp", 77000)
        s = self.live.next_sample(lambda s: s["metrics"].get("thermal.hot_surface") == 1, what="hot surface")
        self.assertFalse(s["throttle"]["active"], s["throttle"])
        self.assertIn("hot surface, do not touch", s["throttle"]["context"])
        # past the 99 C trip that lowers the clocks: a thermal throttle
        self.write(CPU_ZONE + "/temp", 99500)
        s = self.live.next_sample(lambda s: s["throttle"]["active"], what="thermal")
        self.assertEqual(list(reasons(s)), ["thermal"])
        self.assertEqual(reasons(s)["thermal"], "cpu at 99.5 C >= passive trip 99.0 C")
        self.write(CPU_ZONE + "/temp", 60000)
        self.live.next_sample(lambda s: not s["throttle"]["active"], what="recovery")

    def test_clock_capped_under_load(self):
        self.write(GPU + "/load", 990)
        self.write(DEVFREQ + "/cur_freq", 612000000)
        s = self.live.next_sample(lambda s: s["throttle"]["active"], what="a clock cap")
        self.assertEqual(list(reasons(s)), ["freq_cap"])
        self.assertEqual(reasons(s)["freq_cap"], "gpu at 612 MHz under 99% load below its ceiling")

    def test_power_mode_cap_is_not_throttling(self):
        # a 25W-like ceiling: max_freq lowered, the GPU runs flat out at it
        self.write(DEVFREQ + "/max_freq", 612000000)
        self.write(DEVFREQ + "/cur_freq", 612000000)
        self.write(GPU + "/load", 990)
        s = self.live.next_sample(lambda s: s["metrics"].get("gpu.max_freq_mhz") == 612
                                and s["metrics"].get("gpu.load_pct") == 99, what="the new ceiling")
        self.assertFalse(s["throttle"]["active"], s["throttle"])
        self.assertIn("gpu ceiling 612 of 1020 MHz", s["throttle"]["context"])
        self.assertIn("power mode MAXN_SUPER", s["throttle"]["context"])

    def test_rail_alarm(self):
        self.write(INA + "/curr1_crit_alarm", 1)
        s = self.live.next_sample(lambda s: s["throttle"]["active"], what="a rail alarm")
        self.assertEqual(list(reasons(s)), ["rail_alarm"])
        self.assertIn("vdd_in", reasons(s)["rail_alarm"])
        self.assertIn("critical alarm (limit 7784 mA)", reasons(s)["rail_alarm"])

    def test_blocking_sensor_does_not_stall(self):
        # the CPU zone turns into a FIFO nobody writes: like the Orin Nano CV zones that hang
        path = os.path.join(self.root, CPU_ZONE, "temp")
        os.unlink(path)
        os.mkfifo(path)
        self.live.skip()
        t0 = time.monotonic()
        s = self.live.next_sample(lambda s: "temp.cpu_c" not in s["metrics"], what="the cpu zone absent")
        n = s["seq"]
        s2 = self.live.next_sample(lambda s: s["seq"] >= n + 5, what="five more samples")
        self.assertLess(time.monotonic() - t0, 3.0)
        self.assertIn("temp.gpu_c", s2["metrics"])
        self.assertGreater(s2["metrics"]["agent.read_errors_total"], 0)


if __name__ == "__main__":
    harness.init()
    harness.main()
