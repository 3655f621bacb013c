#!/usr/bin/env bash
# Compares the outputs of two binaries byte for byte (see outputs.sh):
#   tests/golden/compare.sh OLD_BINARY NEW_BINARY
# or checks one binary against the recorded checksums:
#   tests/golden/compare.sh --sums BINARY
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$1" = "--sums" ]; then
	"$here/outputs.sh" "$2" "$tmp/new" || { echo "golden: outputs.sh failed"; exit 1; }
	(cd "$tmp/new" && sha256sum -c --quiet "$here/outputs.sha256") || { echo "golden: outputs differ"; exit 1; }
	n=$(wc -l <"$here/outputs.sha256")
	have=$(ls "$tmp/new" | wc -l)
	[ "$n" -eq "$have" ] || { echo "golden: $have outputs, $n recorded"; exit 1; }
	echo "golden: $n outputs identical"
	exit 0
fi
"$here/outputs.sh" "$1" "$tmp/old" && "$here/outputs.sh" "$2" "$tmp/new" || exit 1
if diff -r "$tmp/old" "$tmp/new" >"$tmp/diff"; then
	echo "golden: $(ls "$tmp/new" | wc -l) outputs identical"
else
	head -40 "$tmp/diff"
	exit 1
fi
