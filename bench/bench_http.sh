#!/usr/bin/env bash
# Load check of the HTTP server: requests per second for /api/v1/snapshot and
# /metrics with wrk on loopback, while the agent samples the demo board's
# sysfs tree, and the sampling cadence meanwhile (agent.late_ticks_total and
# the tick-to-tick jitter read from /api/v1/snapshot, polled every 20 ms).
#
#   bench/bench_http.sh [TEGRAWATCH]
#   DURATION=10 CONNECTIONS=8 THREADS=2 INTERVAL=100 PORT=19480 bench/bench_http.sh
#
# Needs wrk (apt-get install wrk; not a CI dependency: skipped without it)
# and python3. Prints a Markdown table for bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v wrk >/dev/null 2>&1; then
	echo "bench_http: wrk is not installed (apt-get install wrk): skipped"
	exit 0
fi
BIN=${1:-}
if [ -z "$BIN" ]; then
	for b in build-bench/tegrawatch build/tegrawatch; do
		[ -x "$b" ] && BIN=$b && break
	done
fi
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
	echo "bench_http: no tegrawatch binary (build one, or pass its path)" >&2
	exit 1
fi
PORT=${PORT:-19480}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-8}
THREADS=${THREADS:-2}
INTERVAL=${INTERVAL:-100}

tmp=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# The shipped rules; 16 connections per address so wrk's CONNECTIONS and the poller fit.
cat >"$tmp/tegrawatch.yaml" <<EOF
agent:
  state_file: ""
include:
  - $PWD/configs/rules.d/*.yaml
web:
  listen: 127.0.0.1:$PORT
  max_connections_per_ip: 16
EOF
chmod 644 "$tmp/tegrawatch.yaml"

# A live agent (wall-clock sample times, unlike a replay) on the demo board's tree.
"$BIN" run --root configs/demo/root --no-tegrastats --interval "$INTERVAL" -c "$tmp/tegrawatch.yaml" \
	>/dev/null 2>"$tmp/agent.err" &
pid=$!

cat >"$tmp/poll.py" <<'EOF'
# Polls /api/v1/snapshot for SECONDS; prints the cadence figures as KEY=VALUE.
import http.client, json, sys, time
port, seconds, interval = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
seen, late, ready = {}, [], time.time() + 15
conn = None
end = time.time() + seconds
while time.time() < end or (seconds == 0 and not seen):
    try:
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/api/v1/snapshot")
        snap = json.loads(conn.getresponse().read())
    except (OSError, http.client.HTTPException, ValueError):
        conn = None
        if time.time() > ready:
            sys.exit("poll: no answer from the agent")
        time.sleep(0.05)
        continue
    if snap["seq"] > 0:
        seen[snap["seq"]] = snap["time_ms"]
        late.append(snap["metrics"].get("agent.late_ticks_total", 0))
    time.sleep(0.02)
seqs = sorted(seen)
dev = sorted(abs(seen[s + 1] - seen[s] - interval) for s in seqs if s + 1 in seen)
pick = lambda q: dev[min(len(dev) - 1, int(q * len(dev)))] if dev else -1
print(f"samples={len(seqs)} pairs={len(dev)} p50={pick(0.5)} p99={pick(0.99)} max={dev[-1] if dev else -1} "
      f"late_start={int(late[0]) if late else -1} late_end={int(late[-1]) if late else -1}")
EOF
python3 "$tmp/poll.py" "$PORT" 0 "$INTERVAL" >/dev/null  # waits until the server answers

cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$pid/stat"
}
hz=$(getconf CLK_TCK)
rows=()
# the cadence without load first, for comparison
python3 "$tmp/poll.py" "$PORT" "$DURATION" "$INTERVAL" >"$tmp/poll.txt"
eval "$(tr ' ' '\n' <"$tmp/poll.txt" | sed 's/^/poll_/')"
echo "== no load: cadence: $poll_samples samples seen, interval deviation p50 $poll_p50 ms p99 $poll_p99 ms" \
	"max $poll_max ms, late ticks $poll_late_start -> $poll_late_end"
rows+=("| none (poller only) | - | - | - | $poll_p50 / $poll_p99 / $poll_max ms ($poll_pairs intervals) | $((poll_late_end - poll_late_start)) |")
for path in /api/v1/snapshot /metrics; do
	python3 "$tmp/poll.py" "$PORT" "$((DURATION + 1))" "$INTERVAL" >"$tmp/poll.txt" &
	poller=$!
	t0=$(cpu_ticks)
	wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "http://127.0.0.1:$PORT$path" >"$tmp/wrk.txt"
	t1=$(cpu_ticks)
	wait "$poller"
	rps=$(awk '/^Requests\/sec:/ { print $2 }' "$tmp/wrk.txt")
	lat50=$(awk '$1 == "50%" { print $2 }' "$tmp/wrk.txt")
	lat99=$(awk '$1 == "99%" { print $2 }' "$tmp/wrk.txt")
	errors=$(awk '/Non-2xx|Socket errors/ { print }' "$tmp/wrk.txt" | tr '\n' ' ')
	bytes=$(python3 -c 'import sys, urllib.request; print(len(urllib.request.urlopen(sys.argv[1]).read()))' \
		"http://127.0.0.1:$PORT$path")
	cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v d="$DURATION" 'BEGIN { printf "%.0f", (b - a) / hz / d * 100 }')
	eval "$(tr ' ' '\n' <"$tmp/poll.txt" | sed 's/^/poll_/')"
	echo "== $path: $rps req/s, latency p50 $lat50 p99 $lat99, agent CPU $cpu % ${errors}"
	echo "   cadence: $poll_samples samples seen, interval deviation p50 $poll_p50 ms p99 $poll_p99 ms" \
		"max $poll_max ms, late ticks $poll_late_start -> $poll_late_end"
	rows+=("| \`$path\` ($bytes bytes) | $rps | $lat50 / $lat99 | $cpu % | $poll_p50 / $poll_p99 / $poll_max ms ($poll_pairs intervals) | $((poll_late_end - poll_late_start)) |")
done

echo
echo "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s on 127.0.0.1; agent interval $INTERVAL ms ($(nproc) CPUs)"
echo
echo "| endpoint | requests/s | latency p50 / p99 | agent CPU | sample interval deviation p50 / p99 / max | late ticks |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
