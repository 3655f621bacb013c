#!/usr/bin/env bash
# The build floors are declared once: meson.build's meson_version and each
# dependency's version: '>=X' appear with the same number in debian/control's
# Build-Depends (the package that provides it), and nothing in debian/control
# asks for more than meson.build does.
#   floors.sh SOURCE_ROOT
set -u
src=$1
fail=0
control=$(sed -n '/^Build-Depends:/,/^[A-Z][a-z-]*:/p' "$src/debian/control" | grep -v '^#')
# pkg-config name (or "meson") -> the Debian package that brings it
declare -A deb=([meson]=meson [libmosquitto]=libmosquitto-dev [libmicrohttpd]=libmicrohttpd-dev
	[libcurl]=libcurl4-openssl-dev [yaml-0.1]=libyaml-dev [libcrypto]=libssl-dev [libsystemd]=libsystemd-dev)
floors=$(
	sed -n "s/.*meson_version: '>=\([0-9.]*\)'.*/meson \1/p" "$src/meson.build"
	sed -n "s/.*dependency('\([^']*\)', version: '>=\([0-9.]*\)'.*/\1 \2/p" "$src/meson.build"
)
[ -n "$floors" ] || { echo "FAIL: no floor found in meson.build"; exit 1; }
while read -r name version; do
	pkg=${deb[$name]:-}
	if [ -z "$pkg" ]; then
		echo "FAIL: meson.build has a floor for $name, floors.sh does not know its Debian package"
		fail=1
	elif ! grep -qE "^ $pkg \(>= $version\)" <<<"$control"; then
		echo "FAIL: meson.build needs $name >= $version; debian/control says: $(grep -E "^ $pkg\b" <<<"$control")"
		fail=1
	else
		echo "floor: $name >= $version (debian/control: $pkg)"
	fi
done <<<"$floors"
# the other way: a versioned build dependency that meson.build does not declare
while read -r pkg version; do
	found=0
	for name in "${!deb[@]}"; do
		[ "${deb[$name]}" = "$pkg" ] && grep -qxF "$name $version" <<<"$floors" && found=1
	done
	[ "$pkg" = debhelper-compat ] && found=1
	[ "$found" -eq 1 ] || { echo "FAIL: debian/control asks for $pkg >= $version, meson.build does not"; fail=1; }
done < <(sed -n 's/^ \([a-z0-9.+-]*\) (>= \([0-9.]*\)).*/\1 \2/p' <<<"$control")
exit "$fail"
