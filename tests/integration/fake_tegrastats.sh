#!/bin/sh
# A stand-in for tegrastats (test_hardening.py). "$1 $2" are "--interval MS", as the agent passes them.
#
# FAKE_TEGRASTATS_OUT: a directory; start N writes status.N (its own SigBlk and SigIgn, read before
#   it starts any program) and env.N (its environment, as `export -p`), then pid.N once both are
#   complete.
# FAKE_TEGRASTATS_MODE:
#   lines   (default) a real Orin Nano line every interval
#   restart prints one line and exits (the agent restarts it)
#   bad     a 10 MB line, a NUL byte inside a line, FAKE_TEGRASTATS_GARBAGE lines of garbage, then a line
#           cut off between two tokens (no newline) and exit
#   quiet   prints nothing and waits: the test writes the lines itself into this process's stdout
#           (/proc/PID/fd/1, PID from FAKE_TEGRASTATS_OUT), one per tick of an agent on the driven clock
# Only the first start plays MODE: a restarted one prints lines.
# FAKE_TEGRASTATS_PERIOD: seconds between lines in mode lines, instead of the interval (an agent on the driven
#   clock, tegrawatch-driven, ticks faster than real time: its tegrastats must keep up).
# FAKE_TEGRASTATS_SLEEP: print one line, then sleep that many seconds (a 20 s tegrastats, while the
#   agent's loop ticks fast enough to restart it at once).
LINE='11-15-2024 08:38:09 RAM 6185/7620MB (lfb 8x2MB) SWAP 851/3810MB (cached 1MB) CPU [15%@729,11%@729,14%@729,13%@729,11%@729,8%@729] EMC_FREQ 43%@2133 GR3D_FREQ 63%@[621] NVDEC off NVJPG off NVJPG1 off VIC off OFA off APE 200 cpu@53.968C soc2@52.437C soc0@50.75C gpu@53.343C tj@53.968C soc1@51.656C VDD_IN 12479mW/12479mW VDD_CPU_GPU_CV 4667mW/4667mW VDD_SOC 2817mW/2817mW'
out=${FAKE_TEGRASTATS_OUT:-}
n=1
if [ -n "$out" ]; then
	while [ -e "$out/pid.$n" ]; do n=$((n + 1)); done
	# builtins only: dash blocks every signal while it waits for a child (a grep would see that mask),
	# and clears its mask once it has waited (a program it starts later would not inherit the mask)
	while read -r key value; do
		case $key in SigBlk: | SigIgn:) printf '%s\t%s\n' "$key" "$value" ;; esac
	done </proc/$$/status >"$out/status.$n"
	export -p >"$out/env.$n"
	echo $$ >"$out/pid.$n"
fi
ms=${2:-1000}
secs=${FAKE_TEGRASTATS_SLEEP:-${FAKE_TEGRASTATS_PERIOD:-$((ms / 1000)).$(printf %03d $((ms % 1000)))}}
mode=${FAKE_TEGRASTATS_MODE:-lines}
[ "$n" -gt 1 ] && mode=lines # only the first start is special
case $mode in
quiet)
	exec sleep 100000
	;;
restart)
	echo "$LINE"
	exit 0
	;;
bad)
	head -c 10000000 /dev/zero | tr '\000' x
	echo
	printf 'RAM 6185/7620MB (lfb 8x2MB) SWAP 851/3810MB \000 CPU [15%%@729,11%%@729] GR3D_FREQ 63%%@[621]\n'
	echo "$LINE"
	i=0
	while [ $i -lt ${FAKE_TEGRASTATS_GARBAGE:-0} ]; do
		echo "garbage with no tokens at all"
		i=$((i + 1))
	done
	echo "$LINE"
	printf '%s' "${LINE%% CPU*}"
	exit 0
	;;
esac
while :; do
	echo "$LINE"
	# a program that keeps the signal mask it was given, as tegrastats does (dash may reset its own)
	[ -n "${FAKE_TEGRASTATS_SLEEP:-}" ] && exec sleep "$secs"
	sleep "$secs"
done
