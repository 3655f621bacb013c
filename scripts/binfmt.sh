#!/usr/bin/env bash
# Lets this machine run aarch64 programs: binfmt_misc mounted and qemu-user's
# aarch64 entry registered with the F flag (the interpreter is opened now, so
# a chroot without qemu inside also runs aarch64 programs). Root only; safe to
# run again. Exit 0 when an aarch64 program runs afterwards.
set -u
entry=/proc/sys/fs/binfmt_misc/qemu-aarch64
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
	mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null ||
		{ echo "binfmt: cannot mount binfmt_misc (not root, or a container without it)" >&2; exit 1; }
fi
if [ ! -e "$entry" ]; then
	# qemu-user-static's entry (binfmt-support): flags PF
	update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || update-binfmts --import qemu-aarch64 >/dev/null 2>&1
fi
if [ ! -e "$entry" ]; then
	# without binfmt-support's database: the entry by hand (magic and mask of an aarch64 ELF executable)
	printf '%s' ':qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-aarch64-static:PF' \
		>/proc/sys/fs/binfmt_misc/register 2>/dev/null
fi
grep -qx enabled "$entry" 2>/dev/null || { echo "binfmt: no qemu-aarch64 entry (package qemu-user-static)" >&2; exit 1; }
grep -q '^flags:.*F' "$entry" || echo "binfmt: qemu-aarch64 lacks the F flag: chroots need qemu inside" >&2
exit 0
