#!/bin/bash
# PID 1 of new namespaces (unshare --fork --pid --mount --cgroup ...): an overlay of LOWER on a tmpfs under BASE
# (nothing written reaches LOWER), pivot_root into it, shared propagation (LoadCredential= needs it), then LOWER's
# own systemd. Used by tests/packaging/systemd.sh (LOWER = /, the host) and scripts/ubuntu-floor.sh (an Ubuntu
# release made by debootstrap).
#   ns-init.sh BASE LOWER HOSTNAME
set -e
base=$1 lower=$2 name=$3
mount -t tmpfs -o size=1g tmpfs "$base"
mkdir -p "$base/upper" "$base/work" "$base/root"
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$base/upper,workdir=$base/work" "$base/root"
r=$base/root
mount --rbind /dev "$r/dev"
mount -t proc proc "$r/proc"
mount -t sysfs sysfs "$r/sys" 2>/dev/null || mount --rbind /sys "$r/sys"
mount -t tmpfs tmpfs "$r/run"
mount -t tmpfs tmpfs "$r/tmp"
mkdir -p "$r/.oldroot"
cd "$r"
pivot_root . .oldroot
hash -r # LOWER's own tools from here on (Ubuntu 18.04 has /bin/mount, not /usr/bin/mount)
umount -l /.oldroot
mount --make-rshared /
rm -f /usr/sbin/policy-rc.d
# binfmt_misc is the host's (one per user namespace): systemd-binfmt and binfmt-support would register
# their entries at start and unregister every entry at poweroff, the host's qemu-aarch64 that the arm64
# tests need among them
ln -sf /dev/null /etc/systemd/system/systemd-binfmt.service
ln -sf /dev/null /etc/systemd/system/binfmt-support.service
# What would reach the host: the kernel's settings (sysctl.d, module loading), the clock, the devices (udev).
# This root is not in a user namespace, so none of it is refused.
for unit in systemd-sysctl.service systemd-modules-load.service systemd-timesyncd.service \
	systemd-udevd.service systemd-udevd-control.socket systemd-udevd-kernel.socket systemd-udev-trigger.service; do
	ln -sf /dev/null "/etc/systemd/system/$unit"
done
# no udev here: a getty on the host's console device would wait 90 s for it
mkdir -p /etc/systemd/system-generators
ln -sf /dev/null /etc/systemd/system-generators/systemd-getty-generator
echo "$name" >/etc/hostname
# container=: systemd then knows it is one, and its shutdown leaves the host's swap, loop and DM devices alone (it
# cannot tell by itself here, and takes the VM it runs in for its own machine)
exec env container=tegrawatch-test /lib/systemd/systemd </dev/null
