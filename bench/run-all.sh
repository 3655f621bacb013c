#!/usr/bin/env bash
# Builds tegrawatch with buildtype=release in build-bench/ and prints every
# figure of bench/README.md. A figure whose program or tool is missing is
# skipped with a message; the script still exits 0 so the others print.
#
# Environment: BUILD (build dir, default build-bench), ROOT (fixture root for
# bench_sample), SAMPLES (bench_sample count), RSS_SECONDS (default 30),
# RSS_SPEED (replay speed factor, default 30: the 900 s demo log in 30 s).
# Word splitting of $(...) into "set --" is on purpose below.
# shellcheck disable=SC2046,SC2086
set -u

cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build-bench}
ROOT=${ROOT:-tests/fixtures/boards/agx-orin-jp5}
DEMO=configs/demo/tegrastats.log
SAMPLES=${SAMPLES:-2000}
RSS_SECONDS=${RSS_SECONDS:-30}
RSS_SPEED=${RSS_SPEED:-30}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/tegrawatch-bench.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

have() { command -v "$1" >/dev/null 2>&1; }
skip() { printf '  SKIPPED: %s\n' "$*"; }
# summary rows, printed again at the end as a Markdown table
ROWS=()
row() { ROWS+=("| $1 | $2 |"); }

# Ir counted by callgrind while inside function $1 (callees included),
# for the command that follows; prints the total, empty on failure
callgrind_ir() {
	local fn=$1 out="$TMP/callgrind.$1"
	shift
	valgrind --tool=callgrind --toggle-collect="$fn" --callgrind-out-file="$out" \
		"$@" >"$TMP/callgrind.stdout" 2>"$TMP/callgrind.stderr" || return 1
	awk '/^summary:/ { print $2; exit }' "$out"
}

echo "== build: $BUILD (buildtype=release)"
if [ -f "$BUILD/build.ninja" ]; then
	meson setup --reconfigure "$BUILD" --buildtype=release -Dbench=true -Dtests=disabled \
		>"$TMP/setup.log" 2>&1
else
	meson setup "$BUILD" --buildtype=release -Dbench=true -Dtests=disabled >"$TMP/setup.log" 2>&1
fi || { cat "$TMP/setup.log"; echo "meson setup failed"; exit 1; }
# -k 0: build whatever can be built, so one broken target skips one figure
if ! ninja -C "$BUILD" -k 0 >"$TMP/build.log" 2>&1; then
	echo "  some targets failed to build (figures that need them are skipped):"
	grep -E '^FAILED:' "$TMP/build.log" | sed 's/^/    /'
fi
BP=$BUILD/bench/bench_parse
BS=$BUILD/bench/bench_sample
TW=$BUILD/tegrawatch
echo "  $(uname -m), $(nproc) CPUs, $(gcc -dumpfullversion 2>/dev/null | sed 's/^/gcc /')," \
	"$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"

echo
echo "== 1. tegrastats parse throughput (bench_parse)"
if [ ! -x "$BP" ]; then
	skip "$BP was not built"
	row "parse: lines/s, ns/line" "pending (bench_parse missing)"
else
	"$BP" | tee "$TMP/parse.mix"
	"$BP" "$DEMO" | tee "$TMP/parse.demo"
	# first timed run = whole corpus; lines/s and ns/line columns
	set -- $(awk '/lines\/s/ { print $(NF-10), $(NF-8); exit }' "$TMP/parse.mix")
	row "parse, fixture mix: lines/s, ns/line" "${1:-?} lines/s, ${2:-?} ns/line"
	set -- $(awk '/lines\/s/ { print $(NF-10), $(NF-8); exit }' "$TMP/parse.demo")
	row "parse, demo log (Orin Nano JP6 shape): lines/s, ns/line" "${1:-?} lines/s, ${2:-?} ns/line"
	if ! have valgrind; then
		skip "instructions per line: valgrind not installed"
		row "parse: instructions/line" "pending (no valgrind)"
	else
		for corpus in mix demo; do
			# a fixed amount of work (every line 20 times), so the count divides exactly
			if [ $corpus = mix ]; then set -- "$BP" --rounds 20; else set -- "$BP" --rounds 20 "$DEMO"; fi
			ir=$(callgrind_ir tegrastats_parse_line "$@")
			calls=$(awk '/lines parsed/ { print $1; exit }' "$TMP/callgrind.stdout")
			if [ -z "$ir" ] || [ -z "$calls" ] || [ "$calls" = 0 ]; then
				skip "callgrind run failed ($corpus): $(tail -1 "$TMP/callgrind.stderr")"
				continue
			fi
			per=$(awk -v a="$ir" -v b="$calls" 'BEGIN { printf "%.0f", a / b }')
			echo "  callgrind ($corpus): $ir instructions in tegrastats_parse_line over $calls calls = $per per line"
			row "parse, $corpus: instructions/line (callgrind)" "$per"
		done
	fi
