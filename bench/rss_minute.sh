#!/bin/sh
# RssAnon of the whole agent SECONDS (default 60) after start, everything on as the side-by-side harness runs it
# (../shared/bench/side_by_side.sh, "tw_full"): `tegrawatch run --no-tegrastats` at 1 s on the AGX Orin JP5 fixture
# tree (--root), with the shipped rules, MQTT (Home Assistant discovery on) to a throw-away mosquitto on a free
# 127.0.0.1 port and the web server on another with an hour of history. Then: /proc/PID/status and RssAnon and
# PSS by kind of mapping (bench/smaps_kinds.py); the agent runs with -v, so its last line says what its history held.
#
#   bench/rss_minute.sh [BUILD_DIR [SECONDS]]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
seconds=${2:-60}
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
dir=$(mktemp -d)
bpid= pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$bpid" ] && kill "$bpid" 2>/dev/null; rm -rf "$dir"' EXIT
bport=$(free_port)
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n' "$bport" >"$dir/broker.conf"
"$(command -v mosquitto || echo /usr/sbin/mosquitto)" -c "$dir/broker.conf" 2>"$dir/broker.log" &
bpid=$!
cat >"$dir/agent.yaml" <<EOF
agent:
  interval: 1s
  state_file: ""
  board_name: sbs-orin
include:
  - $PWD/configs/rules.d/*.yaml
mqtt:
  host: 127.0.0.1
  port: $bport
  device_id: sbs-orin
web:
  listen: "127.0.0.1:$(free_port)"
  history: 1h
  max_connections: 32
  max_connections_per_ip: 32
EOF
chmod 600 "$dir/agent.yaml"
sleep 0.5
"$build/tegrawatch" -v run -c "$dir/agent.yaml" --root tests/fixtures/boards/agx-orin-jp5 --no-tegrastats \
	>/dev/null 2>"$dir/agent.log" &
pid=$!
sleep "$seconds"
kill -0 "$pid" 2>/dev/null || { cat "$dir/agent.log" >&2; exit 1; }
grep -E 'VmRSS|RssAnon|Threads' "/proc/$pid/status"
grep -E '^Pss:' "/proc/$pid/smaps_rollup"
python3 bench/smaps_kinds.py "$pid"
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=
grep 'history held' "$dir/agent.log" || true
