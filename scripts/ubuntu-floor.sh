#!/usr/bin/env bash
# Every JetPack's Ubuntu, natively: the release's userspace made by debootstrap in a folder, holding only the
# distribution's own packages (amd64: Ubuntu's arm64 archive, ports.ubuntu.com, is not reachable from CI; arm64 is
# proven by the cross build and qemu, scripts/test-arm64.sh).
# - jammy (22.04, JetPack 6) and noble (24.04, JetPack 7), where the package is built on the board: the release's
#   meson, gcc and libraries build the tree (-Werror, --fatal-meson-warnings) and pass the unit suite and the golden
#   outputs (not with --package-only); then debian/ builds the package there as a user would (dpkg-buildpackage, no
#   -Werror, but a warning in its log fails the check), apt installs it with the release's libraries, and the
#   installed binary gives the golden outputs. Prints `meson test`'s summaries and
#   "ubuntu-floor RELEASE package: ok|FAILED".
# - bionic (18.04, JetPack 4: systemd 237) and focal (20.04, JetPack 5: systemd 245), where the portable bundle goes:
#   install.sh lays it out in the release, then the release's own systemd boots as PID 1 of new namespaces (on a
#   tmpfs overlay of that root) and runs the service: start (READY), sampling, the web server answering, reload,
#   stop. Prints "ubuntu-floor RELEASE bundle: ok|FAILED". The bundle is $TEGRAWATCH_BUNDLE, or built here.
# scripts/test.sh counts those lines. Needs root (debootstrap, chroot, namespaces).
#   scripts/ubuntu-floor.sh [--prepare | --package-only] RELEASE [DIR]
#       DIR (default build-RELEASE/) keeps the userspace, so a second run only copies the tree and checks;
#       --prepare: only make the userspace (mostly downloads: scripts/test.sh runs it early, beside the normal build)
#       --package-only: jammy, noble: only the package (its build must not warn), installed and run; not the
#       -Werror build of the tree, its unit suite and its golden outputs
set -euo pipefail
# root before anything else: the same arguments, and the bundle the caller chose (as an absolute path)
[ -z "${TEGRAWATCH_BUNDLE:-}" ] || TEGRAWATCH_BUNDLE=$(realpath "$TEGRAWATCH_BUNDLE")
[ "$(id -u)" -eq 0 ] || exec sudo TEGRAWATCH_BUNDLE="${TEGRAWATCH_BUNDLE:-}" "$(realpath "$0")" "$@"
cd "$(dirname "$0")/.."
prepare_only=0 package_only=0
[ "${1:-}" = --prepare ] && { prepare_only=1; shift; }
[ "${1:-}" = --package-only ] && { package_only=1; shift; }
release=${1:?usage: ubuntu-floor.sh [--prepare | --package-only] jammy|noble|bionic|focal [DIR]}
case $release in
jammy | noble) kind=package ;;
bionic | focal) kind=bundle ;;
*) echo "ubuntu-floor: no $release: jammy, noble (the package), bionic, focal (the bundle)" >&2; exit 64 ;;
esac
dir=$(mkdir -p "${2:-build-$release}" && cd "${2:-build-$release}" && pwd)
root=$dir/root
mirror=http://archive.ubuntu.com/ubuntu
# Debian 12 packages no Ubuntu keyring: Ubuntu's own package from its archive, pinned by checksum
keyring_deb=ubuntu-keyring_2021.03.26_all.deb
keyring_sha256=0d0e7ed6b112f5d03eabf3c7eb01ebdacf9c57714b279e90495cfc58c8c4520f

# Everything in the userspace runs in a private mount namespace: its mounts end with the process.
in_root() {
	unshare --mount --propagation private sh -ec '
		root=$1; shift
		mount --bind "$root" "$root"   # a mount point: the tests that unshare inside need one
		mount -t proc proc "$root/proc"
		mount -t sysfs sys "$root/sys"
		mount --bind /dev "$root/dev"
		mount --bind /dev/pts "$root/dev/pts"
		exec chroot "$root" env -i PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
			DEBIAN_FRONTEND=noninteractive "$@"' sh "$root" "$@"
}

