#!/usr/bin/env bash
# Runs the whole test suite twice: a normal build (build/, every suite) and
# an ASan+UBSan build (build-asan/, all but `slow`); the `slow` suite of the
# normal build (fleet-50: fifty agents pushing to one Prometheus; the broker,
# webhook and remote-write outages run on a driven clock in the normal suites
# now) runs in the background next to everything after it. Then
# the libFuzzer targets for a bounded number of runs (build-fuzz/, clang), the
# threaded parts under ThreadSanitizer (build-tsan/), and the small static
# build (build-small/). Then the build floors and arm64 (issue 20): the tree
# built and tested in Ubuntu 22.04's own userspace, the package built there
# and in 24.04's (JetPack 6 and 7: their meson, gcc and libraries;
# scripts/ubuntu-floor.sh), the bundle
# run by Ubuntu 18.04's and 20.04's systemd (JetPack 4 and 5), a clang build
# with -funsigned-char and UBSan's alignment check, and the aarch64 cross
# build with its unit and integration suites under qemu-user
# (scripts/test-arm64.sh). Every build has -Dwerror=true and
# --fatal-meson-warnings (no meson feature newer than meson_version). Each
# phase's header says when it started. Ends with "N passed, N failed[, N
# skipped]".
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
# Adds the Ok/Fail/Skipped/Timeout counts of the `meson test` outputs in a log to the totals; one failure more for
# each summary missing of the EXPECTED ones (default 1: meson test itself failed)
count_log() {
	local log=$1 expected=${2:-1} ok fail skip to have
	ok=$(awk '/^Ok:/ {n += $2} END {print n + 0}' "$log")
	fail=$(awk '/^Fail:/ {n += $2} END {print n + 0}' "$log")
	skip=$(awk '/^Skipped:/ {n += $2} END {print n + 0}' "$log")
	to=$(awk '/^Timeout:/ {n += $2} END {print n + 0}' "$log")
	total_ok=$((total_ok + ok))
	total_fail=$((total_fail + fail + to))
	total_skip=$((total_skip + skip))
	have=$(grep -c '^Ok:' "$log")
	[ "$have" -ge "$expected" ] || total_fail=$((total_fail + expected - have))
}
# A phase's header, with when it started (minutes:seconds into the run): where CI's time goes
t0=$(date +%s)
phase() {
	local s=$(($(date +%s) - t0))
	printf '== %s [%d:%02d]\n' "$*" $((s / 60)) $((s % 60))
}

# the Ubuntu userspaces for the floors (below) are mostly downloads: made beside the normal build, one after
# another; each floor waits for its own (RELEASE.rc appears in $floor_dir when it is made or has failed)
floor_dir=$(mktemp -d)
(for r in jammy noble bionic focal; do
	nice -n 10 scripts/ubuntu-floor.sh --prepare $r >"$floor_dir/$r.log" 2>&1
	echo $? >"$floor_dir/$r.rc"
done) &
floor_pid=$!
phase "normal build (build/)"
slow_log=$(mktemp)
# the slow suite starts as soon as the build is done and runs next to the rest (its own log files)
start_slow() {
	meson test -C build --no-rebuild --print-errorlogs --num-processes 2 --suite slow --logbase testlog-slow \
		>"$slow_log" 2>&1 &
	slow_pid=$!
}
test_args="--no-suite slow" after_build=start_slow run_suite build --buildtype=debugoptimized
phase "ASan+UBSan build (build-asan/)"
# the slow suite runs in the normal build: once is enough
test_args="--no-suite slow" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suite build-asan -Db_sanitize=address,undefined -Dbuildtype=debug -Dbench=false

