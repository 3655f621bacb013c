#!/usr/bin/env bash
# Repository checks: each third-party library behind one file, no banned
# functions, the include direction between folders.
set -u
cd "${1:-$(dirname "$0")/../..}" || exit 1
fail=0
src=$(git ls-files '*.c' '*.h' 2>/dev/null | grep -v '^tests/' || find . -name '*.[ch]' -not -path './tests/*' -not -path './build*' | sed 's|^./||')

for h in mosquitto.h microhttpd.h yaml.h curl/curl.h sensors/sensors.h snappy-c.h zlib.h dlfcn.h curses.h; do
	files=$(grep -l "#include <$h>" $src 2>/dev/null)
	n=$(printf '%s' "$files" | grep -c . || true)
	if [ "$n" -gt 1 ]; then
		echo "FAIL: <$h> is included by $n files: $files"
		fail=1
	fi
done

# NVML has no header here: one file declares its functions and constants (nvml/nvml_lib.c).
files=$(grep -lE '#include <nvml\.h>|\bnvml(Init|Device[A-Z]|Shutdown|SystemGet)[A-Za-z_0-9]*\b' $src 2>/dev/null |
	grep -v '^nvml/nvml_lib\.c$')
if [ -n "$files" ]; then
	echo "FAIL: NVML is named outside nvml/nvml_lib.c: $files"
	fail=1
fi

# OpenSSL has many headers: count the files that include any of them.
files=$(grep -l '#include <openssl/' $src 2>/dev/null)
n=$(printf '%s' "$files" | grep -c . || true)
if [ "$n" -gt 1 ]; then
	echo "FAIL: OpenSSL headers are included by $n files: $files"
	fail=1
fi

# curl's list of banned functions plus strtok/atoi
if grep -nE '\b(sprintf|vsprintf|strcat|strncat|gets|strtok|atoi)\s*\(' $src | grep -vE '(snprintf|vsnprintf)\s*\('; then
	echo "FAIL: banned functions above"
	fail=1
fi

