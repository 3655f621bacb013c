"""`tegrawatch top` read from a pseudo-terminal (pyte renders what it draws): the values on screen are the agent's
API at that moment; the layout at 80x24 and 200x60, a resize, the keys, `q`; no agent (it reads the board itself);
the agent stopping under it; a non-terminal stdout (one plain screen) and NO_COLOR (no colour escapes); ncursesw
loaded for the screen only, and missing.

Usage: test_top.py TEGRAWATCH SOURCE_ROOT EMPTY_LIBRARY"""
import fcntl
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading

import harness
from harness import FIXTURE_BOARD, Agent, clean_env, free_port, src, tegrawatch, wait_until, web_config

try:
    import pyte
except ImportError:  # harness.init skips the test
    pyte = None

COLOUR = re.compile(rb"\x1b\[[0-9;]*(3[0-7]|4[0-7])(;[0-9]+)*m")
HOT = "tests/fixtures/boards/orin-nano-jp6-hot"
EX_UNAVAILABLE = 69


class Pty:
    """`tegrawatch top ARGS` on a pseudo-terminal of COLS x ROWS, its output fed to a pyte screen as it comes."""

    def __init__(self, args, cols=80, rows=24, env=None):
        self.master, slave = os.openpty()
        self._winsize(slave, cols, rows)
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()
        self.lock = threading.Lock()
        # screen: colours, no REP (CSI b), which pyte 0.8 does not know
        e = clean_env(dict({"TERM": "screen"}, **(env or {})))
        self.proc = subprocess.Popen([harness.base.BIN, "top"] + list(args), stdin=slave, stdout=slave, stderr=slave,
                                     env=e, start_new_session=True)
        os.close(slave)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    @staticmethod
    def _winsize(fd, cols, rows):
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def _read(self):
        while True:
            r, _, _ = select.select([self.master], [], [], 0.2)
            if not r:
                if self.proc.poll() is not None:
                    return
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self.lock:
                self.raw += data
                self.stream.feed(data)

    def lines(self):
        with self.lock:
            return list(self.screen.display)

    def text(self):
        return "\n".join(self.lines())

    def row_of(self, needle):
        return next((i for i, line in enumerate(self.lines()) if needle in line), -1)

    def wait_for(self, needle, timeout=15):
        ok = wait_until(lambda: needle in self.text() or self.proc.poll() is not None, timeout)
        assert ok and needle in self.text(), "%r not on the screen:\n%s" % (needle, self.text())

    def key(self, k):
        os.write(self.master, k.encode())

    def resize(self, cols, rows):
        with self.lock:
            self.screen.resize(rows, cols)
        self._winsize(self.master, cols, rows)
        self.proc.send_signal(signal.SIGWINCH)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(5)
        os.close(self.master)


