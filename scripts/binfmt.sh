#!/usr/bin/env bash
# Lets this machine run aarch64 programs: binfmt_misc mounted and qemu-user's
# aarch64 entry registered with the F flag (the interpreter is opened now, so
# a chroot without qemu inside also runs aarch64 programs). Root only; safe to
# run again. Exit 0 when an aarch64 program runs afterwards.
# Two packagings: qemu-user-static before 9.1 (binfmt-support's database,
# /usr/bin/qemu-aarch64-static) and qemu-user from 9.1 on (systemd-binfmt's
# /usr/lib/binfmt.d/qemu-aarch64.conf, which nothing loads without systemd).
set -u
entry=/proc/sys/fs/binfmt_misc/qemu-aarch64
conf=/usr/lib/binfmt.d/qemu-aarch64.conf
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
	mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null ||
		{ echo "binfmt: cannot mount binfmt_misc (not root, or a container without it)" >&2; exit 1; }
fi
# With F the kernel keeps the interpreter it opened at registration: after an upgrade (qemu-user 10 replacing
# qemu-user-static 7.2) the entry would go on running the old emulator. So the entry is registered again when the
# interpreter's file is not the one this script registered (its device:inode, kept in $state).
state=/run/tegrawatch-binfmt-aarch64
exec 9>"$state.lock" && flock 9 # callers in parallel (meson test): one at a time, so none sees the entry gone
interp_id() { stat -Lc %d:%i "$(sed -n 's/^interpreter //p' "$entry")" 2>/dev/null; }
if [ -e "$entry" ] && [ "$(interp_id)" != "$(cat "$state" 2>/dev/null)" ]; then
	echo -1 >"$entry"
fi
if [ ! -e "$entry" ] && [ -r "$conf" ]; then
	grep -m1 '^:qemu-aarch64:' "$conf" >/proc/sys/fs/binfmt_misc/register 2>/dev/null
fi
if [ ! -e "$entry" ]; then
	# qemu-user-static's entry (binfmt-support): flags PF
	update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || update-binfmts --import qemu-aarch64 >/dev/null 2>&1
fi
if [ ! -e "$entry" ] && [ -x /usr/bin/qemu-aarch64-static ]; then
	# without binfmt-support's database: the entry by hand (magic and mask of an aarch64 ELF executable)
	printf '%s' ':qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-aarch64-static:PF' \
		>/proc/sys/fs/binfmt_misc/register 2>/dev/null
fi
grep -qx enabled "$entry" 2>/dev/null || { echo "binfmt: no qemu-aarch64 entry (package qemu-user-static)" >&2; exit 1; }
interp_id >"$state" 2>/dev/null || true
grep -q '^flags:.*F' "$entry" || echo "binfmt: qemu-aarch64 lacks the F flag: chroots need qemu inside" >&2
exit 0
