#!/usr/bin/env python3
"""A stand-in for nvidia-smi, for scripts/nvml-check.py without a GPU: it answers the two forms the checker uses
from recorded files (by default the idle H200 of tests/fixtures/nvml, the machine h200.fake replays):

    nvidia-smi -q -x                                          FAKE_SMI_XML (h200-nvsmi.xml)
    nvidia-smi --query-gpu=F,... --format=csv,noheader,nounits [-lms MS]
                                                              FAKE_SMI_CSV (h200-smi.csv)

The CSV holds a header of field names and one row per GPU and poll; each poll prints the next row of every GPU
(the last one repeated), the fields in the order asked, `timestamp` as now. With -lms it polls every MS until
killed, as the real one does. An unknown field is refused as the real one refuses it.
"""
import csv
import os
import sys
import time

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "nvml")


def rows_by_gpu(path):
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    by = {}
    for r in rows:
        by.setdefault(r["index"], []).append(r)
    return by


def query(fields, loop_ms):
    by = rows_by_gpu(os.environ.get("FAKE_SMI_CSV", os.path.join(FIXTURES, "h200-smi.csv")))
    known = set(next(iter(by.values()))[0]) | {"timestamp"}
    for f in fields:
        if f not in known:
            print('Field "%s" is not a valid field to query.' % f)
            return 2
    n = 0
    while True:
        now = time.time()
        stamp = time.strftime("%Y/%m/%d %H:%M:%S", time.localtime(now)) + ".%03d" % (now % 1 * 1000)
        for rows in by.values():
            r = dict(rows[min(n, len(rows) - 1)], timestamp=stamp)
            print(", ".join(r[f] for f in fields), flush=True)
        if loop_ms is None:
            return 0
        n += 1
        time.sleep(loop_ms / 1000.0)


def main(args):
    if args[:2] == ["-q", "-x"]:
        with open(os.environ.get("FAKE_SMI_XML", os.path.join(FIXTURES, "h200-nvsmi.xml"))) as f:
            sys.stdout.write(f.read())
        return 0
    opts = dict(a.split("=", 1) for a in args if "=" in a)
    if "--query-gpu" not in opts or opts.get("--format") != "csv,noheader,nounits":
        print("fake nvidia-smi: only -q -x and --query-gpu=... --format=csv,noheader,nounits [-lms MS]",
              file=sys.stderr)
        return 2
    loop = int(args[args.index("-lms") + 1]) if "-lms" in args else None
    return query(opts["--query-gpu"].split(","), loop)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
