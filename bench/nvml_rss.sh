#!/bin/sh
# RssAnon and threads of `tegrawatch run` on the Thor fixture with the NVML source on and off, NVML being the
# fake libnvidia-ml.so.1 of the test suite (tests/nvml) answering the H200's recorded answers. The fake's own
# heap is a few KiB: a real NVML's is reported at 10-12 MB once initialised, which this cannot show (see
# bench/README.md). Web server and MQTT off; 40 samples at 100 ms, then /proc/PID/status.
#
#   bench/nvml_rss.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for mode in off on; do
	printf 'agent: {state_file: ""}\nweb: {listen: ""}\nsources: {nvml: %s}\n' "$mode" >"$dir/$mode.yaml"
	LD_LIBRARY_PATH=$build/tests/nvml FAKE_NVML_DATA=tests/fixtures/nvml/h200.fake \
		"$build/tegrawatch" run -c "$dir/$mode.yaml" --root tests/fixtures/boards/agx-thor-jp7 --interval 100 \
		--no-json 2>/dev/null &
	pid=$!
	sleep 4
	rss=$(sed -n 's/^RssAnon:[[:space:]]*//p' "/proc/$pid/status")
	threads=$(sed -n 's/^Threads:[[:space:]]*//p' "/proc/$pid/status")
	lib=$(grep -c libnvidia-ml "/proc/$pid/maps" || true)
	kill "$pid"
	wait "$pid" || true
	echo "nvml $mode: RssAnon $rss, threads $threads, libnvidia-ml mappings $lib"
done
