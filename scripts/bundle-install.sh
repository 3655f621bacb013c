#!/bin/sh
# install.sh of the portable bundle (scripts/bundle.sh): lays /opt/tegrawatch
# out as the Debian package does, then enables and starts the service.
#   /opt/tegrawatch/install.sh [--root DIR] [--no-start] [--uninstall] [--systemd-version N]
# - /etc/tegrawatch/tegrawatch.yaml and rules.d/: copied when absent; an
#   existing file is kept and the shipped one written beside it as .dist
# - the unit: /etc/systemd/system/tegrawatch.service (the package's, with
#   ExecStart=/opt/tegrawatch/bin/tegrawatch)
# - /usr/local/bin/tegrawatch, the man pages and the bash completion: links
#   into /opt/tegrawatch
# - systemd before 239 (Ubuntu 18.04, JetPack 4, has 237) knows no @system-service
#   group: it would drop it from SystemCallFilter= and allow only its @default
#   calls (no open, no read, no mmap), and the agent would die at once. There the
#   unit keeps the deny list (~@privileged @resources) and no allow list.
#   --systemd-version N says which systemd the unit is for (default: the
#   running systemctl's; with --root, DIR's systemd package, else the unit as
#   the package has it).
# --root DIR does all of it under DIR and starts nothing (how the tests run it).
# --uninstall removes the links and the unit, and keeps /etc/tegrawatch and
# /var/lib/tegrawatch (the package's purge removes those).
set -eu
opt=/opt/tegrawatch
root="" start=1 uninstall=0 systemd_version=""
while [ $# -gt 0 ]; do
	case $1 in
	--root) root=$2; start=0; shift 2 ;;
	--systemd-version) systemd_version=$2; shift 2 ;;
	--no-start) start=0; shift ;;
	--uninstall) uninstall=1; shift ;;
	*) echo "usage: $0 [--root DIR] [--no-start] [--uninstall] [--systemd-version N]" >&2; exit 64 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$root" ] && [ "$here" != "$opt" ]; then
	# the program interpreter of bin/tegrawatch is /opt/tegrawatch/lib/...: nowhere else
	echo "install.sh: unpack the bundle into /opt (tar -C /opt -xzf ...), not $here" >&2
	exit 1
fi
unit=$root/etc/systemd/system/tegrawatch.service
links="$root/usr/local/bin/tegrawatch:$opt/bin/tegrawatch
$root/usr/local/share/man/man1/tegrawatch.1:$opt/share/man/man1/tegrawatch.1
$root/usr/local/share/man/man5/tegrawatch.yaml.5:$opt/share/man/man5/tegrawatch.yaml.5
$root/usr/local/share/bash-completion/completions/tegrawatch:$opt/share/bash-completion/completions/tegrawatch"

if [ "$uninstall" -eq 1 ]; then
	if [ "$start" -eq 1 ] && command -v systemctl >/dev/null; then
		systemctl disable --now tegrawatch 2>/dev/null || true
	fi
	echo "$links" | while IFS=: read -r link target; do rm -f "$link"; done
	rm -f "$unit"
	[ "$start" -eq 1 ] && command -v systemctl >/dev/null && systemctl daemon-reload
	echo "tegrawatch: removed the links and the unit; /etc/tegrawatch and /var/lib/tegrawatch are kept"
	exit 0
fi

# the configuration: never overwrite the administrator's edits
(cd "$here/etc" && find tegrawatch -type f) | while read -r f; do
	dest=$root/etc/$f
	mkdir -p "$(dirname "$dest")"
	if [ -e "$dest" ] && ! cmp -s "$here/etc/$f" "$dest"; then
		cp "$here/etc/$f" "$dest.dist"
		echo "tegrawatch: kept your $dest; the shipped one is $dest.dist"
	else
		cp "$here/etc/$f" "$dest"
	fi
done
mkdir -p "$(dirname "$unit")"
if [ -z "$systemd_version" ] && [ -n "$root" ] && [ -f "$root/var/lib/dpkg/status" ]; then
	# an image being prepared: its own systemd package ("Version: 237-3ubuntu10.57")
	systemd_version=$(awk '/^Package: / { p = ($2 == "systemd") } p && /^Version: / { sub(/^[0-9]+:/, "", $2);
		sub(/[^0-9].*/, "", $2); print $2; exit }' "$root/var/lib/dpkg/status")
fi
if [ -z "$systemd_version" ] && [ -z "$root" ] && command -v systemctl >/dev/null; then
	# "systemd 245 (245.4-4ubuntu3)"
	systemd_version=$(systemctl --version | awk 'NR == 1 { print $2 }')
fi
case $systemd_version in
'' | *[!0-9]*) systemd_version=999 ;; # none, or not a number: the unit as the package has it
esac
if [ "$systemd_version" -lt 239 ]; then
	grep -v '^SystemCallFilter=@system-service$' "$here/lib/systemd/system/tegrawatch.service" >"$unit"
	echo "tegrawatch: systemd $systemd_version has no @system-service (239): the unit's system call filter is the deny list only"
else
	cp "$here/lib/systemd/system/tegrawatch.service" "$unit"
fi
echo "$links" | while IFS=: read -r link target; do
	mkdir -p "$(dirname "$link")"
	ln -sfn "$target" "$link"
done
echo "tegrawatch: installed $(head -1 "$here/BUNDLE") into ${root:-/}"
if [ "$start" -eq 1 ]; then
	if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
		systemctl daemon-reload
		systemctl enable --now tegrawatch
	else
		echo "tegrawatch: no systemd running: start it with /opt/tegrawatch/bin/tegrawatch run"
	fi
fi
