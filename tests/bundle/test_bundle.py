#!/usr/bin/env python3
"""The portable bundle (scripts/bundle.sh) runs on a host that has none of its libraries, and on Linux 4.9.

Builds tegrawatch-VERSION-linux-ARCH.tar.gz, unpacks it into an empty root that holds only the bundle under
/opt, a fixture board tree under /board, /dev and /proc (a private mount namespace, chroot), and runs there:
--version, snapshot --root /board --json (equal to REFERENCE's output on the same tree), replay --dry-run of
the demo log (equal to REFERENCE's), and run --demo --count N with MQTT to a mosquitto on a free 127.0.0.1 port
(every sample's state arrives) and the web server answering /healthz and /api/v1/snapshot while it runs. Then
all of it again under tests/bundle/linux49.py (every system call added after Linux 4.9 fails with ENOSYS).
Also: the tarball's layout, its installer (install.sh --root), no host library in the agent's maps.

For arm64 the programs run under qemu-user through binfmt_misc (F flag: the chroot holds no qemu); the seccomp
filter then acts on qemu's own (x86_64) system calls, not on the aarch64 binary's: the Linux 4.9 run is a real
proof for amd64 only (docs/bundle.md).

Usage: test_bundle.py ARCH SOURCE_ROOT WORK_DIR REFERENCE_BINARY (root, or user namespaces for unshare -r)
"""
import json
import select
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import free_port, wait_until  # noqa: E402  (the one harness: ports, waiting)

ARCH, SRC, WORK, REF = sys.argv[1:5]
SRC = os.path.abspath(SRC)
HERE = os.path.dirname(os.path.abspath(__file__))
BOARD = "orin-nano-jp6"
OPT = "/opt/tegrawatch"
COUNT = 12


MARKER_TOPIC = "tegrawatch/bundle-test-ready/state"  # matches the subscription's tegrawatch/+/state


