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
# the emulator binfmt_misc runs is also meson's exe_wrapper, and its version decides which emulator limits apply
# (TEGRAWATCH_TEST_QEMU_VERSION: harness.emulator_limit)
qemu=$(readlink -f "$(sed -n 's/^interpreter //p' /proc/sys/fs/binfmt_misc/qemu-aarch64)")
qemu_version=$("$qemu" --version | sed -n 's/^qemu-aarch64 version \([0-9.]*\).*/\1/p')
[ -n "$qemu_version" ] || { echo "arm64: cannot tell the version of $qemu"; exit 1; }
echo "arm64: qemu-user $qemu_version ($qemu)"
mkdir -p "$dir"
printf "[binaries]\nexe_wrapper = '%s'\n" "$qemu" >"$dir/exe-wrapper.ini"
# No qemu -L: with QEMU_LD_PREFIX=/usr/aarch64-linux-gnu the loader would come from the cross toolchain's
# glibc (libc6-arm64-cross) and libc.so.6 from the multiarch libc6:arm64, two builds that do not match: a
# fork() child then spins and a thread start hangs (docs/arm64.md). The multiarch loader and libc are a pair.
unset QEMU_LD_PREFIX
reconf=""
[ -f "$dir/build.ninja" ] && reconf="--reconfigure"
start=$(date +%s)
meson setup $reconf "$dir" --cross-file scripts/cross/arm64.ini --cross-file "$dir/exe-wrapper.ini" --fatal-meson-warnings -Dwerror=true \
	-Dbench=false >/dev/null || { echo "arm64: meson setup failed"; exit 1; }
ninja -C "$dir" >/dev/null || { ninja -C "$dir" | tail -30; echo "arm64: build failed"; exit 1; }
readelf -h "$dir/tegrawatch" | grep -q AArch64 || { echo "arm64: $dir/tegrawatch is not an aarch64 program"; exit 1; }
echo "arm64: cross build in $(($(date +%s) - start)) s"
# CPU-bound tests run 5-20 times slower under emulation: a generous multiplier (the tests wait for
# conditions, never for fixed times)
# binfmt_misc is the machine's, not this run's: something else (systemd-binfmt, another user's tests) may
# unregister the entry meanwhile. A guard puts it back within half a second and says so afterwards.
guard_log=$(mktemp)
(while sleep 0.5; do
	[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && continue
	date +%T >>"$guard_log"
	scripts/binfmt.sh
done) &
guard=$!
# TEGRAWATCH_TEST_EMULATOR: the few checks of what qemu-user itself cannot do (PR_SET_CHILD_SUBREAPER before 9.0,
# /proc/self/stat's memory fields) are skipped or narrowed with the reason; the skipped ones are listed below
TEGRAWATCH_TEST_EMULATOR=qemu-user TEGRAWATCH_TEST_QEMU_VERSION=$qemu_version meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes 2 \
	--timeout-multiplier 4 --suite unit --suite integration --no-suite slow
rc=$?
kill "$guard" 2>/dev/null
wait "$guard" 2>/dev/null
if [ -s "$guard_log" ]; then
	echo "arm64: WARNING: the qemu-aarch64 binfmt entry was removed by something else during the run and put back" \
		"$(wc -l <"$guard_log") time(s) (at $(xargs <"$guard_log")): a test starting the agent then may fail"
fi
rm -f "$guard_log"
skipped=$(grep -hE "\.\.\. skipped ['\"]qemu-user" "$dir/meson-logs/testlog.txt" | sort)
echo "arm64: $(grep -c . <<<"$skipped") test methods skipped as emulator limits (the x86_64 run has them all):"
echo "$skipped" | sed 's/^/  /'
echo "arm64: emulated run in $(($(date +%s) - start)) s"
exit "$rc"
