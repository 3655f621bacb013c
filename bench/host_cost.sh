#!/bin/sh
# The per-sample cost of the sources of the real host (bench/bench_host.c): the
# host source, the processes source with 1 and 10 watches (comm:, and 10
# cmdline:), and one TCP probe, on this machine's /proc and /sys. Each as
#   quiet     a tick where no slow scan falls due (--step 0)
#   due       a tick where every slow scan falls due (--step 3600000)
#   paced     amortised at the default pace with 1 s samples (--step 1000: the
#             file systems and the probe every 10th sample, the processes every 5th)
# in instructions (callgrind inside bench_host_read/bench_host_dispatch, over
# N samples) and syscalls (strace's log of the N timed samples, which the
# bench brackets with two getrusage() calls, so that start-up and the first
# scans, which vary with the processes running, are left out exactly; the
# bench's poll(), which stands for the loop's own, too). Then the check that
# a configuration without host:, processes: and probes runs none of their code
# and makes none of their syscalls.
#
#   bench/host_cost.sh [BUILD_DIR]        (default build-bench; needs valgrind and strace)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build-bench}
bh=$build/bench/bench_host
tw=$build/tegrawatch
[ -x "$bh" ] || { echo "bench/host_cost.sh: no $bh" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# instructions per sample: ir N ARGS...
ir() {
	n=$1
	shift
	if ! valgrind --tool=callgrind --toggle-collect='bench_host_*' --callgrind-out-file="$dir/cg" \
		"$bh" "$@" "$n" >"$dir/out" 2>"$dir/err"; then
		echo "failed: $(tail -1 "$dir/err")" >&2
		echo "?"
		return
	fi
	awk -v n="$n" '/^summary:/ { printf "%.0f", $2 / n }' "$dir/cg"
	# the processes source: what the table's scan of /proc costs per process listed
	p=$(sed -n 's/^processes_on_host: \([0-9]*\).*/\1/p' "$dir/out")
	if [ -n "$p" ]; then
		callgrind_annotate --inclusive=yes "$dir/cg" 2>/dev/null |
			awk -v n="$n" -v p="$p" '$NF ~ /^\[/ && $(NF-1) ~ /:proc_table_scan$/ {
				gsub(",", "", $1); printf "%d processes, %.0f instructions each", p, $1 / n / p; exit }' \
				>"$dir/per_process"
	fi
}

# syscalls per sample: sc N ARGS...: those strace logs between the bench's two getrusage() calls
# (the timed samples only: start-up and the first scans left out), the bench's poll() (the loop's) too;
# the mix by name is left in $dir/mix, the table's mean size in $dir/procs
sc() {
	n=$1
	shift
	: >"$dir/mix"
	: >"$dir/procs"
	strace -o "$dir/st" "$bh" "$@" "$n" >"$dir/out" 2>&1 || { echo "?"; return; }
	sed -n 's/^processes_on_host: \([0-9]*\).*/\1/p' "$dir/out" >"$dir/procs"
	awk -v n="$n" -v mixfile="$dir/mix" '
		/^getrusage\(/ { g++; next }
		g == 1 {
			name = $0
			sub(/\(.*/, "", name)
			if (name ~ /^[a-z_0-9]+$/ && name != "poll") { c[name]++; t++ }
		}
		END {
			printf "%.2f\n", t / n
			for (s in c) mix = mix sprintf(" %s %.2f", s, c[s] / n)
			print mix > mixfile
		}' "$dir/st"
}

echo "== per sample, on $(uname -r), $( find /proc -maxdepth 1 -name "[0-9]*" 2>/dev/null | wc -l) processes running"
echo "| source | quiet tick: instructions / syscalls | scan tick | amortised, 1 s samples |"
echo "|---|---|---|---|"
row() {
	label=$1
	shift
	q=$(ir 100 "$@" --step 0)
	qs=$(sc 100 "$@" --step 0)
	qmix=$(cat "$dir/mix")
	: >"$dir/per_process"
	d=$(ir 20 "$@" --step 3600000)
	per_process=$(cat "$dir/per_process")
	ds=$(sc 20 "$@" --step 3600000)
	dmix=$(cat "$dir/mix")
	procs=$(cat "$dir/procs")
	p=$(ir 100 "$@" --step 1000)
	ps=$(sc 100 "$@" --step 1000)
	echo "| $label | $q / $qs | $d / $ds | $p / $ps |"
	echo "$label: quiet:${qmix:- none}; scan tick:$dmix${procs:+ ($procs processes in the table)}" >>"$dir/mixes"
	[ -z "$per_process" ] || echo "$label: the scan of /proc in the scan tick: $per_process" >>"$dir/mixes"
}
row "host (defaults)" host
row "processes, 1 comm: watch" processes --watches 1
row "processes, 10 comm: watches" processes --watches 10
row "processes, 10 cmdline: watches" processes --watches 10 --cmdline
row "probes, 1 TCP probe (loopback)" probes
echo
echo "syscalls by name (per sample):"
sed 's/^/  /' "$dir/mixes"
"$bh" host --step 0 1 | sed -n 's/^metrics_per_sample: /  host metrics per sample: /p'

echo
echo "== a configuration without host:, processes: and host.probes (host: {enabled: false}) runs none of their code"
if [ ! -x "$tw" ]; then
	echo "  SKIPPED: no $tw"
	exit 0
fi
printf 'agent: {state_file: ""}\nweb: {listen: ""}\nhost: {enabled: false}\n' >"$dir/absent.yaml"
printf 'agent: {state_file: ""}\nweb: {listen: ""}\nprocesses:\n  - {name: self, comm: tegrawatch}\nhost:\n  probes:\n    - {name: lo, host: 127.0.0.1, port: 9}\n' \
	>"$dir/present.yaml"
fns='host_read|procs_read|proc_table_scan|probe_read|probe_dispatch|scan_filesystems'
# their files: the host source's kept /proc files, sysfs link state, a process's status and fds; a probe's connect
files='/proc/(pressure/|vmstat|loadavg|diskstats|net/dev)|/net/[^/>]+/(carrier|operstate)|/proc/[0-9]+/(status|fd)|htons\(9\)'
for c in absent present; do
	valgrind --tool=callgrind --callgrind-out-file="$dir/cg.$c" "$tw" run -c "$dir/$c.yaml" --no-tegrastats \
		--interval 20 --count 30 --json >/dev/null 2>"$dir/err.$c" || true
	ran=$(grep -E "^c?fn=\([0-9]+\) ($fns)$" "$dir/cg.$c" | sed -E "s/^c?fn=\([0-9]+\) //" | sort -u | tr '\n' ' ')
	strace -f -y -o "$dir/st.$c" "$tw" run -c "$dir/$c.yaml" --no-tegrastats --interval 20 --count 30 --json \
		>/dev/null 2>&1 || true
	calls=$(grep -cE "$files" "$dir/st.$c" || true)
	echo "  $c: functions of theirs that ran: ${ran:-none}; syscalls on their files in 30 samples: $calls"
done
