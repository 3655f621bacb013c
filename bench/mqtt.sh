#!/bin/sh
# MQTT bench: bytes per state sample on the wire and CPU per published sample,
# against a throw-away mosquitto on a free 127.0.0.1 port.
# Usage: bench/mqtt.sh [BUILD_DIR [SAMPLES]]   (default build-bench, 20000)
set -eu
build=${1:-build-bench}
samples=${2:-20000}
bin="$build/bench/bench_mqtt"
if [ ! -x "$bin" ]; then
	echo "bench/mqtt.sh: $bin not built (needs libmosquitto-dev)" >&2
	exit 0
fi
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)
if [ ! -x "$mosquitto" ]; then
	echo "bench/mqtt.sh: no mosquitto broker: bytes only" >&2
	exec "$bin"
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n' "$port" > "$dir/broker.conf"
"$mosquitto" -c "$dir/broker.conf" 2>"$dir/broker.log" &
pid=$!
sleep 0.5
"$bin" "$port" "$samples"
