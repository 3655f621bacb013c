#!/usr/bin/python3
"""Runs a command as if on Linux 4.9 (JetPack 4's kernel): every system call
added after 4.9 fails with ENOSYS, as on that kernel, through a seccomp filter
(libseccomp's Python binding, Debian's python3-seccomp, hence /usr/bin/python3).

    linux49.py --check          the filter works: statx, clone3, close_range,
                                rseq, openat2, futex_waitv... give ENOSYS
    linux49.py COMMAND [ARG...] runs COMMAND under the filter (it is inherited
                                by every child and kept across exec)

Added after 4.9: statx (4.11), io_pgetevents and rseq (4.18), and every number
from 424 (pidfd_send_signal, 5.1) on, which all architectures share: clone3,
close_range, pidfd_*, openat2, faccessat2, epoll_pwait2, io_uring_*,
memfd_secret, process_madvise, landlock_*, futex_waitv, cachestat, fchmodat2,
mseal... Numbers 403-423 are the 32-bit architectures' time64 calls."""
import ctypes
import errno
import os
import sys

import seccomp

NAMED = ["statx", "io_pgetevents", "rseq"]
UNIFIED = range(424, 480)


def install():
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in NAMED:
        f.add_rule(seccomp.ERRNO(errno.ENOSYS), name)
    for nr in UNIFIED:
        f.add_rule(seccomp.ERRNO(errno.ENOSYS), nr)
    f.load()


def check():
    libc = ctypes.CDLL(None, use_errno=True)
    probes = {n: seccomp.resolve_syscall(seccomp.Arch.NATIVE, n) for n in
              ["statx", "rseq", "clone3", "close_range", "pidfd_open", "openat2", "faccessat2",
               "epoll_pwait2", "io_uring_setup", "memfd_secret", "process_madvise",
               "landlock_create_ruleset", "futex_waitv"]}
    probes["mseal"] = 462  # newer than this libseccomp's table
    before = {}
    for name, nr in probes.items():
        ctypes.set_errno(0)
        libc.syscall(nr, -1, 0, 0, 0, 0)
        before[name] = ctypes.get_errno()
    install()
    bad = []
    for name, nr in probes.items():
        ctypes.set_errno(0)
        r = libc.syscall(nr, -1, 0, 0, 0, 0)
        if r != -1 or ctypes.get_errno() != errno.ENOSYS:
            bad.append(f"{name} ({nr}): {r}, errno {ctypes.get_errno()}")
    # what came before 4.9 still works
    if os.stat("/").st_ino <= 0 or os.getpid() <= 0:
        bad.append("stat or getpid broken")
    live = [n for n, e in before.items() if e != errno.ENOSYS]
    if bad:
        print("linux49: the filter lets through: " + "; ".join(bad))
        return 1
    print(f"linux49: {len(probes)} newer system calls give ENOSYS under the filter "
          f"({len(live)} of them exist on this kernel: {' '.join(live)})")
    return 0


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 64
    if sys.argv[1] == "--check":
        return check()
    install()
    os.execvp(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
