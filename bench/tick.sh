#!/bin/sh
# The whole agent, one tick: `tegrawatch run` on a fixture board with
# everything on (shipped rules, MQTT with HA discovery to a throw-away
# mosquitto on 127.0.0.1, the web server on a free loopback port, JSON Lines
# to /dev/null), sampling every 20 ms for a fixed number of samples.
#
#   bench/tick.sh [BUILD_DIR [MODE [SAMPLES]]]
#     MODE callgrind  instructions per tick: (whole run of N samples - whole
#                     run of 10 samples) / (N - 10), so start-up and the
#                     configuration cancel out; then the top functions by
#                     inclusive cost of the long run
#     MODE strace     syscalls per tick: strace -c -f of the same two runs,
#                     difference / (N - 10), by syscall
#     MODE files      descriptors the agent holds after a few samples
# Environment: ROOT (fixture board, default tests/fixtures/boards/agx-orin-jp5),
# TW (binary, default BUILD_DIR/tegrawatch), HARNESS=1 (root only): as the
# side-by-side harness runs it, the fixture laid read-only over /sys, /etc
# and /var/lib in a private mount namespace and `run` without --root, so
# the host source reads the real /proc too (its /proc/stat: the fixture's,
# a quiet machine, or the throttle rules would fire on this one's load).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build-bench}
mode=${2:-callgrind}
n=${3:-200}
root=${ROOT:-tests/fixtures/boards/agx-orin-jp5}
tw=${TW:-$build/tegrawatch}
short=10
[ -x "$tw" ] || { echo "bench/tick.sh: no $tw" >&2; exit 1; }
rootarg="--root $root"
if [ "${HARNESS:-}" = 1 ]; then
	[ -n "${TICK_IN_NS:-}" ] || exec unshare -m --propagation private env TICK_IN_NS=1 sh "$PWD/bench/tick.sh" "$@"
	for d in class devices bus firmware kernel; do
		[ ! -d "$root/sys/$d" ] || mount -t overlay "tick-$d" -o "ro,lowerdir=$PWD/$root/sys/$d:/sys/$d" "/sys/$d"
	done
	mount -t overlay tick-etc -o "ro,lowerdir=$PWD/$root/etc:/etc" /etc
	[ ! -d "$root/var/lib" ] || mount -t overlay tick-varlib -o "ro,lowerdir=$PWD/$root/var/lib:/var/lib" /var/lib
	mount --bind "$root/proc/stat" /proc/stat
	rootarg=
fi
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
dir=$(mktemp -d)
bpid=
trap '[ -n "$bpid" ] && kill "$bpid" 2>/dev/null; rm -rf "$dir"' EXIT
bport=$(free_port)
wport=$(free_port)
uport=$(free_port)
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n' "$bport" >"$dir/broker.conf"
"$mosquitto" -c "$dir/broker.conf" 2>"$dir/broker.log" &
bpid=$!
sleep 0.5
cat >"$dir/agent.yaml" <<EOF
agent:
  state_file: ""
  board_name: bench-orin
  expected_power_mode: "MAXN, jetson_clocks on"
include:
  - $PWD/configs/rules.d/*.yaml
mqtt:
  host: 127.0.0.1
  port: $bport
  device_id: bench-orin
web:
  listen: "127.0.0.1:$wport"
  history: 1h
work:
  listen: "127.0.0.1:$uport"
EOF
chmod 600 "$dir/agent.yaml"
run() { # run COUNT [wrapper...]
	count=$1
	shift
	# shellcheck disable=SC2086
	"$@" "$tw" run -c "$dir/agent.yaml" $rootarg --no-tegrastats --interval 20 \
		--count "$count" --json >/dev/null 2>"$dir/agent.log"
}
case $mode in
callgrind)
	for c in $short $n; do
		run "$c" valgrind --tool=callgrind --callgrind-out-file="$dir/cg.$c" 2>/dev/null
	done
	a=$(awk '/^summary:/ { print $2 }' "$dir/cg.$short")
	b=$(awk '/^summary:/ { print $2 }' "$dir/cg.$n")
	echo "instructions per tick: $(((b - a) / (n - short))) (runs of $short and $n samples: $a, $b)"
	callgrind_annotate --inclusive=yes "$dir/cg.$n" 2>/dev/null | sed -n '/^Ir/,$p' | head -45
	;;
strace)
	for c in $short $n; do
		run "$c" strace -f -c -o "$dir/st.$c"
	done
	echo "syscalls per tick (runs of $short and $n samples, difference / $((n - short))):"
	awk -v d=$((n - short)) '
		FNR == 1 { f++ }
		$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && $NF != "total" { c[f, $NF] = $4; names[$NF] = 1 }
		END { for (s in names) { x = (c[2, s] - c[1, s]) / d; t += x; if (x >= 0.05) printf "  %-16s %7.2f\n", s, x }
		      printf "  %-16s %7.2f\n", "total", t }' "$dir/st.$short" "$dir/st.$n" | sort -k2 -n -r
	;;
files)
	# shellcheck disable=SC2086
	"$tw" run -c "$dir/agent.yaml" $rootarg --no-tegrastats --interval 100 --json >/dev/null 2>"$dir/agent.log" &
	pid=$!
	sleep 2
	echo "descriptors held after 2 s: $(ls /proc/$pid/fd | wc -l)"
	ls -l /proc/$pid/fd | awk 'NR > 1 { print $NF }' | sed 's|/[^/]*$||' | sort | uniq -c | sort -n -r | head -20
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	;;
*)
	echo "bench/tick.sh: MODE is callgrind, strace or files" >&2
	exit 2
	;;
esac
