#!/usr/bin/env python3
"""A real OOM kill, seen by the agent (docs/metrics.md#the-host, "OOM kills"): the test makes a memory cgroup of
32 MiB without swap (cgroup v1: memory.limit_in_bytes, memory.memsw.limit_in_bytes where the kernel has it,
memory.swappiness 0; cgroup v2: memory.max, memory.swap.max 0, +memory in the parent's cgroup.subtree_control if
needed), starts a python3 in it, named "tw oom(hog)", that allocates until the kernel's OOM killer kills it, and
checks what the agent, on the real root with the shipped rules, makes of it: /proc/vmstat's oom_kill counts the
kill of a memory cgroup too (the test reads it itself), oom.kills_total grows by it, the shipped rule oom-kill
fires, and where the agent may read the kernel log (/dev/kmsg: root here) its summary and the sample name the
killed process and its pid, and so does the report of the run's recording (its replay of the rules); where it may
not, the summary says "a process" and the agent said why at the start. The cgroup is removed in cleanup, always.

Needs root and a memory controller: otherwise the file exits 77 (meson counts it skipped), saying why.

Usage: test_host_oom.py TEGRAWATCH SOURCE_ROOT
"""
import errno
import json
import os
import subprocess
import sys

import harness

LIMIT = 32 << 20
NAME = "tw oom(hog)"  # blanks and parentheses: the kill line's name is not a word
HOG = ("open('/proc/self/comm', 'w').write(%r)\n"
       "kept = []\n"
       "while True:\n"
       "    kept.append(b'x' * (1 << 20))  # every page written: resident, charged to the cgroup\n" % NAME)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def mounts():
    """(fstype, mount point, super options) of every cgroup mount in /proc/self/mountinfo."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fstype, _, opts = (right.split() + ["", "", ""])[:3]
            if fstype in ("cgroup", "cgroup2"):
                out.append((fstype, left.split()[4], opts.split(",")))
    return out


class Cgroup:
    """A memory cgroup of LIMIT bytes without swap, made under the memory controller's mount (v1) or the cgroup2
    mount (v2); remove() takes it away once its processes are gone."""

    def __init__(self, name):
        v1 = [mp for fstype, mp, opts in mounts() if fstype == "cgroup" and "memory" in opts]
        v2 = [mp for fstype, mp, opts in mounts() if fstype == "cgroup2"]
        if v1:
            self.version, parent = 1, v1[0]
        elif v2 and "memory" in harness.read_text(os.path.join(v2[0], "cgroup.controllers")).split():
            self.version, parent = 2, v2[0]
            control = os.path.join(parent, "cgroup.subtree_control")
            if "memory" not in harness.read_text(control).split():
                write(control, "+memory")  # refused (EBUSY) where the parent holds processes: said by the caller
        else:
            raise OSError(errno.ENOTSUP, "no memory controller: neither a cgroup v1 memory hierarchy nor memory in "
                          "a cgroup2 mount's cgroup.controllers (%s)" % (mounts() or "no cgroup mount"))
        self.path = os.path.join(parent, name)
        os.mkdir(self.path)
        try:
            if self.version == 1:
                write(self.file("memory.limit_in_bytes"), str(LIMIT))
                if os.path.exists(self.file("memory.memsw.limit_in_bytes")):  # swap accounting (swapaccount=1)
                    write(self.file("memory.memsw.limit_in_bytes"), str(LIMIT))
                if os.path.exists(self.file("memory.swappiness")):
                    write(self.file("memory.swappiness"), "0")
            else:
                write(self.file("memory.max"), str(LIMIT))
                if os.path.exists(self.file("memory.swap.max")):
                    write(self.file("memory.swap.max"), "0")
        except OSError:
            self.remove()
            raise

    def file(self, name):
        return os.path.join(self.path, name)

    def enter(self):
        """For preexec_fn: the child joins the cgroup before it runs python3."""
        write(self.file("cgroup.procs"), str(os.getpid()))

    def remove(self):
        if os.path.isdir(self.path):
            os.rmdir(self.path)  # only the cgroup's own files are left: rmdir takes them


def oom_kills():
    """/proc/vmstat's oom_kill."""
    for line in harness.read_text("/proc/vmstat").splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill":
            return int(value)
    raise AssertionError("no oom_kill in /proc/vmstat (a kernel before 4.13)")


