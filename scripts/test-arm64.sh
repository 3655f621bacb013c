#!/usr/bin/env bash
# arm64 in CI (issue 20): cross-builds the tree for aarch64 (build-arm64/,
# Debian's cross toolchain, scripts/cross/arm64.ini) and runs the unit and
# integration suites against the aarch64 programs under qemu-user: the unit
# programs through meson's exe_wrapper, the agent that the Python tests start
# through binfmt_misc (scripts/binfmt.sh). The golden outputs (integration
# test golden-outputs) must match the x86_64 checksums byte for byte. Left out
# by tests/meson.build in a cross build: valgrind (x86_64 only) and
# reliability-jitter (it would time the emulator). Prints meson test's summary.
#   scripts/test-arm64.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-arm64}
scripts/binfmt.sh || exit 1
reconf=""
[ -f "$dir/build.ninja" ] && reconf="--reconfigure"
start=$(date +%s)
meson setup $reconf "$dir" --cross-file scripts/cross/arm64.ini --fatal-meson-warnings -Dwerror=true \
	-Dbench=false >/dev/null || { echo "arm64: meson setup failed"; exit 1; }
ninja -C "$dir" >/dev/null || { ninja -C "$dir" | tail -30; echo "arm64: build failed"; exit 1; }
readelf -h "$dir/tegrawatch" | grep -q AArch64 || { echo "arm64: $dir/tegrawatch is not an aarch64 program"; exit 1; }
echo "arm64: cross build in $(($(date +%s) - start)) s"
# CPU-bound tests run 5-20 times slower under emulation: a generous multiplier (the tests wait for
# conditions, never for fixed times)
meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes 2 --timeout-multiplier 4 \
	--suite unit --suite integration --no-suite slow
rc=$?
echo "arm64: emulated run in $(($(date +%s) - start)) s"
exit "$rc"
