#!/usr/bin/env bash
# Runs the whole test suite twice: a normal build (build/, every suite) and
# an ASan+UBSan build (build-asan/, all but `slow`); the `slow` suite of the
# normal build (mostly waiting: a 10-minute broker outage, a 2-minute webhook
# receiver outage) runs in the background next to everything after it. Then
# the libFuzzer targets for a bounded number of runs (build-fuzz/, clang), the
# threaded parts under ThreadSanitizer (build-tsan/), and the small static
# build (build-small/). Then the build floors and arm64 (issue 20): gcc-11
# (JetPack 6's compiler) and clang builds, an x86_64 build with -funsigned-char
# and UBSan's alignment check, and the aarch64 cross build with its unit and
# integration suites under qemu-user (scripts/test-arm64.sh). Every build has
# -Dwerror=true and --fatal-meson-warnings (no meson feature newer than
# meson_version). Ends with "N passed, N failed[, N skipped]".
#   scripts/test.sh [--no-emulated]   (--no-emulated: leave out the emulated
#                                      arm64 run; .ci/run never does)
set -uo pipefail
cd "$(dirname "$0")/.."
emulated=1
[ "${1:-}" = "--no-emulated" ] && emulated=0
scripts/setup.sh --test || exit 1

total_ok=0 total_fail=0 total_skip=0
run_suite() {
	local dir=$1; shift
	# reconfigure an existing dir: dependencies installed since (cmocka) are found
	local reconf=""
	[ -f "$dir/build.ninja" ] && reconf="--reconfigure"
	meson setup $reconf "$dir" --fatal-meson-warnings -Dwerror=true "$@" >/dev/null ||
		{ echo "test: meson setup of $dir failed"; total_fail=$((total_fail + 1)); return; }
	ninja -C "$dir" >/dev/null || { echo "test: build in $dir failed"; ninja -C "$dir" | tail -30; total_fail=$((total_fail + 1)); return; }
	"${after_build:-true}"
	local log
	log=$(mktemp)
	# shellcheck disable=SC2086 # test_args holds several words
	meson test -C "$dir" --print-errorlogs --num-processes 2 ${test_args:-} 2>&1 | tee "$log"
	count_log "$log"
	rm -f "$log"
}
# Adds the Ok/Fail/Skipped/Timeout counts of a `meson test` output to the totals.
count_log() {
	local log=$1 ok fail skip to
	ok=$(awk '/^Ok:/ {print $2}' "$log")
	fail=$(awk '/^Fail:/ {print $2}' "$log")
	skip=$(awk '/^Skipped:/ {print $2}' "$log")
	to=$(awk '/^Timeout:/ {print $2}' "$log")
	total_ok=$((total_ok + ${ok:-0}))
	total_fail=$((total_fail + ${fail:-0} + ${to:-0}))
	total_skip=$((total_skip + ${skip:-0}))
	[ -n "$ok$fail" ] || total_fail=$((total_fail + 1)) # no summary: meson test itself failed
}

echo "== normal build (build/)"
slow_log=$(mktemp)
# the slow suite starts as soon as the build is done and runs next to the rest (its own log files)
start_slow() {
	meson test -C build --no-rebuild --print-errorlogs --num-processes 2 --suite slow --logbase testlog-slow \
		>"$slow_log" 2>&1 &
	slow_pid=$!
}
test_args="--no-suite slow" after_build=start_slow run_suite build --buildtype=debugoptimized
echo "== ASan+UBSan build (build-asan/)"
# the slow suite runs in the normal build: once is enough
test_args="--no-suite slow" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suite build-asan -Db_sanitize=address,undefined -Dbuildtype=debug -Dbench=false

