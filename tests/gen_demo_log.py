#!/usr/bin/env python3
"""Writes configs/demo/tegrastats.log, the synthetic recording that
`tegrawatch run --replay` plays on machines without a Jetson.

The story (one line per second, 900 lines) is told in configs/demo/README.md.
Everything is integer arithmetic driven by a fixed-seed xorshift generator,
so the output is byte-for-byte the same on every machine and Python version:
no wall clock, no float formatting, no libm.

Usage:
  gen_demo_log.py [OUT]        write the log to OUT (default: the repo copy)
  gen_demo_log.py -            write it to stdout
  gen_demo_log.py --check LOG  regenerate into a temp file, compare with LOG
"""

import datetime
import filecmp
import os
import sys
import tempfile

SOURCE_FILE = "shared/jetson/tegrastats/orin_nano_jetpack6_l4t_r36.txt"
SEED = 0x7E62A57A75

LINES = 900
START = datetime.datetime(2025, 3, 14, 10, 0, 0)

# Scripted phase starts (seconds = line number - 1). The throttle episode
# is not scripted: it follows from the temperatures (see gpu_clock()).
LOAD_START = 120       # GPU workload starts
SPIKE_START = 300      # VDD_IN spike, SPIKE_LEN seconds
SPIKE_LEN = 3
LIGHT_START = 540      # workload drops to lower intensity
IDLE_START = 780       # workload stops

# Facts the README and tests rely on; main() asserts the simulation gives them.
EXPECT_THROTTLE_FIRST = 423  # first second with the GPU clock cut
EXPECT_THROTTLE_LAST = 547   # last second with the GPU clock cut

# MAXN_SUPER of the Orin Nano Super
GPU_MAX_MHZ = 1020
GPU_IDLE_MHZ = 306
CPU_MAX_MHZ = 1728
EMC_MHZ = 3199
RAM_TOTAL_MB = 7620
SWAP_TOTAL_MB = 3810

# Throttle rule, on the printed tj (milli-degrees), with hysteresis as a
# thermal governor has: cut at 99 C (Orin's throttle trip on cpu-thermal and
# gpu-thermal, bound to cpufreq, devfreq and the throttle alerts), deeper cut
# at 100 C, release below 98 C. The 70 C trip is Orin's hot-surface alert.
THROTTLE_ON_MC = 99000
THROTTLE_DEEP_MC = 100000
THROTTLE_SHALLOW_MC = 99500
THROTTLE_OFF_MC = 98000

# Sensors in the order JetPack 6 prints them (tj is derived, printed 5th).
# name: (start, idle target, full-load target), micro-degrees C
SENSORS = {
	"cpu": (50_300_000, 51_800_000, 104_500_000),
	"soc2": (49_400_000, 50_600_000, 103_000_000),
	"soc0": (49_200_000, 50_200_000, 101_600_000),
	"gpu": (49_900_000, 51_300_000, 108_000_000),
	"soc1": (49_600_000, 50_900_000, 102_600_000),
}
PRINT_ORDER = ["cpu", "soc2", "soc0", "gpu", "tj", "soc1"]

# first-order lag time constants in seconds: heating and cooling (the fan
# runs faster when hot, so the board sheds heat a little quicker)
TAU_HEAT_S = 164
TAU_COOL_S = 120
NOISE_UDEG = 90_000  # +-0.09 C of sensor noise per reading

# heat level per phase in per-mille of the full-load rise
HEAT_IDLE = 0
HEAT_FULL = 1000
# capped at 714 MHz the GPU still heats up slowly (target ~102 C), at 612 MHz
# it cools (target ~97.5 C): the governor swings between the two around 100 C
HEAT_CAP_714 = 900
HEAT_CAP_612 = 815
HEAT_LIGHT = 370       # tj settles near 72 C


