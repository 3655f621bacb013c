#!/usr/bin/env bash
# Writes what the re-layering (and any refactoring) must keep byte for byte:
# `parse` of every fixture log and the demo, `snapshot --json` of every
# fixture board and the demo board, `replay --dry-run --json` of the demo
# with the demo's configuration and with the shipped rules alone.
#   tests/golden/outputs.sh BINARY OUTDIR
# Compare two binaries with tests/golden/compare.sh; the suite checks the
# current binary against tests/golden/outputs.sha256.
set -eu
export TZ=UTC LC_ALL=C
bin=$1 out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
cd "$src"
for f in tests/fixtures/tegrastats/*.txt configs/demo/tegrastats.log; do
	name=$(basename "$f")
	"$bin" parse -q "$f" >"$out/parse-${name%.*}.jsonl"
done
for d in tests/fixtures/boards/*/ configs/demo/root/; do
	[ -d "$d/sys" ] || continue
	name=$(basename "$d")
	"$bin" snapshot -q --json --root "$d" >"$out/snapshot-$name.json"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the shipped rules, without a state file or actions
printf 'agent: {state_file: "", board_name: golden}\ninclude: [%s/configs/rules.d/*.yaml]\n' "$src" >"$tmp/rules.yaml"
"$bin" replay -q configs/demo/tegrastats.log -c configs/demo/tegrawatch.yaml --root configs/demo/root \
	--dry-run --json >"$out/replay-demo.jsonl" 2>/dev/null
"$bin" replay -q configs/demo/tegrastats.log -c "$tmp/rules.yaml" --dry-run --json >"$out/replay-rules.jsonl" 2>/dev/null
