#!/usr/bin/env bash
# `tegrawatch report` on a 24-hour recording at 1 Hz (86,400 lines): the demo
# log repeated 96 times with shifted stamps. Prints wall and CPU time and the
# peak resident memory (GNU time), for the log and for the same samples as a
# `run --record` recording.
#   bench/bench_report.sh BUILD_DIR
set -eu
bin=${1:-build}/tegrawatch
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$src/configs/demo/tegrastats.log" "$tmp/day.log" <<'PY'
import datetime, sys
lines = [l for l in open(sys.argv[1]) if l.strip() and not l.startswith('#')]
start = datetime.datetime(2025, 3, 14, 10, 0, 0)
with open(sys.argv[2], 'w') as f:
    for i in range(86400):
        t = start + datetime.timedelta(seconds=i)
        f.write(t.strftime('%m-%d-%Y %H:%M:%S') + lines[i % len(lines)][19:])
PY
"$bin" run --replay "$tmp/day.log" --speed 0 --no-json --record "$tmp/day.jsonl"
t() { /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB max RSS" "$@"; }
echo "tegrastats log, --json:";              t "$bin" report "$tmp/day.log" --json "$tmp/r.json"
echo "tegrastats log, --json --csv --html:"; t "$bin" report "$tmp/day.log" --json "$tmp/r.json" --csv "$tmp/r.csv" --html "$tmp/r.html"
echo "run --record recording, --json:";      t "$bin" report "$tmp/day.jsonl" --json "$tmp/r.json"
echo "replay alone (the pipeline without the report):"; t "$bin" replay "$tmp/day.log" --dry-run >/dev/null