class Bundle:
    """The tarball, built once, and an empty root with it unpacked."""

    def __init__(self):
        if ARCH == "arm64" and subprocess.run([os.path.join(SRC, "scripts/binfmt.sh")]).returncode != 0:
            raise RuntimeError("cannot run aarch64 programs (scripts/binfmt.sh)")
        self.tmp = tempfile.mkdtemp(prefix=f"tw-bundle-{ARCH}-")
        out = os.path.join(self.tmp, "out")
        t = time.monotonic()
        env = dict(os.environ, BUNDLE_BUILD_DIR=os.path.join(os.path.abspath(WORK), f"bundle-{ARCH}"))
        r = subprocess.run([os.path.join(SRC, "scripts/bundle.sh"), ARCH, out], env=env, capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise RuntimeError(f"bundle.sh failed:\n{r.stdout}{r.stderr}")
        print(r.stdout.strip(), f"({time.monotonic() - t:.0f} s)")
        names = os.listdir(out)
        assert len(names) == 1, names
        self.tarball = os.path.join(out, names[0])
        self.root = os.path.join(self.tmp, "root")
        for d in ("opt", "board", "dev", "proc"):
            os.makedirs(os.path.join(self.root, d))
        subprocess.run(["tar", "-C", os.path.join(self.root, "opt"), "-xzf", self.tarball], check=True)
        # the fixture tree as it is (mostly symlinks, as in sysfs)
        subprocess.run(["cp", "-a", os.path.join(SRC, "tests/fixtures/boards", BOARD, "."),
                        os.path.join(self.root, "board")], check=True)
        self.unshare = ["unshare", "--mount", "--propagation", "private"]
        if os.geteuid() != 0:
            self.unshare = ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"]

    def command(self, args, linux49=False):
        """ARGS run in the empty root: /dev and /proc bound in a private mount namespace, then chroot."""
        inner = ["chroot", self.root, OPT + "/bin/tegrawatch"] + list(args)
        if linux49:
            inner = [os.path.join(HERE, "linux49.py")] + inner
        script = 'mount --rbind /dev "$1/dev" && mount --rbind /proc "$1/proc" && shift && exec "$@"'
        return self.unshare + ["sh", "-c", script, "sh", self.root] + inner

    def run(self, args, linux49=False, **kw):
        return subprocess.run(self.command(args, linux49), capture_output=True, text=True, timeout=300, **kw)


class BundleTest(unittest.TestCase):
    b = None

    @classmethod
    def setUpClass(cls):
        cls.b = Bundle()

    @classmethod
    def tearDownClass(cls):
        if cls.b:
            shutil.rmtree(cls.b.tmp, ignore_errors=True)

    def test_layout_and_size(self):
        """The tarball unpacks to tegrawatch/ with the binary, its loader, the unit, config, demo, man pages."""
        top = os.path.join(self.b.root, "opt/tegrawatch")
        for f in ("bin/tegrawatch", "install.sh", "BUNDLE", "etc/tegrawatch/tegrawatch.yaml",
                  "etc/tegrawatch/rules.d/jetson.yaml", "lib/systemd/system/tegrawatch.service",
                  "share/man/man1/tegrawatch.1", "share/man/man5/tegrawatch.yaml.5",
                  "share/tegrawatch/demo/tegrastats.log", "share/doc/tegrawatch/README.md",
                  "lib/libc.so.6", "lib/libcurl.so.4", "lib/libsnappy.so.1", "lib/libmosquitto.so.1", "lib/libmicrohttpd.so.12",
                  "lib/libncursesw.so.6", "lib/libtinfo.so.6"):
            self.assertTrue(os.path.exists(os.path.join(top, f)), f)
        interp = subprocess.run(["readelf", "-l", os.path.join(top, "bin/tegrawatch")], capture_output=True,
                                text=True).stdout
        self.assertIn(f"[Requesting program interpreter: {OPT}/lib/ld-linux-", interp)
        with open(os.path.join(top, "lib/systemd/system/tegrawatch.service")) as f:
            unit = f.read()
        self.assertIn(f"ExecStart={OPT}/bin/tegrawatch run -c /etc/tegrawatch/tegrawatch.yaml", unit)
        print(f"{os.path.basename(self.b.tarball)}: {os.path.getsize(self.b.tarball) // 1024} KiB")

    def test_installer(self):
        """install.sh --root lays out the configuration, the unit and the links as the package does."""
        dest = os.path.join(self.b.tmp, "dest")
        os.makedirs(os.path.join(dest, "etc/tegrawatch"))
        with open(os.path.join(dest, "etc/tegrawatch/tegrawatch.yaml"), "w") as f:
            f.write("# edited\n")
        r = subprocess.run([os.path.join(self.b.root, "opt/tegrawatch/install.sh"), "--root", dest],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(dest, "etc/tegrawatch/tegrawatch.yaml")) as f:
            self.assertEqual(f.read(), "# edited\n")
        self.assertTrue(os.path.exists(os.path.join(dest, "etc/tegrawatch/tegrawatch.yaml.dist")))
        self.assertTrue(os.path.exists(os.path.join(dest, "etc/tegrawatch/rules.d/jetson.yaml")))
        self.assertTrue(os.path.exists(os.path.join(dest, "etc/systemd/system/tegrawatch.service")))
        self.assertEqual(os.readlink(os.path.join(dest, "usr/local/bin/tegrawatch")), OPT + "/bin/tegrawatch")
        self.assertEqual(os.readlink(os.path.join(dest, "usr/local/share/man/man1/tegrawatch.1")),
                         OPT + "/share/man/man1/tegrawatch.1")
        r = subprocess.run([os.path.join(self.b.root, "opt/tegrawatch/install.sh"), "--root", dest, "--uninstall"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.lexists(os.path.join(dest, "usr/local/bin/tegrawatch")))
        self.assertTrue(os.path.exists(os.path.join(dest, "etc/tegrawatch/tegrawatch.yaml")))

    def test_installer_old_systemd(self):
        """Before systemd 239 (JetPack 4's 237) the unit has no @system-service allow list, which 237 would
        shrink to its @default calls and kill the agent; the deny list stays. From 239 on, the package's unit."""
        with open(os.path.join(self.b.root, "opt/tegrawatch/lib/systemd/system/tegrawatch.service")) as f:
            shipped = f.read()
        self.assertIn("\nSystemCallFilter=@system-service\n", shipped)
        for version, want in (("237", "deny list only"), ("238", "deny list only"), ("239", "as shipped"),
                              ("252", "as shipped")):
            dest = os.path.join(self.b.tmp, "dest-systemd-" + version)
            r = subprocess.run([os.path.join(self.b.root, "opt/tegrawatch/install.sh"), "--root", dest,
                                "--systemd-version", version], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(dest, "etc/systemd/system/tegrawatch.service")) as f:
                unit = f.read()
            if want == "as shipped":
                self.assertEqual(unit, shipped, version)
                self.assertNotIn("@system-service (239)", r.stdout)
            else:
                self.assertEqual(unit, shipped.replace("\nSystemCallFilter=@system-service\n", "\n"), version)
                self.assertIn("SystemCallFilter=~@privileged @resources\n", unit)
                self.assertIn(f"systemd {version} has no @system-service (239)", r.stdout)
        # an image for a JetPack 4 board prepared elsewhere: --root DIR reads DIR's own systemd package
        dest = os.path.join(self.b.tmp, "dest-image")
        os.makedirs(os.path.join(dest, "var/lib/dpkg"))
        with open(os.path.join(dest, "var/lib/dpkg/status"), "w") as f:
            f.write("Package: systemd-sysv\nVersion: 245.4-4ubuntu3\n\n"
                    "Package: systemd\nStatus: install ok installed\nVersion: 237-3ubuntu10.57\n\n")
        r = subprocess.run([os.path.join(self.b.root, "opt/tegrawatch/install.sh"), "--root", dest],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("systemd 237 has no @system-service (239)", r.stdout)

    def check_commands(self, linux49):
        r = self.b.run(["--version"], linux49)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^tegrawatch \d+\.\d+\.\d+\n$")

        r = self.b.run(["snapshot", "--root", "/board", "--json"], linux49)
        self.assertEqual(r.returncode, 0, r.stderr)
        ref = subprocess.run([REF, "snapshot", "--root", os.path.join(SRC, "tests/fixtures/boards", BOARD), "--json"],
                             capture_output=True, text=True)
        self.assertEqual(ref.returncode, 0, ref.stderr)
        self.assertEqual(r.stdout, ref.stdout)
        self.assertGreater(len(json.loads(r.stdout)["metrics"]), 20)

        demo = OPT + "/share/tegrawatch/demo"
        r = self.b.run(["replay", demo + "/tegrastats.log", "-c", demo + "/tegrawatch.yaml", "--root", demo + "/root",
                        "--dry-run", "--json"], linux49)
        self.assertEqual(r.returncode, 0, r.stderr)
        src_demo = os.path.join(SRC, "configs/demo")
        ref = subprocess.run([REF, "replay", src_demo + "/tegrastats.log", "-c", src_demo + "/tegrawatch.yaml",
                              "--root", src_demo + "/root", "--dry-run", "--json"], capture_output=True, text=True)
        self.assertEqual(r.stdout, ref.stdout)
        self.assertGreater(r.stdout.count("\n"), 3)

        self.check_run(linux49)

    def check_run(self, linux49):
        """run --demo --count N: MQTT to a loopback broker gets every sample, the web server answers."""
        mport, wport = free_port(), free_port()
        conf = os.path.join(self.b.tmp, f"broker-{mport}.conf")
        with open(conf, "w") as f:
            f.write(f"listener {mport} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        broker = subprocess.Popen(["mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        sub = None
        agent = None
        try:
            self.assertTrue(wait_until(lambda: self.connects(mport), 20), "the broker did not start")
            sub = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(mport), "-t", "tegrawatch/+/state",
                                    "-v"], stdout=subprocess.PIPE, text=True)
            # the subscription is in before the first sample (state is not retained): a marker came through
            self.assertTrue(wait_until(lambda: self.marker_seen(mport, sub), 20), "mosquitto_sub never subscribed")
            env = dict(os.environ, TEGRAWATCH_MQTT_PORT=str(mport), TEGRAWATCH_WEB_LISTEN=f"127.0.0.1:{wport}")
            agent = subprocess.Popen(self.b.command(["run", "--demo", "--speed", "3", "--count", str(COUNT)], linux49),
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            health = {}

            def answers():
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{wport}/healthz", timeout=5) as h:
                        health["healthz"] = h.status
                    with urllib.request.urlopen(f"http://127.0.0.1:{wport}/api/v1/snapshot", timeout=5) as h:
                        health["snapshot"] = json.loads(h.read())
                    return True
                except OSError:
                    return False

            self.assertTrue(wait_until(answers, 60), "the web server did not answer")
            out, err = agent.communicate(timeout=180)
            self.assertEqual(agent.returncode, 0, err[-2000:])
            self.assertEqual(health["healthz"], 200)
            self.assertIn("metrics", health["snapshot"])
            lines = [json.loads(x) for x in out.splitlines()]
            self.assertEqual(len(lines), COUNT)
            got = []

            def all_states():
                while len(got) < COUNT:
                    line = sub.stdout.readline()
                    if not line:
                        return False
                    if not line.startswith(MARKER_TOPIC):
                        got.append(json.loads(line.split(" ", 1)[1]))
                return True

            self.assertTrue(all_states(), f"{len(got)} of {COUNT} states over MQTT")
            # the MQTT seq starts from a base of its own (docs/mqtt.md); the sample times are the same
            self.assertEqual([g["time_ms"] for g in got], [x["time_ms"] for x in lines])
            self.assertEqual([g["seq"] - got[0]["seq"] for g in got], list(range(COUNT)))
        finally:
            for p in (agent, sub, broker):
                if p and p.poll() is None:
                    p.kill()
                if p:
                    p.communicate()

    @staticmethod
    def marker_seen(port, sub):
        """Publishes a marker on a topic SUB listens to; true once SUB has printed one."""
        subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-t", MARKER_TOPIC, "-m", "{}"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
        while select.select([sub.stdout], [], [], 0.5)[0]:
            line = sub.stdout.readline()
            if not line or line.startswith(MARKER_TOPIC):
                return bool(line)
        return False

    @staticmethod
    def connects(port):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False

    def test_empty_root(self):
        """--version, snapshot, replay --dry-run and run with MQTT and web in a root with only the bundle."""
        self.check_commands(linux49=False)

    def test_linux_4_9(self):
        """The same under a filter that makes every system call added after Linux 4.9 fail with ENOSYS."""
        r = subprocess.run([os.path.join(HERE, "linux49.py"), "--check"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        print(r.stdout.strip())
        self.check_commands(linux49=True)

    def test_no_host_library(self):
        """While it runs in the empty root, every file the agent maps is the bundle's."""
        agent = subprocess.Popen(self.b.command(["run", "--demo", "--speed", "1", "--count", "30"]),
                                 env=dict(os.environ, TEGRAWATCH_WEB_LISTEN=f"127.0.0.1:{free_port()}",
                                          TEGRAWATCH_MQTT_PORT=str(free_port())),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            pid = None

            def mapped():
                nonlocal pid
                for p in os.listdir("/proc"):
                    if p.isdigit():
                        try:
                            with open(f"/proc/{p}/maps") as f:
                                maps = f.read()
                        except OSError:
                            continue
                        if f"{self.b.root}{OPT}/bin/tegrawatch" in maps and "libmosquitto" in maps:
                            pid = p
                            return maps
                return None

            self.assertTrue(wait_until(lambda: mapped() is not None, 60), "no agent process found")
            files = {line.split()[5] for line in mapped().splitlines() if len(line.split()) >= 6
                     and line.split()[5].startswith("/")}
            # seen from outside the chroot: the bundle's files are under ROOT/opt/tegrawatch; under qemu-user
            # the maps are qemu's own (the interpreter, opened by binfmt_misc before the chroot)
            inside = self.b.root + OPT + "/"
            ours = [f for f in files if f.startswith(inside)]
            others = [f for f in files if not f.startswith(inside) and "qemu" not in f]
            self.assertEqual(others, [])
            self.assertGreater(len(ours), 5, ours)
            print(f"the agent (pid {pid}) maps {len(ours)} files, all under {OPT}")
        finally:
            agent.kill()
            agent.communicate()


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
