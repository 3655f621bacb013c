#!/usr/bin/env bash
# The package as an operator meets it, under a real systemd (issue 25):
# systemd boots as PID 1 of its own namespaces on an overlay of / kept in a
# tmpfs (nothing reaches the host's disk), the freshly built .deb is
# installed into it, and what an operator checks is checked: start with
# READY, the reason of each failure at `journalctl -p warning`, reload good
# and broken, the watchdog after `kill -STOP`, stop, the state directory,
# credentials with a local mosquitto, an upgrade over the running service,
# remove and purge.
#   systemd.sh SOURCE_ROOT DEB_DIR VERSION
# DEB_DIR/tegrawatch.deb is what the `deb` test built (it runs first); when it
# is missing, deb.sh builds it. Exit 77 (counted as not run) where this
# machine cannot boot systemd in namespaces, with the reason.
set -u
src=$1 debdir=$2 version=$3
log() { printf '%s\n' "$*"; }
skip() {
	log "SKIP: $*"
	exit 77
}
fail=0
bad() {
	log "FAIL: $*"
	fail=1
}

[ "$(id -u)" -eq 0 ] || skip "not root: booting systemd in namespaces needs root"
for tool in unshare nsenter dpkg-deb /lib/systemd/systemd mosquitto mosquitto_sub curl; do
	command -v "$tool" >/dev/null || skip "no $tool"
done
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || skip "no overlay file system"

deb=$debdir/tegrawatch.deb
if [ ! -f "$deb" ]; then
	log "no $deb: building it (tests/packaging/deb.sh)"
	"$src/tests/packaging/deb.sh" "$src" "$version" "$debdir" >/dev/null || { log "FAIL: deb.sh"; exit 1; }
fi

tmp=$(mktemp -d) || exit 1
start_all=$(date +%s)
cgroups_before=$tmp/cgroups.before
find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | sort >"$cgroups_before"

mkdir "$tmp/base"
# PID 1 of the new namespaces: the host's systemd on a tmpfs overlay of /
unshare --fork --pid --mount --uts --ipc --net --cgroup --propagation private "$src/tests/packaging/ns-init.sh" \
	"$tmp/base" / tw-systemd-test >"$tmp/console.log" 2>&1 &
ns_parent=$!

pid=""
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		nsenter -t "$pid" -a systemctl poweroff --no-block >/dev/null 2>&1
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$pid" 2>/dev/null
	fi
	kill -KILL "$ns_parent" 2>/dev/null
	wait "$ns_parent" 2>/dev/null
	# the cgroups systemd made below ours on the host, deepest first
	find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | sort >"$tmp/cgroups.after"
	comm -13 "$cgroups_before" "$tmp/cgroups.after" | sort -r | while read -r d; do rmdir "$d" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# systemd is the child of unshare's child (--fork): wait for it to run
for _ in $(seq 150); do
	pid=$(pgrep -P "$ns_parent" -x systemd | head -1)
	[ -n "$pid" ] && break
	sleep 0.2
done
[ -n "$pid" ] || { cat "$tmp/console.log"; skip "systemd did not start in new namespaces"; }
in_ns() { nsenter -t "$pid" -a "$@"; }
# its bus comes up a moment after it starts: ask until it answers, then wait for the boot to end
deadline=$(($(date +%s) + 90))
state=""
while [ -z "$state" ] && [ "$(date +%s)" -lt "$deadline" ]; do
	state=$(timeout 90 nsenter -t "$pid" -a systemctl is-system-running --wait 2>/dev/null)
	[ -n "$state" ] || sleep 0.5
done
case $state in
running | degraded) ;;
*) tail -20 "$tmp/console.log"; skip "systemd in namespaces did not boot (state '$state')" ;;
esac
log "systemd booted in $(($(date +%s) - start_all)) s ($state); $(in_ns systemctl --version | head -1)"

