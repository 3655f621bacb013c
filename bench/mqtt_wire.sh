#!/bin/sh
# MQTT bytes per sample as the agent sends them: `tegrawatch run` publishes
# SAMPLES samples to a throw-away mosquitto on a free 127.0.0.1 port while
# mosquitto_sub counts every message of the device's topics (the retained
# ones included); then, per topic, messages and bytes, and the PUBLISH
# packets' bytes (fixed header, topic, packet id for QoS 1; MQTT 3.1.1) per
# sample. Discovery configs (homeassistant/...) are not counted.
#
#   bench/mqtt_wire.sh [BUILD_DIR [SAMPLES]]      (default build-bench, 100)
# Environment: ROOT (fixture board, default tests/fixtures/boards/agx-orin-jp5;
# ROOT=demo replays the demo recording on the demo board), TW (the binary).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build-bench}
n=${2:-100}
root=${ROOT:-tests/fixtures/boards/agx-orin-jp5}
tw=${TW:-$build/tegrawatch}
[ -x "$tw" ] || { echo "bench/mqtt_wire.sh: no $tw" >&2; exit 1; }
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)
dir=$(mktemp -d)
bpid=
spid=
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; [ -n "$bpid" ] && kill "$bpid" 2>/dev/null; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n' "$port" >"$dir/broker.conf"
"$mosquitto" -c "$dir/broker.conf" 2>"$dir/broker.log" &
bpid=$!
sleep 0.5
mosquitto_sub -h 127.0.0.1 -p "$port" -q 1 -t 'tegrawatch/wire/#' -F '%t %l' >"$dir/sub.txt" &
spid=$!
sleep 0.5
printf 'agent:\n  state_file: ""\nweb:\n  listen: ""\nmqtt:\n  host: 127.0.0.1\n  port: %s\n  device_id: wire\n' \
	"$port" >"$dir/agent.yaml"
chmod 600 "$dir/agent.yaml"
if [ "$root" = demo ]; then
	set -- --demo --speed 20
else
	set -- --root "$root" --no-tegrastats --interval 50
fi
"$tw" run -c "$dir/agent.yaml" "$@" --count "$n" >/dev/null 2>"$dir/agent.log"
sleep 1
kill "$spid"
wait "$spid" 2>/dev/null || true
spid=
echo "board $root, $n samples, topic prefix tegrawatch/wire/ (MQTT 3.1.1, QoS 1 but metric/ and ha)"
awk -v n="$n" '
function wire(tlen, plen, qos,   rem, v, h) {
	rem = 2 + tlen + (qos ? 2 : 0) + plen
	h = 1
	for (v = rem; v >= 128; v = int(v / 128)) h++
	return 1 + h + rem
}
{
	leaf = substr($1, length("tegrawatch/wire/") + 1)
	qos = (leaf == "ha" || leaf ~ /^metric\//) ? 0 : 1
	msgs[leaf]++
	bytes[leaf] += $2
	w[leaf] += wire(length($1), $2, qos)
	tw += wire(length($1), $2, qos)
}
END {
	printf "%-16s %8s %12s %16s\n", "topic", "messages", "payload B", "PUBLISH B/sample"
	for (l in msgs) printf "%-16s %8d %12d %16.1f\n", l, msgs[l], bytes[l], w[l] / n
	printf "%-16s %8s %12s %16.1f\n", "all", "", "", tw / n
}' "$dir/sub.txt"
