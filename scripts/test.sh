#!/usr/bin/env bash
# Runs the whole test suite twice: a normal build (build/, every suite,
# `slow` included) and an ASan+UBSan build (build-asan/, all but `slow`);
# then builds and checks the small static build (build-small/). Ends with
# "N passed, N failed[, N skipped]".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test || exit 1

total_ok=0 total_fail=0 total_skip=0
run_suite() {
	local dir=$1; shift
	# reconfigure an existing dir: dependencies installed since (cmocka) are found
	local reconf=""
	[ -f "$dir/build.ninja" ] && reconf="--reconfigure"
	meson setup $reconf "$dir" "$@" >/dev/null || { total_fail=$((total_fail + 1)); return; }
	ninja -C "$dir" >/dev/null || { echo "test: build in $dir failed"; ninja -C "$dir" | tail -30; total_fail=$((total_fail + 1)); return; }
	local log
	log=$(mktemp)
	# shellcheck disable=SC2086 # test_args holds several words
	meson test -C "$dir" --print-errorlogs --num-processes 2 ${test_args:-} 2>&1 | tee "$log"
	local ok fail skip to
	ok=$(awk '/^Ok:/ {print $2}' "$log")
	fail=$(awk '/^Fail:/ {print $2}' "$log")
	skip=$(awk '/^Skipped:/ {print $2}' "$log")
	to=$(awk '/^Timeout:/ {print $2}' "$log")
	total_ok=$((total_ok + ${ok:-0}))
	total_fail=$((total_fail + ${fail:-0} + ${to:-0}))
	total_skip=$((total_skip + ${skip:-0}))
	rm -f "$log"
}

echo "== normal build (build/)"
run_suite build --buildtype=debugoptimized
echo "== ASan+UBSan build (build-asan/)"
# the slow suite (a two-minute webhook receiver outage) ran in the normal build: once is enough
test_args="--no-suite slow" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suite build-asan -Db_sanitize=address,undefined -Dbuildtype=debug -Dbench=false

# Optional dependencies really are optional, and the small build (static,
# without MQTT, web and libsensors: the one under 2 MiB RSS, bench/README.md)
# works: it links no shared library, parses, and replays the demo board with
# the shipped rules, alerts included.
echo "== small static build without optional libraries (build-small/)"
small_check() {
	scripts/build-small.sh build-small || return 1
	local tw=build-small/tegrawatch tmp
	if readelf -d "$tw" | grep -q NEEDED; then
		echo "small build: links shared libraries"; return 1
	fi
	"$tw" parse tests/fixtures/tegrastats/nano_jetpack4_l4t_r32.txt >/dev/null || return 1
	tmp=$(mktemp -d) || return 1
	printf 'agent: {state_file: ""}\ninclude: [%s/configs/rules.d/*.yaml]\n' "$PWD" >"$tmp/cfg.yaml"
	"$tw" run --replay configs/demo/tegrastats.log --root configs/demo/root --speed 300 -c "$tmp/cfg.yaml" \
		>"$tmp/out.jsonl" 2>"$tmp/err" || { tail -5 "$tmp/err"; rm -rf "$tmp"; return 1; }
	local samples alerts
	samples=$(wc -l <"$tmp/out.jsonl")
	alerts=$(grep -c 'alert firing' "$tmp/err")
	rm -rf "$tmp"
	echo "small build: $samples samples, $alerts alerts fired in the demo replay"
	[ "$samples" -eq 900 ] && [ "$alerts" -gt 0 ]
}
if small_check; then
	echo "small build: ok"
	total_ok=$((total_ok + 1))
else
	echo "small build: FAILED"
	total_fail=$((total_fail + 1))
fi

echo
if [ "$total_skip" -gt 0 ]; then
	echo "$total_ok passed, $total_fail failed, $total_skip skipped"
else
	echo "$total_ok passed, $total_fail failed"
fi
[ "$total_fail" -eq 0 ]
