#!/usr/bin/env python3
"""Bytes per sample of one board for each way out (docs/fleet.md): remote write, OTLP (gzip and
plain), MQTT state + limits, and a scrape of /metrics (plain and gzip, as Prometheus asks for it).
One agent replays the demo recording at 20x (SAMPLES samples) with every sink on, each receiver a
counting server on 127.0.0.1. Request bodies only: HTTP headers add about 250 bytes a request.

Usage: bench/fleet_bytes.py BUILD/tegrawatch [SAMPLES] [BATCH]
"""
import gzip
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
import fleet_peers as fp  # noqa: E402


def main():
    fp.BIN[0] = os.path.abspath(sys.argv[1])
    samples = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    ok = lambda req: (200, {})  # noqa: E731
    rw, og, op = fp.Proxy(answer=ok).start(), fp.Proxy(answer=ok).start(), fp.Proxy(answer=ok).start()
    with tempfile.TemporaryDirectory() as d:
        mport, wport = fp.free_port(), fp.free_port()
        conf = os.path.join(d, "m.conf")
        fp.write_file(conf, "listener %d 127.0.0.1\nallow_anonymous true\n" % mport, 0o644)
        broker = subprocess.Popen(["mosquitto", "-c", conf], stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        out = open(os.path.join(d, "sub"), "wb")
        sub = subprocess.Popen(["mosquitto_sub", "-p", str(mport), "-t", "tegrawatch/b/state", "-t",
                                "tegrawatch/b/limits", "-q", "1"], stdout=out)
        time.sleep(0.5)
        text = """agent: {state_file: "", board_name: b}
web: {listen: "127.0.0.1:%d"}
mqtt: {host: 127.0.0.1, port: %d, device_id: b, ha_discovery: false}
remote_write: {url: "%s", batch_samples: %d, batch_interval: 1h}
otlp: {url: "%s", batch_samples: %d, batch_interval: 1h}
""" % (wport, mport, rw.url("/"), batch, og.url("/"), batch)
        # the plain OTLP sink is a second agent: one otlp section each
        plain = "agent: {state_file: \"\", board_name: b}\nweb: {listen: \"\"}\notlp: {compression: none, " \
                "url: \"%s\", batch_samples: %d, batch_interval: 1h}\n" % (op.url("/"), batch)
        args = ["--demo", "--speed", "20", "--count", str(samples)]
        a = fp.Agent(d, "a", text, args)
        b = fp.Agent(d, "b", plain, args)
        fp.wait_until(lambda: len(a.all()) >= samples // 2, 60)
        req = urllib.request.Request("http://127.0.0.1:%d/metrics" % wport)
        scrape = urllib.request.urlopen(req, timeout=10).read()
        a.wait_exit(120)
        b.wait_exit(120)
        time.sleep(1)
        sub.terminate()
        broker.terminate()
        out.close()
        mqtt = os.path.getsize(out.name)  # the payloads, a newline after each
        n = len(a.all())
        series = scrape.count(b"\ntegrawatch_")
        for name, px in (("remote write (snappy)", rw), ("OTLP (gzip)", og), ("OTLP (plain)", op)):
            got = px.got()
            print("%-24s %7.0f bytes a sample (%d requests of %d samples)" % (
                name, sum(len(r["body"]) for r in got) / n, len(got), batch))
        print("%-24s %7.0f bytes a sample" % ("MQTT state + limits", mqtt / n))
        print("%-24s %7.0f bytes a scrape plain, %.0f gzip (%d series)" % (
            "/metrics", len(scrape), len(gzip.compress(scrape)), series))
    for p in (rw, og, op):
        p.stop()


if __name__ == "__main__":
    main()
