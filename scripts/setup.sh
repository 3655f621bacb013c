#!/usr/bin/env bash
# Installs what tegrawatch needs (Debian/Ubuntu, only the missing packages)
# and builds it into build/. Safe to run again. With --test it installs
# what the test suite needs too (a browser, promtool, MQTT clients) and
# builds nothing: scripts/test.sh builds with its own options.
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
	echo "setup: installing ${#missing[@]} packages (apt-get, a minute or two): ${missing[*]}" >&2
	# the :arm64 packages (group cross) need the architecture in dpkg before the update
	if [[ " ${missing[*]}" == *:arm64* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
		$sudo dpkg --add-architecture arm64
	fi
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# qemu-user before 9.0 refuses PR_SET_CHILD_SUBREAPER, so the arm64 run cannot check how the agent adopts what an
# exec action leaves behind. Debian 12 has 7.2; its backports (Debian's own, from the mirror this machine already
# uses, off unless asked for by name) have 10.0. Other systems keep theirs: the three checks are then skipped.
qemu_version=$(dpkg-query -W -f='${Version}' qemu-user-static 2>/dev/null || true)
if [[ " $groups " == *" cross "* ]] && grep -qx 'VERSION_CODENAME=bookworm' /etc/os-release && [ -n "$qemu_version" ] &&
	dpkg --compare-versions "$qemu_version" lt 1:9; then
	sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Identifier: Packages' 'Codename: bookworm' | head -1)
	[ -n "$mirror" ] || { echo "setup: no Debian 12 mirror in apt's sources for bookworm-backports" >&2; exit 1; }
	echo "setup: qemu-user from bookworm-backports (${mirror%/})" >&2
	echo "deb ${mirror%/} bookworm-backports main" | $sudo tee /etc/apt/sources.list.d/tegrawatch-backports.list >/dev/null
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		-t bookworm-backports qemu-user-static >/dev/null
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

# --test: scripts/test.sh builds build/ itself, with -Dwerror=true (a build here would be compiled twice)
[ "${1:-}" = "--test" ] && exit 0
if [ ! -f build/build.ninja ]; then
	echo "setup: configuring the build (meson setup build)..." >&2
	meson setup build --buildtype=debugoptimized >/dev/null
fi
if ninja -C build -n 2>/dev/null | grep -q '^\['; then
	echo "setup: building (ninja -C build; a minute the first time)..." >&2
fi
ninja -C build >/dev/null
echo "setup: built build/tegrawatch" >&2
