#!/usr/bin/env python3
"""CPU time of `tegrawatch top` per refresh against a running agent (bench/README.md):
   bench/top_cost.py BUILD/tegrawatch [SECONDS]
Starts an agent on the Orin Nano fixture board with its web server on a free port, runs `top --interval 100` on a
pseudo-terminal of 80x24 for SECONDS (default 20), and prints utime+stime of `top` divided by its refreshes."""
import fcntl, os, select, socket, struct, subprocess, sys, tempfile, termios, time

BIN = os.path.abspath(sys.argv[1])
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 20
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
d = tempfile.mkdtemp()
cfg = os.path.join(d, "c.yaml")
with open(cfg, "w") as f:
    f.write('agent:\n  state_file: ""\nweb:\n  listen: "127.0.0.1:%d"\n' % port)
agent = subprocess.Popen([BIN, "run", "-c", cfg, "--root", os.path.join(SRC, "tests/fixtures/boards/orin-nano-jp6"),
                          "--no-tegrastats", "--no-json"], stderr=subprocess.DEVNULL)
try:
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    top = subprocess.Popen([BIN, "top", "-c", cfg, "--interval", "100"], stdin=slave, stdout=slave, stderr=slave,
                           env=dict(os.environ, TERM="xterm"), start_new_session=True)
    os.close(slave)
    end = time.monotonic() + SECONDS
    while time.monotonic() < end:
        if select.select([master], [], [], 0.1)[0]:
            os.read(master, 65536)
    with open("/proc/%d/stat" % top.pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    os.write(master, b"q")
    top.wait(10)
    refreshes = SECONDS / 0.1
    ms = ticks * 1000 / os.sysconf("SC_CLK_TCK")
    print("top: %.0f ms CPU over %.0f refreshes: %.2f ms a refresh" % (ms, refreshes, ms / refreshes))
finally:
    agent.terminate()
    agent.wait()