# The include direction (docs/architecture.md), in one line: a top folder is a
# module; core/ includes only itself; a module includes only core/ and itself;
# only agent/ (the composition root) includes modules.
prod=$(printf '%s\n' $src | grep -vE '^(bench|scripts|docs|tests)/' | grep /)
for f in $prod; do
	from=${f%%/*}
	[ "$from" = agent ] && continue
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case "$inc" in
		*/*) to=${inc%%/*} ;;
		*) continue ;; # a sibling in the same folder, or build_config.h
		esac
		if [ "$to" != "$from" ] && [ "$to" != core ]; then
			echo "FAIL: $f includes \"$inc\" ($from/ -> $to/: only agent/ includes modules)"
			fail=1
		fi
	done
done

# agent/ only composes (docs/architecture.md): the command line, the commands, the configuration loader, setup.c
# and the helpers that only wire; what is a module goes to a folder of its own. The files allowed, a pattern a line:
agent_allowed='
agent/main\.c                   the program: -v/-q, then the command
agent/cli(_doc)?\.[ch]          the one table of commands and options, its man page parts and completion
agent/cmd_[a-z_]+\.c            one file per command
agent/commands\.h               the entry points of the commands
agent/config[a-z_]*\.[ch]       the configuration loader (config_priv.h, config_include.c, config_memory.c, ...)
agent/setup\.[ch]               configuration -> running pipeline
agent/fleet_setup\.[ch]         wires the fleet sinks from their sections
agent/demo\.[ch]                the pipeline of the demo board
agent/alerting\.[ch]            wires the rules stage and the action stages, and gives them their parts again on a reload
agent/meson\.build
'
agent_re=$(printf '%s' "$agent_allowed" | awk 'NF { printf "%s^%s$", sep, $1; sep = "|" }')
others=$(git ls-files agent 2>/dev/null || find agent -type f)
others=$(printf '%s\n' $others $(git ls-files --others --exclude-standard agent 2>/dev/null) | grep . | sort -u |
	grep -vE "$agent_re")
if [ -n "$others" ]; then
	echo "FAIL: agent/ holds more than composition (move a module to a folder of its own): $others"
	fail=1
fi

# and what it wires does its own work: no stage is defined in agent/ (the rules stage is thresholds/rules_stage.c,
# the actions' alerts/actions_stage.c and webhook/webhook_stage.c), and nothing there runs the engine, emits an
# alert or hands one to an action: alert events reach the actions through the agent's fan-out only.
agent_src=$(printf '%s\n' $prod | grep -E '^agent/.*\.[ch]$')
if grep -nE 'struct stage_ops|alert_fanout_emit|\b(engine_[a-z_]+|webhooks_[a-z_]+|actions_(create|destroy|set|notify|poll|get_stats))\(' \
	$agent_src; then
	echo "FAIL: agent/ does the work of a stage or an action above (composition only: give it to the module's stage)"
	fail=1
fi

# The map stays true: every top folder holding C sources has its row in docs/development.md's source layout
# table and its entry in docs/architecture.md.
for d in $(printf '%s\n' $prod | grep -E '\.[ch]$' | cut -d/ -f1 | sort -u); do
	grep -q "^| \`$d/\` |" docs/development.md || { echo "FAIL: $d/ has no row in docs/development.md's layout table"; fail=1; }
	grep -q "^$d/ " docs/architecture.md || { echo "FAIL: $d/ is missing from docs/architecture.md"; fail=1; }
done

# The documentation's relative links lead to files that exist (README.md and docs/*.md; anchors are not checked).
for f in README.md docs/*.md; do
	for link in $(grep -o '](\([^)# ]*\)' "$f" | sed 's/^](//' | grep -vE '^(https?|mailto):'); do
		[ -e "$(dirname "$f")/$link" ] || { echo "FAIL: $f links to $link, which does not exist"; fail=1; }
	done
done
# and README.md's Documentation list names every page
for f in docs/*.md; do
	grep -qF "]($f)" README.md || { echo "FAIL: $f is not in README.md's Documentation list"; fail=1; }
done

# Each command (agent/cmd_*.c) and main.c export their entry point only: no command calls another or
# main.c (no cycles); what they share, from loading the configuration to the running pipeline, is setup.c's.
for f in $(printf '%s\n' $prod | grep -E '^agent/(cmd_.*|main)\.c$'); do
	if awk 'prev !~ /^static/ && /^[a-z_][a-z0-9_]*\(/ && !/^(cmd_[a-z]+|main)\(/ { print FILENAME ":" FNR ": " $0; bad = 1 }
		{ prev = $0 } END { exit !bad }' "$f"; then
		echo "FAIL: $f exports more than its command (share through setup.c)"
		fail=1
	fi
done

# One out-of-memory convention (core/xalloc.h aborts) and one clock helper (core/clock.h),
# in the product (bench/ programs measure with their own clocks).
if grep -nE '\babort\s*\(' $prod | grep -v '^core/xalloc.h:'; then
	echo "FAIL: abort() outside core/xalloc.h (use xcalloc/xrealloc/xstrdup)"
	fail=1
fi
# One clock (core/clock.h): the product reads the time and waits only through it, so a test build can
# drive it. The exceptions, one file a line with its reason:
clock_exceptions='
core/clock.c            the real clock source itself
core/clock_driven.c     the driven clock (tests only): bounds its waits on the real monotonic clock
'
clock_allowed=$(printf '%s' "$clock_exceptions" | awk 'NF { printf "%s^%s:", sep, $1; sep = "|" }')
clock_calls='\b(clock_gettime|clock_nanosleep|nanosleep|usleep|sleep|time|gettimeofday|timespec_get)\(|timedwait'
# comments aside (a "/* ... */" or "// ..." on the line, or a line of a block comment)
if grep -nE "$clock_calls" $prod | grep -vE "$clock_allowed" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*\*' |
	sed 's#/\*.*\*/##; s#/\*.*##; s#//.*##' | grep -E "$clock_calls"; then
	echo "FAIL: the time read or waited for directly above (use core/clock.h: monotonic_ms, clock_wall_ms,"
	echo "      clock_sleep_ms, clock_cond_wait, clock_poll_ms; or name the file in hygiene.sh's clock_exceptions)"
	fail=1
fi
# The clock's seam stays private: its source type to core/clock*.c, the driven clock to the tests.
if grep -n '#include "clock_source.h"' $prod | grep -vE '^core/clock(_driven)?\.c:'; then
	echo "FAIL: core/clock_source.h is private to core/clock.c and core/clock_driven.c"
	fail=1
fi
if grep -nE '#include "(core/)?clock_driven.h"' $prod | grep -v '^core/clock_driven\.c:'; then
	echo "FAIL: the driven clock (core/clock_driven.h) is for tests only"
	fail=1
fi

# The tests too (tests/README.md): files of at most 800 lines, one integration harness that no test
# file bypasses by importing another, and waits for a condition: a fixed time only through
# harness.hold() or stays(), where time is the subject.
tests=$(git ls-files 'tests/unit/*.[ch]' 'tests/integration/*.py' 'tests/browser/*.mjs' 2>/dev/null ||
	find tests/unit tests/integration tests/browser -maxdepth 2 -name '*.[ch]' -o -name '*.py' -o -name '*.mjs' |
	grep -v node_modules)
# Files readable in one sitting, the product's and the tests' (generated and embedded files aside).
for f in $prod $tests; do
	n=$(wc -l <"$f")
	if [ "$n" -gt 800 ]; then
		echo "FAIL: $f has $n lines (at most 800: split it along its seams)"
		fail=1
	fi
done
if grep -nE '^(import|from) (test_|fleet_peers)' tests/integration/*.py; then
	echo "FAIL: a test imports another test file (what tests share goes in tests/integration/harness/)"
	fail=1
fi
if grep -nE '\btime\.sleep\(' tests/integration/test_*.py; then
	echo "FAIL: a test sleeps (wait for a condition: harness.wait_until; a time window: harness.hold or stays)"
	fail=1
fi

[ "$fail" -eq 0 ] && echo "hygiene: ok"
exit "$fail"