fi

echo
echo "== 1b. tegrawatch parse end to end (JSON Lines out, demo log x 50)"
if [ ! -x "$TW" ]; then
	skip "$TW was not built"
else
	for _ in $(seq 50); do grep -v '^#' "$DEMO"; done >"$TMP/demo50.log"
	n=$(wc -l <"$TMP/demo50.log")
	TIMEFORMAT='%U %S %R'
	if t=$( { time "$TW" parse "$TMP/demo50.log" >"$TMP/parse50.jsonl" 2>"$TMP/parse50.err"; } 2>&1 ) &&
		[ "$(wc -l <"$TMP/parse50.jsonl")" = "$n" ]; then
		set -- $t
		awk -v u="$1" -v s="$2" -v r="$3" -v n="$n" 'BEGIN {
			printf "  %d lines: %.2f s CPU (user %.2f, sys %.2f), %.2f s wall = %.0f lines/s CPU\n",
				n, u + s, u, s, r, n / (u + s > 0 ? u + s : 1e-9) }'
		row "tegrawatch parse, end to end: lines/s (CPU)" \
			"$(awk -v u="$1" -v s="$2" -v n="$n" 'BEGIN { printf "%.0f", n / (u + s > 0 ? u + s : 1e-9) }')"
	else
		skip "tegrawatch parse failed: $(head -1 "$TMP/parse50.err")"
	fi
fi

echo
echo "== 2. sysfs sample cost (bench_sample on $ROOT)"
if [ ! -x "$BS" ]; then
	skip "$BS was not built"
	row "sample: CPU µs/sample" "pending (bench_sample missing)"
elif [ ! -d "$ROOT" ]; then
	skip "fixture root $ROOT does not exist"
	row "sample: CPU µs/sample" "pending (no fixture root)"
elif ! "$BS" "$ROOT" "$SAMPLES" >"$TMP/sample.out" 2>"$TMP/sample.err"; then
	skip "bench_sample failed: $(head -1 "$TMP/sample.err")"
	row "sample: CPU µs/sample" "pending (bench_sample failed)"
else
	sed 's/^/  /' "$TMP/sample.out"
	get() { awk -v k="$1:" '$1 == k { print $2 }' "$TMP/sample.out"; }
	row "sample: CPU µs/sample (user + sys)" "$(get cpu_us_per_sample) ($(get user_us_per_sample) + $(get sys_us_per_sample))"
	row "sample: metrics/sample" "$(get metrics_per_sample)"
	row "sample: read() calls/sample (/proc/self/io)" "$(get read_syscalls_per_sample)"
	if ! have strace; then
		skip "files opened per sample: strace not installed"
		row "sample: files opened/sample" "pending (no strace)"
	else
		# two runs, 100 and 1100 samples: the difference leaves out board_open
		# the sysfs reader opens through openat2(RESOLVE_IN_ROOT) when it can
		calls=open,openat,openat2
		strace -e trace=$calls true >/dev/null 2>&1 || calls=open,openat
		for n in 100 1100; do
			strace -f -c -o "$TMP/strace.$n" -e trace=$calls "$BS" "$ROOT" $n >/dev/null 2>&1
		done
		opens() { awk '$NF ~ /^open(at2?)?$/ { s += $4 } END { print s + 0 }' "$1"; }
		o1=$(opens "$TMP/strace.100")
		o2=$(opens "$TMP/strace.1100")
		per=$(awk -v a="$o1" -v b="$o2" 'BEGIN { printf "%.1f", (b - a) / 1000 }')
		echo "  strace -c: $o1 opens for 100 samples, $o2 for 1100 = $per files opened per sample"
		row "sample: files opened/sample (strace -c)" "$per"
	fi
	if ! have valgrind; then
		skip "instructions per sample: valgrind not installed"
		row "sample: instructions/sample" "pending (no valgrind)"
	else
		ir=$(callgrind_ir board_sample "$BS" "$ROOT" 200)
		if [ -z "$ir" ]; then
			skip "callgrind run failed: $(tail -1 "$TMP/callgrind.stderr")"
		else
			# bench_sample calls board_sample once untimed, then N times
			per=$(awk -v a="$ir" 'BEGIN { printf "%.0f", a / 201 }')
			echo "  callgrind: $ir instructions in board_sample over 201 calls = $per per sample"
			row "sample: instructions/sample (callgrind)" "$per"
		fi
	fi
