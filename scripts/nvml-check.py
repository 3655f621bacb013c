#!/usr/bin/env python3
"""tegrawatch's NVML source against a real NVIDIA GPU, in one command (docs/thor-and-nvml.md, "Checking against a
real GPU"): runs the agent with sources.nvml on for a few samples while nvidia-smi polls the same GPUs, and compares
what the two read, one named check per line:

    scripts/nvml-check.py TEGRAWATCH [--samples 15] [--interval-ms 1000] [--nvidia-smi PATH] [--out DIR]

prints `PASS name: ...` or `FAIL name: ...` for each check, the agent's cost (CPU per sample, RssAnon), a summary,
and exits 0 only when every check passes. --out DIR keeps the same lines in DIR/nvml-check.txt with what they were
drawn from (the agent's samples and log, nvidia-smi's answers). TEGRAWATCH may be the portable bundle's
bin/tegrawatch unpacked anywhere: its own loader is used when the one it names (/opt/tegrawatch/lib/...) is not
there. nvidia-smi is PATH, else $NVML_CHECK_SMI, else the one on PATH (tests/nvml/fake_nvidia_smi.py stands in for
it in the test, tests/integration/test_nvml_check.py). Python 3 standard library only: the GPU machines have no
network and nothing installed.
"""
import argparse
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

# What nvidia-smi polls during the run (each known to nvidia-smi 580 and long before it)
FIELDS = ["timestamp", "index", "temperature.gpu", "utilization.gpu", "utilization.memory", "clocks.sm", "clocks.mem",
          "power.draw", "pstate", "fan.speed", "memory.used", "clocks_event_reasons.active"]
SMI_POLL_MS = 500
# NVML's clocks event reasons (nvml.h: nvmlClocksEventReason*) behind each gpu.N.event.NAME
EVENT_BITS = {"idle": 0x1, "applications": 0x2, "power_cap": 0x4, "hw_slowdown": 0x8, "thermal": 0x20 | 0x40,
              "power_brake": 0x80}
IDLE = 0x1
ENERGY_PERIOD_S = 10  # the agent reads the total energy every 10 s (nvml/nvml_source.c)


def num(text):
    """The number in nvidia-smi's "1980 MHz", "700.00 W", "P0", "0x..1"; None for N/A, [Not Supported]..."""
    if text is None:
        return None
    t = text.strip().split(" ")[0]
    try:
        if t.startswith("0x"):
            return int(t, 16)
        return float(t[1:] if t[:1] == "P" else t)
    except ValueError:
        return None


def via(f):
    """A conversion of nvidia-smi's text: F of its number, None where it has none."""
    return lambda text: None if num(text) is None else f(num(text))


# ---- the agent ----


def elf_interp(path):
    """The program interpreter (PT_INTERP) of a 64-bit little-endian ELF file, or None."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return None
        phoff, = struct.unpack_from("<Q", head, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, _, p_offset = struct.unpack("<IIQ", f.read(16))
            if p_type == 3:
                f.seek(phoff + i * phentsize + 32)
                size, = struct.unpack("<Q", f.read(8))
                f.seek(p_offset)
                return f.read(size).rstrip(b"\0").decode()
    return None


def launcher(binary):
    """How to start BINARY: as it is, or through the bundle's own loader when it lies elsewhere than /opt."""
    interp = elf_interp(binary)
    own = interp and os.path.join(os.path.dirname(binary), "..", "lib", os.path.basename(interp))
    if interp and not os.path.exists(interp) and os.path.exists(own):
        return [os.path.normpath(own), binary]
    return [binary]


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def rss_anon_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return None


def run_agent(argv, d, n, interval_ms):
    """The agent for N samples: (samples, stderr, exit status, cost)."""
    cfg = os.path.join(d, "agent.yaml")
    with open(cfg, "w") as f:
        f.write('agent: {log_level: info, state_file: ""}\nweb: {listen: ""}\nsources: {nvml: on}\n')
    out, err = os.path.join(d, "agent.jsonl"), os.path.join(d, "agent.err")
    with open(out, "wb") as o, open(err, "wb") as e:
        p = subprocess.Popen(argv + ["run", "--no-tegrastats", "--json", "--interval", str(interval_ms), "-c", cfg],
                             stdout=o, stderr=e)
    samples, first, deadline = [], None, time.monotonic() + n * interval_ms / 1000.0 + 30
    while len(samples) < n and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
        with open(out) as f:
            samples = [json.loads(line) for line in f if line.endswith("\n")]
        if samples and first is None:
            first = (len(samples), cpu_ticks(p.pid))
    cost = {}
    if p.poll() is None and first:
        hz = os.sysconf("SC_CLK_TCK")
        ticks = cpu_ticks(p.pid)
        cost = {"per_sample_ms": (ticks - first[1]) * 1000.0 / hz / max(1, len(samples) - first[0]),
                "ticks": ticks - first[1], "tick_ms": 1000.0 / hz, "total_ms": ticks * 1000.0 / hz,
                "rss_anon_kb": rss_anon_kb(p.pid), "samples": len(samples) - first[0]}
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "killed after 10 s"
    with open(err, errors="replace") as f:
        return samples, f.read(), rc, cost