# ---- helpers inside ----
unit_prop() { in_ns systemctl show -P "$1" tegrawatch; }
# Waits up to $2 seconds (default 60) for the shell condition $1 inside the namespace.
wait_in() {
	local deadline=$(($(date +%s) + ${2:-60}))
	until in_ns sh -c "$1" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.2
	done
}
# The tegrawatch lines of the journal at warning and above since CURSOR ("" = all): what
# `journalctl -t tegrawatch -p warning` shows. journalctl 252 returns nothing for a match
# (-t, -p) together with --after-cursor, so both are filtered here.
warnings_since() {
	in_ns journalctl --no-pager -o export ${1:+--after-cursor="$1"} |
		awk -F= '/^PRIORITY=/ { p = $2 } /^SYSLOG_IDENTIFIER=/ { id = $2 } /^MESSAGE=/ { m = substr($0, 9) }
			/^$/ { if (id == "tegrawatch" && p != "" && p <= 4) print m; p = ""; m = ""; id = "" }
			END { if (id == "tegrawatch" && p != "" && p <= 4) print m }'
}
cursor() { in_ns journalctl -n 1 -o export --no-pager | sed -n 's/^__CURSOR=//p'; }
# journald takes a stream's lines a moment after they are written: waits up to 30 s
# for a tegrawatch line at warning or above since CURSOR that matches the regex PATTERN.
wait_warning() {
	local deadline=$(($(date +%s) + 30))
	until warnings_since "$1" | grep -qE "$2"; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.2
	done
}
# Waits for systemd's own message about the unit (regex PATTERN) since CURSOR.
wait_unit_msg() {
	local deadline=$(($(date +%s) + 30))
	until in_ns journalctl --no-pager -o cat --after-cursor="$1" | grep -qE "$2"; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.2
	done
}
put() { in_ns sh -c "mkdir -p \"\$(dirname '$1')\" && cat >'$1'"; }
conf=/etc/tegrawatch/tegrawatch.yaml

# ---- install: the board is a fixture tree, as agent.root in the conffile ----
tar -C "$src/tests/fixtures/boards/agx-orin-jp5" -cf - . | in_ns sh -c 'mkdir -p /opt/tw-board && tar -C /opt/tw-board -xf -'
put /root/tw.deb <"$deb"
t0=$(date +%s%N)
in_ns dpkg -i /root/tw.deb >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; bad "dpkg -i"; }
# with the shipped configuration on a host that is no Jetson and has no board source, or on this
# machine with whatever it finds: either it is active, or it stopped with 69 and said why at -p warning
in_ns sed -i 's|^  root: ""|  root: /opt/tw-board|' "$conf"
cat <<'EOF' | put /etc/tegrawatch/rules.d/local.yaml
rules:
  - name: board-warm
    metric: temp.tboard_c
    warning: 1
    summary: "the fixture board is above 1 C"
EOF
in_ns systemctl reset-failed tegrawatch 2>/dev/null
c=$(cursor)
t0=$(date +%s%N)
in_ns systemctl restart tegrawatch || bad "start on the fixture board"
t1=$(date +%s%N)
[ "$(unit_prop ActiveState)" = active ] || bad "not active after start: $(unit_prop ActiveState)"
log "start: active (READY) $(((t1 - t0) / 1000000)) ms after 'systemctl restart'"
wait_unit_msg "$c" '^Started tegrawatch' || bad "no 'Started' message"
# (the board-warm alert is the product speaking at its severity, not a diagnostic)
w=$(warnings_since "$c" | grep -v '^alert ')
[ -z "$w" ] || bad "a good start logged at warning: $w"
main=$(unit_prop MainPID)

# ---- a good reload: same process, success, nothing at warning ----
c=$(cursor)
in_ns systemctl reload tegrawatch || bad "reload of a good file failed"
[ "$(unit_prop MainPID)" = "$main" ] || bad "reload changed the main PID"
wait_unit_msg "$c" '^Reloaded tegrawatch' || bad "no 'Reloaded' message"
w=$(warnings_since "$c" | grep -v '^alert ')
[ -z "$w" ] || bad "a good reload logged at warning: $w"

# ---- a broken reload: the command fails, the mistake and its place at -p warning, still running ----
in_ns cp "$conf" /root/good.yaml
in_ns sed -i 's/^  interval: 1s /  interval: fast /' "$conf"
c=$(cursor)
if in_ns systemctl reload tegrawatch 2>/dev/null; then bad "reload of a broken file succeeded"; fi
wait_warning "$c" 'tegrawatch.yaml:.*interval'
w=$(warnings_since "$c")
case $w in
*tegrawatch.yaml:*interval*) log "broken reload: refused, at -p warning: $(printf '%s' "$w" | head -1)" ;;
*) bad "the broken reload's mistake is not at -p warning (got: $w)" ;;
esac
[ "$(unit_prop ActiveState)" = active ] && [ "$(unit_prop MainPID)" = "$main" ] ||
	bad "a broken reload stopped the service"
