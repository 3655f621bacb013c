#!/usr/bin/env bash
# Runs each libFuzzer target of BUILD_DIR (a clang build with -Dfuzzing=true) over its committed corpus for a
# bounded number of executions, or FUZZ_SECONDS (default 40) when that comes first (a loaded CI machine); what libFuzzer finds new goes to a temporary directory, so the
# tree is left as it is. A crash, a sanitizer report or a leak fails the target (the input is kept in
# the temporary directory and its path printed). One line a target: "fuzz NAME: ok (N runs, T s)" or
# "fuzz NAME: FAILED ..."; the exit status is the number of failed targets.
#
# Usage: tests/fuzz/run.sh BUILD_DIR [SCALE]   (SCALE multiplies every run count; default 1; FUZZ_JOBS
# targets at a time, default 2)
#        tests/fuzz/run.sh --count            (the number of targets: scripts/test.sh expects one line each)
set -u
# target, executions, dictionary: about 1-2 minutes in all on a 2-core VM
targets="tegrastats:1000000:tegrastats.dict cfg_tree:500000:yaml.dict config:100000:config.dict spool:100000: http:1000000:http.dict host:300000: board:300000: report:300000: procs:300000: nvmap:300000: oom_log:300000: top:300000: work:1000000:work.dict"
if [ "${1:-}" = --count ]; then
	# shellcheck disable=SC2086 # the words of the list
	set -- $targets
	echo $#
	exit 0
fi
build=$1
scale=${2:-1}
seconds=${FUZZ_SECONDS:-40}
src=$(cd "$(dirname "$0")" && pwd)
# one target: its line into $out/NAME.line, status 1 when it failed
fuzz_one() {
	local name=$1 runs=$2 dict=$3 work start execs
	work=$(mktemp -d)
	local args=(-runs="$runs" -max_total_time="$seconds" -artifact_prefix="$work/" -print_final_stats=1)
	[ -n "$dict" ] && args+=(-dict="$src/$dict")
	start=$(date +%s)
	if "$build/tests/fuzz/fuzz_$name" "${args[@]}" "$work" "$src/corpus/$name" >"$work/log" 2>&1; then
		execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$work/log")
		echo "fuzz $name: ok (${execs:-?} runs, $(($(date +%s) - start)) s)" >"$out/$name.line"
		rm -rf "$work"
	else
		{
			echo "fuzz $name: FAILED after $(($(date +%s) - start)) s; inputs and log in $work"
			grep -E "ERROR|SUMMARY|runtime error|artifact" "$work/log" | head -10
		} >"$out/$name.line"
		return 1
	fi
}
# libFuzzer runs one process on one core: two targets at a time (the machine has two), lines in target order
jobs=${FUZZ_JOBS:-2}
case $jobs in '' | *[!0-9]* | 0*) echo "fuzz: FUZZ_JOBS must be a number from 1 up, not '$jobs'" >&2; exit 1 ;; esac
out=$(mktemp -d)
for t in $targets; do
	IFS=: read -r name runs dict <<<"$t"
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
	fuzz_one "$name" $((runs * scale)) "$dict" &
done
wait
failed=0
for t in $targets; do
	name=${t%%:*}
	if [ -f "$out/$name.line" ]; then
		cat "$out/$name.line"
		grep -q "^fuzz $name: ok" "$out/$name.line" || failed=$((failed + 1))
	else
		echo "fuzz $name: FAILED (no result)"
		failed=$((failed + 1))
	fi
done
rm -rf "$out"
exit "$failed"
