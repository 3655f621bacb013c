"""A plain process that sleeps to a schedule (every INTERVAL_MS, 100 by default) for SECONDS and prints its own
lateness, p99 and max in ms: what the machine does to any process at normal priority (a timing test's allowance on a
loaded machine). SIGTERM ends it early, still printing: a test stops it when the process it measures stops, so both
saw the same time.

Usage: python3 probe.py SECONDS [INTERVAL_MS]
"""
import signal
import sys
import time


class Stop(Exception):
    pass


def stop(signum, frame):
    raise Stop()


def main():
    signal.signal(signal.SIGTERM, stop)
    n, t0, late = 0, time.monotonic(), []
    end = t0 + float(sys.argv[1])
    interval_s = float(sys.argv[2]) / 1000.0 if len(sys.argv) > 2 else 0.1
    try:
        while True:
            n += 1
            due = t0 + n * interval_s
            if due > end:
                break
            time.sleep(max(0.0, due - time.monotonic()))
            late.append((time.monotonic() - due) * 1000)
    except Stop:
        pass
    late = sorted(late) or [0.0]
    print(int(late[min(len(late) - 1, round(0.99 * (len(late) - 1)))]), int(late[-1]))


if __name__ == "__main__":
    main()
