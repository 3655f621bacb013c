#!/usr/bin/env bash
# `meson install` into a DESTDIR, then the installed copy works: the binary
# checks the installed configuration with the shipped rules (found relative to
# the file, so under the DESTDIR too), the demo board and its rules are there
# and replay exactly like the source tree's, the man pages and the completion
# are there, and the unit starts a binary that exists, passes
# `systemd-analyze verify` and scores 2.0 or lower in
# `systemd-analyze security --offline=true`.
#   install.sh MESON BUILD_DIR SOURCE_ROOT BINDIR SYSCONFDIR UNITDIR MANDIR DATADIR COMPLETIONDIR
# (absolute installed paths; UNITDIR/COMPLETIONDIR "no" when not installed).
# Exit 77 (skipped) when systemd-analyze is missing, after every other check.
set -u
meson=$1 build=$2 src=$3 bindir=$4 sysconfdir=$5 unitdir=$6 mandir=$7 datadir=$8 completiondir=$9

fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest

# --no-rebuild: the suite already built everything; ninja must not run under `meson test`
if ! "$meson" install -C "$build" --destdir "$dest" --no-rebuild >"$tmp/install.log" 2>&1; then
	tail -20 "$tmp/install.log"
	echo "FAIL: meson install"
	exit 1
fi

tw=$dest$bindir/tegrawatch
[ -x "$tw" ] || { echo "FAIL: no $tw"; exit 1; }
"$tw" version || bad "the installed binary does not run"

# Nothing but the agent's files: no test or bench programs, no libraries.
others=$(cd "$dest" && find . -type f -perm -u+x ! -path ".$bindir/tegrawatch")
[ -z "$others" ] || bad "programs installed besides the binary: $others"
find "$dest" -name 'test_*' -o -name '*.a' -o -name 'bench*' | grep . && bad "test, bench or library files installed"