fi

echo
echo "== 2b. host, processes and probe sources per sample (bench/host_cost.sh on this machine)"
if [ ! -x "$BUILD/bench/bench_host" ]; then
	skip "$BUILD/bench/bench_host was not built"
elif ! have valgrind || ! have strace; then
	skip "valgrind and strace are both needed"
else
	bench/host_cost.sh "$BUILD" | tee "$TMP/host_cost.out"
	# "| host (defaults) | quiet | scan tick | amortised |", each "instructions / syscalls"
	for src in "host (defaults)" "processes, 10 comm: watches" "probes, 1 TCP probe (loopback)"; do
		line=$(grep -F "| $src |" "$TMP/host_cost.out" | head -1)
		[ -n "$line" ] && row "$src: instructions / syscalls per sample, quiet; scan tick; amortised (1 s)" \
			"$(echo "$line" | awk -F'|' '{ gsub(/^ +| +$/, "", $3); gsub(/^ +| +$/, "", $4); gsub(/^ +| +$/, "", $5); print $3 "; " $4 "; " $5 }')"
	done
fi

echo
echo "== 3. tegrawatch run RSS (replay of $DEMO at speed $RSS_SPEED for $RSS_SECONDS s)"
# The shipped rules (configs/rules.d) on the demo board's tree, no broker.
# A small build: static, without MQTT and web (the target of issue 2).
SMALL=${SMALL:-build-small}
scripts/build-small.sh "$SMALL" >"$TMP/small.log" 2>&1 ||
	skip "small static build failed: $(tail -1 "$TMP/small.log")"
printf 'agent: {state_file: ""}\ninclude: [%s/configs/rules.d/*.yaml]\n' "$PWD" >"$TMP/rss-web.yaml"
printf 'agent: {state_file: ""}\nweb: {listen: ""}\ninclude: [%s/configs/rules.d/*.yaml]\n' "$PWD" \
	>"$TMP/rss-noweb.yaml"
# rss LABEL BINARY CONFIG: polls VmRSS every 0.5 s while the replay runs
rss() {
	local label=$1 bin=$2 cfg=$3
	if [ ! -x "$bin" ]; then
		skip "$label: $bin was not built"
		row "run --replay, $label: VmRSS max / VmHWM" "pending ($bin missing)"
		return
	fi
	"$bin" run --replay "$DEMO" --root configs/demo/root --speed "$RSS_SPEED" -c "$cfg" \
		>"$TMP/run.jsonl" 2>"$TMP/run.err" &
	local pid=$! max_rss=0 hwm=0 polls=0 state end=$((SECONDS + RSS_SECONDS))
	while [ $SECONDS -lt $end ] && [ -r /proc/$pid/status ]; do
		set -- $(awk '$1 == "VmRSS:" { r = $2 } $1 == "VmHWM:" { h = $2 }
			END { print r + 0, h + 0 }' /proc/$pid/status 2>/dev/null)
		if [ "${1:-0}" -gt "$max_rss" ]; then max_rss=$1; fi
		if [ "${2:-0}" -gt "$hwm" ]; then hwm=$2; fi
		polls=$((polls + 1))
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		state="still running after ${RSS_SECONDS} s, stopped"
		kill "$pid"
	else
		state="exited before ${RSS_SECONDS} s"
	fi
	wait "$pid" 2>/dev/null
	local lines
	lines=$(wc -l <"$TMP/run.jsonl")
	if [ "$polls" = 0 ] || [ "$max_rss" = 0 ]; then
		skip "$label: no /proc reading ($state): $(head -1 "$TMP/run.err")"
		row "run --replay, $label: VmRSS max / VmHWM" "pending (run failed)"
		return
	fi
	echo "  $label: $state; $lines JSON lines written; $polls polls; VmRSS max $max_rss kB, VmHWM $hwm kB"
	row "run --replay (speed $RSS_SPEED, ${RSS_SECONDS} s), $label: VmRSS max / VmHWM" \
		"$max_rss kB / $hwm kB"
}
rss "default build, web on" "$TW" "$TMP/rss-web.yaml"
rss "default build, web off" "$TW" "$TMP/rss-noweb.yaml"
rss "small static build (no MQTT, no web)" "$SMALL/tegrawatch" "$TMP/rss-noweb.yaml"

echo
echo "== summary"
echo "| figure | value |"
echo "|---|---|"
printf '%s\n' "${ROWS[@]}"
