#!/usr/bin/env bash
# Installs what tegrawatch needs (Debian/Ubuntu, only the missing packages)
# and builds it into build/. Safe to run again. With --test it also
# installs what the test suite needs (a browser, promtool, MQTT clients).
set -euo pipefail
cd "$(dirname "$0")/.."

groups="build"
[ "${1:-}" = "--test" ] && groups="build test cross"
want=$(awk -v groups=" $groups " '/^\[/ { g = substr($0, 2, length($0) - 2); next }
	/^#/ || NF == 0 { next }
	index(groups, " " g " ") { print }' scripts/deps.txt | tr '\n' ' ')
missing=()
for p in $want; do
	# NodeSource's nodejs bundles npm and conflicts with Debian's npm package
	[ "$p" = npm ] && command -v npm >/dev/null && continue
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	echo "setup: installing ${missing[*]}" >&2
	# the :arm64 packages (group cross) need the architecture in dpkg before the update
	if [[ " ${missing[*]}" == *:arm64* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
		$sudo dpkg --add-architecture arm64
	fi
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The browser tests' driver, pinned by tests/browser/package-lock.json (the browser is Debian's chromium).
if [ "${1:-}" = "--test" ] && ! cmp -s tests/browser/package-lock.json tests/browser/node_modules/.tegrawatch-lock; then
	npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error >/dev/null
	cp tests/browser/package-lock.json tests/browser/node_modules/.tegrawatch-lock
fi

# The OTLP tests' decoder: the OpenTelemetry JavaScript types, pinned by tests/otlp/package-lock.json.
if [ "${1:-}" = "--test" ] && ! cmp -s tests/otlp/package-lock.json tests/otlp/node_modules/.tegrawatch-lock; then
	npm ci --prefix tests/otlp --no-audit --no-fund --loglevel=error >/dev/null
	cp tests/otlp/package-lock.json tests/otlp/node_modules/.tegrawatch-lock
fi

if [ ! -f build/build.ninja ]; then
	meson setup build --buildtype=debugoptimized >/dev/null
fi
ninja -C build >/dev/null
echo "setup: built build/tegrawatch" >&2