def kmsg_readable():
    try:
        os.close(os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK))
        return True
    except OSError:
        return False


class OomKillTest(harness.TestCase):
    def test_oom_kill_seen(self):
        cg = Cgroup("tw-oom-%d" % os.getpid())
        self.addCleanup(cg.remove)
        rules = harness.src("configs", "rules.d", "host.yaml")
        # info: the start says whether the kernel log is readable
        config = ('agent:\n  state_file: ""\n  log_level: info\nhost:\n  filesystems:\n    enabled: false\n'
                  'include: ["%s"]\n' % rules)
        record = os.path.join(self.d, "run.jsonl")
        a = self.agent(["--record", record], config=config)
        before = a.wait_metric("oom.kills_total", lambda v: v >= 0)
        vmstat_before = oom_kills()

        hog = self.spawn([sys.executable, "-c", HOG], preexec_fn=cg.enter, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        self.assertEqual(hog.wait(timeout=120), -9, "the kernel's OOM killer sends SIGKILL")
        self.assertGreaterEqual(oom_kills(), vmstat_before + 1,
                                "/proc/vmstat's oom_kill counts the kill in a memory cgroup (cgroup v%d)"
                                % cg.version)

        a.wait_metric("oom.kills_total", lambda v: v >= before + 1, timeout=30)
        a.wait_stderr("alert firing oom-kill", timeout=30)
        if kmsg_readable():
            # the kill line names it: the summary, and the sample the alert fired on
            said = "%s (pid %d)" % (NAME, hog.pid)  # beside another process killed in the same second, if any
            a.wait_stderr(said, timeout=30)
            line = [x for x in a.stderr_lines(said) if "alert firing oom-kill" in x][0]
            self.assertIn("[warning]", line)
            self.assertIn("oom.kills_total", line)
            self.assertIn("the kernel's OOM killer ended ", line)
            self.assertNotIn("the kernel log (/dev/kmsg) is not readable", a.stderr())
            victims = a.next_sample(lambda s: any(v.get("pid") == hog.pid for v in
                                                  s.get("oom_killed", {}).get("processes", [])),
                                    what="a sample whose oom_killed holds the hog")["oom_killed"]["processes"]
            self.assertIn({"pid": hog.pid, "comm": NAME}, victims)
            # the recording keeps them: the report's replay of the rules names the process again
            a.stop()
            out = os.path.join(self.d, "report.json")
            r = harness.tegrawatch(["report", record, "-c", a.cfg, "--json", out])
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                fired = [x["summary"] for x in json.load(f)["alerts"]
                         if x["rule"] == "oom-kill" and x["transition"] == "firing"]
            self.assertTrue([x for x in fired if said in x], fired)
        else:
            # no kernel log here (kernel.dmesg_restrict without CAP_SYSLOG): the alert all the same, unnamed
            self.assertIn("the kernel's OOM killer ended a process (",
                          "\n".join(a.stderr_lines("alert firing oom-kill")))
            self.assertIn("host: the kernel log (/dev/kmsg) is not readable", a.stderr())
            a.stop()


def unusable():
    """Why this machine cannot run the test, or None."""
    if os.geteuid() != 0:
        return "a memory cgroup needs root"
    try:
        Cgroup("tw-oom-probe-%d" % os.getpid()).remove()
    except OSError as e:
        return "cannot make a memory cgroup here: %s" % e
    return None


if __name__ == "__main__":
    harness.init()
    why = unusable()
    if why:
        print("skipped: " + why)
        sys.exit(77)
    harness.main()
