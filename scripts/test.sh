#!/usr/bin/env bash
# Runs every build and every suite (CI runs exactly this; docs/development.md has the phases and their times):
# - build/: the normal build (gcc), every suite (unit, integration, browser, packaging, hygiene, slow); the
#   `timing` suite (tick lateness against CPU hogs) first and alone, before anything else runs;
# - build-clang/: one clang build for three checks that used to be three builds: ASan+UBSan (every suite but the
#   normal build's packaging and timing ones), the libFuzzer targets for a bounded number of runs
#   (tests/fuzz/run.sh), and arm64's char (-funsigned-char) with UBSan's alignment check, with the golden outputs
#   byte for byte the signed build's;
# - build-tsan/: the threaded parts under ThreadSanitizer (gcc -O0, which also catches -Wformat-truncation);
# - build-small/: the small static build without optional libraries;
# - the floors (issue 20): Ubuntu 22.04's userspace builds the tree and the package, 24.04's the package
#   (JetPack 6 and 7), the bundle under 18.04's and 20.04's systemd (JetPack 4 and 5; scripts/ubuntu-floor.sh);
# - build-arm64/: the aarch64 cross build, its unit and integration suites under qemu-user (scripts/test-arm64.sh).
# Builds run one after another in the foreground (they are what uses the CPU); each build's suites run in the
# background as soon as it is built, beside the next builds (a suite mostly waits: for agents, brokers, browsers).
# Every build has -Dwerror=true and --fatal-meson-warnings (the fuzzing build: see there). Each phase's header says
# when it started and the CPU time used so far. Ends with "N passed, N failed[, N skipped]".
#   scripts/test.sh [--no-emulated]   (--no-emulated: leave out the emulated arm64 run; .ci/run never does)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
emulated=1
[ "${1:-}" = "--no-emulated" ] && emulated=0

t0=$(date +%s)
# minutes:seconds since the start
mmss() {
	local s=$(($(date +%s) - t0))
	printf '%d:%02d' $((s / 60)) $((s % 60))
}
# A phase's header: when it started (minutes:seconds into the run) and the CPU time of the processes waited for
# so far (user, system): where CI's time goes
times_file=$(mktemp)
phase() {
	times >"$times_file" # not in $(...): a subshell's own times are nought
	printf '== %s [%s, cpu %s]\n' "$*" "$(mmss)" "$(tail -1 "$times_file")"
}
phase "setup: what the suites need (scripts/setup.sh --test)"
scripts/setup.sh --test || exit 1

total_ok=0 total_fail=0 total_skip=0
# what failed, one line each: printed again just above the last line (CI shows only the output's tail)
failures=()
# fail_as WHAT [N]: N failures more (default 1), named WHAT
fail_as() {
	total_fail=$((total_fail + ${2:-1}))
	failures+=("$1")
}
# Adds the Ok/Fail/Skipped/Timeout counts of the `meson test` outputs in a log to the totals; one failure more for
# each summary missing of the EXPECTED ones (default 1: meson test itself failed). NAME names the run in the list
# of failures.
count_log() {
	local log=$1 expected=${2:-1} name=$3 ok fail skip to have line
	ok=$(awk '/^Ok:/ {n += $2} END {print n + 0}' "$log")
	fail=$(awk '/^Fail:/ {n += $2} END {print n + 0}' "$log")
	skip=$(awk '/^Skipped:/ {n += $2} END {print n + 0}' "$log")
	to=$(awk '/^Timeout:/ {n += $2} END {print n + 0}' "$log")
	total_ok=$((total_ok + ok))
	total_skip=$((total_skip + skip))
	total_fail=$((total_fail + fail + to))
	while IFS= read -r line; do
		failures+=("$name: $line")
	done < <(grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS) ' "$log" | sed -E 's/^ +//; s/ +/ /g' |
		awk '!seen[$0]++') # meson lists them again under "Summary of Failures"
	have=$(grep -c '^Ok:' "$log")
	[ "$have" -ge "$expected" ] || fail_as "$name: $((expected - have)) of $expected test summaries missing" $((expected - have))
}
# one check that is not a `meson test` run: its result
check_result() {
	if [ "$2" -eq 0 ]; then
		echo "$1: ok"
		total_ok=$((total_ok + 1))
	else
		echo "$1: FAILED"
		fail_as "$1"
	fi
}