in_ns cp /root/good.yaml "$conf"

# ---- a broken file at start: exit 78, the mistake at -p warning ----
in_ns sed -i 's/^  interval: 1s /  interval: fast /' "$conf"
c=$(cursor)
in_ns systemctl restart tegrawatch 2>/dev/null
wait_in "systemctl show -P ActiveState tegrawatch | grep -qx failed" 30 || bad "a broken file did not fail the start"
[ "$(unit_prop ExecMainStatus)" = 78 ] || bad "a broken file: exit $(unit_prop ExecMainStatus), not 78"
wait_warning "$c" 'tegrawatch.yaml:.*interval'
w=$(warnings_since "$c")
case $w in
*tegrawatch.yaml:*interval*) log "broken start: exit 78, at -p warning: $(printf '%s' "$w" | head -1)" ;;
*) bad "the start's mistake is not at -p warning (got: $w)" ;;
esac
in_ns cp /root/good.yaml "$conf"

# ---- no board at all: exit 69 and why, at -p warning ----
in_ns mkdir -p /opt/tw-empty
in_ns mkdir -p /etc/systemd/system/tegrawatch.service.d
printf '[Service]\nEnvironment=TEGRAWATCH_AGENT_ROOT=/opt/tw-empty\n' | put /etc/systemd/system/tegrawatch.service.d/root.conf
in_ns systemctl daemon-reload
in_ns systemctl reset-failed tegrawatch
c=$(cursor)
in_ns systemctl restart tegrawatch 2>/dev/null
wait_in "systemctl show -P ActiveState tegrawatch | grep -qx failed" 30 || bad "an empty root did not fail the start"
status=$(unit_prop ExecMainStatus)
wait_warning "$c" .
w=$(warnings_since "$c")
if [ "$status" = 69 ] && [ -n "$w" ]; then
	log "no board: exit 69, at -p warning: $(printf '%s' "$w" | head -1)"
else
	bad "no board: exit $status; at -p warning: '$w'"
fi
in_ns rm /etc/systemd/system/tegrawatch.service.d/root.conf
in_ns systemctl daemon-reload
in_ns systemctl reset-failed tegrawatch

# ---- the watchdog: kill -STOP, then a timeout, SIGABRT and a restart (WatchdogSec shortened for the test) ----
printf '[Service]\nWatchdogSec=3s\nRestartSec=1s\n' | put /etc/systemd/system/tegrawatch.service.d/watchdog.conf
in_ns systemctl daemon-reload
in_ns systemctl restart tegrawatch || bad "restart with WatchdogSec=3s"
main=$(unit_prop MainPID)
c=$(cursor)
t0=$(date +%s)
in_ns kill -STOP "$main"
if wait_in "[ \$(systemctl show -P MainPID tegrawatch) != $main ] && systemctl is-active -q tegrawatch" 60; then
	log "watchdog: stopped process replaced after $(($(date +%s) - t0)) s"
	in_ns journalctl --no-pager -o cat --after-cursor="$c" | grep -q 'tegrawatch.service: Watchdog timeout' ||
		bad "no 'Watchdog timeout' in the journal"
else
	bad "the watchdog did not restart a stopped agent"
fi
in_ns rm /etc/systemd/system/tegrawatch.service.d/watchdog.conf
in_ns systemctl daemon-reload
in_ns systemctl restart tegrawatch || bad "restart after the watchdog test"

# ---- credentials: a password-protected mosquitto, the password as a systemd credential ----
port=18830
printf 'tw:s3cret-canary\n' | put /etc/tw-test/mosq.passwd
in_ns sh -c 'mosquitto_passwd -U /etc/tw-test/mosq.passwd && chmod 644 /etc/tw-test/mosq.passwd'
printf 'listener %s 127.0.0.1\nallow_anonymous false\npassword_file /etc/tw-test/mosq.passwd\n' "$port" |
	put /etc/tw-test/mosq.conf
in_ns systemd-run --quiet --unit=tw-test-broker mosquitto -c /etc/tw-test/mosq.conf || bad "mosquitto in the namespace"
wait_in "ss -ltn | grep -q :$port" 30 ||
	bad "the broker in the namespace does not listen"
in_ns install -m 600 /dev/null /etc/tegrawatch/mqtt.password
printf 's3cret-canary\n' | in_ns sh -c 'cat >/etc/tegrawatch/mqtt.password'
printf '[Service]\nLoadCredential=mqtt-password:/etc/tegrawatch/mqtt.password\n' |
	put /etc/systemd/system/tegrawatch.service.d/override.conf
