#!/usr/bin/env python3
"""smaps_kinds.py PID: a process's RssAnon and PSS (KiB) by kind of mapping, from /proc/PID/smaps.

RssAnon is the Anonymous pages of every mapping: the heap, anonymous mmaps (thread stacks, glibc's
per-thread arenas, large allocations), the main stack, and the copy-on-write pages of each library's
.data, .bss and relocated read-only data. PSS adds each file page divided by the processes sharing it."""
import collections
import re
import sys

pid = sys.argv[1]
maps = []
for line in open("/proc/%s/smaps" % pid):
    m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$", line)
    if m:
        maps.append({"start": int(m[1], 16), "end": int(m[2], 16), "perm": m[3], "name": m[4].strip(), "f": {}})
        continue
    key, _, val = line.partition(":")
    val = val.split()
    if val and val[0].isdigit():
        maps[-1]["f"][key] = int(val[0])


def kind(i, mp):
    name = mp["name"]
    if name == "[heap]":
        return "heap (main arena)"
    if name == "[stack]":
        return "main stack"
    if name.startswith("/"):
        return "library: " + name.rsplit("/", 1)[-1].split(".so")[0]
    if name:
        return name
    prev = maps[i - 1] if i else None
    if prev and prev["perm"] == "---p" and prev["end"] == mp["start"] and prev["end"] - prev["start"] == 4096:
        return "thread stacks"  # glibc puts a guard page below each one
    nxt = maps[i + 1] if i + 1 < len(maps) else None
    if mp["start"] % (64 << 20) == 0 or (nxt and nxt["perm"] == "---p" and nxt["start"] == mp["end"]
                                         and nxt["end"] % (64 << 20) == 0):
        return "thread arenas"  # glibc reserves 64 MiB aligned per arena
    return "other anonymous mmaps"


anon = collections.Counter()
pss = collections.Counter()
for i, mp in enumerate(maps):
    k = kind(i, mp)
    anon[k] += mp["f"].get("Anonymous", 0)
    pss[k] += mp["f"].get("Pss", 0)
print("%-40s %8s %8s" % ("mapping", "RssAnon", "Pss"))
for k, _ in sorted(pss.items(), key=lambda kv: -(anon[kv[0]] * 1000 + kv[1])):
    if anon[k] or pss[k] >= 8:
        print("%-40s %8d %8d" % (k, anon[k], pss[k]))
print("%-40s %8d %8d" % ("total", sum(anon.values()), sum(pss.values())))
