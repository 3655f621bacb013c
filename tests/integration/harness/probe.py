"""A plain process that sleeps to a 100 ms schedule for ARGV[1] seconds and prints its own lateness, p99 and max
in ms: what the machine does to any process at normal priority (a timing test's allowance on a loaded machine).

Usage: python3 probe.py SECONDS
"""
import sys
import time


def main():
    n, t0, late = 0, time.monotonic(), []
    end = t0 + float(sys.argv[1])
    while True:
        n += 1
        due = t0 + n * 0.1
        if due > end:
            break
        time.sleep(max(0.0, due - time.monotonic()))
        late.append((time.monotonic() - due) * 1000)
    late.sort()
    print(int(late[min(len(late) - 1, round(0.99 * (len(late) - 1)))]), int(late[-1]))


if __name__ == "__main__":
    main()