# ---- nvidia-smi ----


def smi_xml(smi, path):
    r = subprocess.run([smi, "-q", "-x"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    with open(path, "wb") as f:
        f.write(r.stdout)
    if r.returncode != 0:
        raise RuntimeError("%s -q -x: exit %d: %s" % (smi, r.returncode, r.stdout.decode(errors="replace")[:300]))
    return ET.fromstring(r.stdout)


def static_of(g):
    """What nvidia-smi -q -x says of GPU element G that does not change while the driver runs."""
    first = lambda *paths: next((num(g.findtext(p)) for p in paths if num(g.findtext(p)) is not None), None)
    s = {"name": g.findtext("product_name"),
         "sm.max_freq_mhz": num(g.findtext("max_clocks/sm_clock")),
         "mem.max_freq_mhz": num(g.findtext("max_clocks/mem_clock")),
         "mem.total_mb": num(g.findtext("fb_memory_usage/total")),
         "reserved_mb": num(g.findtext("fb_memory_usage/reserved")) or 0,
         # the limit NVML enforces: enforced_power_limit in older drivers' XML, current_power_limit in 580's
         "power_limit_w": first("power_readings/enforced_power_limit", "gpu_power_readings/enforced_power_limit",
                                "gpu_power_readings/current_power_limit", "power_readings/power_limit")}
    # absolute in older drivers' XML
    slow, shut = (num(g.findtext("temperature/gpu_temp_%s_threshold" % k)) for k in ("slow", "max"))
    s["thresholds_derived"] = slow is None
    if slow is None:
        # Driver 580 gives them only as margins to T.Limit: "GPU T.Limit Temp" is the headroom left at the current
        # temperature, the slowdown and shutdown "T.Limit" thresholds are margins (-2 C, -8 C: 2 and 8 C past it).
        # On the recorded H200: 34 + 53 + 2 = 89 and 34 + 53 + 8 = 95, what NVML answers.
        t, m = num(g.findtext("temperature/gpu_temp")), num(g.findtext("temperature/gpu_temp_tlimit"))
        ms, mx = (num(g.findtext("temperature/gpu_temp_%s_tlimit_threshold" % k)) for k in ("slow", "max"))
        if None not in (t, m, ms, mx):
            slow, shut = t + m - ms, t + m - mx
    s["temp_slowdown_c"], s["temp_shutdown_c"] = slow, shut
    return s


def smi_loop(smi, path):
    f = open(path, "wb")
    p = subprocess.Popen([smi, "--query-gpu=" + ",".join(FIELDS), "--format=csv,noheader,nounits", "-lms",
                          str(SMI_POLL_MS)], stdout=f, stderr=subprocess.STDOUT)
    f.close()
    return p


def read_loop(path):
    """nvidia-smi's rows by GPU index: {index: [{field: text, "t": seconds since the epoch}]}; (rows, bad lines)."""
    by, bad = {}, []
    with open(path, errors="replace") as f:
        for line in f:
            v = [x.strip() for x in line.rstrip("\n").split(", ")]
            if len(v) != len(FIELDS):
                bad.append(line.strip())
                continue
            r = dict(zip(FIELDS, v))
            try:  # nvidia-smi's local time, read in the same time zone
                r["t"] = time.mktime(time.strptime(r["timestamp"][:19], "%Y/%m/%d %H:%M:%S")) + float(
                    "0" + r["timestamp"][19:])
            except ValueError:
                bad.append(line.strip())
                continue
            by.setdefault(int(r["index"]), []).append(r)
    return by, bad


# ---- the checks ----


class Report:
    def __init__(self):
        self.lines, self.failed = [], []

    def say(self, line):
        print(line, flush=True)
        self.lines.append(line)

    def check(self, name, ok, text):
        self.say("%s %s: %s" % ("PASS" if ok else "FAIL", name, text))
        if not ok:
            self.failed.append(name)


def span(values, fmt="%g"):
    lo, hi = min(values), max(values)
    return fmt % lo if lo == hi else (fmt + ".." + fmt) % (lo, hi)


class Gpu:
    """One GPU's checks: the agent's samples (gpu.N.*) against nvidia-smi's XML (static) and rows (live)."""

    def __init__(self, rep, i, samples, static, rows, window_s):
        self.rep, self.i, self.static, self.rows, self.window_s = rep, i, static, rows, window_s
        prefix = "gpu.%d." % i
        self.series = [(s["time_ms"] / 1000.0, {k[len(prefix):]: v for k, v in s["metrics"].items()
                                                 if k.startswith(prefix)}) for s in samples]

    def values(self, key):
        return [(t, m[key]) for t, m in self.series if key in m]

    def fixed(self, key, want, tol, why):
        """KEY never changes and equals nvidia-smi's WANT within TOL."""
        got = [v for _, v in self.values(key)]
        name = "gpu%d.%s" % (self.i, key)
        if not got or want is None:
            self.rep.check(name, not got and want is None, "agent %s, nvidia-smi %s" % (
                span(got) if got else "absent", "absent" if want is None else "%g" % want))
            return
        ok = max(got) == min(got) and abs(got[0] - want) <= tol
        self.rep.check(name, ok, "agent %s, nvidia-smi %g, tolerance %g (%s)" % (span(got), want, tol, why))

    def live(self, key, field, allowed, why, conv=num, mine=lambda a: a, whole_run=False):
        """Each sample of KEY has an nvidia-smi row within the window around it (WHOLE_RUN: any row) that agrees:
        |a - s| <= ALLOWED(s). Both read the same counters at instants up to an interval apart: the closest reading
        in the window counts."""
        name = "gpu%d.%s" % (self.i, key)
        got, seen, worst, missing = [(t, mine(a)) for t, a in self.values(key)], [], None, 0
        for t, a in got:
            near = [conv(r[field]) for r in self.rows if whole_run or abs(r["t"] - t) <= self.window_s]
            near = [s for s in near if s is not None]
            seen += near
            if not near:
                missing += 1
                continue
            s = min(near, key=lambda s: abs(a - s))
            excess = abs(a - s) - allowed(s)
            if worst is None or excess > worst[0]:
                worst = (excess, a, s)
        if not got:
            self.rep.check(name, False, "absent from the agent's samples")
            return
        if missing:
            self.rep.check(name, False, "%d of %d agent samples without an nvidia-smi reading within %g s" % (
                missing, len(got), self.window_s))
            return
        self.rep.check(name, worst[0] <= 0, "agent %s, nvidia-smi %s; worst: %g vs %g, allowed %g (%s)" % (
            span([a for _, a in got]), span(seen), worst[1], worst[2], allowed(worst[2]), why))

    def run(self):
        st, i = self.static, self.i
        lost = [v for _, v in self.values("lost")]
        self.rep.check("gpu%d.lost" % i, lost and not any(lost), "gpu.%d.lost %s" % (
            i, span(lost) if lost else "absent"))
        # static: one NVML answer read once, nvidia-smi's from the same driver: equal
        self.fixed("sm.max_freq_mhz", st["sm.max_freq_mhz"], 0, "static")
        self.fixed("mem.max_freq_mhz", st["mem.max_freq_mhz"], 0, "static")
        derived = st["thresholds_derived"]
        # derived from T.Limit margins: the current temperature and the margin are two readings, whole degrees each
        why = "static, nvidia-smi's from its T.Limit margins" if derived else "static"
        self.fixed("temp_slowdown_c", st["temp_slowdown_c"], 2 if derived else 0, why)
        self.fixed("temp_shutdown_c", st["temp_shutdown_c"], 2 if derived else 0, why)
        # nvidia-smi prints whole MiB; the agent divides NVML's bytes
        self.fixed("mem.total_mb", st["mem.total_mb"], 1, "static, whole MiB")
        limit = st["power_limit_w"]
        self.fixed("power_limit_mw", None if limit is None else limit * 1000, 5, "mW vs W to 0.01: rounding")
        # live: temperature in whole degrees, read up to an interval apart on a GPU that warms slowly
        self.live("temp_c", "temperature.gpu", lambda s: 3, "+-3 C")
        # power.draw and NVML's power usage: both a 1 s average since Ampere, read at different instants; the idle
        # H200 wandered between 76 and 81 W
        self.live("power_mw", "power.draw", lambda s: max(0.15 * s, 15000), "max(15 %, 15 W)",
                  conv=via(lambda w: w * 1000))
        # the SM clock steps by 15 MHz and jumps even at idle (345 and 900 MHz within a second on the H200): among
        # the values nvidia-smi saw during the run, give or take a step
        self.live("sm.freq_mhz", "clocks.sm", lambda s: 15, "seen in the run, +-one 15 MHz step", whole_run=True)
        self.live("mem.freq_mhz", "clocks.mem", lambda s: 0, "equal: HBM's clock does not move")
        # utilization over NVML's sample period (1/6 to 1 s), read at different instants: +-10 points
        self.live("load_pct", "utilization.gpu", lambda s: 10, "+-10 points")
        self.live("mem.load_pct", "utilization.memory", lambda s: 10, "+-10 points")
        # NVML's memory info v1 counts the driver's reservation as used; nvidia-smi shows it apart (whole MiB)
        res = st["reserved_mb"]
        self.live("mem.used_mb", "memory.used", lambda s: max(16, 0.02 * s), "max(16 MiB, 2 %), reserved added",
                  conv=via(lambda mb: mb + res))
        self.live("pstate", "pstate", lambda s: 0, "equal")
        self.fan()
        self.events()
        self.energy()

    def fan(self):
        smi = [num(r["fan.speed"]) for r in self.rows]
        if not any(v is not None for v in smi):
            got = self.values("fan_pct")
            self.rep.check("gpu%d.fan_pct" % self.i, not got, "nvidia-smi %s, agent %s" % (
                self.rows[0]["fan.speed"] if self.rows else "no rows", "%d samples" % len(got) if got else "absent"))
            return
        self.live("fan_pct", "fan.speed", lambda s: 5, "+-5 points")

    def events(self):
        # the idle bit flips with any work (nvidia-smi's own included): compared without it; the rest must match
        self.live("clocks_event_reasons", "clocks_event_reasons.active", lambda s: 0, "equal but the idle bit",
                  conv=via(lambda mask: mask & ~IDLE), mine=lambda a: int(a) & ~IDLE)
        # each gpu.N.event.NAME is the OR of its NVML bits of the same sample's mask
        masks, have, wrong = 0, set(), []
        for _, m in self.series:
            if "clocks_event_reasons" not in m:
                continue
            masks += 1
            mask = int(m["clocks_event_reasons"])
            for name, bits in EVENT_BITS.items():
                if "event." + name in m:
                    have.add(name)
                    if m["event." + name] != (1 if mask & bits else 0):
                        wrong.append("%s %g with mask %#x" % (name, m["event." + name], mask))
        self.rep.check("gpu%d.event.*" % self.i, masks and have and not wrong, "%d samples of %s: %s" % (
            masks, ", ".join(sorted(have)) or "no event metric", "; ".join(wrong[:3]) or "each its bits of the mask"))

    def energy(self):
        e = self.values("energy_joules_total")
        name = "gpu%d.energy_joules_total" % self.i
        if len(e) < 2:
            self.rep.check(name, False, "%d samples with it" % len(e))
            return
        down = [(a, b) for (_, a), (_, b) in zip(e, e[1:]) if b < a]
        rises = [k for k in range(1, len(e)) if e[k][1] > e[k - 1][1]]
        self.rep.check(name, not down and rises, "%.3f J to %.3f J over %.1f s, %d rise(s), %d fall(s) (read every "
                       "%d s: a run shorter than that sees no rise)" % (e[0][1], e[-1][1], e[-1][0] - e[0][0],
                                                                       len(rises), len(down), ENERGY_PERIOD_S))
        if not rises:
            self.rep.check(name + ".rate", False, "no rise to take a rate from")
            return
        # the first reading came just before the first sample (which waits for the first poll); the last rise was
        # read between the sample before it and its own: taken halfway, the time between is known to half an
        # interval (5 % of 10 s at 1 s); nvidia-smi's power.draw is an average over its own second: 25 %
        t0, e0 = e[0]
        t1, e1 = (e[rises[-1] - 1][0] + e[rises[-1]][0]) / 2, e[rises[-1]][1]
        rate = (e1 - e0) / (t1 - t0)
        power = [num(r["power.draw"]) for r in self.rows if t0 <= r["t"] <= t1]
        power = [p for p in power if p is not None]
        mean = sum(power) / len(power) if power else None
        ok = mean is not None and abs(rate - mean) <= 0.25 * mean
        self.rep.check(name + ".rate", ok, "%.1f W over %.1f s, nvidia-smi's mean power.draw %s W (%d readings), "
                       "tolerance 25 %%" % (rate, t1 - t0, "-" if mean is None else "%.1f" % mean, len(power)))


def check_agent(rep, samples, err, rc, gpus):
    last = samples[-1]["metrics"] if samples else {}
    rep.check("agent.samples", bool(samples), "%d samples" % len(samples))
    rep.check("agent.nvml_gpus", last.get("agent.nvml_gpus") == len(gpus), "agent %s, nvidia-smi %d" % (
        last.get("agent.nvml_gpus", "absent"), len(gpus)))
    stale = [s["metrics"].get("agent.nvml_stale") for s in samples]
    rep.check("agent.nvml_stale", samples and set(stale) == {0}, "%s in %d samples" % (
        ", ".join(map(str, sorted(set(stale), key=str))), len(samples)))
    rep.check("agent.nvml_errors_total", last.get("agent.nvml_errors_total") == 0, "%s at the end" % (
        last.get("agent.nvml_errors_total", "absent")))
    bad = [line for line in err.splitlines() if "nvml" in line and ("warning:" in line or "error:" in line)]
    rep.check("agent.log", not bad, "; ".join(bad[:3]) or "no NVML warning or error")
    rep.check("agent.exit", rc == 0, "exit status %s after SIGTERM" % rc)
    for i, g in enumerate(gpus):
        said = "nvml: GPU %d: %s" % (i, g["name"])
        rep.check("gpu%d.name" % i, said in err, "nvidia-smi %r, agent's log %s" % (
            g["name"], "says it" if said in err else "does not say %r" % said))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tegrawatch")
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--interval-ms", type=int, default=1000)
    ap.add_argument("--nvidia-smi", default=os.environ.get("NVML_CHECK_SMI", "nvidia-smi"))
    ap.add_argument("--out", help="keep the report and what it was drawn from in OUT")
    a = ap.parse_args()
    d = a.out or tempfile.mkdtemp(prefix="nvml-check-")
    os.makedirs(d, exist_ok=True)
    rep = Report()
    argv = launcher(os.path.abspath(a.tegrawatch))
    version = subprocess.run(argv + ["--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    rep.say("nvml-check: %s (%s), nvidia-smi %s" % (version.stdout.decode(errors="replace").strip().split("\n")[0],
                                                    " ".join(argv), a.nvidia_smi))
    try:
        before = smi_xml(a.nvidia_smi, os.path.join(d, "nvidia-smi-before.xml"))
        loop = smi_loop(a.nvidia_smi, os.path.join(d, "nvidia-smi-loop.csv"))
        try:
            samples, err, rc, cost = run_agent(argv, d, a.samples, a.interval_ms)
        finally:
            loop.terminate()
            loop.wait(10)
        smi_xml(a.nvidia_smi, os.path.join(d, "nvidia-smi-after.xml"))
    except (OSError, RuntimeError, subprocess.SubprocessError) as e:
        rep.check("setup", False, str(e))
        return finish(rep, a.out)
    gpus = [static_of(g) for g in before.findall("gpu")]
    rep.say("nvml-check: driver %s, %s; %d samples at %d ms" % (before.findtext("driver_version"), ", ".join(
        g["name"] for g in gpus), len(samples), a.interval_ms))
    rows, bad = read_loop(os.path.join(d, "nvidia-smi-loop.csv"))
    rep.check("nvidia-smi.query", rows and not bad, "%d rows%s" % (sum(map(len, rows.values())),
                                                                   "; not understood: %s" % bad[:2] if bad else ""))
    check_agent(rep, samples, err, rc, gpus)
    for i, st in enumerate(gpus):
        Gpu(rep, i, samples, st, rows.get(i, []), a.interval_ms / 1000.0 + 1.0).run()
    if cost:
        rep.say("cost: %.2f ms CPU per sample (utime+stime: %d ticks of %g ms over %d samples), %.0f ms since start; "
                "RssAnon %s KiB at the end" % (cost["per_sample_ms"], cost["ticks"], cost["tick_ms"], cost["samples"],
                                              cost["total_ms"], cost["rss_anon_kb"] or "n/a"))
    return finish(rep, a.out)


def finish(rep, out):
    checks = sum(1 for line in rep.lines if line.startswith(("PASS ", "FAIL ")))
    rep.say("%s: %d checks, %d failed%s" % ("FAIL" if rep.failed else "PASS", checks, len(rep.failed),
                                            " (" + ", ".join(rep.failed) + ")" if rep.failed else ""))
    if out:
        with open(os.path.join(out, "nvml-check.txt"), "w") as f:
            f.write("\n".join(rep.lines) + "\n")
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