work=$(mktemp -d)
# build DIR [MESON OPTION...]: configures (again: dependencies installed since are found) and builds DIR
build() {
	local dir=$1 reconf=""
	shift
	[ -f "$dir/build.ninja" ] && reconf="--reconfigure"
	meson setup $reconf "$dir" -Dwerror=true "$@" >/dev/null || { echo "test: meson setup of $dir failed"; return 1; }
	# NINJA_TARGETS: a function naming the targets to build (default: all)
	local targets=""
	if [ -n "${NINJA_TARGETS:-}" ]; then
		targets=$("$NINJA_TARGETS") || return 1
	fi
	# shellcheck disable=SC2086 # several targets
	ninja -C "$dir" $targets >/dev/null || { echo "test: build in $dir failed"; ninja -C "$dir" $targets | tail -30; return 1; }
}
# Background work, reported at the end in the order started: bg NAME COMMAND... runs COMMAND with its output into
# $work/NAME.log; `report` prints each log under its phase header and counts its `meson test` summaries
bg_names=()
bg() {
	local name=$1 from
	shift
	from=$(mmss)
	(
		"$@" >"$work/$name.log" 2>&1
		times >"$work/$name.times"
		echo "($name: in the background from $from to $(mmss), cpu $(tail -1 "$work/$name.times"))" >>"$work/$name.log"
	) &
	bg_names+=("$name")
	bg_last_pid=$!
}
suite() {
	local dir=$1
	shift
	meson test -C "$dir" --no-rebuild --print-errorlogs "$@"
}
# a build that failed: its suites count as one failure
build_failed() {
	fail_as "build of $1"
}

phase "normal build (build/)"
if build build --fatal-meson-warnings --buildtype=debugoptimized; then
	normal_built=1
	# tick lateness under CPU hogs: alone, before the other builds and suites load the machine
	phase "normal build: the timing suite, alone"
	timing_log=$work/timing.log
	suite build --suite timing 2>&1 | tee "$timing_log"
	count_log "$timing_log" 1 "timing suite (build/)"
	bg normal suite build --num-processes 4 --no-suite timing
	normal_pid=$bg_last_pid
else
	normal_built=0
	build_failed build/
fi

# The Ubuntu userspaces for the floors are mostly downloads and unpacking: all four made at once, beside the
# builds after the timing suite (not before it: its lateness bound is for two CPU hogs, not four dpkgs beside them;
# not niced: on a machine with busy loops beside it a niced job starves); each floor waits for its own
# (RELEASE.rc appears in $floor_dir when it is made or has failed)
floor_dir=$work/floors
mkdir -p "$floor_dir"
for r in jammy noble bionic focal; do
	(
		scripts/ubuntu-floor.sh --prepare $r >"$floor_dir/$r.log" 2>&1
		echo $? >"$floor_dir/$r.rc"
	) &
done

# the arm64 cross build and its suites under qemu-user: the longest suite, started first
if [ "$emulated" -eq 1 ]; then
	bg arm64 scripts/test-arm64.sh build-arm64
fi

# One clang build, three checks: ASan+UBSan (UBSan includes the alignment check, which traps the misaligned loads
# that x86_64 forgives and some arm64 instructions do not), libFuzzer's coverage for the fuzz targets, and arm64's
# unsigned char (-funsigned-char: a `char c = -1; c < 0` bug shows here, natively). Not --fatal-meson-warnings:
# meson warns that -fsanitize=fuzzer-no-link is no built-in option (it has none for it); every other build proves
# the floor.
phase "clang build: ASan+UBSan, fuzzing, unsigned char (build-clang/)"
# a sanitizer's report stops the program (the slow suite's fifty agents stay in the normal build)
asan_suite() {
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		suite build-clang --num-processes 3 --no-suite slow
}
if CC=clang build build-clang -Dbuildtype=debugoptimized -Dfuzzing=true -Db_sanitize=address,undefined \
	-Db_lundef=false -Dc_args=-funsigned-char; then
	bg asan asan_suite
	phase "fuzzing (build-clang/, tests/fuzz/run.sh)"
	fuzz_log=$work/fuzz.log
	# a UBSan report fails the target too
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 FUZZ_SECONDS=${FUZZ_SECONDS:-20} tests/fuzz/run.sh build-clang 2>&1 | tee "$fuzz_log"
	fuzz_n=$(tests/fuzz/run.sh --count)
	fuzz_ok=$(grep -c '^fuzz .*: ok' "$fuzz_log")
	total_ok=$((total_ok + fuzz_ok))
	[ "$fuzz_ok" -eq "$fuzz_n" ] || fail_as "fuzzing: $(awk '/^fuzz .*FAILED/ {sub(":", "", $2); printf "%s ", $2}' "$fuzz_log")(of $fuzz_n targets)" \
		$((fuzz_n - fuzz_ok))