class Rng:
	"""xorshift64*: tiny, fixed, identical everywhere."""

	def __init__(self, seed):
		self.state = seed & 0xFFFFFFFFFFFFFFFF or 1

	def next(self):
		x = self.state
		x ^= x >> 12
		x ^= (x << 25) & 0xFFFFFFFFFFFFFFFF
		x ^= x >> 27
		self.state = x
		return (x * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF

	def between(self, lo, hi):
		"""Uniform integer in [lo, hi]."""
		return lo + (self.next() >> 11) % (hi - lo + 1)


def div_trunc(a, b):
	"""Integer division rounding toward zero (a first-order step never overshoots)."""
	q = abs(a) // b
	return q if a >= 0 else -q


def temp_text(udeg):
	"""Prints like JetPack 6: the sensor counts 1/32 C, sysfs truncates to
	milli-degrees, tegrastats drops trailing zeros (53.968C, 50.75C, 50C)."""
	mc = (udeg * 32 // 1_000_000) * 1000 // 32
	whole, frac = divmod(mc, 1000)
	if frac == 0:
		return "%dC" % whole
	return ("%d.%03d" % (whole, frac)).rstrip("0") + "C"


def temp_mc(udeg):
	return (udeg * 32 // 1_000_000) * 1000 // 32


def phase_of(t):
	if t < LOAD_START:
		return "idle"
	if t < LIGHT_START:
		return "full"
	if t < IDLE_START:
		return "light"
	return "idle2"


class Board:
	def __init__(self, rng):
		self.rng = rng
		self.temps = {n: v[0] for n, v in SENSORS.items()}
		self.throttle = 0           # 0 none, 714 or 612: the capped GPU clock
		self.sums = [0, 0, 0]       # rail sums for the running averages
		self.ram_mb = 1480

	def step_temps(self, heat):
		"""Moves every sensor one second towards its target for HEAT."""
		printed = {}
		for name, (_, idle, full) in SENSORS.items():
			target = idle + (full - idle) * heat // 1000
			cur = self.temps[name]
			tau = TAU_HEAT_S if target >= cur else TAU_COOL_S
			cur += div_trunc(target - cur, tau)
			self.temps[name] = cur
			noise = self.rng.between(-NOISE_UDEG, NOISE_UDEG)
			printed[name] = cur + noise
		printed["tj"] = max(printed.values())
		return printed

	def gpu_clock(self, tj_mc, busy):
		"""Thermal governor: caps the GPU (and CPU) while tj is high."""
		if self.throttle == 0:
			if busy and tj_mc >= THROTTLE_ON_MC:
				self.throttle = 612 if tj_mc >= THROTTLE_DEEP_MC else 714
		elif tj_mc < THROTTLE_OFF_MC:
			self.throttle = 0
		elif tj_mc >= THROTTLE_DEEP_MC:
			self.throttle = 612
		elif tj_mc < THROTTLE_SHALLOW_MC:
			self.throttle = 714
		return self.throttle

	def rails(self, n, vdd_in, cpu_gpu_cv, soc):
		"""Formats the three rails with running averages since the start."""
		out = []
		for i, (name, mw) in enumerate((("VDD_IN", vdd_in),
						("VDD_CPU_GPU_CV", cpu_gpu_cv),
						("VDD_SOC", soc))):
			self.sums[i] += mw
			avg = (2 * self.sums[i] + n) // (2 * n)
			out.append("%s %dmW/%dmW" % (name, mw, avg))
		return " ".join(out)


def make_lines():
	rng = Rng(SEED)
	board = Board(rng)
	lines = []
	facts = []  # per second: (phase, tj_mc, gpu_mhz, gpu_pct, vdd_in, temps)
	for t in range(LINES):
		phase = phase_of(t)
		r = rng.between

		# heat follows the work, and a throttled GPU makes less heat
		if phase == "full":
			heat = {0: HEAT_FULL, 714: HEAT_CAP_714, 612: HEAT_CAP_612}[board.throttle]
		elif phase == "light":
			heat = HEAT_LIGHT
		else:
			heat = HEAT_IDLE
		temps = board.step_temps(heat)
		tj_mc = temp_mc(temps["tj"])
		busy = phase in ("full", "light")
		cap = board.gpu_clock(tj_mc, busy)

		# GPU
		if phase == "full":
			gpu_pct = 99 if cap else r(95, 99)
		elif phase == "light":
			gpu_pct = 99 if cap else r(55, 70)
		else:
			gpu_pct = r(0, 5) if t % 7 else r(0, 2)
		if cap:
			gpu_mhz = cap
		elif busy:
			gpu_mhz = GPU_MAX_MHZ
		else:
			# the devfreq governor needs a few seconds to walk down
			gpu_mhz = GPU_IDLE_MHZ
			if phase == "idle2" and t - IDLE_START < 3:
				gpu_mhz = (918, 510, 408)[t - IDLE_START]

		# CPU: two clusters, cores 0-3 and 4-5
		if cap == 612:
			cl0 = cl1 = 1190
		elif cap == 714:
			cl0 = cl1 = 1344
		elif phase == "full":
			cl0, cl1 = CPU_MAX_MHZ, CPU_MAX_MHZ
		elif phase == "light":
			cl0, cl1 = (CPU_MAX_MHZ, 1420) if t % 9 else (1420, 1420)
		else:
			cl0 = 1036 if (t // 13) % 3 else 729
			cl1 = 729
		if busy:
			loads = [r(18, 46) for _ in range(4)] + [r(8, 30) for _ in range(2)]
			if phase == "light" and not cap:
				loads = [x // 2 for x in loads]
		else:
			loads = [r(0, 6) for _ in range(4)] + [r(0, 3) for _ in range(2)]
		cpu = ",".join("%d%%@%d" % (loads[i], cl0 if i < 4 else cl1)
			       for i in range(6))

		# memory: the workload loads its model in the first ten seconds
		if busy and board.ram_mb < 5350:
			board.ram_mb = min(5350, board.ram_mb + 390)
		elif not busy and t >= IDLE_START and board.ram_mb > 1560:
			board.ram_mb = max(1560, board.ram_mb - 760)
		ram = board.ram_mb + r(-6, 6)
		lfb = (r(96, 104) if ram < 3000 else r(18, 26))
		swap = 24 if t < IDLE_START else 31

		# EMC
		if cap:
			emc = r(30, 38)
		elif phase == "full":
			emc = r(42, 55)
		elif phase == "light":
			emc = r(22, 30)
		else:
			emc = r(2, 7)

		# rails, mW; leakage grows with temperature
		leak = max(0, (temps["gpu"] - 54_000_000) // 50_000)  # 20 mW per C above 54 C
		if SPIKE_START <= t < SPIKE_START + SPIKE_LEN:
			cg = r(12_100, 12_500)
			soc = r(3_650, 3_800)
			vin = r(21_000, 21_400)
		elif cap:
			# 612 MHz saves another ~0.6 W over 714 MHz
			cg = r(5_300, 5_900) + leak - (600 if cap == 612 else 0)
			soc = r(2_900, 3_100)
			vin = cg + soc + r(4_300, 4_600)
		elif phase == "full":
			cg = r(8_300, 9_300) + leak
			soc = r(3_100, 3_400)
			vin = cg + soc + r(4_500, 4_900)
		elif phase == "light":
			cg = r(4_100, 4_700) + leak
			soc = r(2_300, 2_500)
			vin = cg + soc + r(3_900, 4_200)
		else:
			cg = r(500, 700) + leak // 4
			soc = r(1_440, 1_540)
			vin = cg + soc + r(2_650, 2_800)

		stamp = (START + datetime.timedelta(seconds=t)).strftime("%m-%d-%Y %H:%M:%S")
		temp_txt = " ".join("%s@%s" % (n, temp_text(temps[n])) for n in PRINT_ORDER)
		line = ("%s RAM %d/%dMB (lfb %dx4MB) SWAP %d/%dMB (cached 0MB) "
			"CPU [%s] EMC_FREQ %d%%@%d GR3D_FREQ %d%%@[%d] "
			"NVDEC off NVJPG off NVJPG1 off VIC off OFA off APE 200 %s %s" % (
				stamp, ram, RAM_TOTAL_MB, lfb, swap, SWAP_TOTAL_MB,
				cpu, emc, EMC_MHZ, gpu_pct, gpu_mhz,
				temp_txt, board.rails(t + 1, vin, cg, soc)))
		lines.append(line)
		facts.append((phase, tj_mc, gpu_mhz, gpu_pct, vin,
			      {n: temp_mc(v) for n, v in temps.items()}))
	return lines, facts


def check_story(facts):
	"""The story the README promises; fails loudly if a tweak breaks it."""
	throttled = [t for t, f in enumerate(facts) if f[2] in (612, 714)]
	assert throttled, "no throttle episode"
	first, last = throttled[0], throttled[-1]
	assert throttled == list(range(first, last + 1)), "throttle episode not contiguous"
	assert (first, last) == (EXPECT_THROTTLE_FIRST, EXPECT_THROTTLE_LAST), (first, last)
	assert 100 <= last - first + 1 <= 140, "episode should last about 2 minutes"
	for t, (phase, tj, mhz, pct, vin, temps) in enumerate(facts):
		if tj >= THROTTLE_ON_MC:
			assert mhz in (612, 714) and pct == 99, t
		if t < LOAD_START:
			assert all(48_000 <= v <= 54_000 for v in temps.values()), t
			assert mhz == GPU_IDLE_MHZ and pct <= 5, t
		if LOAD_START <= t < first:
			assert mhz == GPU_MAX_MHZ and 95 <= pct <= 99, t
			if not SPIKE_START <= t < SPIKE_START + SPIKE_LEN:
				assert 15_000 <= vin <= 19_000, (t, vin)
		if SPIKE_START <= t < SPIKE_START + SPIKE_LEN:
			assert vin >= 21_000, t
		elif vin >= 20_000:
			raise AssertionError("VDD_IN over 20 W outside the spike at %d" % t)
		assert tj <= 101_500, t
		if t > 0:
			for n, v in temps.items():
				assert abs(v - facts[t - 1][5][n]) <= 600, (t, n)
	assert facts[LOAD_START][1] < 55_000
	assert facts[-1][2] == GPU_IDLE_MHZ


HEADER = """\
# SYNTHETIC tegrastats recording - NOT captured on a real board.
# Generated by tests/gen_demo_log.py (fixed seed, no wall clock); regenerate, do not edit by hand.
# Line shape copied from real JetPack 6 (L4T R36) Orin Nano root output,
#   %s block A.
# Board modelled: Jetson Orin Nano Super, power mode MAXN_SUPER
#   (GPU max %d MHz, CPU max %d MHz, EMC %d MHz max), 1 line per second, %d lines.
# Story and line numbers of each phase: configs/demo/README.md.
""" % (SOURCE_FILE, GPU_MAX_MHZ, CPU_MAX_MHZ, EMC_MHZ, LINES)


def render():
	lines, facts = make_lines()
	check_story(facts)
	return HEADER + "\n".join(lines) + "\n"


def main(argv):
	here = os.path.dirname(os.path.abspath(__file__))
	default_out = os.path.join(here, "..", "configs", "demo", "tegrastats.log")
	if len(argv) == 3 and argv[1] == "--check":
		with tempfile.TemporaryDirectory() as tmp:
			fresh = os.path.join(tmp, "tegrastats.log")
			with open(fresh, "w", encoding="ascii", newline="\n") as f:
				f.write(render())
			try:
				same = filecmp.cmp(fresh, argv[2], shallow=False)
			except OSError as e:
				sys.stderr.write("cannot read %s: %s\n" % (argv[2], e.strerror))
				return 1
			if not same:
				sys.stderr.write("%s differs from a fresh tests/gen_demo_log.py run\n" % argv[2])
				return 1
		print("demo log reproducible: %s" % argv[2])
		return 0
	if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-") and argv[1] != "-"):
		sys.stderr.write(__doc__)
		return 2
	text = render()
	out = argv[1] if len(argv) == 2 else default_out
	if out == "-":
		sys.stdout.write(text)
	else:
		with open(out, "w", encoding="ascii", newline="\n") as f:
			f.write(text)
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv))
