#!/usr/bin/env python3
# Repeats the data lines of a tegrastats log N times with stamps one second apart (the history needs a steady clock).
import sys, datetime, re
src, n = sys.argv[1], int(sys.argv[2])
lines = [l.rstrip("\n") for l in open(src) if l.strip() and not l.startswith("#")]
t = datetime.datetime(2025, 3, 14, 10, 0, 0)
stamp = re.compile(r"^\d\d-\d\d-\d\d\d\d \d\d:\d\d:\d\d ")
for i in range(n):
    body = stamp.sub("", lines[i % len(lines)])
    print(t.strftime("%m-%d-%Y %H:%M:%S ") + body)
    t += datetime.timedelta(seconds=1)
