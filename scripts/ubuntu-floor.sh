#!/usr/bin/env bash
# JetPack 6's and 7's userspace, natively: Ubuntu 22.04 (jammy) or 24.04 (noble) made by debootstrap in a folder,
# holding only the distribution's own packages. Its meson, compiler and libraries build the tree (-Werror,
# --fatal-meson-warnings) and pass the unit suite and the golden outputs; then debian/ builds the package there as a
# user would (dpkg-buildpackage, no -Werror), apt installs it against the distribution's libraries, and the installed
# binary answers as the tree's build does. amd64: Ubuntu's arm64 archive (ports.ubuntu.com) is not reachable from
# CI; arm64 is proven by the cross build and qemu (scripts/test-arm64.sh). Prints `meson test`'s summaries and one
# "ubuntu-floor RELEASE package: ok|FAILED" line (scripts/test.sh counts both). Needs root (debootstrap, chroot).
#   scripts/ubuntu-floor.sh [--prepare] RELEASE [DIR]
#       RELEASE: jammy | noble; DIR (default build-RELEASE/) keeps the userspace, so a second run only copies the
#       tree and builds; --prepare: only make the userspace (mostly downloads: scripts/test.sh runs it early,
#       beside the normal build)
set -euo pipefail
cd "$(dirname "$0")/.."
prepare_only=0
[ "${1:-}" = --prepare ] && { prepare_only=1; shift; }
release=${1:?usage: ubuntu-floor.sh [--prepare] jammy|noble [DIR]}
dir=$(mkdir -p "${2:-build-$release}" && cd "${2:-build-$release}" && pwd)
root=$dir/root
mirror=http://archive.ubuntu.com/ubuntu
# Debian 12 packages no Ubuntu keyring: Ubuntu's own package from its archive, pinned by checksum
keyring_deb=ubuntu-keyring_2021.03.26_all.deb
keyring_sha256=0d0e7ed6b112f5d03eabf3c7eb01ebdacf9c57714b279e90495cfc58c8c4520f
[ "$(id -u)" -eq 0 ] || exec sudo "$0" "$@"

# Everything in the userspace runs in a private mount namespace: its mounts end with the process.
in_root() {
	unshare --mount --propagation private sh -ec '
		root=$1; shift
		mount --bind "$root" "$root"   # a mount point: the tests that unshare inside need one
		mount -t proc proc "$root/proc"
		mount -t sysfs sys "$root/sys"
		mount --bind /dev "$root/dev"
		mount --bind /dev/pts "$root/dev/pts"
		exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
			DEBIAN_FRONTEND=noninteractive "$@"' sh "$root" "$@"
}

if [ ! -f "$root/.tegrawatch-ready" ]; then
	rm -rf "$root"
	curl -fsS -m 60 -o "$dir/$keyring_deb" "$mirror/pool/main/u/ubuntu-keyring/$keyring_deb"
	echo "$keyring_sha256  $dir/$keyring_deb" | sha256sum -c --quiet
	dpkg-deb -x "$dir/$keyring_deb" "$dir/keyring"
	script=/usr/share/debootstrap/scripts/$release
	[ -e "$script" ] || script=/usr/share/debootstrap/scripts/gutsy # older debootstraps lack noble: same layout
	debootstrap --variant=minbase --components=main,universe \
		--keyring="$dir/keyring/usr/share/keyrings/ubuntu-archive-keyring.gpg" \
		"$release" "$root" "$mirror" "$script" >"$dir/debootstrap.log" 2>&1 ||
		{ tail -20 "$dir/debootstrap.log"; exit 1; }
	# the board's own state: released with its updates
	for pocket in "" -updates -security; do
		echo "deb $mirror $release$pocket main universe"
	done >"$root/etc/apt/sources.list"
	mkdir -p "$root/src"
	cp debian/control "$root/src/control"
	in_root sh -ec 'apt-get update -qq
		apt-get install -y -qq --no-install-recommends build-essential dpkg-dev libcmocka-dev python3 >/dev/null
		mkdir -p /tmp/dep/debian && cp /src/control /tmp/dep/debian/control
		cd /tmp/dep && apt-get build-dep -y -qq ./ >/dev/null' >"$dir/apt.log" 2>&1 ||
		{ tail -20 "$dir/apt.log"; exit 1; }
	touch "$root/.tegrawatch-ready"
fi
[ "$prepare_only" -eq 0 ] || exit 0
in_root sh -c '. /etc/os-release; echo "ubuntu-floor: $PRETTY_NAME: meson $(meson --version), $(gcc --version | head -1),"\
" glibc $(dpkg-query -W -f="\${Version}" libc6), libmicrohttpd $(dpkg-query -W -f="\${Version}" libmicrohttpd-dev),"\
" libmosquitto $(dpkg-query -W -f="\${Version}" libmosquitto-dev), libyaml $(dpkg-query -W -f="\${Version}" libyaml-dev)"'

# the tree as it is here (tracked and new files), not as last committed
rm -rf "$root/src" "$root/build" "$root"/tegrawatch_* "$root"/tegrawatch-*
mkdir -p "$root/src"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$root/src"

in_root sh -c 'cd /src && meson setup /build --fatal-meson-warnings -Dwerror=true -Dbuildtype=debugoptimized >/dev/null &&
	ninja -C /build >/dev/null' || { echo "ubuntu-floor $release: the build failed"; in_root ninja -C /build | tail -30; exit 1; }
in_root meson test -C /build --no-rebuild --print-errorlogs --num-processes 2 --suite unit || true
in_root meson test -C /build --no-rebuild --print-errorlogs golden-outputs || true

# the package, as a user builds it on the board, installed with the distribution's libraries: the installed binary
# gives the golden outputs byte for byte
package_check() {
	in_root sh -c 'cd /src && dpkg-buildpackage -us -uc -b >/tmp/dpkg-buildpackage.log 2>&1' ||
		{ tail -30 "$root/tmp/dpkg-buildpackage.log"; return 1; }
	in_root sh -c 'apt-get install -y -qq /tegrawatch_*.deb >/tmp/apt-install.log 2>&1' ||
		{ tail -20 "$root/tmp/apt-install.log"; return 1; }
	in_root /usr/bin/tegrawatch --version && in_root /src/tests/golden/compare.sh --sums /usr/bin/tegrawatch
}
if package_check; then
	echo "ubuntu-floor $release package: ok"
else
	echo "ubuntu-floor $release package: FAILED"
fi
