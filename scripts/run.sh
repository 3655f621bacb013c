#!/usr/bin/env bash
# Sets everything up, then runs the agent: on a Jetson it watches the board;
# elsewhere it runs the built-in demo board (a replay of a recording in the
# real tegrastats format, played again from the start at its end) with the
# dashboard on http://127.0.0.1:9474/ (the next free port when that one is
# taken) and MQTT on 127.0.0.1:1883 (a local mosquitto is started when none
# runs). The agent itself says where to look. Extra arguments go to
# `tegrawatch run` (--json: every sample on stdout; -v: more log).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ -e /etc/nv_tegra_release ] || grep -qs tegra /proc/device-tree/compatible; then
	echo "run: the board at a glance in another terminal: build/tegrawatch top" >&2
	exec build/tegrawatch run "$@"
fi

broker_pid="" conf=""
cleanup() {
	if [ -n "$broker_pid" ]; then
		kill "$broker_pid" 2>/dev/null || true
		wait "$broker_pid" 2>/dev/null || true
	fi
	[ -z "$conf" ] || rm -f "$conf"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)
if ! (exec 3<>/dev/tcp/127.0.0.1/1883) 2>/dev/null; then
	if [ -x "$mosquitto" ]; then
		conf=$(mktemp "${TMPDIR:-/tmp}/tegrawatch-mosquitto.XXXXXX.conf")
		printf 'listener 1883 127.0.0.1\nallow_anonymous true\n' >"$conf"
		"$mosquitto" -c "$conf" >/dev/null 2>&1 &
		broker_pid=$!
		# the broker is up once its port answers (a few ms; at most 5 s)
		for _ in $(seq 50); do
			(exec 3<>/dev/tcp/127.0.0.1/1883) 2>/dev/null && break
			sleep 0.1
		done
	else
		echo "run: no MQTT broker on 127.0.0.1:1883 and no mosquitto to start: the demo runs without MQTT" >&2
	fi
fi
# issue 33 part 4: the terminal view beside the dashboard
echo "run: the board at a glance in a terminal beside the dashboard: build/tegrawatch top (another terminal," >&2
echo "     or tmux split-window build/tegrawatch top); build/tegrawatch top --once prints one screen" >&2
echo "run: no Jetson here: running the demo board (configs/demo), its 15-minute recording in a loop." >&2
status=0
build/tegrawatch run --demo "$@" || status=$?
# 130/143: stopped by Ctrl-C or a signal, as asked; anything else is worth a word
if [ "$status" -ne 0 ] && [ "$status" -ne 130 ] && [ "$status" -ne 143 ]; then
	echo "run: the demo stopped (exit $status; the reason is above). Run it again with scripts/run.sh" >&2
fi
exit "$status"
