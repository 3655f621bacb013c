#!/bin/sh
# RssAnon and PSS of the whole agent with the one-hour history full: `tegrawatch run` replays a steady log
# (bench/steady_log.py: a board's tegrastats lines repeated with stamps one second apart) at 200x on the
# board's fixture tree, with the shipped rules, MQTT to a throw-away mosquitto on a free 127.0.0.1 port and
# the web server on another (its defaults: an hour of every sample, a day of minutes). Once 3,605 samples
# are out the agent is stopped (SIGSTOP) and measured: /proc/PID/status, smaps_rollup, and RssAnon and PSS
# by kind of mapping (bench/smaps_kinds.py). Then it is resumed and stopped; `-v` makes it log the bytes
# its history held.
#
#   bench/rss_hour.sh [BUILD_DIR [demo|orin [off]]]
#     demo  the demo Orin Nano (configs/demo)        orin  the AGX Orin JP5 fixture (tests/fixtures)
#     off   the same agent with the web server and MQTT off
set -eu
cd "$(dirname "$0")/.."
build=${1:-build-bench}
board=${2:-demo}
off=${3:-}
case $board in
demo) log=configs/demo/tegrastats.log root=configs/demo/root ;;
orin) log=tests/fixtures/tegrastats/agx_orin_jetpack5_l4t_r34_r35.txt root=tests/fixtures/boards/agx-orin-jp5 ;;
*) echo "bench/rss_hour.sh: the board is demo or orin" >&2; exit 2 ;;
esac
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
dir=$(mktemp -d)
bpid= pid=
trap '[ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null && kill "$pid" 2>/dev/null; [ -n "$bpid" ] && kill "$bpid" 2>/dev/null; rm -rf "$dir"' EXIT
python3 bench/steady_log.py "$log" 3700 >"$dir/steady.log"
printf 'agent:\n  state_file: ""\ninclude:\n  - %s/configs/rules.d/*.yaml\n' "$PWD" >"$dir/agent.yaml"
if [ "$off" = off ]; then
	printf 'web:\n  listen: ""\n' >>"$dir/agent.yaml"
else
	bport=$(free_port)
	printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n' "$bport" >"$dir/broker.conf"
	"$(command -v mosquitto || echo /usr/sbin/mosquitto)" -c "$dir/broker.conf" 2>"$dir/broker.log" &
	bpid=$!
	printf 'mqtt:\n  host: 127.0.0.1\n  port: %s\nweb:\n  listen: "127.0.0.1:%s"\n' "$bport" "$(free_port)" \
		>>"$dir/agent.yaml"
	sleep 0.5
fi
chmod 600 "$dir/agent.yaml"
"$build/tegrawatch" -v run --replay "$dir/steady.log" --root "$root" --speed 200 -c "$dir/agent.yaml" \
	>"$dir/out.jsonl" 2>"$dir/agent.log" &
pid=$!
while [ "$(cat "$dir/out.jsonl" 2>/dev/null | wc -l)" -lt 3605 ]; do
	kill -0 "$pid" 2>/dev/null || { cat "$dir/agent.log" >&2; exit 1; }
	sleep 0.2
done
kill -STOP "$pid"
grep -E 'VmRSS|RssAnon|Threads' "/proc/$pid/status"
grep -E '^Pss:' "/proc/$pid/smaps_rollup"
python3 bench/smaps_kinds.py "$pid"
kill -CONT "$pid"
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=
grep 'history held' "$dir/agent.log" || true
