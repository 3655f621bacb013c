#!/usr/bin/env bash
# The portable bundle for boards no package reaches (JetPack 4 and 5: their
# distributions' meson, libraries and glibc are older than the build needs):
#   scripts/bundle.sh ARCH OUTDIR        (ARCH = arm64 or amd64)
# writes OUTDIR/tegrawatch-VERSION-linux-ARCH.tar.gz, which `tar -C /opt -xzf`
# unpacks into /opt/tegrawatch:
#   bin/tegrawatch      the agent (MQTT, web, webhooks, sensors), built here
#   lib/                its own glibc loader and every library it maps, and those
#                       it loads when configured (libcurl, libsnappy, libmosquitto,
#                       libmicrohttpd, ncursesw) with theirs
#   etc/tegrawatch/     the shipped configuration and rules
#   lib/systemd/system/tegrawatch.service, share/ (man pages, demo, docs,
#                       completion), install.sh (lays them out as the package does)
# The binary's program interpreter is /opt/tegrawatch/lib/<loader> and its
# DT_RPATH $ORIGIN/../lib, so it starts as it is, with no shell and no library
# of the host (docs/bundle.md says why this and not a static link).
# Needs patchelf; arm64 needs the cross group of scripts/deps.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
[ $# -eq 2 ] || { echo "usage: scripts/bundle.sh arm64|amd64 OUTDIR" >&2; exit 64; }
arch=$1 out=$2
prefix=/opt/tegrawatch
case $arch in
amd64) triplet=x86_64-linux-gnu loader=ld-linux-x86-64.so.2 cross=() ;;
arm64) triplet=aarch64-linux-gnu loader=ld-linux-aarch64.so.1 cross=(--cross-file scripts/cross/arm64.ini) ;;
*) echo "bundle: ARCH is arm64 or amd64, not $arch" >&2; exit 64 ;;
esac
version=$(sed -n "s/^\tversion: '\(.*\)',$/\1/p" meson.build)
[ -n "$version" ] || { echo "bundle: no version in meson.build" >&2; exit 1; }
build=${BUNDLE_BUILD_DIR:-build-bundle-$arch}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The package's build: release, hardened like dpkg-buildflags' defaults, no tests, no benchmarks; the
# paths of the bundle compiled in (the demo under /opt/tegrawatch/share), the configuration in /etc.
reconf=""
[ -f "$build/build.ninja" ] && reconf="--reconfigure"
meson setup $reconf "$build" "${cross[@]}" --prefix="$prefix" --sysconfdir=/etc --localstatedir=/var \
	--buildtype=release -Dtests=disabled -Dbench=false -Db_pie=true \
	-Dc_args="-fstack-protector-strong -D_FORTIFY_SOURCE=2" -Dc_link_args="-Wl,-z,relro -Wl,-z,now" \
	-Dsystemdsystemunitdir="$prefix/lib/systemd/system" \
	-Dbashcompletiondir="$prefix/share/bash-completion/completions" >"$tmp/setup.log" 2>&1 ||
	{ cat "$tmp/setup.log"; exit 1; }
ninja -C "$build" >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log"; exit 1; }
meson install -C "$build" --destdir "$tmp/stage" --no-rebuild >"$tmp/install.log" 2>&1 ||
	{ tail -20 "$tmp/install.log"; exit 1; }

top=$tmp/tegrawatch
mv "$tmp/stage$prefix" "$top"
mkdir -p "$top/etc" "$top/lib"
mv "$tmp/stage/etc/tegrawatch" "$top/etc/"
strip_prog=strip
[ "$arch" = arm64 ] && strip_prog=aarch64-linux-gnu-strip
"$strip_prog" --strip-unneeded "$top/bin/tegrawatch"

# The libraries: what the binary needs, what libcurl (dlopen) needs, and so on, from the multiarch
# directories of this machine; each copied once under its soname.
find_lib() {
	local d
	for d in /lib/$triplet /usr/lib/$triplet /lib /usr/lib; do
		[ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	return 1
}
needed() {
	readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}
queue=$(needed "$top/bin/tegrawatch")
# loaded with dlopen(): the OpenSSL build of libcurl (core/http_client.c: webhooks, remote_write, otlp),
# libsnappy and zlib (fleet/compress.c), libmosquitto (mqtt/mqtt_conn.c), libmicrohttpd (web/http_mhd.c),
# ncursesw (top/term_curses.c)
queue="$queue libcurl.so.4 libsnappy.so.1 libz.so.1 libmosquitto.so.1 libmicrohttpd.so.12 libncursesw.so.6"
while [ -n "$queue" ]; do
	next=""
	for so in $queue; do
		[ -e "$top/lib/$so" ] && continue
		path=$(find_lib "$so") || { echo "bundle: $so not found for $arch" >&2; exit 1; }
		cp -L "$path" "$top/lib/$so"
		chmod 644 "$top/lib/$so"
		next="$next $(needed "$top/lib/$so")"
	done
	queue=$(echo "$next" | xargs -n1 2>/dev/null | sort -u | xargs)
done
loader_path=$(find_lib "$loader") || { echo "bundle: no $loader" >&2; exit 1; }
cp -L "$loader_path" "$top/lib/$loader"
chmod 755 "$top/lib/$loader"
# the libraries' symbols stay (a crash report needs them on the board); their debug sections go
"$strip_prog" --strip-debug "$top"/lib/*.so* 2>/dev/null || true
# DT_RPATH, not DT_RUNPATH: it also applies to the libraries' own dependencies and to dlopen()
patchelf --set-interpreter "$prefix/lib/$loader" --force-rpath --set-rpath '$ORIGIN/../lib' "$top/bin/tegrawatch"
# a library with a DT_RUNPATH of its own would stop the binary's DT_RPATH for its dependencies
for f in "$top"/lib/*.so*; do
	if readelf -d "$f" | grep -qE '\((RUNPATH|RPATH)\)'; then
		patchelf --force-rpath --set-rpath '$ORIGIN' "$f"
	fi
done

install -m 755 scripts/bundle-install.sh "$top/install.sh"
{
	echo "tegrawatch $version for linux-$arch, built $(date -u +%Y-%m-%d) from $(git -C "$src" describe --always --dirty 2>/dev/null || echo a source tree)"
	echo "glibc $(dpkg-query -W -f='${Version}' "libc6:$arch") (its own loader, $prefix/lib/$loader); libraries:"
	(cd "$top/lib" && ls) | sed 's/^/  /'
} >"$top/BUNDLE"

name=tegrawatch-$version-linux-$arch.tar.gz
tar -C "$tmp" --owner=0 --group=0 --numeric-owner --sort=name -czf "$out/$name" tegrawatch
echo "bundle: $out/$name ($(du -k "$out/$name" | cut -f1) KiB, $(ls "$top/lib" | wc -l) files in lib/)"
