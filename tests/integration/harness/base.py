"""The ground floor of the harness: the command line, waiting, files, ports, the environment, processes."""
import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

BIN = None  # the tegrawatch binary under test (init)
SRC = None  # the source tree (init)
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
FIXTURE_BOARD = "tests/fixtures/boards/orin-nano-jp6"
with open("/proc/sys/kernel/random/boot_id") as _f:
    BOOT_ID = _f.read().strip()


# ---------------------------------------------------------------------------------------------------------------
# Running a test file


def init(needs=()):
    """Takes TEGRAWATCH and SOURCE_ROOT off the command line; exits 77 (meson: skipped) when one of NEEDS is
    missing: a program on PATH, "mosquitto" (the broker and python3-paho-mqtt), "driven" (tegrawatch-driven) or
    "module:NAME"."""
    global BIN, SRC
    if len(sys.argv) < 3:
        sys.exit("usage: %s TEGRAWATCH SOURCE_ROOT [unittest arguments]" % sys.argv[0])
    BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    del sys.argv[1:3]
    missing = [n for n in needs if not _have(n)]
    if missing:
        print("skipped: needs " + ", ".join(missing))
        sys.exit(77)
    return BIN, SRC


def driven_bin():
    """tegrawatch-driven (tests/driven/driven_main.c): the agent on a clock the test drives, next to BIN in the
    build tree (build/tests/), or TEGRAWATCH_TEST_DRIVEN."""
    return os.environ.get("TEGRAWATCH_TEST_DRIVEN") or os.path.join(os.path.dirname(BIN), "tests",
                                                                    "tegrawatch-driven")


def _have(need):
    if need == "driven":
        return os.access(driven_bin(), os.X_OK)
    if need == "mosquitto":
        from .broker import mqtt
        return mqtt is not None and os.path.exists(MOSQUITTO)
    if need.startswith("module:"):
        try:
            __import__(need[len("module:"):])
            return True
        except ImportError:
            return False
    return shutil.which(need) is not None


def flag(name):
    """True when NAME (say "--slow") is on the command line; it is taken off, so unittest never sees it."""
    if name in sys.argv:
        sys.argv.remove(name)
        return True
    return False


def main():
    unittest.main(verbosity=2)


def recordings(dest=None):
    """The synthetic recordings of tests/gen_recordings.py written into DEST (default: a new temporary folder,
    removed when the test program ends); returns the folder."""
    if dest is None:
        dest = tempfile.mkdtemp(prefix="tw-recordings-")
        atexit.register(shutil.rmtree, dest, True)
    subprocess.run([sys.executable, os.path.join(SRC, "tests/gen_recordings.py"), dest], check=True)
    return dest


# The arm64 run (scripts/test-arm64.sh) starts the agent under qemu-user: what the emulator itself cannot do is
# skipped there, with the reason, and that script lists the skips after the run (docs/arm64.md).
UNDER_QEMU = os.environ.get("TEGRAWATCH_TEST_EMULATOR") == "qemu-user"
# a sanitizer build's tests (where tests/meson.build says which): timing bounds meant for the agent as it ships
# do not hold the sanitizer's own cost against it
SANITIZED = os.environ.get("TEGRAWATCH_TEST_SANITIZER", "none") != "none"
# the emulator's version ("10.0.2"), which test-arm64.sh reads off the binfmt_misc interpreter
QEMU_VERSION = tuple(int(p) for p in os.environ.get("TEGRAWATCH_TEST_QEMU_VERSION", "0").split(".") if p.isdigit())


def emulator_limit(reason, fixed_in=None):
    """Decorator: skip the test under qemu-user because of REASON (a limit of the emulator, not of arm64); with
    FIXED_IN (a version tuple), only under a qemu older than that."""
    if fixed_in is not None:
        applies = UNDER_QEMU and QEMU_VERSION < fixed_in
        reason += " before qemu %s (this is %s)" % (".".join(map(str, fixed_in)), ".".join(map(str, QEMU_VERSION)))
    else:
        applies = UNDER_QEMU
    return unittest.skipIf(applies, "qemu-user: " + reason)


def src(*parts):
    return os.path.join(SRC, *parts)


def demo_args(speed=10, log=None):
    """`run` arguments for the demo board replaying the demo recording (or LOG) at SPEED."""
    return ["--replay", log or src("configs/demo/tegrastats.log"), "--root", src("configs/demo/root"),
            "--speed", str(speed)]


# ---------------------------------------------------------------------------------------------------------------
# Waiting and time


def wait_until(cond, timeout=10.0, step=0.05):
    """Calls COND until it returns something true (returned) or TIMEOUT seconds pass (its last value)."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() >= end:
            return v
        time.sleep(step)


def stays(cond, seconds, step=0.05):
    """True when COND holds on every look for SECONDS: a window in which something must not happen (an
    absence cannot be waited for). Returns False at the first look it fails."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not cond():
            return False
        time.sleep(step)
    return bool(cond())


