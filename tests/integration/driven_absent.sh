#!/bin/sh
# The driven clock is for tests only: the shipped binary (TEGRAWATCH) holds neither its control variable nor
# its code (symbol names, when DRIVEN, tegrawatch-driven, keeps its symbols: a stripped build has none to look
# for). DRIVEN holds the variable, so the names looked for are the right ones.
# Usage: driven_absent.sh TEGRAWATCH DRIVEN
set -u
bin=$1 driven=$2
status=0
if ! grep -a -q TEGRAWATCH_DRIVEN_CLOCK "$driven"; then
	echo "FAIL: $driven lacks TEGRAWATCH_DRIVEN_CLOCK: this check looks for the wrong name"
	status=1
fi
for s in TEGRAWATCH_DRIVEN_CLOCK clock_driven_start clock_driven_run clock_driven_advance; do
	if ! grep -a -q "$s" "$driven"; then
		echo "note: $driven has no $s (stripped): not looked for"
	elif grep -a -q "$s" "$bin"; then
		echo "FAIL: $bin contains $s (the driven clock is for tests only)"
		status=1
	fi
done
[ $status = 0 ] && echo "ok: $bin has no driven clock"
exit $status