# the userspace is made again when what it installs changes: debian/control's Build-Depends, or the recipe below
# (its number goes up with each change)
stamp=3
[ "$kind" = bundle ] || stamp="$stamp $(sha256sum <debian/control | cut -c1-16)"
if [ "$(cat "$root/.tegrawatch-ready" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$root"
	curl -fsS -m 60 -o "$dir/$keyring_deb" "$mirror/pool/main/u/ubuntu-keyring/$keyring_deb"
	echo "$keyring_sha256  $dir/$keyring_deb" | sha256sum -c --quiet
	dpkg-deb -x "$dir/$keyring_deb" "$dir/keyring"
	script=/usr/share/debootstrap/scripts/$release
	[ -e "$script" ] || script=/usr/share/debootstrap/scripts/gutsy # older debootstraps lack noble: same layout
	include=""
	[ "$kind" = bundle ] && include=--include=systemd
	debootstrap --variant=minbase --components=main,universe $include \
		--keyring="$dir/keyring/usr/share/keyrings/ubuntu-archive-keyring.gpg" \
		"$release" "$root" "$mirror" "$script" >"$dir/debootstrap.log" 2>&1 ||
		{ tail -20 "$dir/debootstrap.log"; exit 1; }
	# no package script starts a service here: they would run on this host (procps's would load the release's
	# sysctl.d into this kernel)
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	# the board's own state: released, then brought up to date
	for pocket in "" -updates -security; do
		echo "deb $mirror $release$pocket main universe"
	done >"$root/etc/apt/sources.list"
	in_root sh -ec 'apt-get update -qq && apt-get dist-upgrade -y -qq >/dev/null' >"$dir/apt.log" 2>&1 ||
		{ tail -20 "$dir/apt.log"; exit 1; }
	if [ "$kind" = package ]; then
		mkdir -p "$root/tmp/dep/debian"
		cp debian/control "$root/tmp/dep/debian/control"
		in_root sh -ec 'apt-get install -y -qq --no-install-recommends build-essential dpkg-dev libcmocka-dev python3 >/dev/null
			cd /tmp/dep && apt-get build-dep -y -qq ./ >/dev/null' >>"$dir/apt.log" 2>&1 ||
			{ tail -20 "$dir/apt.log"; exit 1; }
	fi
	echo "$stamp" >"$root/.tegrawatch-ready"
fi
[ "$prepare_only" -eq 0 ] || exit 0

# ---- the package: the tree built and tested in the release, then debian/ ----
package_floor() {
	in_root sh -c '. /etc/os-release; echo "ubuntu-floor: $PRETTY_NAME: meson $(meson --version), $(gcc --version | head -1),"\
" glibc $(dpkg-query -W -f="\${Version}" libc6), libmicrohttpd $(dpkg-query -W -f="\${Version}" libmicrohttpd-dev),"\
" libmosquitto $(dpkg-query -W -f="\${Version}" libmosquitto-dev), libyaml $(dpkg-query -W -f="\${Version}" libyaml-dev)"'
	# the tree as it is here (tracked and new files), not as last committed
	rm -rf "$root/src" "$root/build" "$root"/tegrawatch_* "$root"/tegrawatch-*
	mkdir -p "$root/src"
	git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$root/src" ||
		{ echo "ubuntu-floor $release: cannot copy the tree (git ls-files)"; return 1; }
	if [ "$package_only" -eq 0 ]; then
		in_root sh -c 'cd /src && meson setup /build --fatal-meson-warnings -Dwerror=true -Dbuildtype=debugoptimized >/dev/null &&
			ninja -C /build >/dev/null' || { echo "ubuntu-floor $release: the build failed"; in_root ninja -C /build | tail -30; return 1; }
		in_root meson test -C /build --no-rebuild --print-errorlogs --num-processes 2 --suite unit || true
		in_root meson test -C /build --no-rebuild --print-errorlogs golden-outputs || true
	fi
	in_root sh -c 'cd /src && dpkg-buildpackage -us -uc -b >/tmp/dpkg-buildpackage.log 2>&1' ||
		{ tail -30 "$root/tmp/dpkg-buildpackage.log"; return 1; }
	# the package builds without -Werror (a user's build), but a warning of the release's compiler (with the
	# distribution's hardening flags) or of its meson is still a finding here
	if grep -E ': warning: |^WARNING: |^DEPRECATION: ' "$root/tmp/dpkg-buildpackage.log"; then
		echo "ubuntu-floor $release: the package build warned (above)"
		return 1
	fi
	in_root sh -c 'apt-get install -y -qq /tegrawatch_*.deb >/tmp/apt-install.log 2>&1' ||
		{ tail -20 "$root/tmp/apt-install.log"; return 1; }
	in_root /usr/bin/tegrawatch --version && in_root /src/tests/golden/compare.sh --sums /usr/bin/tegrawatch
}

# ---- the bundle: installed, then run by the release's own systemd ----
bundle_floor() {
	local bundle=${TEGRAWATCH_BUNDLE:-}
	if [ -z "$bundle" ]; then
		rm -rf "$dir/bundle"
		BUNDLE_BUILD_DIR=$dir/bundle-build scripts/bundle.sh amd64 "$dir/bundle" >/dev/null || return 1
		bundle=$(ls "$dir"/bundle/tegrawatch-*-linux-amd64.tar.gz)
	fi
	rm -rf "$root/opt/tegrawatch" "$root/etc/tegrawatch" "$root/etc/systemd/system/tegrawatch.service"
	tar -C "$root/opt" -xzf "$bundle" || return 1
	in_root /opt/tegrawatch/install.sh --no-start || return 1
	mkdir -p "$dir/ns"
	local state="" deadline
	cgroups_before=$dir/cgroups.before ns_parent="" pid=""
	find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | sort >"$cgroups_before"
	# PID 1 of new namespaces: the release's systemd on a tmpfs overlay of its root (nothing it writes stays)
	unshare --fork --kill-child --pid --mount --uts --ipc --net --cgroup --propagation private tests/packaging/ns-init.sh \
		"$dir/ns" "$root" tw-floor >"$dir/console.log" 2>&1 &
	ns_parent=$!
	# however this ends (a failed check, ^C), the namespace's systemd and what it started go
	trap 'stop_ns' EXIT
	for _ in $(seq 150); do
		pid=$(pgrep -P "$ns_parent" -x systemd | head -1)
		[ -n "$pid" ] && break
		sleep 0.2
	done
	local ok=1
	in_ns() { nsenter -t "$pid" -a "$@"; }
	if [ -z "$pid" ]; then
		echo "ubuntu-floor $release: systemd did not start:"; tail -5 "$dir/console.log"; ok=0
	else
		# systemd 237 has no `is-system-running --wait`: ask until the boot is over
		deadline=$(($(date +%s) + 120))
		while [ "$(date +%s)" -lt "$deadline" ]; do
			state=$(in_ns systemctl is-system-running 2>/dev/null) || true
			case $state in running | degraded) break ;; esac
			sleep 0.5
		done
		echo "ubuntu-floor $release: $(in_ns systemctl --version | head -1) booted ($state) in $(($(date +%s) - deadline + 120)) s"
		bundle_service_checks || ok=0
	fi
	stop_ns
	trap - EXIT
	[ "$ok" -eq 1 ]
}