def hold(seconds):
    """Lets SECONDS of real time pass where time is what the test is about (an outage's length, a rate
    measured over a window). Everything else waits for a condition."""
    time.sleep(seconds)


# ---------------------------------------------------------------------------------------------------------------
# Files, ports, environment


def free_port(kind=socket.SOCK_STREAM):
    """A port on 127.0.0.1 (TCP, or KIND: socket.SOCK_DGRAM for UDP) that nothing listens on now."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_file(path, text, mode=0o600):
    """Writes TEXT (str or bytes) to PATH whole (a new file renamed over the old: a reader sees one or the
    other), with MODE."""
    tmp = path + ".new"
    with open(tmp, "wb" if isinstance(text, bytes) else "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def read_text(path):
    with open(path, errors="replace") as f:
        return f.read()


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def read_jsonl(path):
    """The complete JSON lines of PATH (a line cut off at the end, or one that is not JSON, is left out)."""
    out = []
    with open(path, "rb") as f:
        for line in f:
            if line.endswith(b"\n"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def clean_env(extra=None):
    """This process's environment without TEGRAWATCH_* (a developer's setting must not leak into a test) and
    without what systemd gives one process (NOTIFY_SOCKET, WATCHDOG_*, JOURNAL_STREAM: a CI job run as a unit
    has them), in UTC, with EXTRA."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TEGRAWATCH_", "NOTIFY_", "WATCHDOG_", "JOURNAL_"))}
    env["TZ"] = "UTC"
    env.update(extra or {})
    return env


def no_default_web(args, env=None, config=None):
    """ENV for `run ARGS` with TEGRAWATCH_WEB_LISTEN="" added when nothing names web.listen (neither ENV, nor
    CONFIG's text, nor the file of -c in ARGS) and it is not the demo (which takes a free port): 127.0.0.1:9474, the
    default, is one port for the whole machine, and a second agent on it does not start (exit 75)."""
    env = dict(env or {})
    if "TEGRAWATCH_WEB_LISTEN" in env or "--demo" in args:
        return env
    if config is None and "-c" in args and args.index("-c") + 1 < len(args):
        with open(args[args.index("-c") + 1], errors="replace") as f:
            config = f.read()
    if config is None or "web:" not in config:
        env["TEGRAWATCH_WEB_LISTEN"] = ""
    return env


def copy_board(d, fixture=FIXTURE_BOARD, name="root"):
    """A copy of a fixture board in D that a test may write (its thermal zones, its machine id)."""
    root = os.path.join(d, name)
    shutil.copytree(src(fixture), root, symlinks=True)
    return root


def tegrawatch(args, env=None, timeout=60, **kw):
    """`tegrawatch ARGS` to its end: the CompletedProcess, text output."""
    if args and args[0] == "run":
        env = no_default_web(list(args), env)
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=timeout,
                          env=clean_env(env), **kw)


def end_process(proc, timeout=10.0):
    """A peer's end (a broker, Prometheus, Alertmanager): SIGTERM, then SIGKILL after TIMEOUT seconds. None or a
    process already gone: nothing."""
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def pid_alive(pid):
    """True while PID runs (a zombie or no such process: not alive)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def proc_status_kb(pid, key):
    """A "kB" line of /proc/PID/status (RssAnon, VmHWM...), 0 when absent."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def library_dir(d, library, soname):
    """A directory under D for LD_LIBRARY_PATH holding LIBRARY as SONAME (the tests' empty library: one that
    loads and has none of the real one's functions)."""
    libs = os.path.join(d, "libs")
    os.makedirs(libs, exist_ok=True)
    shutil.copy(library, os.path.join(libs, soname))
    return libs


def mapped(pid, names):
    """Which of NAMES (substrings of a library's path) process PID has mapped now (/proc/PID/maps): an idle
    feature's library must not be."""
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read()
    return {n for n in names if n in maps}


def emulator_code_kb(pid):
    """The anonymous memory of qemu-user's translation cache in process PID (kB): TCG's code buffer, the one
    anonymous mapping that is writable and executable on the host (the guest's own memory never is: qemu maps
    it without host PROT_EXEC). It fills as guest code runs for the first time, in 2 MiB huge pages (qemu asks for
    them with madvise), and counts in RssAnon. 0 for a process with no such mapping."""
    kb, code = 0, False
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            head = line.split()
            if not head:
                continue
            if "-" in head[0]:  # a mapping: range, perms, offset, dev, inode[, path]
                code = head[1] == "rwxp" and len(head) == 5
            elif code and head[0] == "Anonymous:":
                kb += int(head[1])
    return kb