# Goal B2: the libFuzzer targets (parser, configuration, spool reader, HTTP router) under ASan+UBSan for a
# bounded number of executions over their corpora (tests/fuzz/run.sh), one result per target.
echo "== fuzzing (build-fuzz/, clang)"
fuzz_check() {
	local reconf="" targets="" t
	[ -f build-fuzz/build.ninja ] && reconf="--reconfigure"
	# not --fatal-meson-warnings here: meson warns that -fsanitize=fuzzer-no-link is no built-in option (it has none
	# for it); every other build proves the floor
	CC=clang meson setup $reconf build-fuzz -Dwerror=true -Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false \
		-Dbench=false >/dev/null || { echo "fuzz: meson setup failed"; return 1; }
	for t in tegrastats cfg_tree config spool http; do targets="$targets tests/fuzz/fuzz_$t"; done
	# shellcheck disable=SC2086 # several targets
	ninja -C build-fuzz $targets >/dev/null || { echo "fuzz: build failed"; ninja -C build-fuzz $targets | tail -20; return 1; }
	tests/fuzz/run.sh build-fuzz
}
fuzz_log=$(mktemp)
fuzz_check 2>&1 | tee "$fuzz_log"
fuzz_ok=$(grep -c '^fuzz .*: ok' "$fuzz_log")
total_ok=$((total_ok + fuzz_ok))
[ "$fuzz_ok" -eq 5 ] || total_fail=$((total_fail + 5 - fuzz_ok))
rm -f "$fuzz_log"

# Goal G: the threaded parts under ThreadSanitizer: the webhook delivery thread, libmicrohttpd's polling
# thread and the server's notifier thread (web/), the NVML worker (nvml/, with the fake library: about 15 s), the
# work ledger that POST /api/v1/work fills from the server's thread (work/), through their unit and integration tests. libmosquitto runs
# in the agent's loop (no thread); glibc's getaddrinfo_a thread (MQTT host names) is not visible to TSan, which
# crashes in it, so the `mqtt` test is not run here.
echo "== ThreadSanitizer build (build-tsan/)"
test_args="webhook_delivery webhook web_util web_limits web web-setups web-history web-limits webhooks webhooks-faults mqtt-signals nvml work" \
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	run_suite build-tsan -Db_sanitize=thread -Dbuildtype=debug -Dbench=false

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

# Issue 20: the floors and the cheap native checks for arm64 bugs. gcc-11 is JetPack 6's compiler; clang
# the other compiler; -funsigned-char is arm64's char (a `char c = -1; c < 0` bug shows here, natively) and
# -fsanitize=alignment traps the misaligned loads that x86_64 forgives and some arm64 instructions do not.
# Each builds everything (tests, benchmarks) with -Werror and runs the unit suite; the unsigned build also
# the golden outputs, byte for byte the signed build's.
echo "== gcc-11 build (build-gcc11/)"
test_args="--suite unit" CC=gcc-11 run_suite build-gcc11 -Dbuildtype=debugoptimized
echo "== clang build (build-clang/)"
test_args="--suite unit" CC=clang run_suite build-clang -Dbuildtype=debugoptimized
echo "== unsigned char + UBSan alignment build (build-uchar/)"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
test_args="--suite unit" run_suite build-uchar -Dbuildtype=debug -Dbench=false \
	"-Dc_args=-funsigned-char -fsanitize=alignment -fno-sanitize-recover=alignment" \
	-Dc_link_args=-fsanitize=alignment
uchar_log=$(mktemp)
meson test -C build-uchar --no-rebuild --print-errorlogs golden-outputs 2>&1 | tee "$uchar_log"
count_log "$uchar_log"
rm -f "$uchar_log"
unset UBSAN_OPTIONS

# The aarch64 build under qemu-user: the unit and integration suites (golden outputs included)
if [ "$emulated" -eq 1 ]; then
	echo "== arm64 cross build under qemu-user (build-arm64/, scripts/test-arm64.sh)"
	arm64_log=$(mktemp)
	scripts/test-arm64.sh build-arm64 2>&1 | tee "$arm64_log"
	count_log "$arm64_log"
	rm -f "$arm64_log"
else
	echo "== arm64 cross build under qemu-user: SKIPPED (--no-emulated)"
	total_skip=$((total_skip + 1))
fi

if [ -n "${slow_pid:-}" ]; then
	echo "== slow suite of the normal build (started after the build, in the background)"
	wait "$slow_pid"
	cat "$slow_log"
	count_log "$slow_log"
else
	echo "slow suite: not started (the normal build failed)"
	total_fail=$((total_fail + 1))
fi
rm -f "$slow_log"

echo
if [ "$total_skip" -gt 0 ]; then
	echo "$total_ok passed, $total_fail failed, $total_skip skipped"
else
	echo "$total_ok passed, $total_fail failed"
fi
[ "$total_fail" -eq 0 ]
