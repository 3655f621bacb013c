#!/usr/bin/env bash
# Repository checks: each third-party library behind one file, no banned
# functions, no includes between tegra/, thresholds/ and web/.
set -u
cd "${1:-$(dirname "$0")/../..}" || exit 1
fail=0
src=$(git ls-files '*.c' '*.h' 2>/dev/null | grep -v '^tests/' || find agent tegra thresholds web -name '*.[ch]')

for h in mosquitto.h microhttpd.h yaml.h curl/curl.h sensors/sensors.h; do
	files=$(grep -l "#include <$h>" $src 2>/dev/null)
	n=$(printf '%s' "$files" | grep -c . || true)
	if [ "$n" -gt 1 ]; then
		echo "FAIL: <$h> is included by $n files: $files"
		fail=1
	fi
done

# curl's list of banned functions plus strtok/atoi
if grep -nE '\b(sprintf|vsprintf|strcat|strncat|gets|strtok|atoi)\s*\(' $src | grep -vE '(snprintf|vsnprintf)\s*\('; then
	echo "FAIL: banned functions above"
	fail=1
fi

for dir in tegra thresholds web; do
	for other in tegra thresholds web; do
		[ "$dir" = "$other" ] && continue
		if grep -n "#include \"$other/" $(printf '%s\n' $src | grep "^$dir/") 2>/dev/null; then
			echo "FAIL: $dir/ includes $other/"
			fail=1
		fi
	done
done

[ "$fail" -eq 0 ] && echo "hygiene: ok"
exit "$fail"
