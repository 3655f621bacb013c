#!/usr/bin/env python3
"""Writes synthetic recordings for the tests of issue 24 into DIR:

  heatsink-soak.log   tegrastats (JetPack 6 Orin Nano line shape), 50 min at 1 Hz: a die on a heatsink (two time
                      constants, unlike the demo's one), a load that steps up, a calm phase that settles 6 C under
                      the passive trip, a heavy phase that throttles, recovery

  fan-failure.jsonl   a run --record recording, 20 min at 1 Hz: the fan's tachometer drops to 0 rpm at 10:10:00 while
                      it is driven, and the board heats up
  clogging-heatsink-day12.jsonl, clogging-heatsink-day34.jsonl
                      4 days at one sample a minute, cut in two (a restart): ambient swinging 6 C a day, 2 h of load
                      and 1 h of idle over and over, the heatsink's resistance growing 30 % over the 4 days
  wrong-mode-boot.jsonl
                      5 min from boot in power mode 15W (id 0) on a board meant to run MAXN_SUPER

  work-load-changes.jsonl
                      40 min at 1 Hz of an application counting inferences while its load changes: idle, 20/s at
                      15 W, 40/s at 19 W in MAXN_SUPER, then idle and 12/s at 10 W in 15W (WORK_PHASES)

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
AMBIENT_C = 31.0
# die -> heatsink -> air: R in C/W, C in J/C (time constants ~6 s and ~400 s)
R_DIE, C_DIE = 0.45, 12.0
R_SINK, C_SINK = 3.3, 120.0
TRIP_C = 99.0  # gpu-thermal's throttle trip in configs/demo/root (Orin's 99 C; gpu is the hottest zone here)


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
        # a governor on tj: 714 MHz at 99 C, back to full clock under 97 C; capped, the board draws 22 % less
        tj_now = die + 0.8
        if cap == 0 and gpu_pct > 50 and tj_now >= TRIP_C:
            cap = 714
        elif cap and (tj_now < TRIP_C - 2 or gpu_pct <= 50):
            cap = 0
        p = watts * (0.78 if cap else 1.0) + rng.noise(0.35) + (die - 54.0) * 0.015  # leakage
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
              "# A die on a heatsink (two time constants: ~6 s and ~400 s), ambient %.0f C; gpu's throttle trip %.0f C\n"
              "#   (configs/demo/root). Load phases (second, GPU %%, board W): %s. First tj >= trip at second %d.\n"
              % (AMBIENT_C, TRIP_C, SOAK_PHASES, first[0]))
    return header + "\n".join(lines) + "\n"


# ---- run --record recordings (JSON Lines, docs/report.md) ------------------------------------------------------

def recording(samples, board="NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"):
    """A header and one line per (time_ms, power_mode, metrics)."""
    out = ['{"tegrawatch_recording":1,"version":"0.1.0","board":{"model":"%s","soc":"tegra234",'
           '"module":"p3767-0005","l4t":"36.4.3","jetpack":"6.2"}}' % board]
    for seq, (ms, mode, metrics) in enumerate(samples, 1):
        ts = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        body = ",".join('"%s":%s' % (k, fmt(v)) for k, v in metrics.items())
        out.append('{"seq":%d,"ts":"%s","time_ms":%d,"power_mode":"%s","metrics":{%s},'
                   '"throttle":{"active":false,"reasons":{},"context":""}}' % (seq, ts, ms, mode, body))
    return "\n".join(out) + "\n"


def fmt(v):
    return str(int(v)) if v == int(v) else "%.3f" % v


EPOCH_MS = 1748858400000  # 2025-06-02T10:00:00Z


def trips():
    return {"trip.tj.passive_c": 95, "trip.cpu.passive_c": 95}


def fan_failure():
    rng = Rng(0xFA7)
    tj = 55.0
    samples = []
    for t in range(1200):
        dead = t >= 600
        # the kernel's fan curve follows tj; the blades stopped at 10:10:00, the drive goes on
        pwm = min(255, max(80, int((tj - 40) * 4)))
        rpm = 0 if dead else pwm * 20 + rng.between(-40, 40)
        r_ja = 6.5 if dead else 3.0  # without air flow the heatsink sheds heat far worse
        p = 12.0 + rng.noise(0.3)
        tj += (27 + r_ja * p - tj) / 200.0
        m = {"temp.tj_c": round(tj + rng.noise(0.09), 3), "temp.cpu_c": round(tj - 1.2 + rng.noise(0.09), 3)}
        m.update(trips())
        m.update({"power.vdd_in.mw": int(p * 1000), "fan.0.pwm": pwm, "fan.0.rpm": rpm, "nvpmodel.id": 2})
        samples.append((EPOCH_MS + t * 1000, "MAXN_SUPER", m))
    return recording(samples)


CLOG_MINUTES = 4 * 24 * 60


def clogging_samples():
    rng = Rng(0xC106)
    tj = 40.0
    samples = []
    for t in range(CLOG_MINUTES):
        day = t / 1440.0
        # ambient: 24 C, 3 C up in the afternoon and down at night, a triangle (no trigonometry: the same bytes)
        phase = (t % 1440) / 1440.0
        ambient = 24 + 3 * (4 * phase - 1 if phase < 0.5 else 3 - 4 * phase)
        r_ja = 3.0 * (1 + 0.3 * day / 4)  # dust: +30 % over the 4 days
        p = (14.0 if (t % 180) < 120 else 5.0) + rng.noise(0.25)
        tj += (ambient + r_ja * p - tj) * 0.2  # a time constant of 5 min, one step a minute
        board = ambient + 0.3 * (tj - ambient)  # the board sensor, warmed a little by the module
        m = {"temp.tj_c": round(tj + rng.noise(0.1), 3), "temp.tboard_c": round(board + rng.noise(0.1), 3)}
        m.update(trips())
        m.update({"power.vdd_in.mw": int(p * 1000), "nvpmodel.id": 2})
        samples.append((EPOCH_MS + t * 60000, "MAXN_SUPER", m))
    return samples


def clogging_days12():
    return recording(clogging_samples()[:CLOG_MINUTES // 2])


def clogging_days34():
    return recording(clogging_samples()[CLOG_MINUTES // 2:])


def wrong_mode_boot():
    rng = Rng(0xB007)
    samples = []
    for t in range(300):
        m = {"temp.tj_c": round(48 + rng.noise(0.2), 3)}
        m.update(trips())
        m.update({"power.vdd_in.mw": 5200 + rng.between(-100, 100), "nvpmodel.id": 0})
        samples.append((EPOCH_MS + t * 1000, "15W", m))
    return recording(samples)


# (start s, end s, power mode, inferences a second, board W): the truth the report is checked against
WORK_PHASES = [(0, 300, "MAXN_SUPER", 0, 5.0), (300, 900, "MAXN_SUPER", 20, 15.0), (900, 1500, "MAXN_SUPER", 40, 19.0),
               (1500, 1680, "15W", 0, 4.5), (1680, 2400, "15W", 12, 10.0)]


def work_load_changes():
    rng = Rng(0x3E4C)
    samples, total = [], 0
    for t in range(2400):
        _, _, mode, rate, watts = next(p for p in WORK_PHASES if p[0] <= t < p[1])
        # the count a sample shows was done in the second before it; whole inferences, their mean exactly the rate
        done = next(p[3] for p in WORK_PHASES if p[0] <= max(t - 1, 0) < p[1])
        total += done + (t % 2 * 2 - 1 if done else 0)
        m = {"temp.tj_c": round(40 + watts * 2 + rng.noise(0.2), 3), "gpu.load_pct": min(99, rate * 2)}
        m.update({"power.vdd_in.mw": int((watts + rng.noise(0.2)) * 1000), "nvpmodel.id": 2 if mode == "15W" else 0})
        if t >= 60:  # the application starts a minute after the agent
            m["work.inference.count_total"] = total
        samples.append((EPOCH_MS + t * 1000, mode, m))
    return recording(samples)


FILES = {
    "heatsink-soak.log": soak_lines,
    "fan-failure.jsonl": fan_failure,
    "clogging-heatsink-day12.jsonl": clogging_days12,
    "clogging-heatsink-day34.jsonl": clogging_days34,
    "wrong-mode-boot.jsonl": wrong_mode_boot,
    "work-load-changes.jsonl": work_load_changes,
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
