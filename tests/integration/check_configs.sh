#!/bin/sh
# Runs `tegrawatch check -c FILE` on every YAML file under DIR (configs/):
# the shipped main file, its rules.d/ and whatever else ships there.
#   check_configs.sh TEGRAWATCH DIR
set -u
bin=$1
dir=$2
fail=0
n=0
for f in $(find "$dir" -name '*.yaml' | sort); do
	n=$((n + 1))
	if ! "$bin" check -c "$f"; then
		echo "FAIL: $f"
		fail=1
	fi
done
if [ "$n" -eq 0 ]; then
	echo "FAIL: no YAML file under $dir"
	exit 1
fi
exit "$fail"