class TopTest(harness.TestCase):
    def agent_and_config(self, root=FIXTURE_BOARD):
        port = free_port()
        cfg = self.path("top.yaml", web_config(port))
        a = Agent(self.d, ["--root", src(root), "--no-tegrastats", "--no-json"], config=web_config(port), port=port)
        self.addCleanup(a.kill)
        a.wait_web()
        wait_until(lambda: a.snapshot()["seq"] > 1, 30)
        return a, cfg, port

    def pty(self, args, **kw):
        p = Pty(args, **kw)
        self.addCleanup(p.close)
        return p

    def assert_shows(self, p, snap):
        m = snap["metrics"]
        text = p.text()
        self.assertIn("cpu %.1f" % m["temp.cpu_c"], text)
        self.assertIn("gpu %.1f" % m["temp.gpu_c"], text)
        self.assertIn("%.0f MHz" % m["gpu.freq_mhz"], text)
        self.assertIn("mode %s" % snap["power_mode"], text)
        self.assertEqual("THROTTLED" in text, snap["throttle"]["active"], text)
        for rail in ("vdd_in", "vdd_soc"):
            self.assertIn("%s %.2f W" % (rail, m["power.%s.mw" % rail] / 1000), text)

    def test_values_layout_resize_keys_quit(self):
        a, cfg, port = self.agent_and_config(HOT)
        p = self.pty(["-c", cfg])
        p.wait_for("[agent 127.0.0.1:%d]" % port)
        p.wait_for("TEMP")
        self.assert_shows(p, a.snapshot())
        self.assertIn("HOT SURFACE", p.text())
        self.assertEqual(p.row_of("1 overview  2 thermal"), 23)
        self.assertNotEqual(p.row_of("CPU"), p.row_of("TEMP"))
        # wider and taller: two columns
        p.resize(200, 60)
        two = lambda: p.row_of("1 overview  2 thermal") == 59 and p.row_of("CPU") == p.row_of("TEMP") >= 0
        self.assertTrue(wait_until(two, 10), p.text())
        p.resize(80, 24)
        one = lambda: p.row_of("1 overview  2 thermal") == 23 and 0 <= p.row_of("CPU") < p.row_of("TEMP")
        self.assertTrue(wait_until(one, 10), p.text())
        # the views
        p.key("2")
        p.wait_for("SENSOR          TEMP C")
        p.key("3")
        p.wait_for("RAIL                  NOW W")
        p.key("\t")
        p.wait_for("ALERT")
        p.key("q")
        self.assertEqual(p.proc.wait(10), 0)

    def test_no_agent_reads_the_board(self):
        cfg = self.path("top.yaml", web_config(free_port()))  # nobody listens there
        p = self.pty(["-c", cfg, "--root", src(HOT)])
        p.wait_for("[board ")
        p.wait_for("none known: no agent")
        snap = json.loads(tegrawatch(["snapshot", "--json", "--root", src(HOT)]).stdout)
        self.assert_shows(p, snap)
        p.key("q")
        self.assertEqual(p.proc.wait(10), 0)

    def test_agent_stops_under_it(self):
        a, cfg, port = self.agent_and_config()
        p = self.pty(["-c", cfg, "--root", src(FIXTURE_BOARD), "--interval", "200"])
        p.wait_for("[agent 127.0.0.1:%d]" % port)
        a.stop()
        p.wait_for("agent 127.0.0.1:%d stopped" % port)
        p.wait_for("[board ")
        self.assertIsNone(p.proc.poll())
        p.key("q")
        self.assertEqual(p.proc.wait(10), 0)

    def test_ncurses_loaded_for_the_screen_only(self):
        """ncursesw is loaded when the screen opens (an agent never maps it: test_tick_cost.py); one that cannot be
        loaded is one error naming the package, exit 69."""
        cfg = self.path("top.yaml", web_config(free_port()))
        p = self.pty(["-c", cfg, "--root", src(HOT)])
        p.wait_for("TEMP")
        self.assertEqual(harness.mapped(p.proc.pid, ("libncursesw",)), {"libncursesw"})
        p.key("q")
        self.assertEqual(p.proc.wait(10), 0)
        libs = harness.library_dir(self.d, EMPTY_LIB, "libncursesw.so.6")
        p = self.pty(["-c", cfg, "--root", src(HOT)], env={"LD_LIBRARY_PATH": libs})
        self.assertEqual(p.proc.wait(30), EX_UNAVAILABLE)
        p.reader.join(5)
        said = bytes(p.raw).decode(errors="replace")
        self.assertIn("top: cannot load ncursesw: install libncursesw6 (libncursesw.so.6 has no ", said)
        self.assertIn("tegrawatch top: the full screen needs ncursesw; `tegrawatch top --once` prints one screen",
                      said)

    def test_not_a_terminal_and_no_color(self):
        cfg = self.path("top.yaml", web_config(free_port()))
        r = tegrawatch(["top", "-c", cfg, "--root", src(HOT)], env={"TERM": "xterm"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("\x1b", r.stdout)
        self.assertIn("TEMP", r.stdout)
        self.assertTrue(all(len(line) <= 80 for line in r.stdout.splitlines()))
        once = tegrawatch(["top", "--once", "--view", "thermal", "-c", cfg, "--root", src(HOT)])
        self.assertIn("SENSOR          TEMP C", once.stdout)
        # colours in a terminal, none with NO_COLOR
        for env, coloured in (({}, True), ({"NO_COLOR": "1"}, False)):
            p = self.pty(["-c", cfg, "--root", src(HOT)], env=env)
            p.wait_for("TEMP")
            p.key("q")
            self.assertEqual(p.proc.wait(10), 0)
            p.reader.join(5)
            self.assertEqual(COLOUR.search(bytes(p.raw)) is not None, coloured, bytes(p.raw)[:400])


if __name__ == "__main__":
    EMPTY_LIB = os.path.abspath(sys.argv.pop(3))
    harness.init(needs=("module:pyte",))
    harness.main()