printf 'mqtt:\n  host: 127.0.0.1\n  port: %s\n  username: tw\n  password_file: credential:mqtt-password\n' "$port" |
	in_ns sh -c "cat >>$conf"
in_ns systemctl daemon-reload
c=$(cursor)
in_ns systemctl restart tegrawatch || bad "restart with MQTT and a credential"
wait_unit_msg "$c" '^Started tegrawatch' || bad "no 'Started' message"
msg=$(in_ns timeout 30 mosquitto_sub -h 127.0.0.1 -p "$port" -u tw -P s3cret-canary -t 'tegrawatch/+/state' -C 1 -W 30 2>&1)
case $msg in
*'"metrics"'* | *'"seq"'*) log "credentials: the agent logged in with credential:mqtt-password and published" ;;
*) bad "no state message through the credential login: $msg" ;;
esac
w=$(warnings_since "$c")
case $w in
*"tls is off"*) bad "'tls is off' warned for a broker on 127.0.0.1" ;;
esac
in_ns journalctl -t tegrawatch --no-pager -o cat | grep -q s3cret-canary && bad "the password is in the journal"

# ---- a watched unit (processes:): the broker's cgroup in this systemd's layout ----
# processes are read on the real root only (as the host's files): this machine's for a moment, not the board's tree.
# Under the shipped sandbox (ProtectProc=invisible) the broker, root's, is hidden: the agent says so at start
cp_conf=$tmp/conf.before-processes
in_ns cat "$conf" >"$cp_conf"
in_ns sed -i 's|^  root: /opt/tw-board|  root: ""|' "$conf"
printf 'processes:\n  - name: broker\n    unit: tw-test-broker\n' | in_ns sh -c "cat >>$conf"
c=$(cursor)
in_ns systemctl restart tegrawatch || bad "restart with processes:"
wait_warning "$c" 'shows this agent only its own processes' || bad "no warning that ProtectProc hides the processes"
printf '[Service]\nProtectProc=default\n' | put /etc/systemd/system/tegrawatch.service.d/processes.conf
in_ns systemctl daemon-reload
in_ns systemctl restart tegrawatch
metric_is() { wait_in "curl -sf http://127.0.0.1:9474/metrics | grep -qxF '$1'" "${2:-30}"; }
if metric_is 'tegrawatch_process_up{name="broker"} 1'; then
	log "processes: unit tw-test-broker.service up through its cgroup"
else
	bad "the broker's unit is not seen up: $(in_ns curl -sf http://127.0.0.1:9474/metrics | grep process_ | head -3)"
fi
in_ns systemctl stop tw-test-broker
metric_is 'tegrawatch_process_up{name="broker"} 0' || bad "the stopped unit is not seen down"
wait_in "curl -sf http://127.0.0.1:9474/api/v1/alerts | grep -q process-down" 30 ||
	bad "the shipped process-down rule did not fire for the stopped unit"
in_ns rm /etc/systemd/system/tegrawatch.service.d/processes.conf
in_ns systemctl daemon-reload
put "$conf" <"$cp_conf"

# ---- the memory limit: MemoryMax=64M is seen whatever the cgroup layout ----
in_ns sh -c "sed -i 's/^  log_level: warning/  log_level: info/' $conf"
c=$(cursor)
in_ns systemctl restart tegrawatch
wait_in "journalctl -t tegrawatch --no-pager -o cat --after-cursor='$c' | grep -q 'memory budget'" 30
budget=$(in_ns journalctl -t tegrawatch --no-pager -o cat --after-cursor="$c" | grep 'memory budget' | head -1)
case $budget in
*"of 64.0 MiB"*) log "memory: $budget" ;;
*) bad "MemoryMax=64M not seen: '$budget'" ;;
esac
in_ns sh -c "sed -i 's/^  log_level: info/  log_level: warning/' $conf"
in_ns systemctl restart tegrawatch

# ---- the alert fires; the state directory after a stop ----
wait_in "curl -sf http://127.0.0.1:9474/api/v1/alerts | grep -q firing" 60 ||
	bad "the board-warm alert does not fire"