else
	build_failed build-clang/
fi

# The threaded parts under ThreadSanitizer: the webhook delivery thread, libmicrohttpd's polling thread and the
# server's notifier thread (web/), the NVML worker (nvml/, with the fake library), the work ledger that POST
# /api/v1/work fills from the server's thread (work/), the driven clock waking other threads' waits
# (core/clock_driven.c), through their unit and integration tests. libmosquitto runs in the agent's loop (no
# thread); glibc's getaddrinfo_a thread (MQTT host names) is not visible to TSan, which crashes in it, so the
# `mqtt` test is not run here.
phase "ThreadSanitizer build (build-tsan/)"
tsan_tests="webhook_delivery webhook web_util web_limits web web-setups web-history web-limits webhooks webhooks-faults mqtt-signals nvml work clock_driven alerting"
# only what these tests run is built (the whole tree compiles in the other builds)
tsan_targets() {
	# shellcheck disable=SC2086 # several test names
	python3 - build-tsan $tsan_tests <<'EOF'
import json, os, subprocess, sys
d, names = sys.argv[1], set(sys.argv[2:])
intro = lambda what: json.loads(subprocess.check_output(["meson", "introspect", what, d]))
targets = {t["id"]: t["filename"] for t in intro("--targets")}
found = [t for t in intro("--tests") if t["name"] in names]
if names - {t["name"] for t in found}:
    sys.exit("tsan: no test named %s" % " ".join(names - {t["name"] for t in found}))
print(" ".join(sorted({os.path.relpath(f, os.path.abspath(d)) for t in found for i in t["depends"] for f in targets[i]})))
EOF
}
if NINJA_TARGETS=tsan_targets build build-tsan --fatal-meson-warnings -Db_sanitize=thread -Dbuildtype=debug -Dbench=false; then
	tsan_suite() {
		# shellcheck disable=SC2086 # several test names
		TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 suite build-tsan --num-processes 2 $tsan_tests
	}
	bg tsan tsan_suite
else
	build_failed build-tsan/
fi

# Optional dependencies really are optional, and the small build (static, without MQTT, web and libsensors: the
# one under 2 MiB RSS, bench/README.md) works: it links no shared library, parses, and replays the demo board
# with the shipped rules, alerts included.
phase "small static build without optional libraries (build-small/)"
small_check() {
	scripts/build-small.sh build-small || return 1
	local tw=build-small/tegrawatch tmp
	if readelf -d "$tw" | grep -q NEEDED; then
		echo "small build: links shared libraries"
		return 1
	fi
	"$tw" parse tests/fixtures/tegrastats/nano_jetpack4_l4t_r32.txt >/dev/null || return 1
	tmp=$(mktemp -d) || return 1
	printf 'agent: {state_file: ""}\ninclude: [%s/configs/rules.d/*.yaml]\n' "$PWD" >"$tmp/cfg.yaml"
	"$tw" run --replay configs/demo/tegrastats.log --root configs/demo/root --speed 300 -c "$tmp/cfg.yaml" \
		>"$tmp/out.jsonl" 2>"$tmp/err" || {
		tail -5 "$tmp/err"
		rm -rf "$tmp"
		return 1
	}
	local samples alerts
	samples=$(wc -l <"$tmp/out.jsonl")
	alerts=$(grep -c 'alert firing' "$tmp/err")
	rm -rf "$tmp"
	echo "small build: $samples samples, $alerts alerts fired in the demo replay"
	[ "$samples" -eq 900 ] && [ "$alerts" -gt 0 ]
}
small_check
check_result "small build" $?

