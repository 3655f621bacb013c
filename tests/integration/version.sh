#!/usr/bin/env bash
# One version (issue 25 item 5): meson.build's project version is the source;
# debian/changelog's newest entry (without its Debian revision) and the
# binary's --version must say the same. debian/rules refuses to build a
# package whose changelog disagrees.
#   version.sh SOURCE_ROOT TEGRAWATCH
set -u
src=$1 bin=$2
fail=0
want=$(sed -n "s/^[[:space:]]*version: '\([^']*\)',.*/\1/p" "$src/meson.build" | head -1)
[ -n "$want" ] || { echo "FAIL: no version in meson.build"; exit 1; }
deb=$(sed -n '1s/^tegrawatch (\([^)]*\)).*/\1/p' "$src/debian/changelog")
deb_upstream=${deb%-*}
if [ "$deb_upstream" != "$want" ]; then
	echo "FAIL: debian/changelog says $deb, meson.build $want (bump both: the binary reports meson.build's)"
	fail=1
fi
got=$("$bin" --version | awk '{ print $2; exit }')
if [ "$got" != "$want" ]; then
	echo "FAIL: tegrawatch --version says $got, meson.build $want"
	fail=1
fi
[ "$fail" -eq 0 ] && echo "version: $want everywhere"
exit "$fail"