starts_before=$(in_ns curl -sf http://127.0.0.1:9474/api/v1/alerts | grep -o '"starts_at": *"[^"]*"' | head -1)
t0=$(date +%s%N)
in_ns systemctl stop tegrawatch
t1=$(date +%s%N)
[ "$(unit_prop ActiveState)" = inactive ] || bad "not inactive after stop"
log "stop: $(((t1 - t0) / 1000000)) ms"
mode=$(in_ns stat -c '%a' /var/lib/private/tegrawatch 2>/dev/null)
[ "$mode" = 700 ] || bad "state directory mode '$mode', not 700"
in_ns test -s /var/lib/private/tegrawatch/alerts.state || bad "no alert state in the state directory after a stop"
in_ns systemctl start tegrawatch || bad "start after stop"
wait_in "curl -sf http://127.0.0.1:9474/api/v1/alerts | grep -q firing" 60
starts_after=$(in_ns curl -sf http://127.0.0.1:9474/api/v1/alerts | grep -o '"starts_at": *"[^"]*"' | head -1)
[ -n "$starts_before" ] && [ "$starts_before" = "$starts_after" ] ||
	bad "the firing alert did not survive a restart ($starts_before / $starts_after)"

# ---- upgrade over the running service: a newer version of the same package ----
in_ns sha256sum "$conf" >"$tmp/conf.sum"
mkdir "$tmp/up"
dpkg-deb -R "$deb" "$tmp/up/pkg"
sed -i "s/^Version: .*/Version: $version+upgrade1/" "$tmp/up/pkg/DEBIAN/control"
dpkg-deb -b "$tmp/up/pkg" "$tmp/up/tw-upgrade.deb" >/dev/null
put /root/tw-upgrade.deb <"$tmp/up/tw-upgrade.deb"
main=$(unit_prop MainPID)
in_ns dpkg -i /root/tw-upgrade.deb >"$tmp/upgrade.log" 2>&1 || { cat "$tmp/upgrade.log"; bad "dpkg -i of the upgrade"; }
wait_in "systemctl is-active -q tegrawatch" 30 || bad "not active after the upgrade"
new=$(unit_prop MainPID)
[ "$new" != "$main" ] || bad "the upgrade did not restart the service"
in_ns sh -c "readlink /proc/$new/exe" | grep -q deleted && bad "the service runs a deleted binary after the upgrade"
in_ns sha256sum "$conf" | cmp -s - "$tmp/conf.sum" || bad "the upgrade changed the edited conffile"
wait_in "curl -sf http://127.0.0.1:9474/api/v1/alerts | grep -q firing" 60
starts_up=$(in_ns curl -sf http://127.0.0.1:9474/api/v1/alerts | grep -o '"starts_at": *"[^"]*"' | head -1)
[ "$starts_up" = "$starts_before" ] || bad "the firing alert changed over the upgrade ($starts_before / $starts_up)"
log "upgrade: restarted ($main -> $new), conffile kept byte for byte, alert kept ($starts_up)"

# ---- remove, then purge ----
in_ns dpkg -r tegrawatch >"$tmp/remove.log" 2>&1 || { cat "$tmp/remove.log"; bad "dpkg -r"; }
in_ns test -e /usr/bin/tegrawatch && bad "remove left the binary"
in_ns test -f "$conf" || bad "remove deleted the conffile"
in_ns test -d /var/lib/private/tegrawatch || bad "remove deleted the state"
in_ns dpkg -P tegrawatch >"$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log"; bad "dpkg -P"; }
in_ns test -e "$conf" && bad "purge left the conffile tegrawatch.yaml"
in_ns test -e /etc/tegrawatch/rules.d/jetson.yaml && bad "purge left the conffile rules.d/jetson.yaml"
in_ns test -e /var/lib/private/tegrawatch && bad "purge left the state"
for f in /etc/tegrawatch/mqtt.password /etc/tegrawatch/rules.d/local.yaml \
	/etc/systemd/system/tegrawatch.service.d/override.conf; do
	in_ns test -f "$f" || bad "purge deleted $f, which the administrator made"
	grep -q "$f" "$tmp/purge.log" || bad "purge did not say it kept $f"
done
log "purge: $(grep 'purge kept' "$tmp/purge.log")"

in_ns systemctl poweroff --no-block >/dev/null 2>&1
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
kill -0 "$pid" 2>/dev/null && bad "systemd did not power off"
log "systemd test: $(($(date +%s) - start_all)) s in all"
[ "$fail" -eq 0 ] && log "systemd: ok"
exit "$fail"
