#!/usr/bin/env python3
"""Writes synthetic recordings for the tests of issue 24 into DIR:

  heatsink-soak.log   tegrastats (JetPack 6 Orin Nano line shape), 50 min at 1 Hz: a die on a heatsink (two time
                      constants, unlike the demo's one), a load that steps up, a calm phase that settles 6 C under
                      the passive trip, a heavy phase that throttles, recovery

Usage: gen_recordings.py DIR
The tests write them to a temporary DIR: they are not committed. Only + - * / on floats and a fixed-seed
xorshift generator: the same bytes on every Python 3.
"""
import datetime
import os
import sys

from gen_demo_log import Rng as DemoRng  # the same fixed generator: the same bytes everywhere


class Rng(DemoRng):
    """The demo generator's xorshift64*, plus a float noise."""

    def noise(self, amp):
        """Uniform in [-amp, amp], 1/1000 steps."""
        return self.between(-1000, 1000) * amp / 1000


def temp_text(c):
    """As JetPack 6 prints it: 1/32 C steps, cut to milli-degrees, trailing zeros dropped."""
    mc = int(c * 32) * 1000 // 32
    whole, frac = divmod(mc, 1000)
    return "%dC" % whole if frac == 0 else ("%d.%03d" % (whole, frac)).rstrip("0") + "C"


def tegrastats_line(stamp, gpu_pct, gpu_mhz, cpu_mhz, temps, rails, rng):
    loads = ",".join("%d%%@%d" % (rng.between(5, 40) if gpu_pct > 10 else rng.between(0, 6), cpu_mhz)
                     for _ in range(6))
    temp_txt = " ".join("%s@%s" % (n, temp_text(temps[n])) for n in ("cpu", "soc2", "soc0", "gpu", "tj", "soc1"))
    return ("%s RAM 5120/7620MB (lfb 20x4MB) SWAP 24/3810MB (cached 0MB) CPU [%s] EMC_FREQ %d%%@3199 "
            "GR3D_FREQ %d%%@[%d] NVDEC off NVJPG off NVJPG1 off VIC off OFA off APE 200 %s %s" % (
                stamp, loads, rng.between(20, 50) if gpu_pct > 10 else rng.between(2, 7), gpu_pct, gpu_mhz,
                temp_txt, rails))


class Rails:
    def __init__(self):
        self.sums = [0, 0, 0]
        self.n = 0

    def text(self, vin, cg, soc):
        self.n += 1
        out = []
        for i, (name, mw) in enumerate((("VDD_IN", vin), ("VDD_CPU_GPU_CV", cg), ("VDD_SOC", soc))):
            self.sums[i] += mw
            out.append("%s %dmW/%dmW" % (name, mw, (2 * self.sums[i] + self.n) // (2 * self.n)))
        return " ".join(out)


# ---- heatsink-soak.log -------------------------------------------------------------------------------------------

SOAK_START = datetime.datetime(2025, 6, 2, 14, 0, 0)
SOAK_LINES = 3000
# (start second, GPU load %, board input W at full clock)
SOAK_PHASES = [(0, 2, 5.0), (180, 60, 11.5), (780, 85, 15.5), (1500, 98, 19.0), (2400, 40, 9.0), (2700, 2, 5.0)]
AMBIENT_C = 27.0
# die -> heatsink -> air: R in C/W, C in J/C (time constants ~6 s and ~400 s)
R_DIE, C_DIE = 0.45, 12.0
R_SINK, C_SINK = 3.3, 120.0
TRIP_C = 95.0  # tj's passive trip in configs/demo/root


def soak_lines():
    rng = Rng(0x50A4C0FFEE)
    die = sink = AMBIENT_C + 5.0 * R_SINK
    die += 5.0 * R_DIE
    cap = 0
    rails = Rails()
    lines, facts = [], []
    for t in range(SOAK_LINES):
        phase = max(i for i, p in enumerate(SOAK_PHASES) if p[0] <= t)
        _, gpu_pct, watts = SOAK_PHASES[phase]
        # a governor on tj: 714 MHz at 95 C, back to full clock under 93 C; capped, the board draws 22 % less
        tj_now = die + 0.8
        if cap == 0 and gpu_pct > 50 and tj_now >= TRIP_C:
            cap = 714
        elif cap and (tj_now < 93.0 or gpu_pct <= 50):
            cap = 0
        p = watts * (0.78 if cap else 1.0) + rng.noise(0.35) + (die - 50.0) * 0.015  # leakage
        # one second of Euler steps of 0.1 s (the die's constant is ~5 s)
        for _ in range(10):
            flow = (die - sink) / R_DIE
            die += 0.1 * (p - flow) / C_DIE
            sink += 0.1 * (flow - (sink - AMBIENT_C) / R_SINK) / C_SINK
        temps = {
            "gpu": die + 0.8 + rng.noise(0.09),
            "cpu": die - 1.5 + rng.noise(0.09),
            "soc0": die - 3.0 + rng.noise(0.09),
            "soc1": die - 2.4 + rng.noise(0.09),
            "soc2": die - 2.0 + rng.noise(0.09),
        }
        temps["tj"] = max(temps.values())
        vin = int(p * 1000)
        cg = int(vin * 0.55)
        soc = int(vin * 0.2)
        stamp = (SOAK_START + datetime.timedelta(seconds=t)).strftime("%m-%d-%Y %H:%M:%S")
        gpu_mhz = cap or (1020 if gpu_pct > 10 else 306)
        lines.append(tegrastats_line(stamp, gpu_pct, gpu_mhz, 1728 if gpu_pct > 10 else 729, temps,
                                     rails.text(vin, cg, soc), rng))
        facts.append((t, temps["tj"], cap))
    first = [t for t, tj, cap in facts if int(tj * 32) * 1000 // 32 >= TRIP_C * 1000]
    assert first and 1500 < first[0] < 2400, first[:1]
    # the calm phase settles under the trip: no throttle before the heavy phase
    assert all(tj < TRIP_C - 4 for t, tj, cap in facts if t < 1500), max(tj for t, tj, cap in facts if t < 1500)
    header = ("# SYNTHETIC tegrastats recording - NOT captured on a real board.\n"
              "# Generated by tests/gen_recordings.py (fixed seed, no wall clock); regenerate, do not edit by hand.\n"
              "# A die on a heatsink (two time constants: ~6 s and ~400 s), ambient %.0f C; tj's passive trip %.0f C\n"
              "#   (configs/demo/root). Load phases (second, GPU %%, board W): %s. First tj >= trip at second %d.\n"
              % (AMBIENT_C, TRIP_C, SOAK_PHASES, first[0]))
    return header + "\n".join(lines) + "\n"


FILES = {
    "heatsink-soak.log": soak_lines,
}


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    for name, make in FILES.items():
        with open(os.path.join(argv[1], name), "w", encoding="ascii", newline="\n") as f:
            f.write(make())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