# Powers the namespace's systemd off (SIGKILL after 20 s: its PID namespace dies with it), then removes the cgroups
# it made on the host, deepest first.
stop_ns() {
	if [ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null; then
		nsenter -t "$pid" -a systemctl poweroff --no-block >/dev/null 2>&1 || true
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	kill -KILL "$ns_parent" 2>/dev/null || true
	wait "$ns_parent" 2>/dev/null || true
	find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | sort | comm -13 "$cgroups_before" - | sort -r |
		while read -r d; do rmdir "$d" 2>/dev/null || true; done
}

# What an operator of a JetPack 4 or 5 board meets: the unit loads, the agent starts and says READY, it samples,
# its web server answers, a reload keeps it running, a stop stops it.
bundle_service_checks() {
	local main show
	in_ns systemctl start tegrawatch || { in_ns journalctl -u tegrawatch --no-pager | tail -15; return 1; }
	show=$(in_ns systemctl show -p ActiveState -p StatusText -p NRestarts tegrawatch)
	echo "ubuntu-floor $release: started: $(echo $show)"
	grep -qx ActiveState=active <<<"$show" && grep -qx StatusText=sampling <<<"$show" &&
		grep -qx NRestarts=0 <<<"$show" || { in_ns journalctl -u tegrawatch --no-pager | tail -15; return 1; }
	# the shipped configuration's web server (127.0.0.1:9474), asked with the release's own bash
	local reply
	reply=$(in_ns bash -c 'exec 3<>/dev/tcp/127.0.0.1/9474 && printf "GET /healthz HTTP/1.0\r\n\r\n" >&3 &&
		timeout 10 cat <&3') || true
	[[ $reply == "HTTP/1.1 200 "* ]] || { echo "ubuntu-floor $release: no /healthz: ${reply:0:200}"; return 1; }
	main=$(in_ns systemctl show -p MainPID --value tegrawatch)
	in_ns systemctl reload tegrawatch || { echo "ubuntu-floor $release: reload failed"; return 1; }
	[ "$(in_ns systemctl show -p MainPID --value tegrawatch)" = "$main" ] &&
		[ "$(in_ns systemctl is-active tegrawatch)" = active ] || { echo "ubuntu-floor $release: not running after reload"; return 1; }
	in_ns systemctl stop tegrawatch
	[ "$(in_ns systemctl is-active tegrawatch)" = inactive ] || { echo "ubuntu-floor $release: still running after stop"; return 1; }
	echo "ubuntu-floor $release: /healthz answered; reload kept pid $main; stopped"
}

if "${kind}_floor"; then
	echo "ubuntu-floor $release $kind: ok"
else
	echo "ubuntu-floor $release $kind: FAILED"
fi