# Goal B2: the libFuzzer targets (parser, configuration, spool reader, HTTP router) under ASan+UBSan for a
# bounded number of executions over their corpora (tests/fuzz/run.sh), one result per target.
phase "fuzzing (build-fuzz/, clang)"
fuzz_check() {
	local reconf="" targets="" t
	[ -f build-fuzz/build.ninja ] && reconf="--reconfigure"
	# not --fatal-meson-warnings here: meson warns that -fsanitize=fuzzer-no-link is no built-in option (it has none
	# for it); every other build proves the floor
	CC=clang meson setup $reconf build-fuzz -Dwerror=true -Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false \
		-Dbench=false >/dev/null || { echo "fuzz: meson setup failed"; return 1; }
	for t in tegrastats cfg_tree config spool http host procs top work; do targets="$targets tests/fuzz/fuzz_$t"; done
	# shellcheck disable=SC2086 # several targets
	ninja -C build-fuzz $targets >/dev/null || { echo "fuzz: build failed"; ninja -C build-fuzz $targets | tail -20; return 1; }
	tests/fuzz/run.sh build-fuzz
}
fuzz_log=$(mktemp)
fuzz_check 2>&1 | tee "$fuzz_log"
fuzz_ok=$(grep -c '^fuzz .*: ok' "$fuzz_log")
total_ok=$((total_ok + fuzz_ok))
[ "$fuzz_ok" -eq 9 ] || total_fail=$((total_fail + 9 - fuzz_ok))
rm -f "$fuzz_log"

# Goal G: the threaded parts under ThreadSanitizer: the webhook delivery thread, libmicrohttpd's polling
# thread and the server's notifier thread (web/), the NVML worker (nvml/, with the fake library: about 15 s), the
# work ledger that POST /api/v1/work fills from the server's thread (work/), the driven clock waking other threads' waits
# (core/clock_driven.c), through their unit and integration tests. libmosquitto runs
# in the agent's loop (no thread); glibc's getaddrinfo_a thread (MQTT host names) is not visible to TSan, which
# crashes in it, so the `mqtt` test is not run here.
phase "ThreadSanitizer build (build-tsan/)"
test_args="webhook_delivery webhook alerting web_util web_limits web web-setups web-history web-limits webhooks webhooks-faults mqtt-signals nvml work clock_driven" \
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	run_suite build-tsan -Db_sanitize=thread -Dbuildtype=debug -Dbench=false

# Optional dependencies really are optional, and the small build (static,
# without MQTT, web and libsensors: the one under 2 MiB RSS, bench/README.md)
# works: it links no shared library, parses, and replays the demo board with
# the shipped rules, alerts included.
phase "small static build without optional libraries (build-small/)"
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

# Issue 20: the floors and the cheap native checks for arm64 bugs. Every JetPack's Ubuntu is made by debootstrap
# (build-RELEASE/, scripts/ubuntu-floor.sh). JetPack 6 (22.04) builds the tree with its own meson 0.61.2, gcc 11
# and libraries (-Werror), runs the unit suite and the golden outputs there; JetPack 6 and 7 (22.04, 24.04: meson
# 1.3.2, gcc 13) build, install and run the package as a user would, and its build must not warn. JetPack 4 and 5 (18.04, 20.04) get the portable bundle:
# install.sh, then the release's own systemd (237, 245) runs the service. clang is the other compiler, and its
# build also has arm64's char (-funsigned-char: a `char c = -1; c < 0` bug shows here, natively) and
# -fsanitize=alignment, which traps the misaligned loads that x86_64 forgives and some arm64 instructions do not;
# it builds everything (tests, benchmarks) with -Werror, runs the unit suite and the golden outputs, byte for
# byte the signed build's.
ubuntu_floor() {
	local log rc=""
	# its userspace: made in the background since the start (or that job has ended without it)
	while [ ! -e "$floor_dir/$1.rc" ] && kill -0 "$floor_pid" 2>/dev/null; do sleep 1; done
	[ -e "$floor_dir/$1.rc" ] && rc=$(cat "$floor_dir/$1.rc")
	if [ "$rc" != 0 ]; then
		echo "ubuntu-floor: making the Ubuntu $1 userspace failed:"
		cat "$floor_dir/$1.log" 2>/dev/null
		total_fail=$((total_fail + 1))
		return
	fi
	log=$(mktemp)
	scripts/ubuntu-floor.sh ${3:-} "$1" 2>&1 | tee "$log"
	# the tree's two `meson test` summaries (the unit suite, the golden outputs)
	[ "$2" = bundle ] || [ "${3:-}" = --package-only ] || count_log "$log" 2
	if grep -qx "ubuntu-floor $1 $2: ok" "$log"; then
		total_ok=$((total_ok + 1))
	else
		total_fail=$((total_fail + 1))
	fi
	rm -f "$log"
}
phase "Ubuntu 22.04 userspace, JetPack 6: the tree and the package (build-jammy/, scripts/ubuntu-floor.sh)"
ubuntu_floor jammy package
# 24.04 only builds, installs and runs the package: its tree build and unit suite would prove no floor, and the
# package build's own compile fails on any gcc 13 warning
phase "Ubuntu 24.04 userspace, JetPack 7: the package (build-noble/)"
ubuntu_floor noble package --package-only
phase "clang build with unsigned char and UBSan's alignment check (build-clang-uchar/)"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
test_args="--suite unit" CC=clang run_suite build-clang-uchar -Dbuildtype=debugoptimized -Db_lundef=false \
	"-Dc_args=-funsigned-char -fsanitize=alignment -fno-sanitize-recover=alignment" \
	-Dc_link_args=-fsanitize=alignment
