#!/usr/bin/env bash
# Sets everything up, then runs the agent: on a Jetson it watches the board;
# elsewhere it runs the built-in demo board (a replay of a recording in the
# real tegrastats format) with the dashboard on http://127.0.0.1:9474/ and
# MQTT on 127.0.0.1:1883 (a local mosquitto is started when none runs).
# Extra arguments go to `tegrawatch run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ -e /etc/nv_tegra_release ] || grep -qs tegra /proc/device-tree/compatible; then
	exec build/tegrawatch run "$@"
fi

broker_pid=""
cleanup() {
	[ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null || true
}
trap cleanup EXIT
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)
if ! (exec 3<>/dev/tcp/127.0.0.1/1883) 2>/dev/null && [ -x "$mosquitto" ]; then
	conf=$(mktemp)
	printf 'listener 1883 127.0.0.1\nallow_anonymous true\n' > "$conf"
	"$mosquitto" -c "$conf" >/dev/null 2>&1 &
	broker_pid=$!
	sleep 0.3
fi
cat >&2 <<MSG
run: no Jetson here: running the demo board (configs/demo). Ctrl-C to stop.
run: dashboard  http://127.0.0.1:9474/
run: MQTT       mosquitto_sub -h 127.0.0.1 -t 'tegrawatch/#' -v
MSG
build/tegrawatch run --demo "$@"