# The configuration with the shipped rules: `check` counts the rules of the
# main file and of every included file.
etc=$dest$sysconfdir/tegrawatch
conf=$etc/tegrawatch.yaml
[ -f "$etc/rules.d/jetson.yaml" ] || bad "no $etc/rules.d/jetson.yaml"
want=$(cat "$conf" "$etc"/rules.d/*.yaml | grep -c '^  - name:')
out=$("$tw" check -c "$conf") || bad "check -c $conf"
echo "$out"
case $out in
*": ok, $want rules,"*) ;;
*) bad "check did not count the $want rules of $conf and its rules.d/" ;;
esac

# The demo board: the same tree as configs/demo (symlinks as symlinks), its
# configuration finds the rules copied next to it, and a dry-run replay gives
# the same timeline as the source tree's.
demo=$dest$datadir/tegrawatch/demo
diff -r --no-dereference -x README.md "$src/configs/demo" "$demo" || bad "the installed demo differs from configs/demo"
"$tw" check -c "$demo/tegrawatch.yaml" || bad "check -c $demo/tegrawatch.yaml"
timeline() {
	"$tw" replay "$1/tegrastats.log" -c "$1/tegrawatch.yaml" --root "$1/root" --dry-run --json 2>/dev/null
}
timeline "$src/configs/demo" >"$tmp/source.jsonl"
timeline "$demo" >"$tmp/installed.jsonl"
if [ ! -s "$tmp/installed.jsonl" ] || ! cmp -s "$tmp/source.jsonl" "$tmp/installed.jsonl"; then
	bad "the installed demo replays differently ($(wc -l <"$tmp/installed.jsonl") events, source $(wc -l <"$tmp/source.jsonl"))"
else
	echo "demo: $(wc -l <"$tmp/installed.jsonl") alert events, the same as the source tree"
fi

# Man pages, rendered without a warning when man is there.
for page in man1/tegrawatch.1 man5/tegrawatch.yaml.5; do
	f=$dest$mandir/$page
	if [ ! -f "$f" ]; then
		bad "no $f"
	elif command -v man >/dev/null; then
		w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
		[ -z "$w" ] || bad "man $page: $w"
	fi
done

# The bash completion; with bash-completion present, completing
# `tegrawatch rep` gives `replay` and `tegrawatch run --de` gives `--demo`.
if [ "$completiondir" != no ]; then
	comp=$dest$completiondir/tegrawatch
	if [ ! -f "$comp" ]; then
		bad "no $comp"
	elif ! bash -n "$comp"; then
		bad "$comp is not valid bash"
	elif [ -f /usr/share/bash-completion/bash_completion ]; then
		got=$(bash -c '
			source /usr/share/bash-completion/bash_completion
			source "$1"
			complete_words() {
				COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
				COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
				COMPREPLY=(); _tegrawatch tegrawatch; echo "${COMPREPLY[*]}"
			}
			complete_words tegrawatch repl
			complete_words tegrawatch run --de' _ "$comp")
		[ "$got" = $'replay\n--demo' ] || bad "completion gave '$got'"
	fi
fi

# The unit.
if [ "$unitdir" = no ]; then
	echo "the unit is not installed (-Dsystemdsystemunitdir=no)"
	exit "$fail"
fi
unit=$dest$unitdir/tegrawatch.service
[ -f "$unit" ] || { echo "FAIL: no $unit"; exit 1; }
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
exe=${exec_start%% *}
[ "$exe" = "$bindir/tegrawatch" ] || bad "ExecStart starts $exe, not $bindir/tegrawatch"
[ -x "$dest$exe" ] || bad "ExecStart's $exe does not exist under DESTDIR"
case $exec_start in
*" -c $sysconfdir/tegrawatch/tegrawatch.yaml"*) ;;
*) bad "ExecStart does not name $sysconfdir/tegrawatch/tegrawatch.yaml" ;;
esac
# what the issue asks of the unit
for line in Type=notify NotifyAccess=main WatchdogSec=30s 'ExecReload=/bin/kill -HUP $MAINPID' \
	"ExecReload=$bindir/tegrawatch check -c $sysconfdir/tegrawatch/tegrawatch.yaml" \
	StateDirectory=tegrawatch Restart=on-failure 'RestartPreventExitStatus=64 69 78' DynamicUser=yes; do
	grep -qxF "$line" "$unit" || bad "the unit lacks $line"
done
grep -q '^#LoadCredential=' "$unit" || bad "the unit has no LoadCredential= example"

# security --offline needs systemd 250 (Debian 12 has 252; Ubuntu 22.04 has 249)
if ! command -v systemd-analyze >/dev/null || ! systemd-analyze --help | grep -q -- '--offline'; then
	echo "SKIP: no systemd-analyze with --offline (package systemd, 250 or later): the unit is not verified"
	[ "$fail" -eq 0 ] && exit 77
	exit 1
fi
# The same unit with the DESTDIR paths, so verify finds the binary; MANPATH
# lets it find the installed man pages named by Documentation=.
mkdir -p "$tmp/unit"
sed -e "s|^ExecStart=$bindir/|ExecStart=$dest$bindir/|" -e "s|^ExecReload=$bindir/|ExecReload=$dest$bindir/|" "$unit" >"$tmp/unit/tegrawatch.service"
if ! MANPATH=$dest$mandir systemd-analyze verify "$tmp/unit/tegrawatch.service"; then
	bad "systemd-analyze verify"
fi
sec=$(systemd-analyze security --offline=true "$tmp/unit/tegrawatch.service" 2>&1)
level=$(printf '%s\n' "$sec" | sed -n 's/.*Overall exposure level for tegrawatch.service: \([0-9.]*\).*/\1/p')
if [ -z "$level" ]; then
	printf '%s\n' "$sec" | tail -5
	bad "systemd-analyze security printed no exposure level"
elif awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }'; then
	echo "systemd-analyze security: exposure $level (at most 2.0)"
else
	printf '%s\n' "$sec" | grep '✗'
	bad "systemd-analyze security: exposure $level, above 2.0"
fi
[ "$fail" -eq 0 ] && echo "install: ok"
exit "$fail"