clang_log=$(mktemp)
meson test -C build-clang-uchar --no-rebuild --print-errorlogs golden-outputs 2>&1 | tee "$clang_log"
count_log "$clang_log"
rm -f "$clang_log"
unset UBSAN_OPTIONS

# after the clang build, so that the last userspaces are made by then
phase "Ubuntu 18.04 and 20.04 userspaces, JetPack 4 and 5: the bundle under systemd 237 and 245 (build-bionic/, build-focal/)"
# the bundle from the normal build's bundle test's build folder (nothing left to compile)
rm -rf build-floor-bundle
if BUNDLE_BUILD_DIR=$PWD/build/tests/bundle-amd64 scripts/bundle.sh amd64 build-floor-bundle >/dev/null; then
	TEGRAWATCH_BUNDLE=$(ls "$PWD"/build-floor-bundle/tegrawatch-*-linux-amd64.tar.gz)
	export TEGRAWATCH_BUNDLE
	ubuntu_floor bionic bundle
	ubuntu_floor focal bundle
	unset TEGRAWATCH_BUNDLE
else
	echo "ubuntu-floor: scripts/bundle.sh amd64 failed"
	total_fail=$((total_fail + 2))
fi
wait "$floor_pid" 2>/dev/null
rm -rf "$floor_dir"

# The aarch64 build under qemu-user: the unit and integration suites (golden outputs included)
if [ "$emulated" -eq 1 ]; then
	phase "arm64 cross build under qemu-user (build-arm64/, scripts/test-arm64.sh)"
	arm64_log=$(mktemp)
	scripts/test-arm64.sh build-arm64 2>&1 | tee "$arm64_log"
	count_log "$arm64_log"
	rm -f "$arm64_log"
else
	phase "arm64 cross build under qemu-user: SKIPPED (--no-emulated)"
	total_skip=$((total_skip + 1))
fi

if [ -n "${slow_pid:-}" ]; then
	phase "slow suite of the normal build (started after the build, in the background)"
	wait "$slow_pid"
	cat "$slow_log"
	count_log "$slow_log"
else
	echo "slow suite: not started (the normal build failed)"
	total_fail=$((total_fail + 1))
fi
rm -f "$slow_log"

phase "end"
echo
if [ "$total_skip" -gt 0 ]; then
	echo "$total_ok passed, $total_fail failed, $total_skip skipped"
else
	echo "$total_ok passed, $total_fail failed"
fi
[ "$total_fail" -eq 0 ]