# Issue 20: the floors. Every JetPack's Ubuntu is made by debootstrap (build-RELEASE/, scripts/ubuntu-floor.sh).
# JetPack 6 (22.04) builds the tree with its own meson 0.61.2, gcc 11 and libraries (-Werror), runs the unit suite
# and the golden outputs there; JetPack 6 and 7 (22.04, 24.04: meson 1.3.2, gcc 13) build, install and run the
# package as a user would, and its build must not warn. JetPack 4 and 5 (18.04, 20.04) get the portable bundle:
# install.sh, then the release's own systemd (237, 245) runs the service.
ubuntu_floor() {
	local log rc=""
	# its userspace: made in the background since the start (or that job has ended without it)
	while [ ! -e "$floor_dir/$1.rc" ]; do sleep 1; done
	rc=$(cat "$floor_dir/$1.rc")
	if [ "$rc" != 0 ]; then
		echo "ubuntu-floor: making the Ubuntu $1 userspace failed:"
		cat "$floor_dir/$1.log" 2>/dev/null
		fail_as "ubuntu-floor $1: its userspace"
		return
	fi
	log=$(mktemp)
	# shellcheck disable=SC2086 # no option: no word
	scripts/ubuntu-floor.sh ${3:-} "$1" 2>&1 | tee "$log"
	# the tree's two `meson test` summaries (the unit suite, the golden outputs)
	[ "$2" = bundle ] || [ "${3:-}" = --package-only ] || count_log "$log" 2 "ubuntu-floor $1"
	# its own last line says ok or FAILED
	if grep -qx "ubuntu-floor $1 $2: ok" "$log"; then
		total_ok=$((total_ok + 1))
	else
		fail_as "ubuntu-floor $1 $2"
	fi
	rm -f "$log"
}
phase "Ubuntu 22.04 userspace, JetPack 6: the tree and the package (build-jammy/, scripts/ubuntu-floor.sh)"
ubuntu_floor jammy package
# 24.04 only builds, installs and runs the package: its tree build and unit suite would prove no floor, and the
# package build's own compile fails on any gcc 13 warning
phase "Ubuntu 24.04 userspace, JetPack 7: the package (build-noble/)"
ubuntu_floor noble package --package-only

# the bundle of the normal build's bundle test (its build folder: nothing left to compile), so after that suite
phase "Ubuntu 18.04 and 20.04 userspaces, JetPack 4 and 5: the bundle under systemd 237 and 245 (build-bionic/, build-focal/)"
[ "$normal_built" -eq 0 ] || wait "$normal_pid"
rm -rf build-floor-bundle
if BUNDLE_BUILD_DIR=$PWD/build/tests/bundle-amd64 scripts/bundle.sh amd64 build-floor-bundle >/dev/null; then
	TEGRAWATCH_BUNDLE=$(ls "$PWD"/build-floor-bundle/tegrawatch-*-linux-amd64.tar.gz)
	export TEGRAWATCH_BUNDLE
	ubuntu_floor bionic bundle
	ubuntu_floor focal bundle
	unset TEGRAWATCH_BUNDLE
else
	echo "ubuntu-floor: scripts/bundle.sh amd64 failed"
	fail_as "ubuntu-floor bionic and focal: scripts/bundle.sh amd64" 2
fi

# The suites that ran in the background, in the order they started
phase "waiting for the suites in the background (${bg_names[*]})"
wait
for name in "${bg_names[@]}"; do
	case $name in
	normal) echo "== the normal build's suites (build/)" ;;
	arm64) echo "== arm64 cross build under qemu-user (build-arm64/, scripts/test-arm64.sh)" ;;
	asan) echo "== ASan+UBSan suites (build-clang/)" ;;
	tsan) echo "== ThreadSanitizer tests (build-tsan/)" ;;
	esac
	cat "$work/$name.log"
	count_log "$work/$name.log" 1 "$name"
done
if [ "$emulated" -eq 0 ]; then
	echo "arm64 cross build under qemu-user: SKIPPED (--no-emulated)"
	total_skip=$((total_skip + 1))
fi
rm -rf "$work"

phase "end"
rm -f "$times_file"
echo
if [ "${#failures[@]}" -gt 0 ]; then
	# what each failed test said (its failing lines, then its last ones), from the meson logs of this run's builds
	python3 - build build-clang build-tsan build-arm64 <<'EOF_PY'
import json, os, re, sys
for d in sys.argv[1:]:
    path = os.path.join(d, "meson-logs", "testlog.json")
    if not os.path.exists(path):
        continue
    for line in open(path, errors="replace"):
        t = json.loads(line)
        if t.get("result") in ("OK", "SKIP", "EXPECTEDFAIL"):
            continue
        words = [w for w in ((t.get("stdout") or "") + (t.get("stderr") or "")).splitlines()
                 if w.strip() and w.strip("=-") != ""]
        telling = [w for w in words if re.search(r"^not ok|Error|FAIL|assert", w)]
        print("%s: %s (%s), what it said:" % (d, t.get("name"), t.get("result")))
        for w in telling[:6] + ["..."] + words[-4:]:
            print("  | " + w[:200])
EOF_PY
	echo "what failed:"
	printf '  %s\n' "${failures[@]}"
fi
if [ "$total_skip" -gt 0 ]; then
	echo "$total_ok passed, $total_fail failed, $total_skip skipped"
else
	echo "$total_ok passed, $total_fail failed"
fi
[ "$total_fail" -eq 0 ]
